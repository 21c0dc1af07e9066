"""`kata train`: the capstone trained end to end, as a user runs it (CPU here; GPU tests skip without CUDA)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from grader.capstone import gpt2
from grader.capstone.training import batches as B
from grader.capstone.training import model as M
from grader.capstone.training.outputs import load_checkpoint
from grader.capstone.training.tokenizer import load_tokenizer

from conftest import ROOT, kata, solution_with

TINY = [
    "--dim",
    "64",
    "--layers",
    "2",
    "--heads",
    "2",
    "--ff-dim",
    "128",
    "--max-len",
    "64",
    "--lr",
    "3e-3",
    "--seed",
    "0",
    "--quiet",
]
needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
# kata train tokenizes with the s1_23_tokenizer exercise, which reads GPT-2's ranks
needs_ranks = pytest.mark.skipif(not gpt2.have_asset(), reason="gpt2.tiktoken is missing (kata assets fetch)")


# the classifier and the earlier exercises it imports (the student's own encoder, block, ...)
MODEL_FILES = (
    "s1_23_bert_embedding.py",
    "s1_23_self_attention.py",
    "s1_23_feed_forward.py",
    "s1_23_encoder_block.py",
    "s1_23_encoder.py",
    "s1_23_classifier.py",
)


def model_folder(ch01: Path, **files: str) -> Path:
    """`ch01` with the solved model files, `files` (exercise id -> source) replacing some."""
    ch01.mkdir(parents=True, exist_ok=True)
    for name in MODEL_FILES:
        (ch01 / name).write_text(files.get(name[:-3]) or (ROOT / "solutions/ch01" / name).read_text())
    return ch01


def metrics_of(out: Path) -> dict:
    return json.loads((out / "metrics.json").read_text())


def reference_model(**kw):
    module = M.load_classifier_module(ROOT / "solutions")
    cfg = dict(vocab_size=50260, dim=32, max_len=32, layers=2, heads=4, ff_dim=64) | kw
    torch.manual_seed(0)
    return M.build_model(module, **cfg)


# ---------------------------------------------------------------- the whole run


@needs_ranks
def test_train_reference_learns_and_leaves_its_outputs(tmp_path):
    out = tmp_path / "run"
    r = kata("train", "--data", "synthetic:1000", "--epochs", "6", "--out", str(out), *TINY)
    assert r.returncode == 0, r.stderr
    assert "attention fast path: on (2 modules)" in r.stdout
    assert "precision" in r.stdout and "negative" in r.stdout  # scikit-learn's classification report
    m = metrics_of(out)
    assert [h["epoch"] for h in m["history"]] == [1, 2, 3, 4, 5, 6]
    assert m["history"][-1]["train_loss"] < m["history"][0]["train_loss"]
    assert m["test"]["accuracy"] >= 0.75, m["test"]  # chance is 50%; a longer run reaches 95%
    assert sum(map(sum, m["test"]["confusion"])) == 250  # every test review scored once
    best = max(h["val_accuracy"] for h in m["history"])
    assert m["best"]["val_accuracy"] == best
    assert all(h["tokens"] < h["padded_tokens"] <= 2 * h["tokens"] for h in m["history"])  # per-batch padding
    for png in ("curves.png", "cls_attention.png"):
        assert (out / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # the checkpoint holds the best weights: loaded into a fresh model they give the reported test accuracy
    info, state = load_checkpoint(out)
    assert info["step"] == m["best"]["step"] and info["tokenizer"]["pad_id"] == 50257
    module = M.load_classifier_module(ROOT / "solutions")
    model = M.build_model(module, **info["config"])
    model.load_state_dict(state)
    from grader.capstone.data import synthetic_corpus
    from grader.capstone.training.loop import Dist, evaluate, encode_split

    tok = load_tokenizer(ROOT / "solutions", 64)
    test, _ = encode_split(synthetic_corpus(1000, 0)["test"], tok)
    _, acc, _ = evaluate(model, test, 64, tok.pad_id, 64, torch.device("cpu"), contextlib.nullcontext(), Dist())
    assert acc == pytest.approx(m["test"]["accuracy"])


@needs_ranks
def test_students_unfinished_classifier_is_named(tmp_path):
    code = model_folder(
        tmp_path / "mine" / "ch01", s1_23_classifier=(ROOT / "exercises/ch01/s1_23_classifier.py").read_text()
    )
    (code / "s1_23_tokenizer.py").write_text((ROOT / "solutions/ch01/s1_23_tokenizer.py").read_text())
    r = kata("train", "--code", str(tmp_path / "mine"), "--data", "synthetic:100", "--out", str(tmp_path / "o"), *TINY)
    assert r.returncode == 2
    assert "s1_23_classifier.py:" in r.stderr and "not implemented yet" in r.stderr and "--code reference" in r.stderr
    assert not (tmp_path / "o" / "best.safetensors").exists()


@needs_ranks
def test_students_classifier_trains(tmp_path):
    code = model_folder(tmp_path / "mine" / "ch01")
    (code / "s1_23_tokenizer.py").write_text((ROOT / "solutions/ch01/s1_23_tokenizer.py").read_text())
    r = kata(
        "train",
        "--code",
        str(tmp_path / "mine"),
        "--data",
        "synthetic:200",
        "--epochs",
        "1",
        "--out",
        str(tmp_path / "o"),
        *TINY,
    )
    assert r.returncode == 0, r.stderr
    m = metrics_of(tmp_path / "o")
    assert m["code"] == str(code / "s1_23_classifier.py") and m["tokenizer"] == str(code / "s1_23_tokenizer.py")


STUDENT_RUN = [
    "--data",
    "synthetic:200",
    "--epochs",
    "1",
    "--dim",
    "32",
    "--layers",
    "1",
    "--heads",
    "2",
    "--ff-dim",
    "64",
    "--max-len",
    "64",
    "-q",
]


def _stub_line(path: Path, block: str) -> int:
    """The line of the `raise NotImplementedError(` that stands for the solution block `block`."""
    lines = path.read_text().splitlines()
    return next(n for n, line in enumerate(lines, 1) if "raise NotImplementedError(" in line and block in line)


@needs_ranks
def test_student_code_trains_with_the_students_tokenizer(tmp_course):
    """`kata train --code student` tokenizes with exercises/ch01/s1_23_tokenizer.py: a stub there is
    named with its file and line before anything is read or trained; the solved file trains."""
    exercises = tmp_course / "exercises" / "ch01"
    model_folder(exercises)  # the model is done, the tokenizer not
    stub = exercises / "s1_23_tokenizer.py"
    line = _stub_line(stub, "base_vocab_size from the base tokenizer")
    r = kata("train", "--code", "student", "--out", str(tmp_course / "o1"), *STUDENT_RUN, cwd=tmp_course)
    assert r.returncode == 2, r.stdout + r.stderr
    assert f"{stub}:{line}: not implemented yet" in r.stderr, r.stderr
    assert "kata check s1_23_tokenizer" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_course / "o1").exists()

    # __init__ done, encode still a stub: named at once, from the probe review, not mid-corpus
    solved = (ROOT / "solutions/ch01/s1_23_tokenizer.py").read_text()
    body = "        return self.base.encode_ordinary(text)\n"
    assert body in solved
    stub.write_text(
        solved.replace(body, '        raise NotImplementedError("s1_23_tokenizer: encode as ordinary text")\n')
    )
    line = _stub_line(stub, "encode as ordinary text")
    r = kata("train", "--code", "student", "--out", str(tmp_course / "o2"), *STUDENT_RUN, cwd=tmp_course)
    assert r.returncode == 2 and f"{stub}:{line}: not implemented yet" in r.stderr, r.stderr
    assert "encode(text #0, pad=False)" in r.stderr

    stub.write_text(solved)
    r = kata("train", "--code", "student", "--out", str(tmp_course / "o3"), *STUDENT_RUN, cwd=tmp_course)
    assert r.returncode == 0, r.stdout + r.stderr
    m = metrics_of(tmp_course / "o3")
    assert m["tokenizer"] == str(stub) and m["code"] == str(exercises / "s1_23_classifier.py")
    info, _ = load_checkpoint(tmp_course / "o3")
    assert info["tokenizer"]["code"] == str(stub) and info["tokenizer"]["pad_id"] == 50257


@needs_ranks
def test_tokenizer_cache_key_follows_the_code(tmp_path):
    """Editing the tokenizer (or its settings) gives other ids a new cache key: no stale ids."""
    code = tmp_path / "mine" / "ch01"
    code.mkdir(parents=True)
    solved = (ROOT / "solutions/ch01/s1_23_tokenizer.py").read_text()
    (code / "s1_23_tokenizer.py").write_text(solved)
    a = load_tokenizer(tmp_path / "mine", 64)
    assert a.key == load_tokenizer(ROOT / "solutions", 64).key  # same file, same ids: shared cache entries
    assert a.key != load_tokenizer(tmp_path / "mine", 32).key
    assert a.key != load_tokenizer(tmp_path / "mine", 64, "head_tail").key
    (code / "s1_23_tokenizer.py").write_text(solved + "\n# edited\n")
    assert load_tokenizer(tmp_path / "mine", 64).key != a.key
    assert a.encode_batch(["the movie", ""]) == [a.encode("the movie", pad=False), [a.cls_id, a.sep_id]]


@needs_ranks
def test_head_count_that_does_not_divide_the_width_is_refused(tmp_path):
    r = kata("train", "--data", "synthetic:100", "--out", str(tmp_path / "o"), *TINY[:4], "--heads", "6", "--quiet")
    assert r.returncode == 2
    assert "heads=6 does not divide dim=64" in r.stderr


@needs_ranks
def test_bad_data_source_is_named(tmp_path):
    r = kata("train", "--data", str(tmp_path / "nope.csv"), "--out", str(tmp_path / "o"), *TINY)
    assert r.returncode == 2
    assert "nope.csv" in r.stderr and "Traceback" not in r.stderr


@needs_ranks
def test_ctrl_c_keeps_the_best_checkpoint(tmp_path):
    out = tmp_path / "run"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "grader",
            "train",
            "--data",
            "synthetic:4000",
            "--epochs",
            "50",
            "--eval-every",
            "10",
            "--out",
            str(out),
            *TINY,
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "KATA_LANG": "en"},
        # Ctrl-C as in a terminal: a process inherits an ignored SIGINT (a pytest-xdist
        # worker where an earlier test ignored it), and Python then installs no handler
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 120
    while not (out / "best.json").exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    assert proc.poll() is None, proc.communicate()
    time.sleep(1.0)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    assert "interrupted at step" in stdout and "is kept in" in stdout
    m = metrics_of(out)
    assert m["interrupted"] is True and m["test"] is None
    info, state = load_checkpoint(out)  # whole, and the one metrics.json calls best
    assert info["step"] == m["best"]["step"] and "bert.embed.token.weight" in state
    assert not list(out.glob(".*.tmp"))


@pytest.mark.slow
@needs_ranks
def test_torchrun_two_processes_gloo(tmp_path):
    """The same command under torchrun: DDP over gloo on the CPU, each process half the batches."""
    out = tmp_path / "ddp"
    args = ["--data", "synthetic:1000", "--epochs", "2", "--batch-size", "16", "--out", str(out), *TINY]
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--standalone",
            "--nproc_per_node",
            "2",
            "-m",
            "grader",
            "train",
            *args,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "OMP_NUM_THREADS": "1", "KATA_LANG": "en"},
    )
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.count("output: ") == 1  # only the main process speaks
    m = metrics_of(out)
    assert m["world_size"] == 2 and "x2" in r.stdout
    per_process = len(B.LengthBatches(torch.ones(900), 16, shuffle=True, world=2))
    assert m["steps_total"] == 2 * per_process
    assert sum(map(sum, m["test"]["confusion"])) == 250  # the two shards together cover the test set once
    assert m["history"][-1]["tokens"] > 0


# ---------------------------------------------------------------- the attention fast path


def test_fast_path_equals_the_manual_attention():
    model = reference_model()
    ids, mask = M.probe_batch(50260, 32, pad_id=50257, cls_id=50258)
    model.eval()
    with torch.no_grad():
        manual = model(ids, mask)
    n, why = M.enable_fast_attention(model, (ids, mask))
    assert n == 2 and why == ""
    model.eval()
    with torch.no_grad():
        fast = model(ids, mask)
        longer = torch.cat([ids, torch.full((4, 5), 50257)], 1)  # more padding: same logits
        padded = model(longer, (longer != 50257).long())
    torch.testing.assert_close(fast, manual, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(padded, manual, rtol=1e-5, atol=1e-5)
    # and it trains: gradients reach every parameter through scaled_dot_product_attention
    model.train()
    model(ids, mask).sum().backward()
    assert all(p.grad is not None for p in model.parameters() if p.requires_grad)


def test_fast_path_refused_for_an_attention_that_differs(tmp_path):
    wrong = solution_with(
        "s1_23_self_attention",
        "scores = (q @ k.transpose(-2, -1)) / math.sqrt(self.d)",
        "scores = (q @ k.transpose(-2, -1)) / self.d",
    )
    model_folder(tmp_path / "ch01", s1_23_self_attention=wrong)
    module = M.load_classifier_module(tmp_path)
    torch.manual_seed(0)
    model = M.build_model(module, vocab_size=50260, dim=32, max_len=32, layers=2, heads=4, ff_dim=64)
    ids, mask = M.probe_batch(50260, 32, pad_id=50257, cls_id=50258)
    model.eval()
    with torch.no_grad():
        before = model(ids, mask)
    n, why = M.enable_fast_attention(model, (ids, mask))
    assert n == 0 and "differs from your attention" in why
    with torch.no_grad():
        torch.testing.assert_close(model(ids, mask), before, rtol=0, atol=0)  # its own forward is kept


def test_an_unfinished_earlier_exercise_is_named(tmp_path):
    """The classifier imports the student's own encoder: a stub there says which exercise to
    finish first, with its file and line, instead of a traceback from another file."""
    stub = (ROOT / "exercises/ch01/s1_23_encoder.py").read_text()
    model_folder(tmp_path / "ch01", s1_23_encoder=stub)
    module = M.load_classifier_module(tmp_path)
    line = _stub_line(tmp_path / "ch01/s1_23_encoder.py", "create embed")
    with pytest.raises(M.ModelError) as e:
        M.build_model(module, vocab_size=50260, dim=32, max_len=32, layers=2, heads=4, ff_dim=64)
    assert (
        f"s1_23_classifier uses your code from s1_23_encoder.py, which is not finished yet "
        f"({tmp_path.resolve() / 'ch01/s1_23_encoder.py'}:{line} raises NotImplementedError): "
        "finish s1_23_encoder first"
    ) in str(e.value), str(e.value)

    # the attention's __init__ done, its forward not: named by the one forward run before any data is read
    source = (ROOT / "solutions/ch01/s1_23_self_attention.py").read_text()
    start = source.index("        # BEGIN SOLUTION project and split into heads")
    end = source.index("        # END SOLUTION", start) + len("        # END SOLUTION\n")
    unfinished = (
        source[:start] + "        raise NotImplementedError('s1_23_self_attention: the forward')\n" + source[end:]
    )
    model_folder(tmp_path / "ch01", s1_23_self_attention=unfinished)
    model = M.build_model(
        M.load_classifier_module(tmp_path), vocab_size=50260, dim=32, max_len=32, layers=2, heads=4, ff_dim=64
    )
    with pytest.raises(
        M.ModelError,
        match=r"the model's forward failed: s1_23_classifier uses your code from "
        r"s1_23_self_attention.py, which is not finished yet \(.*s1_23_self_attention.py:\d+ raises "
        r"NotImplementedError\): finish s1_23_self_attention first",
    ):
        M.check_forward(model, M.probe_batch(50260, 32, 50257, 50258), tmp_path / "ch01/s1_23_classifier.py")

    broken = solution_with("s1_23_encoder_block", "from s1_23_feed_forward import", "from s1_23_feedforward import")
    model_folder(tmp_path / "ch01", s1_23_encoder_block=broken)
    with pytest.raises(
        M.ModelError,
        match=r"importing .*s1_23_classifier.py failed: s1_23_classifier uses your code "
        r"from s1_23_encoder_block.py, which raised ModuleNotFoundError at .*s1_23_encoder_block.py:\d+",
    ):
        M.load_classifier_module(tmp_path)


def test_reference_and_student_model_files_do_not_mix(tmp_path):
    """Each import reads the exercise files beside its own classifier: a wrong attention in one
    folder never reaches a model imported from another in the same process."""
    wrong = solution_with(
        "s1_23_self_attention",
        "scores = (q @ k.transpose(-2, -1)) / math.sqrt(self.d)",
        "scores = (q @ k.transpose(-2, -1)) / self.d",
    )
    model_folder(tmp_path / "ch01", s1_23_self_attention=wrong)
    theirs = M.load_classifier_module(tmp_path)
    ours = M.load_classifier_module(ROOT / "solutions")
    attention = {
        m: m.BERTEncoder.__init__.__globals__["TransformerBlock"].__init__.__globals__["MultiHeadSelfAttention"]
        for m in (theirs, ours)
    }
    assert "/ self.d\n" in Path(attention[theirs].forward.__code__.co_filename).read_text()
    assert attention[ours].forward.__code__.co_filename == str(
        (ROOT / "solutions/ch01/s1_23_self_attention.py").resolve()
    )


def test_compile_traces_the_reference_and_a_students_model_in_one_process(tmp_path):
    """torch.compile (dynamo) imports a class's module again by its `__module__`: the classifier's
    sibling exercise files stay importable under private names of their folder's, so that
    compiling works for the reference and a student's folder alike, and the two never mix (the
    eager backend traces as inductor does, without generating code: a second)."""
    wrong = solution_with(
        "s1_23_self_attention",
        "scores = (q @ k.transpose(-2, -1)) / math.sqrt(self.d)",
        "scores = (q @ k.transpose(-2, -1)) / self.d",
    )
    model_folder(tmp_path / "ch01", s1_23_self_attention=wrong)
    probe = M.probe_batch(50260, 16, pad_id=50257, cls_id=50258)
    outputs = {}
    for where in (tmp_path, ROOT / "solutions"):
        module = M.load_classifier_module(where)
        torch.manual_seed(0)
        model = M.build_model(module, vocab_size=50260, dim=16, max_len=16, layers=1, heads=2, ff_dim=32).eval()
        assert not {"s1_23_encoder", "s1_23_self_attention"} & set(sys.modules)  # plain names never linger
        with torch.no_grad():
            eager = model(*probe)
            torch._dynamo.reset()
            compiled = torch.compile(model, dynamic=True, backend="eager")(*probe)
        torch.testing.assert_close(compiled, eager)
        outputs[where] = eager
    assert not torch.allclose(outputs[tmp_path], outputs[ROOT / "solutions"])  # the student's attention, not ours


@pytest.mark.slow
@needs_ranks
def test_train_with_compile_on_the_cpu(tmp_path):
    """`kata train --compile` (a README example) with inductor, as a user runs it, on a student's folder."""
    code = model_folder(tmp_path / "mine" / "ch01")
    (code / "s1_23_tokenizer.py").write_text((ROOT / "solutions/ch01/s1_23_tokenizer.py").read_text())
    r = kata(
        "train",
        "--code",
        str(tmp_path / "mine"),
        "--compile",
        "--max-steps",
        "3",
        "--out",
        str(tmp_path / "o"),
        *STUDENT_RUN,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    assert metrics_of(tmp_path / "o")["compile"] is True


def test_model_file_that_does_not_import_is_named(tmp_path):
    (tmp_path / "ch01").mkdir()
    (tmp_path / "ch01/s1_23_classifier.py").write_text("import torch\n\ndef broken(:\n    pass\n")
    with pytest.raises(M.ModelError, match=r"s1_23_classifier.py:3: importing it failed: SyntaxError"):
        M.load_classifier_module(tmp_path)


def test_cls_attention_rows_are_distributions_over_real_tokens():
    from grader.capstone.training.attention_map import cls_attention

    model = reference_model()
    ids, mask = M.probe_batch(50260, 32, pad_id=50257, cls_id=50258)
    row = 1  # half padding
    w = cls_attention(model, ids[row : row + 1], mask[row : row + 1])
    assert w.shape == (2, 4, ids.shape[1])  # layers, heads, tokens
    torch.testing.assert_close(w.sum(-1), torch.ones(2, 4))
    assert bool((w[:, :, mask[row] == 0] == 0).all()) and bool((w[:, :, mask[row] == 1] > 0).all())
    longer = torch.cat([ids[row : row + 1], torch.full((1, 7), 50257)], 1)
    torch.testing.assert_close(cls_attention(model, longer, (longer != 50257).long())[:, :, : ids.shape[1]], w)


@needs_ranks
def test_gpu_benchmark_script_runs_on_the_cpu(tmp_path):
    """benchmarks/train_gpu.py is only timed on a GPU; its --smoke mode proves the script works."""
    r = subprocess.run(
        [
            sys.executable,
            "benchmarks/train_gpu.py",
            "--device",
            "cpu",
            "--smoke",
            "--compare-minutes",
            "0.05",
            "--json",
            str(tmp_path / "g.json"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    figures = json.loads((tmp_path / "g.json").read_text())
    assert [row["pipeline"] for row in figures["throughput"]] == ["book", "fp32", "ours"]
    assert figures["throughput"][0]["real_fraction"] < figures["throughput"][2]["real_fraction"]
    for row in figures["throughput"]:  # the warm-up apart from the timed steps, each step timed
        assert row["warmup_steps"] >= 1 and row["warmup_seconds"] > 0 and row["steps"] == 3
        assert 0 < row["median_step_ms"] <= row["p90_step_ms"] and row["padded_tokens_per_s"] >= row["tokens_per_s"]
        assert row["mfu"] is None  # no peak for a CPU
    assert figures["throughput"][2]["settings"]["compile"] == "off"  # kata train's CPU settings
    assert 0 <= figures["time_to_accuracy"]["test_accuracy"] <= 1
    compared = figures["comparison"]  # TF-IDF, BERT from scratch, BERT pre-trained then fine-tuned
    assert compared["scratch"]["pretrain_steps"] == 0 and compared["pretrained"]["pretrain_steps"] >= 1
    assert all(0 <= compared[k]["accuracy"] <= 1 for k in ("tfidf", "scratch", "pretrained"))


# ---------------------------------------------------------------- batches


def _encoded(lengths):
    offsets = torch.zeros(len(lengths) + 1, dtype=torch.long)
    offsets[1:] = torch.cumsum(torch.tensor(lengths), 0)
    ids = torch.arange(int(offsets[-1])) % 997
    return B.Encoded(ids, offsets, torch.tensor([i % 2 for i in range(len(lengths))]))


def test_batches_cover_every_example_once_and_pad_little():
    g = torch.Generator().manual_seed(1)
    lengths = torch.randint(3, 200, (1000,), generator=g).tolist()
    data = _encoded(lengths)
    batches = B.LengthBatches(data.lengths, 32, shuffle=True, seed=3)
    seen = [i for b in batches for i in b]
    assert sorted(seen) == list(range(1000))
    batches.set_epoch(1)
    assert [i for b in batches for i in b] != seen  # a new order each epoch
    real = padded = 0
    for index in batches:
        ids, mask, labels = B.collate(data, index, pad_id=999, max_len=256)
        assert ids.shape[1] % 8 == 0 and ids.shape[1] - int(mask.sum(1).max()) < 8
        assert torch.equal(mask.sum(1), torch.tensor([lengths[i] for i in index]))
        assert torch.equal(ids[0, : lengths[index[0]]], data.ids[data.offsets[index[0]] : data.offsets[index[0] + 1]])
        assert bool((ids[mask == 0] == 999).all())
        real, padded = real + int(mask.sum()), padded + mask.numel()
    assert real / padded > 0.9  # pools of similar length; padding everything to 256 would give ~40%


def test_batches_are_split_between_processes():
    data = _encoded([5 + i % 50 for i in range(330)])
    shards = [list(B.LengthBatches(data.lengths, 16, shuffle=True, seed=0, rank=r, world=2)) for r in (0, 1)]
    assert len(shards[0]) == len(shards[1])  # same number of steps, or DDP would hang
    flat = [sorted(i for b in s for i in b) for s in shards]
    assert not set(flat[0]) & set(flat[1])
    evals = [list(B.LengthBatches(data.lengths, 16, shuffle=False, rank=r, world=2)) for r in (0, 1)]
    assert sorted(i for s in evals for b in s for i in b) == list(range(330))  # evaluation: all, once


# ---------------------------------------------------------------- GPU (skipped without CUDA)


@pytest.mark.gpu
@needs_cuda
@needs_ranks
def test_gpu_bf16_compiled_training(tmp_path):
    out = tmp_path / "gpu"
    r = kata(
        "train",
        "--data",
        "synthetic:4000",
        "--epochs",
        "3",
        "--device",
        "cuda",
        "--compile",
        "--amp",
        "bf16",
        "--out",
        str(out),
        *TINY,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    m = metrics_of(out)
    assert m["device"].startswith("cuda") and m["dtype"] == "bfloat16" and m["compile"] is True
    assert m["settings"]["compile"] == "on" and m["settings"]["resident_ids"] is True
    assert m["test"]["accuracy"] >= 0.85


@pytest.mark.gpu
@needs_cuda
@needs_ranks
def test_gpu_default_settings_train_with_cuda_graphs(tmp_path):
    """kata train's defaults on CUDA (issue 27): batch 64, fp32 + TF32, fixed lengths, ids on the GPU,
    CUDA graphs, the loss read every 50 steps; the run says so and learns."""
    out = tmp_path / "gpu"
    r = kata("train", "--data", "synthetic:4000", "--epochs", "3", "--device", "cuda", "--out", str(out), *TINY)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "settings for cuda" in r.stdout and "CUDA graphs" in r.stdout
    m = metrics_of(out)
    assert m["dtype"] == "float32" and m["compile"] is True
    assert m["settings"] == {
        "batch_size": 64,
        "dtype": "float32",
        "compile": "cudagraphs",
        "buckets": [32, 64],
        "resident_ids": True,
        "sync_every": 50,
    }
    assert m["test"]["accuracy"] >= 0.85


@pytest.mark.gpu
@needs_cuda
def test_gpu_fast_path_equals_manual_in_bf16():
    model = reference_model()
    probe = M.probe_batch(50260, 32, pad_id=50257, cls_id=50258)
    model.cuda().eval()
    ids, mask = (t.cuda() for t in probe)
    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
        manual = model(ids, mask).float()
    model.cpu()
    assert M.enable_fast_attention(model, probe)[0] == 2  # checked in fp32 on the CPU, as kata train does
    model.cuda().eval()
    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
        fast = model(ids, mask).float()
    torch.testing.assert_close(fast, manual, rtol=2e-2, atol=2e-2)  # bf16 keeps 8 bits of mantissa


def test_damaged_ranks_stop_training_naming_the_asset_not_the_host_path(tmp_path, monkeypatch):
    """Issue 37: `kata train` reads the course's gpt2.tiktoken only as pinned; a damaged copy is
    refused by name and repair command, and the message shows no host path."""
    from grader.capstone import gpt2
    from grader.capstone.training.tokenizer import TokenizerError

    good = gpt2.asset_path()
    if not good.is_file():
        pytest.skip("the course's .kata/assets is not fetched (`kata assets fetch`)")
    assets = tmp_path / "assets"
    assets.mkdir()
    lines = good.read_bytes().splitlines(keepends=True)
    lines[0], lines[1] = lines[1], lines[0]
    (assets / "gpt2.tiktoken").write_bytes(b"".join(lines))
    monkeypatch.setenv("KATA_ASSETS_DIR", str(assets))
    assert gpt2.asset_path() == assets / "gpt2.tiktoken"
    with pytest.raises(TokenizerError) as e:
        load_tokenizer(ROOT / "solutions", 64)
    assert "gpt2.tiktoken" in str(e.value) and "kata assets fetch" in str(e.value)
    assert str(tmp_path) not in str(e.value)
