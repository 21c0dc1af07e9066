"""Gradescope: `kata export gradescope OUT.zip`, the autograder's grading step, and results.json.

The zip Gradescope takes as an autograder holds, at its root:

- `setup.sh`: run once, as root, when Gradescope builds the image: apt installs bubblewrap (the
  sandbox) and a Python >= 3.11; a venv at /autograder/kata-venv gets torch==2.13.0 (CPU
  wheel) and the grader (`pip install -e /autograder/source/kata`); the hidden checks and
  fixtures are made readable by root only (the sandboxed worker runs as an unprivileged uid of its own).
- `run_autograder`: run for each submission: grades /autograder/submission with every check,
  hidden ones included, and writes /autograder/results/results.json. `AUTOGRADER_ROOT` moves
  the whole tree (the tests use a temporary one), `KATA_PYTHON` the interpreter.
- `kata/`: the course (course.toml, the stubs, the whole grader with its hidden checks and
  fixtures, the data files of .kata/assets when this machine has them) without solutions/
  (grader/release.json marks it as an autograder edition) and `gradescope.json`, the settings
  given to `kata export` (when hidden checks are shown, the language of the messages).

A submission may be what `kata submit` writes (the zip, or its contents when Gradescope unzips
it), a folder holding exercises/ or ch01/, or the exercise files alone (s1_11_softmax.py, ...,
anywhere in the upload). One that cannot be graded still gets a results.json: score 0 and why.

`gradescope_results(doc)` turns a `kata grade --json` report (schema 1) into Gradescope's
format: score, output, tests [name, number, score, max_score, status, output, visibility].
Public checks are "visible"; hidden ones get the configured visibility ("after_published" by
default; "hidden", "after_due_date" or "visible"), and the overall output counts only the
public checks so that it tells no more than they do.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import sys
import tempfile
import time
import zipfile
from collections import defaultdict
from pathlib import Path

from ... import __version__
from ...course import atomic, files
from ...course.messages import t
from ...course.safe_text import indent_lines, one_line
from ...worker import sandbox
from ...worker.sandbox import LIMITS_ONLY_UID

VISIBILITIES = ("hidden", "after_due_date", "after_published", "visible")
# Every text of results.json (the output, each test's name and output) is shown as plain text:
# Gradescope renders "md", "html", "simple_format" and "ansi" ones, and a student's exception
# text or file name must not become a link, a tag or a colour on its page.
TEXT_FORMATS = {"output_format": "text", "test_output_format": "text", "test_name_format": "text"}
CONFIG_FILE = "gradescope.json"
COURSE_DIR = "kata"


class ExportError(Exception):
    """The autograder zip cannot be written; the message says why."""


# ----------------------------------------------------------------------------- results.json
def gradescope_results(doc: dict, hidden_visibility: str = "after_published", lang: str | None = None) -> dict:
    """Gradescope's results.json for a kata report `doc` (report.to_dict, schema 1)."""
    if hidden_visibility not in VISIBILITIES:
        raise ValueError(f"hidden_visibility must be one of {', '.join(VISIBILITIES)}, not {hidden_visibility!r}")
    exercises = {ex["id"]: (n, ex) for n, ex in enumerate(doc.get("exercises", []), 1)}
    counters: dict[str, int] = defaultdict(int)
    tests = []
    for c in doc.get("checks", []):
        n, ex = exercises.get(c["exercise"], (len(exercises) + 1, {"section": c.get("section", "?")}))
        counters[c["exercise"]] += 1
        output = c.get("message") or ""
        if c["status"] == "skipped":
            output = t("gs_skipped", lang, reason=output)
        output = indent_lines(output)  # a line of the student's exception never starts a line of the page
        tests.append(
            {
                "name": f"§{ex.get('section', '?')} {c['exercise']} › {c['name'].removeprefix('test_')}",
                "number": f"{n}.{counters[c['exercise']]}",
                "score": c["score"],
                "max_score": c["max_score"],
                "status": "passed" if c["status"] == "passed" else "failed",
                "output": output,
                "visibility": hidden_visibility if c.get("visibility") == "hidden" else "visible",
                "tags": [c["exercise"], *c.get("listing", [])],
            }
        )
    public = [c for c in doc.get("checks", []) if c.get("visibility") != "hidden"]
    lines = [
        t(
            "gs_public",
            lang,
            passed=sum(c["status"] == "passed" for c in public),
            total=len(public),
            points=f"{sum(c['score'] for c in public):g}",
            max_points=f"{sum(c['max_score'] for c in public):g}",
        )
    ]
    if len(public) < len(doc.get("checks", [])):
        lines.append(t(f"gs_hidden_{hidden_visibility}", lang))
    if doc.get("sandbox") == LIMITS_ONLY_UID:  # as root: a uid of its own held the course and results out
        lines.append(t("gs_limits_only_uid", lang))
    elif doc.get("sandbox") not in (None, "bubblewrap"):  # the grader's own user: the score could be forged
        lines.append(t("gs_limits_only", lang))
    lines += [f"note: {one_line(note)}" for note in doc.get("notes", [])]
    return {
        "score": doc.get("score", 0.0),
        "output": "\n".join(lines),
        **TEXT_FORMATS,
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
        "extra_data": {
            "kata_version": doc.get("kata_version"),
            "torch": doc.get("torch"),
            "sandbox": doc.get("sandbox"),
            "duration_s": round(float(doc.get("duration_s") or 0)),
        },
    }


