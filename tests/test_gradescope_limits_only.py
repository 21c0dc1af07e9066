"""Gradescope without namespaces (issue 25, part 2): `kata export gradescope --grading-sandbox
limits-only`, run as Gradescope runs it: the zip unpacked into an /autograder-shaped tree that other
users may enter (as Gradescope's is), `run_autograder` run as root, bubblewrap unable to start.

Each attack is the reference solution of s1_12_context (no forbidden list: its file may import os,
fork and signal) with code appended that runs at import, in every check's worker:
- read a hidden check module, a fixture, a solution and the grader's settings, and raise their text
  into every check's message;
- start a setsid daemon, kill the fork server so that the daemon is orphaned, and have the daemon
  rewrite results.json whenever it does not say 100 (the test waits past that and reads it again);
- write into the results folder;
- signal the grader (SIGSTOP, then SIGKILL, every process named like it, and kill(-1)).
Each must fail: the score is what honest grading gives, nothing hidden shows, and no process of
the submission outlives run_autograder. The honest solution gets full marks in that mode, and the
results say what held ("limits-only (own uid)").

The interpreter must be one other users can run, as on Gradescope (/usr/bin/python3, a venv in
/autograder); where this machine's lives under /root (mode 0700), run_autograder runs in a mount
namespace of its own in which /root holds only that interpreter's folder."""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import pytest

from grader.course import manifest as course_module
from tests.conftest import ROOT, SOLUTIONS

pytestmark = [
    pytest.mark.slow,  # whole autograder runs
    pytest.mark.skipif(os.getuid() != 0, reason="Gradescope runs run_autograder as root"),
]

COURSE = course_module.load(ROOT)
EXERCISE = COURSE.get("s1_12_context")
SECRET = "kata-secret-7f3a91"  # planted in the unpacked course: nothing may show it
FORGED = 100.0
FAKE_BWRAP = "#!/bin/sh\necho 'bwrap: Creating new namespace failed: Operation not permitted' >&2\nexit 1\n"


def _blocking_ancestor(path: str) -> tuple[str, str] | None:
    """(the first folder above `path` that other users cannot enter, its child on the way), or None."""
    parts = Path(os.path.realpath(path)).parts
    for i in range(1, len(parts) - 1):
        folder = os.path.join(*parts[: i + 1])
        if not os.stat(folder).st_mode & stat.S_IXOTH:
            return folder, parts[i + 1]
    return None


# Like Docker's default seccomp profile for a root without SYS_ADMIN (the outside attack's `nons`):
# unshare, setns, mount, umount2, pivot_root, fsopen and open_tree fail with EPERM, clone with a
# namespace flag too, clone3 with ENOSYS (so that libc falls back to clone). Without it this
# machine would still let the grader and its workers make namespaces, as Gradescope's may not.
NO_NAMESPACES = r"""
import ctypes, os, platform, struct, sys
CALLS = {"x86_64": (0xC000003E, 435, 272, 56, (308, 165, 166, 155, 430, 428)),
         "aarch64": (0xC00000B7, 435, 97, 220, (268, 40, 39, 41, 430, 428))}
arch, clone3, unshare, clone, denied = CALLS[platform.machine()]
ALLOW, ERRNO, EPERM, ENOSYS = 0x7FFF0000, 0x00050000, 1, 38
LD, JEQ, JSET, RET = 0x20, 0x15, 0x45, 0x06
body = [(LD, 0, 0, 4), (JEQ, "arch", "allow", arch), "arch", (LD, 0, 0, 0),
        (JEQ, "nosys", "n1", clone3), "n1"]
for i, nr in enumerate(denied):
    body += [(JEQ, "deny", f"d{i}", nr), f"d{i}"]
body += [(JEQ, "flags_u", "c", unshare), "c", (JEQ, "flags_c", "allow", clone),
         "flags_u", (LD, 0, 0, 16), (JSET, "deny", "allow", 0x7E020080),
         "flags_c", (LD, 0, 0, 16), (JSET, "deny", "allow", 0x7E020000),
         "allow", (RET, 0, 0, ALLOW), "deny", (RET, 0, 0, ERRNO | EPERM), "nosys", (RET, 0, 0, ERRNO | ENOSYS)]
where, n = {}, 0
for item in body:
    if isinstance(item, str):
        where[item] = n
    else:
        n += 1
prog, n = b"", 0
for item in body:
    if isinstance(item, str):
        continue
    code, jt, jf, k = item
    jt, jf = ((where[j] - n - 1) if isinstance(j, str) else j for j in (jt, jf))
    prog += struct.pack("=HBBI", code, jt, jf, k)
    n += 1
class Prog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]
libc = ctypes.CDLL(None, use_errno=True)
if libc.prctl(22, 2, ctypes.byref(Prog(len(prog) // 8, prog)), 0, 0) != 0:  # PR_SET_SECCOMP, FILTER
    sys.exit("no_namespaces: seccomp: " + os.strerror(ctypes.get_errno()))
os.execvp(sys.argv[1], sys.argv[1:])
"""


