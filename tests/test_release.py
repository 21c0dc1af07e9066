"""`kata release OUT`: the student bundle, installed for real into a fresh virtual environment.

The bundle is built once for this module (the public checks, listings and figures run on the
solutions while it records what they read), installed with pip into a new venv (non-editable;
its dependencies come from this venv's site-packages through a .pth file, so torch is not
reinstalled), and used from a copy of the bundle folder as a student would: `kata check` fails
on a stub and passes on a solved file, a §1.23 mistake is still named from the recorded
reference calls, `kata reset` and `kata list` work without solutions, the tokenizer's public
checks answer from recorded reference calls, and `kata train` tokenizes with the student's own
tokenizer. Then the bundle is searched for what must not be in it, independently of the
release's own scan.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import site
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from safetensors import safe_open

from grader.course import manifest as course_module
from grader.capstone import gpt2
from grader.instructor.release import release
from grader.authoring.stubs import blocks, stub_text
from tests.conftest import ROOT, SOLUTIONS

pytestmark = pytest.mark.slow

COURSE = course_module.load(ROOT)
HIDDEN = {(ex.id, c.name) for ex in COURSE.exercises for c in ex.checks if c.hidden}
PUBLIC = {(ex.id, c.name) for ex in COURSE.exercises for c in ex.checks if not c.hidden}


def public_count(ex_id: str) -> int:
    """How many public checks the course gives an exercise (the counts change as checks are added)."""
    return sum(1 for ex, _ in PUBLIC if ex == ex_id)


def _env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return {**env, "KATA_LANG": "en", **extra}


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("release") / "kata-student"
    proc = subprocess.run(
        [sys.executable, "-m", "grader", "release", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env=_env(PYTHONPATH=str(ROOT)),
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "nothing hidden found inside" in proc.stdout
    return out


@pytest.fixture(scope="module")
def venv(bundle, tmp_path_factory) -> Path:
    """A new venv with the bundle pip-installed into it (not editable)."""
    env_dir = tmp_path_factory.mktemp("venv") / "venv"
    base = getattr(sys, "_base_executable", None) or sys.executable
    subprocess.run([base, "-m", "venv", "--without-pip", str(env_dir)], check=True, timeout=120)
    purelib = subprocess.run(
        [str(env_dir / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    Path(purelib, "shared-deps.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    source = env_dir.parent / "bundle-copy"  # pip builds in the source folder (build/): keep the bundle as released
    shutil.copytree(bundle, source)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(env_dir / "bin" / "python"),
            "install",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "--disable-pip-version-check",
            str(source),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=env_dir.parent,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    where = subprocess.run(
        [str(env_dir / "bin" / "python"), "-c", "import grader; print(grader.__file__)"],
        capture_output=True,
        text=True,
        cwd="/",
        check=True,
    ).stdout.strip()
    assert where.startswith(purelib), where  # the installed bundle, not this checkout
    return env_dir


@pytest.fixture
def project(bundle, tmp_path) -> Path:
    """The student's working copy: the bundle folder, with the course's data files."""
    proj = tmp_path / "kata"
    shutil.copytree(bundle, proj)
    if (ROOT / ".kata" / "assets").is_dir():
        shutil.copytree(ROOT / ".kata" / "assets", proj / ".kata" / "assets")
    return proj


def kata_in(venv: Path, project: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(venv / "bin" / "kata"), *args], cwd=project, capture_output=True, text=True, timeout=600, env=_env()
    )


def test_check_fails_on_the_stub_and_passes_when_solved(venv, project):
    proc = kata_in(venv, project, "check", "s1_11_softmax")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    n = public_count("s1_11_softmax")
    assert f"0 of {n} public checks pass" in proc.stdout
    shutil.copy(SOLUTIONS / "ch01" / "s1_11_softmax.py", project / "exercises" / "ch01")
    proc = kata_in(venv, project, "check", "s1_11_softmax")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"{n} of {n} public checks pass" in proc.stdout
    # the same check through the installed package's warm grader, as a student's runs by default
    folder = Path(tempfile.mkdtemp(prefix="kw-"))
    os.chmod(folder, 0o700)
    warm = {"KATA_WARM": "1", "KATA_WARM_DIR": str(folder), "KATA_WARM_IDLE": "60"}
    try:
        for _ in range(2):  # the first starts the server, the second finds it
            hot = subprocess.run(
                [str(venv / "bin" / "kata"), "check", "s1_11_softmax"],
                cwd=project,
                capture_output=True,
                text=True,
                timeout=600,
                env=_env(**warm),
            )
            assert hot.returncode == 0 and f"{n} of {n} public checks pass" in hot.stdout, hot.stdout + hot.stderr
        # a check that found no server grades in its own process and still passes: the socket and the
        # server's answer say that the installed package's warm grader served it
        # (-P below: the installed package, not the bundle's grader/ source folder that cwd would give)
        assert list(folder.glob("*.sock")), (
            hot.stdout + hot.stderr + "".join(p.read_text() for p in folder.glob("*.log"))
        )
        ping = subprocess.run(
            [
                str(venv / "bin" / "python"),
                "-P",
                "-c",
                "from grader.course import manifest; "
                "from grader.student.warm import client; print(client.ping(manifest.load()))",
            ],
            cwd=project,
            capture_output=True,
            text=True,
            timeout=60,
            env=_env(**warm),
        )
        assert ping.stdout.strip() == "True", ping.stdout + ping.stderr
    finally:
        subprocess.run(
            [
                str(venv / "bin" / "python"),
                "-P",
                "-c",
                "from grader.course import manifest; "
                "from grader.student.warm import client; client.stop(manifest.load())",
            ],
            cwd=project,
            capture_output=True,
            timeout=60,
            env=_env(**warm),
        )
        shutil.rmtree(folder, ignore_errors=True)


def test_reference_model_mistakes_are_named_from_the_recorded_calls(venv, project):
    """The §1.23 block's public checks name post-LN with the recorded reference calls (the
    reference model itself is not in the bundle)."""
    ex = "s1_23_encoder_block"
    source = (SOLUTIONS / "ch01" / f"{ex}.py").read_text()
    right = "        x = x + self.attn(self.norm1(x), mask)\n        x = x + self.ff(self.norm2(x))\n"
    assert right in source
    target = project / "exercises" / "ch01" / f"{ex}.py"
    target.write_text(source)
    for done in ("s1_23_self_attention", "s1_23_feed_forward"):  # the block imports the student's own
        shutil.copy(SOLUTIONS / "ch01" / f"{done}.py", project / "exercises" / "ch01")
    proc = kata_in(venv, project, "check", ex)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    target.write_text(
        source.replace(
            right, "        x = self.norm1(x + self.attn(x, mask))\n        x = self.norm2(x + self.ff(x))\n"
        )
    )
    proc = kata_in(venv, project, "check", ex)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "this is post-LN" in proc.stdout, proc.stdout


def test_tokenizer_checks_answer_from_the_recorded_reference(venv, project):
    """s1_23_tokenizer's public checks compare with the reference tokenizer, which the bundle does
    not hold: the stub fails, the solution passes (the GPT-2 checks too, where the ranks are), and
    a known mistake is named from the recorded wrong answers."""
    ex = "s1_23_tokenizer"
    n = public_count(ex)
    proc = kata_in(venv, project, "check", ex)
    assert proc.returncode == 1 and f"0 of {n} public checks pass" in proc.stdout, proc.stdout + proc.stderr
    source = (SOLUTIONS / "ch01" / f"{ex}.py").read_text()
    target = project / "exercises" / "ch01" / f"{ex}.py"
    target.write_text(source)
    proc = kata_in(venv, project, "check", ex)
    assert proc.returncode == 0 and f"{n} of {n} public checks pass" in proc.stdout, proc.stdout + proc.stderr
    if gpt2.have_asset():
        assert "skipped" not in proc.stdout.lower(), proc.stdout
    right = "        ids = [self.cls_id] + self.truncate(self.text_ids(text)) + [self.sep_id]\n"
    assert right in source
    target.write_text(
        source.replace(right, "        ids = ([self.cls_id] + self.text_ids(text) + [self.sep_id])[:self.max_len]\n")
    )
    proc = kata_in(venv, project, "check", ex)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "lost its [SEP]" in " ".join(proc.stdout.split()), proc.stdout


@pytest.mark.skipif(not gpt2.have_asset(), reason="gpt2.tiktoken is missing (kata assets fetch)")
def test_train_tokenizes_with_the_students_tokenizer(venv, project):
    """The bundle's `kata train` (no solutions/: --code student) names the unfinished tokenizer by
    file and line, and trains once the student's tokenizer and classifier are done."""
    run = [
        "train",
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
    exercises = project / "exercises" / "ch01"
    stub = exercises / "s1_23_tokenizer.py"
    line = next(
        n
        for n, text in enumerate(stub.read_text().splitlines(), 1)
        if "raise NotImplementedError(" in text and "base_vocab_size" in text
    )
    proc = kata_in(venv, project, *run, "--out", str(project / "o1"))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"s1_23_tokenizer.py:{line}: not implemented yet" in proc.stderr, proc.stderr
    assert "kata check s1_23_tokenizer" in proc.stderr and "--code reference" not in proc.stderr
    for name in (
        "s1_23_tokenizer",
        "s1_23_classifier",
        "s1_23_encoder",
        "s1_23_bert_embedding",
        "s1_23_encoder_block",
        "s1_23_self_attention",
        "s1_23_feed_forward",
    ):  # the classifier imports the student's encoder
        shutil.copy(SOLUTIONS / "ch01" / f"{name}.py", exercises)
    proc = kata_in(venv, project, *run, "--out", str(project / "o2"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    metrics = json.loads((project / "o2" / "metrics.json").read_text())
    assert Path(metrics["tokenizer"]).resolve() == stub.resolve() and metrics["test"]["accuracy"] is not None


def test_reset_and_list_work_without_solutions(venv, project):
    target = project / "exercises" / "ch01" / "s1_13_causal_mask.py"
    stub = target.read_text()
    first = next(line for line in stub.splitlines() if line.strip().startswith("raise NotImplementedError("))
    target.write_text(stub.replace(first, first.replace("raise NotImplementedError(", "return None  # (", 1), 1))
    listed = json.loads(kata_in(venv, project, "list", "--no-run", "--json").stdout)
    status = {e["id"]: e["status"] for e in listed["exercises"]}
    assert status["s1_11_softmax"] == "not_started" and status["s1_13_causal_mask"] == "unknown", status
    proc = kata_in(venv, project, "reset", "s1_13_causal_mask")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert target.read_text() == stub
    assert list((project / ".kata" / "backups").rglob("s1_13_causal_mask.py"))


def test_the_bundle_speaks_the_students_language_without_solutions(venv, project):
    """Both languages' stubs ship in the installed package: `kata --lang zh reset` writes the
    Chinese stub, and a Chinese stub lists as not started under either language."""
    target = project / "exercises" / "ch01" / "s1_12_context.py"
    english = target.read_text()
    proc = kata_in(venv, project, "--lang", "zh", "reset", "s1_12_context")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    chinese = target.read_text()
    assert chinese.startswith("# 练习 s1_12_context（§1.12）") and "NotImplementedError('s1_12_context：" in chinese
    for lang in ("en", "zh"):
        listed = json.loads(kata_in(venv, project, "--lang", lang, "list", "--no-run", "--json").stdout)
        assert {e["id"]: e["status"] for e in listed["exercises"]}["s1_12_context"] == "not_started"
    proc = kata_in(venv, project, "reset", "s1_12_context", "--lang", "en")
    assert proc.returncode == 0 and target.read_text() == english, proc.stdout + proc.stderr


def test_the_bundle_shows_the_errata_in_chinese_cut_as_the_english(venv, project, bundle):
    """`kata --lang zh run LISTING --book` in the student edition: each entry in Chinese
    (locale/zh/errata.po ships beside ERRATA.md), an entry proved by hidden checks only cut as its
    English is (where, book, classification), and no hidden check's name (test_nothing_hidden_is_inside
    reads the shipped catalog too)."""
    assert (bundle / "locale" / "zh" / "errata.po").is_file()
    out = kata_in(venv, project, "--lang", "zh", "run", "1.6", "--book").stdout
    assert "勘误 E-1.12-d" in out and "**位置：**代码清单 1.6" in out and "Where:" not in out
    out = kata_in(venv, project, "--lang", "zh", "run", "1.39", "--book").stdout
    assert "勘误 E-1.23-t" in out and "由隐藏检查给出并计分" in out and "原因" not in out.split("勘误 E-1.23-t")[1]
    assert "Where:" not in out and "hidden" not in out


def test_release_refuses_in_a_bundle_and_over_a_folder(venv, project, tmp_path):
    proc = kata_in(venv, project, "release", str(tmp_path / "again"))
    assert proc.returncode == 2 and "only in the instructor's course" in proc.stderr, proc.stderr
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "notes.txt").write_text("mine")
    proc = subprocess.run(
        [sys.executable, "-m", "grader", "release", str(busy), "--force"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env=_env(PYTHONPATH=str(ROOT)),
    )
    assert proc.returncode == 2 and "refusing to replace it" in proc.stderr, proc.stderr
    assert (busy / "notes.txt").read_text() == "mine"


# ----------------------------------------------------------------------------- nothing hidden inside
def _texts(bundle: Path) -> dict[str, str]:
    out = {}
    for p in bundle.rglob("*"):
        if p.is_file():
            try:
                out[p.relative_to(bundle).as_posix()] = p.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                pass
    return out


def _hidden_only_keys(ex_id: str, shipped_code: str) -> set[str]:
    """Fixture keys written as literals (f["key"]) in hidden checks and nowhere in the shipped code."""
    tree = ast.parse(COURSE.check_file(COURSE.get(ex_id)).read_text())
    keys = set()
    for fn in tree.body:
        if isinstance(fn, ast.FunctionDef) and (ex_id, fn.name) in HIDDEN:
            for node in ast.walk(fn):
                if (
                    isinstance(node, ast.Subscript)
                    and isinstance(node.slice, ast.Constant)
                    and isinstance(node.slice.value, str)
                ):
                    keys.add(node.slice.value)
    return {k for k in keys if f'"{k}"' not in shipped_code and f"'{k}'" not in shipped_code}


def test_nothing_hidden_is_inside(bundle):
    texts = _texts(bundle)
    files = {p.relative_to(bundle).as_posix() for p in bundle.rglob("*") if p.is_file()}
    trusted = ("bert_reference", "tokenizer_reference")  # the checks' re-implementations of exercises
    assert not [f for f in files if f.startswith(("solutions/", "tests/")) or any(m in f for m in trusted)]
    assert {"course.toml", "README.md", "setup.sh", "pyproject.toml", "grader/release.json"} <= files
    assert not [f for f, text in texts.items() if any(re.search(rf"\b{m}\b", text) for m in trusted)]
    assert not getattr(release, "SHIPPED_REFERENCES", None)  # no module ships with an exercise's code

    # Hidden check names: nowhere (a name that is also some public check's may appear as that one).
    hidden_only = {name for _, name in HIDDEN} - {name for _, name in PUBLIC}
    assert len(hidden_only) > 50
    pattern = re.compile(r"\b(" + "|".join(sorted(hidden_only)) + r")\b")
    assert not {f: m.group(0) for f, text in texts.items() if (m := pattern.search(text))}

    # Each shipped check module holds exactly its exercise's public checks.
    for ex in COURSE.exercises:
        shipped = course_module.read_checks(bundle / "grader" / "checks" / f"test_{ex.id}.py")
        assert {c.name for c in shipped} == {c.name for c in ex.checks if not c.hidden}, ex.id
        assert not any(c.hidden for c in shipped)
        assert "def make_fixtures" not in texts[f"grader/checks/test_{ex.id}.py"]

    # Fixture values: a subset of the instructor's keys, none that only hidden checks read.
    code = "\n".join(text for f, text in texts.items() if f.endswith(".py"))
    hidden_keys_seen = 0
    for ex in COURSE.exercises:
        with safe_open(str(COURSE.fixtures_dir / f"{ex.id}.safetensors"), "pt") as f:
            full = set(f.keys())
        path = bundle / "grader" / "fixtures" / f"{ex.id}.safetensors"
        shipped = set(safe_open(str(path), "pt").keys()) if path.is_file() else set()
        assert shipped <= full, ex.id
        hidden_keys = _hidden_only_keys(ex.id, code) & full
        hidden_keys_seen += len(hidden_keys)
        assert not shipped & hidden_keys, (ex.id, shipped & hidden_keys)
    assert hidden_keys_seen > 20  # e.g. softmax's "neg_inf2", read only by test_negative_infinity
    softmax = set(safe_open(str(bundle / "grader/fixtures/s1_11_softmax.safetensors"), "pt").keys())
    # "neg_inf" ships since issue 36: the public stability check reads softmax([2, 3, -inf]) too
    assert "neg_inf2" not in softmax and "softmax_dim0" not in softmax and "large" in softmax and "neg_inf" in softmax

    # Solution code: no line of a solution block that the stubs do not show, in any file.
    shown = {line.strip() for ex in COURSE.exercises for line in stub_text(COURSE, ex).splitlines()}
    owners: dict[str, set[str]] = {}
    for ex in COURSE.exercises:
        source = (SOLUTIONS / "ch01" / f"{ex.id}.py").read_text()
        lines = source.splitlines()
        for b in blocks(source):
            for line in lines[b.start : b.end - 1]:
                s = line.strip()
                if len(s) >= 24 and not s.startswith("#") and s not in shown:
                    owners.setdefault(s, set()).add(ex.id)
    assert len(owners) > 200
    for f, text in texts.items():
        found = {s for s in (line.strip() for line in text.splitlines()) if s in owners}
        assert not found, (f, sorted(found)[:3])

    # The reference model's code: none of its functions' lines.
    reference = (COURSE.checks_dir / "bert_reference.py").read_text()
    tree = ast.parse(reference)
    model_lines = set()
    for fn in tree.body:
        if isinstance(fn, ast.FunctionDef) and fn.name in (
            "embedding",
            "attention",
            "feed_forward",
            "block",
            "encoder",
            "pool",
            "classify",
        ):
            for line in reference.splitlines()[fn.body[0].end_lineno : fn.end_lineno]:
                if len(line.strip()) >= 24:
                    model_lines.add(line.strip())
    assert len(model_lines) > 20
    assert not [f for f, text in texts.items() if model_lines & {line.strip() for line in text.splitlines()}]

    # The reference tokenizer's code (the checks' BertTokenizer): none of its methods' lines but the
    # argument checks the exercise gives in its stub.
    reference = (COURSE.checks_dir / "tokenizer_reference.py").read_text()
    tree = ast.parse(reference)
    tokenizer_lines = set()
    for cls in tree.body:
        if isinstance(cls, ast.ClassDef) and cls.name == "BertTokenizer":
            for fn in cls.body:
                if isinstance(fn, ast.FunctionDef):
                    for line in reference.splitlines()[fn.body[0].end_lineno : fn.end_lineno]:
                        if len(line.strip()) >= 24 and line.strip() not in shown:
                            tokenizer_lines.add(line.strip())
    assert len(tokenizer_lines) > 10, sorted(tokenizer_lines)
    assert "self.sep_id = self.base_vocab_size + 2" in tokenizer_lines
    assert not {
        f: sorted(hit)[:3]
        for f, text in texts.items()
        if (hit := tokenizer_lines & {line.strip() for line in text.splitlines()})
    }