def failure_results(reason: str, lang: str | None = None) -> dict:
    """results.json for a submission that could not be graded at all."""
    return {
        "score": 0.0,
        "output": t("gs_cannot_grade", lang, reason=reason),
        **TEXT_FORMATS,
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": [],
    }


def _write_json(path: Path, data: dict) -> None:
    atomic.write_json(path, data, indent=1, mode=0o644)


# ----------------------------------------------------------------------------- the grading step
def locate(upload: Path, course, work: Path) -> Path:
    """What to hand to open_submission for Gradescope's submission folder `upload`: a zip
    uploaded alone, the folder itself when it holds exercises/ or ch01/, else the exercise files
    found anywhere in it, arranged as ch01/<id>.py in `work`."""
    from ...checking.submission import SubmissionError

    from ...course import files as tree

    chapter = course.chapter
    if tree.real_dir(upload, chapter) or tree.real_dir(upload, "exercises", chapter):
        return upload
    found = [f for f in tree.walk(upload) if isinstance(f, tree.Found) and "__MACOSX" not in f.path.parts]
    files = [f.path for f in found]  # regular files only: a student's link is never followed
    zips = [p for p in files if p.suffix.lower() == ".zip"]
    names = {f"{ex.module}{ext}" for ex in course.exercises for ext in (".py", ".ipynb")}
    loose = [f for f in found if f.path.name in names]
    if len(zips) == 1 and not loose:
        return zips[0]
    if not loose:
        raise SubmissionError(t("gs_nothing_found", chapter=chapter))
    dest = work / chapter
    dest.mkdir(parents=True)
    for f in sorted(loose, key=lambda f: f.st.st_mtime):  # the newest copy of a file wins
        with open(f.path, "rb", opener=tree.open_no_follow) as src, open(dest / f.path.name, "wb") as out:
            shutil.copyfileobj(src, out)
        os.utime(dest / f.path.name, ns=(f.st.st_atime_ns, f.st.st_mtime_ns))
    return work