def _prefix(keep: Path, hide_checkout: bool) -> list[str]:
    """The command prefix of a run: in a mount namespace of its own when other users cannot reach
    this Python (see the module's doc) or `hide_checkout`, and then refused every namespace.

    hide_checkout: this checkout (ROOT) shows only its .venv, as on Gradescope, where the only
    course on the machine is the /autograder one. Else the worker's Python, an editable install
    of ROOT (README's "try it locally"), imports `grader` from this readable checkout."""
    if platform.machine() not in ("x86_64", "aarch64"):
        pytest.skip(f"no seccomp filter written for {platform.machine()}")
    python = os.path.realpath(sys.executable)
    (keep / "no_namespaces.py").write_text(NO_NAMESPACES)
    wrap = [sys.executable, "-I", "-S", str(keep / "no_namespaces.py")]
    lines = ["set -e"]
    blocked = _blocking_ancestor(os.path.dirname(python))
    if blocked is not None:
        folder, child = blocked
        lines += [
            f"mkdir -p '{keep}/held'",
            f"mount --bind '{os.path.join(folder, child)}' '{keep}/held'",
            f"mount -t tmpfs -o mode=0755 tmpfs '{folder}'",
            f"mkdir '{os.path.join(folder, child)}'",
            f"mount --bind '{keep}/held' '{os.path.join(folder, child)}'",
        ]
    if hide_checkout:
        venv = ROOT / ".venv"
        if not venv.is_dir():
            pytest.skip(f"no {venv} to keep while hiding the checkout")
        lines += [
            f"mkdir -p '{keep}/venv'",
            f"mount --bind '{venv}' '{keep}/venv'",
            f"mount -t tmpfs -o mode=0755 tmpfs '{ROOT}'",
            f"mkdir '{venv}'",
            f"mount --bind '{keep}/venv' '{venv}'",
        ]
    if len(lines) == 1:
        return wrap
    if shutil.which("unshare") is None:
        pytest.skip("no unshare to make the mount namespace this run needs")
    script = keep / "ns.sh"
    script.write_text("\n".join(lines + ['exec "$@"']) + "\n")
    prefix = ["unshare", "-m", "--propagation", "private", "sh", str(script)]
    probe = subprocess.run([*prefix, *wrap, "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip(f"no mount namespace or seccomp filter for this run: {probe.stderr}")
    unshared = subprocess.run([*prefix, *wrap, "unshare", "-U", "true"], capture_output=True, text=True)
    assert unshared.returncode != 0, "the filter let a namespace be made"
    return prefix + wrap


@pytest.fixture(scope="module")
def run_prefix(tmp_path_factory) -> list[str]:
    """Gradescope's machine: no namespace can be made, the only course is the /autograder one."""
    return _prefix(tmp_path_factory.mktemp("gradescope-machine"), hide_checkout=True)


@pytest.fixture(scope="module")
def checkout_prefix(tmp_path_factory) -> list[str]:
    """A teacher trying the autograder locally: no namespace, KATA_PYTHON an editable install of
    this (readable) checkout."""
    return _prefix(tmp_path_factory.mktemp("teacher-machine"), hide_checkout=False)


@pytest.fixture(scope="module")
def autograder_zip(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("export") / "autograder.zip"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "grader",
            "export",
            "gradescope",
            str(out),
            "-e",
            EXERCISE.id,
            "--grading-sandbox",
            "limits-only",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT), "KATA_LANG": "en"},
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "CAN FORGE ITS SCORE" in proc.stdout and "unprivileged user of its own" in proc.stdout, proc.stdout
    return out


@pytest.fixture
def autograder(autograder_zip):
    """An /autograder tree in a folder every user may enter (Gradescope's /autograder is 0755), the
    zip unpacked in source/, a solution and the grader's secret marked with SECRET."""
    root = Path(tempfile.mkdtemp(prefix="ag-"))
    root.chmod(0o755)
    for d in ("source", "submission", "results"):
        (root / d).mkdir()
        (root / d).chmod(0o755)
    with zipfile.ZipFile(autograder_zip) as zf:
        zf.extractall(root / "source")
    (root / "source" / "run_autograder").chmod(0o755)
    kata = root / "source" / "kata"
    with open(kata / "grader" / "checks" / f"test_{EXERCISE.id}.py", "a") as f:
        f.write(f"\n# {SECRET}-check\n")
    (kata / "solutions" / "ch01").mkdir(parents=True)  # as if the instructor's folder had been shipped
    (kata / "solutions" / "ch01" / f"{EXERCISE.id}.py").write_text(f"# {SECRET}-solution\n")
    spy = root / "spy"  # where the attacks leave what the test looks at: open to every user
    spy.mkdir()
    spy.chmod(0o1777)
    yield root
    subprocess.run(["chmod", "-R", "u+rwX", str(root)])
    shutil.rmtree(root, ignore_errors=True)


def run_autograder(root: Path, prefix: list[str], tmp_path: Path) -> dict:
    bin_dir = tmp_path / "fakebin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "bwrap").write_text(FAKE_BWRAP)
    (bin_dir / "bwrap").chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k != "KATA_SANDBOX"}
    env.update(
        PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}", AUTOGRADER_ROOT=str(root), KATA_PYTHON=sys.executable
    )
    proc = subprocess.run(
        [*prefix, "bash", str(root / "source" / "run_autograder")], capture_output=True, text=True, timeout=600, env=env
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return json.loads((root / "results" / "results.json").read_text())


def submit(root: Path, attack: str = "") -> None:
    code = (SOLUTIONS / "ch01" / f"{EXERCISE.id}.py").read_text()
    (root / "submission" / f"{EXERCISE.id}.py").write_text(
        code + "\n\n# --- the attack, run at import in every check's worker ---\n" + attack.replace("@ROOT@", str(root))
    )


def _everything_said(res: dict) -> str:
    return json.dumps(res, ensure_ascii=False)


def _assert_honest(res: dict) -> None:
    assert res["score"] == EXERCISE.points, [(t["name"], t["status"], t["output"][:300]) for t in res["tests"]]
    assert all(t["status"] == "passed" for t in res["tests"]), res["tests"]
    assert "unprivileged user of its own" in res["output"], res["output"]
    assert res["extra_data"]["sandbox"] == "limits-only (own uid)", res["extra_data"]


def test_an_honest_submission_gets_full_marks_and_the_results_say_what_held(autograder, run_prefix, tmp_path):
    submit(autograder, "import os\nopen('@ROOT@/spy/uid', 'w').write(str(os.getuid()))\n")
    res = run_autograder(autograder, run_prefix, tmp_path)
    _assert_honest(res)
    uid = int((autograder / "spy" / "uid").read_text())
    assert uid != 0 and uid != os.getuid(), uid


READ_SECRETS = r"""
import glob, hashlib, os
found = []
roots = {'@ROOT@'}
for cmd in glob.glob('/proc/[0-9]*/cmdline'):  # and wherever the grader's command line says
    try:
        for arg in open(cmd, 'rb').read().split(b'\0'):
            if arg.endswith(b'/results/results.json'):
                roots.add(os.path.dirname(os.path.dirname(arg.decode())))
    except OSError:
        pass
for root in roots:
    kata = root + '/source/kata'
    for rel in ('grader/checks/test_s1_12_context.py', 'solutions/ch01/s1_12_context.py', 'gradescope.json',
                'grader/release.json'):
        try:
            found.append(open(kata + '/' + rel, errors='replace').read()[-400:])
        except OSError:
            pass
    for path in glob.glob(kata + '/grader/fixtures/*'):
        try:
            found.append('fixture ' + hashlib.sha256(open(path, 'rb').read()).hexdigest())
        except OSError:
            pass
    try:
        found += os.listdir(kata + '/grader/checks')
    except OSError:
        pass
if found:
    raise ValueError('\n'.join(found))
"""


def test_a_submission_cannot_read_the_course_into_a_message(autograder, run_prefix, tmp_path):
    submit(autograder, READ_SECRETS)
    res = run_autograder(autograder, run_prefix, tmp_path)
    said = _everything_said(res)
    fixtures = autograder / "source" / "kata" / "grader" / "fixtures"
    assert SECRET not in said and "hidden_visibility" not in said and "test_s1_11_softmax.py" not in said
    assert "fixture " not in said and not any(
        hashlib.sha256(f.read_bytes()).hexdigest() in said for f in fixtures.iterdir()
    )
    _assert_honest(res)


DAEMON = r"""
import json, os, signal, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        open('@ROOT@/spy/daemon-' + str(os.getpid()), 'w').close()
        results = '@ROOT@/results/results.json'
        for _ in range(400):  # 60 s: rewrite the results whenever they do not say 100
            time.sleep(0.15)
            try:
                doc = json.load(open(results))
                if doc.get('score') != 100.0:
                    doc['score'] = 100.0
                    doc['output'] = 'FORGED'
                    tmp = results + '.x'
                    json.dump(doc, open(tmp, 'w'))
                    os.rename(tmp, results)
            except (OSError, ValueError):
                pass
    os._exit(0)
time.sleep(0.3)
os.kill(os.getppid(), signal.SIGKILL)  # the fork server: the daemon is orphaned past its sweep
"""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def test_a_daemon_whose_fork_server_was_killed_cannot_rewrite_the_results(autograder, run_prefix, tmp_path):
    submit(autograder, DAEMON)
    res = run_autograder(autograder, run_prefix, tmp_path)
    daemons = [int(p.name.split("-")[1]) for p in (autograder / "spy").glob("daemon-*")]
    assert daemons, "the attack started no daemon"
    assert not [pid for pid in daemons if _alive(pid)], "a daemon outlived run_autograder"
    time.sleep(3)  # past the daemon's next rewrite, had it lived
    again = json.loads((autograder / "results" / "results.json").read_text())
    assert again == res and again["score"] != FORGED and "FORGED" not in again["output"]
    assert "resource limits only" in again["output"]
    assert again["score"] <= EXERCISE.points
    assert {p.name for p in (autograder / "results").iterdir()} == {"results.json"}


WRITE_RESULTS = r"""
import json, os
for name in ('results.json', 'evil.json', 'results.json.tmp'):
    try:
        with open('@ROOT@/results/' + name, 'w') as f:
            json.dump({'score': 100.0, 'output': 'FORGED', 'tests': []}, f)
    except OSError:
        pass
try:
    os.symlink('/tmp', '@ROOT@/results/link')
except OSError:
    pass
"""


def test_a_submission_cannot_write_into_the_results_folder(autograder, run_prefix, tmp_path):
    submit(autograder, WRITE_RESULTS)
    res = run_autograder(autograder, run_prefix, tmp_path)
    assert {p.name for p in (autograder / "results").iterdir()} == {"results.json"}
    assert "FORGED" not in _everything_said(res)
    _assert_honest(res)


SIGNAL_GRADER = r"""
import glob, os, signal
for cmd in glob.glob('/proc/[0-9]*/cmdline'):
    try:
        text = open(cmd, 'rb').read()
    except OSError:
        continue
    if b'grader.instructor.exports.gradescope' in text or b'run_autograder' in text:
        pid = int(cmd.split('/')[2])
        for sig in (signal.SIGSTOP, signal.SIGKILL):
            try:
                os.kill(pid, sig)
                open('@ROOT@/spy/signalled-' + str(pid), 'w').close()
            except OSError:
                pass
"""


def test_a_submission_cannot_signal_the_grader(autograder, run_prefix, tmp_path):
    submit(autograder, SIGNAL_GRADER)
    res = run_autograder(autograder, run_prefix, tmp_path)
    assert not list((autograder / "spy").glob("signalled-*"))
    _assert_honest(res)


READ_THE_IMPORTED_GRADER = r"""
import importlib.util, os
spec = importlib.util.find_spec('grader')  # where the worker's own Python finds the grader
if spec is not None:
    package = list(spec.submodule_search_locations)[0]
    found = []
    for rel in ('checks/test_s1_12_context.py', '../solutions/ch01/s1_17_layer_norm.py', '../course.toml'):
        try:
            found.append('LEAKED ' + rel + ': ' + open(os.path.join(package, rel)).read()[-300:])
        except OSError:
            pass
    for name in sorted(os.listdir(os.path.join(package, 'fixtures')))[:3] if os.path.isdir(os.path.join(package, 'fixtures')) else ():
        found.append('LEAKED fixture ' + name)
    if found:
        raise ValueError('\n'.join(found))
"""


def test_a_readable_grader_that_the_worker_s_python_imports_is_never_own_uid(autograder, checkout_prefix, tmp_path):
    """The outside attack A1: KATA_PYTHON an editable install of a readable checkout (README's
    "try it locally"), the course walled off in the /autograder tree: the worker's Python imports
    `grader` from the checkout, whose hidden checks, fixtures and solutions it can read. Results
    that said "own uid" (nothing hidden readable) were false; they must say the score could have
    been forged."""
    submit(autograder, READ_THE_IMPORTED_GRADER)
    res = run_autograder(autograder, checkout_prefix, tmp_path)
    assert res["extra_data"]["sandbox"] == "limits-only", res["extra_data"]
    assert "could have been forged" in res["output"], res["output"]
    assert "unprivileged user of its own" not in res["output"], res["output"]


def test_the_gradescope_machine_s_python_imports_the_walled_grader_only(autograder, run_prefix, tmp_path):
    """The control: where the worker's Python reaches no readable copy of the grader, the same
    submission reads nothing and the results say what held."""
    submit(autograder, READ_THE_IMPORTED_GRADER)
    res = run_autograder(autograder, run_prefix, tmp_path)
    assert "LEAKED" not in _everything_said(res)
    _assert_honest(res)


DEEP_TREES = r"""
import os, signal
spy = '@ROOT@/spy'
n = len([x for x in os.listdir(spy) if x.startswith('import-')])
open(spy + '/import-' + str(os.getpid()), 'w').close()
if n == @LAST@:  # the last check's import
    top = os.getcwd()  # the worker's work folder, which the grader (root) removes at the end
    open(spy + '/workdir', 'w').write(top)
    for name, depth in (('d', 3000), ('n' * 200, 400)):  # 3,000 deep; 80,000 bytes, past PATH_MAX
        os.mkdir('tree-' + name[:1]); os.chdir('tree-' + name[:1])
        for _ in range(depth):
            os.mkdir(name); os.chdir(name)
        open('bottom', 'w').write('x')
        os.chdir(top)
    open(spy + '/built', 'w').close()
    @DAEMON@
    os.kill(os.getppid(), signal.SIGKILL)  # the fork server: it can no longer empty the work folder
"""

DEEP_DAEMON = r"""if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            import json, time
            open(spy + '/daemon-' + str(os.getpid()), 'w').close()
            results = '@ROOT@/results/results.json'
            for _ in range(400):  # 60 s: rewrite the results whenever they do not say 100
                time.sleep(0.15)
                try:
                    with open(results, 'w') as f:
                        json.dump({'score': 100.0, 'output': 'FORGED', 'tests': []}, f)
                except OSError:
                    pass
        os._exit(0)
    os.wait()"""


def _deep_trees(daemon: bool) -> str:
    checks = (ROOT / "grader" / "checks" / f"test_{EXERCISE.id}.py").read_text().count("\n@check(")
    last = checks - 1  # one worker per check, each importing the submission once
    return DEEP_TREES.replace("@LAST@", str(last)).replace("@DAEMON@", DEEP_DAEMON if daemon else "")


def _assert_nothing_left(root: Path) -> None:
    spy = root / "spy"
    assert (spy / "built").exists(), "the attack built no tree"
    workdir = Path((spy / "workdir").read_text())
    assert not workdir.exists() and not workdir.parent.exists(), f"{workdir} was left behind"


def test_a_deep_tree_in_the_work_folder_neither_fails_the_grading_nor_stays(autograder, run_prefix, tmp_path):
    """The outside attack A2: at the last check a folder tree 3,000 deep (and one 80,000 bytes
    deep, past PATH_MAX) in the work folder, and the fork server killed so that it cannot empty
    it: root's cleanup (shutil.rmtree) raised RecursionError, results.json said the autograder
    itself failed, score 0, and the tree stayed. Now the grading completes with the honest score
    and the folder is gone."""
    submit(autograder, _deep_trees(daemon=False))
    res = run_autograder(autograder, run_prefix, tmp_path)
    _assert_honest(res)
    _assert_nothing_left(autograder)


def test_a_daemon_and_a_deep_tree_together_neither_outlive_nor_forge(autograder, run_prefix, tmp_path):
    """The outside attack A3: A2 with a setsid daemon that rewrites results.json; the cleanup's
    crash came before the sweep of the uid's processes, and the daemon outlived run_autograder.
    The sweep now comes first, in a `finally`: no daemon lives, the results are the honest ones and
    stay so, and no tree is left."""
    submit(autograder, _deep_trees(daemon=True))
    res = run_autograder(autograder, run_prefix, tmp_path)
    daemons = [int(p.name.split("-")[1]) for p in (autograder / "spy").glob("daemon-*")]
    assert daemons, "the attack started no daemon"
    assert not [pid for pid in daemons if _alive(pid)], "a daemon outlived run_autograder"
    time.sleep(1)  # past the daemon's next rewrite, had it lived
    assert json.loads((autograder / "results" / "results.json").read_text()) == res
    _assert_honest(res)
    _assert_nothing_left(autograder)