def grade_upload(upload: str | Path, results: str | Path, config: dict | None = None) -> int:
    """Grade Gradescope's submission folder and write results.json. 0 when graded, 1 when the
    submission could not be graded (results.json then says why)."""
    from ...checking import runner
    from ...checking.submission import SubmissionError, open_submission
    from ...course.manifest import PACKAGE_DIR, load
    from ...reports.report import to_dict

    config = config or {}
    lang = config.get("lang") or None
    if lang:
        os.environ["KATA_LANG"] = lang
    if config.get("sandbox") == "limits-only":  # the instructor's explicit choice at export; the report says so
        os.environ["KATA_SANDBOX"] = "none"
        if os.getuid() == 0:
            wall_off(PACKAGE_DIR.parent, Path(results).parent)
            # proven out of the worker's reach too, or the report says plain "limits-only"
            sandbox.guard(read=[PACKAGE_DIR.parent / CONFIG_FILE], write=[Path(results).parent])
    course = load(PACKAGE_DIR.parent)
    work = tempfile.mkdtemp(prefix="kata-gs-")
    try:
        path = locate(Path(upload), course, Path(work))
        with open_submission(path, course.chapter, course.exercises) as sub:
            result = runner.run(course, sub, chosen(course, config))
    except SubmissionError as e:
        sandbox.sweep_walled()
        _write_json(Path(results), failure_results(str(e), lang))
        return 1
    finally:
        # Nothing of the submission's outlives the grading, whatever failed: every process of a
        # walled uid is gone before any results.json is written (Sandbox.close did it unless it
        # never ran), and the folders go without recursion (a submission shapes what is in them).
        sandbox.sweep_walled()
        files.remove_tree(work)
    doc = to_dict(course, result)
    if config.get("assignment"):  # every check's points scaled to the assignment's
        from ...course.assignments import find
        from ...reports.assignment import view

        doc = view(doc, find(course.assignments, config["assignment"]))
    _write_json(Path(results), gradescope_results(doc, config.get("hidden_visibility", "after_published"), lang))
    return 0


def wall_off(course_root: Path, results_dir: Path) -> None:
    """Limits-only as root (no namespaces): the worker runs as an unprivileged uid of its own, and
    file permissions are all that keep it out. The course (hidden checks, fixtures, the grader's
    settings) becomes readable by root only, and the results folder writable by root only; the
    report then says "limits-only (own uid)" (the sandbox proves the course unreadable to that uid)."""
    os.chmod(course_root, 0o700)
    # Another copy of the grader the worker's Python imports by itself (a venv's install in the
    # /autograder tree): root's own folders in that tree are walled off as well; one outside it
    # is not the grader's to change, and the sandbox's proof then says plain "limits-only".
    tree = os.path.realpath(results_dir.parent)
    shaped = all(os.path.isdir(os.path.join(tree, d)) for d in ("source", "submission"))  # an /autograder tree
    for package in sandbox.installed_graders() if shaped else ():
        for secret in (
            os.path.join(package, "checks"),
            os.path.join(package, "fixtures"),
            os.path.join(os.path.dirname(package), "solutions"),
        ):
            try:
                st = os.lstat(secret)
            except OSError:
                continue
            if secret.startswith(tree + os.sep) and st.st_uid == 0 and stat.S_ISDIR(st.st_mode):
                os.chmod(secret, stat.S_IMODE(st.st_mode) & ~0o077)
    results_dir.mkdir(parents=True, exist_ok=True)
    st = os.lstat(results_dir)
    if st.st_uid != 0 or not stat.S_ISDIR(st.st_mode):
        raise RuntimeError(f"{results_dir} is not a folder of root's")
    os.chmod(results_dir, stat.S_IMODE(st.st_mode) & ~0o022)


def chosen(course, config: dict) -> list:
    """The exercises the autograder grades: those given to `kata export` (-e, --assignment), or all."""
    ids = config.get("exercises")
    return [ex for ex in course.exercises if ex.id in ids] if ids else list(course.exercises)


ASSET_EXIT = 2  # run_autograder's status when an asset the checks read is missing or damaged


def main(argv: list[str] | None = None) -> int:
    """python -m grader.instructor.exports.gradescope grade SUBMISSION_DIR RESULTS_JSON (what run_autograder calls)."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 3 or args[0] != "grade":
        print(
            "usage: python -m grader.instructor.exports.gradescope grade SUBMISSION_DIR RESULTS_JSON", file=sys.stderr
        )
        return 2
    from ...course.manifest import PACKAGE_DIR

    path = PACKAGE_DIR.parent / CONFIG_FILE
    config = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    from ...checking.asset_gate import AssetUnavailable
    from ...worker.sandbox import EXIT as SANDBOX_EXIT
    from ...worker.sandbox import SandboxUnavailable

    try:
        return grade_upload(args[1], args[2], config)
    except SandboxUnavailable as e:  # a grader error: no results.json, so Gradescope records no score
        Path(args[2]).unlink(missing_ok=True)
        print(f"kata: {e}", file=sys.stderr)
        return SANDBOX_EXIT
    except AssetUnavailable as e:  # the image lacks an asset or holds a damaged one: the grader's
        Path(args[2]).unlink(missing_ok=True)  # fault, not the student's, so no score at all
        print(f"kata: {e}", file=sys.stderr)
        return ASSET_EXIT
    except Exception as e:  # the grader itself failed: say so to the student, show the trace to the instructor
        _write_json(
            Path(args[2]),
            failure_results(
                t("gs_internal", config.get("lang") or None, reason=f"{type(e).__name__}: {e}"),
                config.get("lang") or None,
            ),
        )
        raise


# ----------------------------------------------------------------------------- the autograder zip
SETUP_SH = """#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder image (Ubuntu).
# Made by `kata export gradescope` (kata {version}).
set -euo pipefail
cd "$(dirname "$0")"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq bubblewrap python3 python3-venv ca-certificates
PYTHON=""
for v in 3.13 3.12 3.11; do
  if command -v "python$v" >/dev/null 2>&1; then PYTHON="python$v"; break; fi
done
if [ -z "$PYTHON" ]; then  # Ubuntu 22.04's python3 is 3.10: the kata needs >= 3.11
  apt-get install -y -qq python3.11 python3.11-venv || {{
    apt-get install -y -qq software-properties-common && add-apt-repository -y ppa:deadsnakes/ppa &&
    apt-get update -qq && apt-get install -y -qq python3.11 python3.11-venv; }}
  PYTHON=python3.11
fi
"$PYTHON" -m venv /autograder/kata-venv
/autograder/kata-venv/bin/python -m pip install -q --upgrade pip
# pinned, CPU build: a bare `torch` would pull a multi-GB CUDA build
/autograder/kata-venv/bin/python -m pip install -q "torch==2.13.0" --index-url https://download.pytorch.org/whl/cpu
/autograder/kata-venv/bin/python -m pip install -q -e "$PWD/{course_dir}"
# GPT-2's ranks and the offline corpus ship in {course_dir}/.kata/assets; fetch only what is missing
# (grading stops without them, so the image build stops here instead, saying why)
(cd {course_dir} && /autograder/kata-venv/bin/python -m grader.capstone.gpt2 fetch) || {{
  echo "setup: gpt2.tiktoken is missing and could not be fetched; the tokenizer checks cannot grade without it" >&2; exit 1; }}
# The hidden checks and their expected values: readable by root (the grader) only, never by the
# sandboxed worker, which runs as an unprivileged uid of its own.
chmod -R go-rwx {course_dir}/grader/checks {course_dir}/grader/fixtures
chmod +x /autograder/source/run_autograder 2>/dev/null || true
"""

RUN_AUTOGRADER = """#!/usr/bin/env bash
# Gradescope runs this for every submission, as root: grade /autograder/submission with every
# check (hidden ones included) into /autograder/results/results.json.
# AUTOGRADER_ROOT moves the /autograder tree; KATA_PYTHON picks the interpreter.
set -uo pipefail
ROOT="${{AUTOGRADER_ROOT:-/autograder}}"
KATA="$ROOT/source/{course_dir}"
PYTHON="${{KATA_PYTHON:-$ROOT/kata-venv/bin/python}}"
mkdir -p "$ROOT/results"
cd "$KATA"
PYTHONPATH="$KATA" "$PYTHON" -m grader.instructor.exports.gradescope grade "$ROOT/submission" "$ROOT/results/results.json"
status=$?
# 1: the submission could not be graded (results.json says why to the student); 2: an asset the
# checks read is missing or damaged, 4: the sandbox could not start here (in both, no results.json:
# Gradescope records no score, the log says why)
[ "$status" -le 1 ] && exit 0
exit "$status"
"""


def _add(zf: zipfile.ZipFile, path: Path, name: str, mode: int = 0o644) -> None:
    info = zipfile.ZipInfo.from_file(path, name)
    info.external_attr = (stat.S_IFREG | mode) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    with open(path, "rb") as f:
        zf.writestr(info, f.read())


def _add_text(zf: zipfile.ZipFile, name: str, text: str, mode: int = 0o644) -> None:
    info = zipfile.ZipInfo(name, date_time=time.localtime()[:6])
    info.external_attr = (stat.S_IFREG | mode) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    zf.writestr(info, text)


def export(
    course,
    out: str | Path,
    hidden_visibility: str = "after_published",
    lang: str = "",
    sandbox: str = "bubblewrap",
    exercises: list | None = None,
    assignment: str | None = None,
) -> tuple[Path, list[str]]:
    """Write the autograder zip `out`; returns its path and notes for the instructor. `sandbox`:
    "bubblewrap" (a submission is graded only where bubblewrap starts; elsewhere run_autograder
    fails and Gradescope records no score) or "limits-only" (the instructor's explicit choice for
    a container that allows no namespaces: every result says so). `exercises`: grade only these
    (None: all); `assignment`: the [[assignment]] whose points the scores are scaled to."""
    from ...authoring.stubs import stub_text
    from ...course.manifest import PACKAGE_DIR, edition

    if hidden_visibility not in VISIBILITIES:
        raise ExportError(f"--hidden-visibility must be one of {', '.join(VISIBILITIES)}")
    if sandbox not in ("bubblewrap", "limits-only"):
        raise ExportError("--grading-sandbox must be bubblewrap or limits-only")
    if edition() is not None and edition().get("edition") == "student":
        raise ExportError(t("gs_student_bundle"))
    out = Path(out)
    notes: list[str] = []
    with atomic.replacing(out, mode=0o644) as tmp, zipfile.ZipFile(tmp, "w") as zf:
        _add_text(zf, "setup.sh", SETUP_SH.format(version=__version__, course_dir=COURSE_DIR), 0o755)
        _add_text(zf, "run_autograder", RUN_AUTOGRADER.format(course_dir=COURSE_DIR), 0o755)
        for p in sorted(PACKAGE_DIR.rglob("*")):
            rel = p.relative_to(PACKAGE_DIR)
            if (
                p.is_file()
                and "__pycache__" not in rel.parts
                and p.suffix != ".pyc"
                and rel.as_posix() != "release.json"
            ):
                _add(zf, p, f"{COURSE_DIR}/grader/{rel.as_posix()}")
        info = {
            "schema": 1,
            "edition": "autograder",
            "kata_version": __version__,
            "built": time.strftime("%Y-%m-%d %H:%M:%SZ", time.gmtime()),
            "torch": course.torch,
        }
        _add_text(zf, f"{COURSE_DIR}/grader/release.json", json.dumps(info, indent=1) + "\n")
        for name in ("course.toml", "pyproject.toml"):
            _add(zf, course.root / name, f"{COURSE_DIR}/{name}")
        for ex in course.exercises:
            _add_text(zf, f"{COURSE_DIR}/exercises/{ex.file}", stub_text(course, ex, "en"))
        assets = sorted(p for p in course.assets_dir.glob("*") if p.is_file()) if course.assets_dir.is_dir() else []
        for p in assets:
            _add(zf, p, f"{COURSE_DIR}/.kata/assets/{p.name}")
        if sandbox == "limits-only":
            notes.append(t("gs_export_limits_only"))
        if not any(p.name == "gpt2.tiktoken" for p in assets):
            notes.append(t("gs_no_tokenizer"))
        config = {
            "hidden_visibility": hidden_visibility,
            "lang": lang,
            "kata_version": __version__,
            "sandbox": sandbox,
            "assignment": assignment,
            "exercises": [ex.id for ex in exercises] if exercises is not None else None,
        }
        _add_text(zf, f"{COURSE_DIR}/{CONFIG_FILE}", json.dumps(config, indent=1) + "\n")
    return out, notes


if __name__ == "__main__":
    raise SystemExit(main())
