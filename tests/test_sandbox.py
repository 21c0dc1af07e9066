"""What the worker can and cannot see or do, tested directly on the sandbox."""

import os
import re
import shutil

import pytest

from grader.worker import uids
from grader.worker.client import Sandbox, WorkerFault
from grader.worker.proxy import Remote, StudentError

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")

PROBE = """
import os, socket


def read(path):
    with open(path) as f:
        return f.read()


def write(path):
    with open(path, "w") as f:
        f.write("x")
    return True


def env():
    return dict(os.environ)


def ids():
    return [os.getuid(), os.getgid(), os.getpid()]


def connect():
    socket.create_connection(("127.0.0.1", 22), timeout=1)
"""


@pytest.fixture
def probe(tmp_path):
    sub = tmp_path / "sub" / "ch01"
    sub.mkdir(parents=True)
    (sub / "probe.py").write_text(PROBE)
    assets = tmp_path / "assets"
    assets.mkdir()
    (assets / "vocab.txt").write_text("hello assets\n")
    os.chmod(tmp_path, 0o755)
    for p in (tmp_path / "sub", sub, assets):
        os.chmod(p, 0o755)
    os.chmod(sub / "probe.py", 0o644)
    os.chmod(assets / "vocab.txt", 0o644)
    with Sandbox(tmp_path / "sub", assets_dir=str(assets)) as box:
        worker = box.spawn()
        remote = Remote(worker, "probe", 5.0, assets=box.assets)
        remote._import("ch01/probe.py", [], "")
        yield remote, box
        worker.close()


@needs_bwrap
def test_assets_are_readable_but_read_only(probe):
    remote, box = probe
    assert box.kind == "bubblewrap" and remote.assets == "/assets"
    assert remote.read(f"{remote.assets}/vocab.txt") == "hello assets\n"
    with pytest.raises(StudentError, match="Read-only file system|Permission denied"):
        remote.write(f"{remote.assets}/vocab.txt")


@needs_bwrap
def test_worker_environment_is_clean_and_unprivileged(probe):
    remote, _ = probe
    env = remote.env()
    assert set(env) <= {
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
    }
    uid, gid, pid = remote.ids()
    if os.getuid() == 0:
        assert uids.FIRST <= uid < uids.FIRST + uids.COUNT and gid == uid  # from root to a uid of its own
    assert pid < 100  # its own PID namespace: the grader's processes are invisible


@needs_bwrap
def test_grader_files_are_not_there(probe):
    remote, _ = probe
    import grader

    for path in (grader.__file__, os.path.join(os.path.dirname(grader.__file__), "fixtures")):
        with pytest.raises(StudentError, match="No such file|Permission denied|Is a directory"):
            remote.read(path)


@needs_bwrap
def test_no_network(probe):
    remote, _ = probe
    # no network namespace with a route out; under bubblewrap a worker cannot even make the socket
    with pytest.raises(StudentError, match="unreachable|refused|Cannot assign|Operation not permitted"):
        remote.connect()


def test_a_hung_call_times_out_and_the_next_worker_is_fresh(tmp_path):
    sub = tmp_path / "sub" / "ch01"
    sub.mkdir(parents=True)
    (sub / "hang.py").write_text(
        "import time\n\ndef hang():\n    while True:\n        pass\n\ndef ok():\n    return 1\n"
    )
    for p in (tmp_path, tmp_path / "sub", sub):
        os.chmod(p, 0o755)
    os.chmod(sub / "hang.py", 0o644)
    with Sandbox(tmp_path / "sub") as box:
        worker = box.spawn()
        remote = Remote(worker, "hang", 1.0)
        remote._import("ch01/hang.py", [], "")
        with pytest.raises(WorkerFault, match="took longer than the 1 s limit"):
            remote.hang()
        with pytest.raises(WorkerFault, match="took longer"):  # the same reason again, not a new one
            remote.ok()
        worker2 = box.spawn()
        remote2 = Remote(worker2, "hang", 1.0)
        remote2._import("ch01/hang.py", [], "")
        assert remote2.ok() == 1
        worker2.close()


OUTPUT = """
import os


def shout(mb):
    os.write(1, b"o" * (mb << 20))
    return [os.readlink("/proc/self/fd/1"), os.path.exists(os.readlink("/proc/self/fd/1"))]


def fill(mb):
    written = 0
    try:
        while written < (mb << 20):
            with open(f"/tmp/work/f{written}", "wb") as f:
                f.write(b"\\1" * (4 << 20))
            written += 4 << 20
    except OSError as e:
        return [written >> 20, e.strerror]
    return [written >> 20, None]
"""


def _box(tmp_path, source):
    sub = tmp_path / "sub" / "ch01"
    sub.mkdir(parents=True)
    (sub / "out.py").write_text(source)
    for p in (tmp_path, tmp_path / "sub", sub):
        os.chmod(p, 0o755)
    os.chmod(sub / "out.py", 0o644)
    return Sandbox(tmp_path / "sub")


@needs_bwrap
def test_nothing_the_worker_writes_lands_on_the_host_disk_beyond_its_output_limit(tmp_path):
    """The worker's stdout/stderr is a host file it cannot reach by name (opened by the grader,
    passed in), capped by the output limit and removed when the worker ends; everything else it
    may write is a tmpfs of a fixed size (256 MB by default) inside the sandbox."""
    with _box(tmp_path, OUTPUT) as box:
        worker = box.spawn()
        remote = Remote(worker, "out", 30.0)
        remote._import("ch01/out.py", [], "")
        path, visible = remote.shout(1)
        assert not visible, f"the output file {path} is visible inside the sandbox"
        (log,) = os.listdir(box.logs)
        assert os.path.getsize(os.path.join(box.logs, log)) == 1 << 20
        written, error = remote.fill(2048)
        assert 200 <= written <= 256 and error == "No space left on device", (written, error)
        assert not os.listdir(box.workdir)  # the host's folder saw none of it
        worker.close()
        assert os.listdir(box.logs) == []


@pytest.mark.skipif(os.getuid() != 0, reason="mounting a tmpfs needs root")
def test_emptying_tmp_after_a_check_never_crosses_into_a_mount(tmp_path):
    """The fork server empties the sandbox's /tmp after every check. When the grader's Python
    lives under /tmp (a checkout in /tmp), its read-only bind mounts sit inside that /tmp: the
    wipe must leave them alone (walking them cost seconds per check) and still remove the
    student's files, nested deep (4,000 folders: past PATH_MAX, which once hid them from the
    wipe) or made unreadable."""
    import subprocess

    from grader.worker.runtime.__main__ import empty_folder

    mounted = tmp_path / "python" / "site-packages"
    mounted.mkdir(parents=True)
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mounted)]).returncode:
        pytest.skip("cannot mount a tmpfs here")
    try:
        (mounted / "torch.py").write_text("# the grader's own files\n")
        deep = tmp_path / "junk"
        for i in range(300):
            deep = deep / "d"
        deep.mkdir(parents=True)
        (deep / "leftover").write_text("x")
        here = os.getcwd()
        try:  # deeper than PATH_MAX: no path names its bottom, only a walk from folder to folder
            os.chdir(tmp_path)
            os.mkdir("deeper")
            os.chdir("deeper")
            for _ in range(4000):
                os.mkdir("a")
                os.chdir("a")
            with open("leftover", "w") as f:
                f.write("x")
            os.mkdir("locked")
            os.chmod("locked", 0)
        finally:
            os.chdir(here)
        (tmp_path / "locked").mkdir()
        (tmp_path / "locked" / "secret").write_text("x")
        os.chmod(tmp_path / "locked", 0)
        (tmp_path / "file").write_text("x")
        empty_folder(str(tmp_path))
        assert (mounted / "torch.py").read_text() == "# the grader's own files\n"
        assert sorted(os.listdir(tmp_path)) == ["python"]  # the mount point's parent cannot go
    finally:
        subprocess.run(["umount", str(mounted)])


@needs_bwrap
def test_a_venv_reached_through_a_linked_folder_still_starts_the_sandbox(tmp_path):
    """A grader whose venv is reached through a link (a checkout whose .venv links to a shared
    one) used to start bubblewrap on a path the sandbox does not have: every check scored 0."""
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    (tmp_path / "venv").symlink_to(sys.prefix)
    python = tmp_path / "venv" / "bin" / os.path.basename(sys.executable)
    done = subprocess.run(
        [str(python), "-m", "grader", "grade", os.path.join(root, "solutions"), "-e", "s1_11_softmax"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"Score: (\d+) / \1\b", done.stdout), done.stdout[-2000:]  # full marks


def test_the_fork_server_imports_an_exercise_s_slow_modules_once_for_every_later_worker(tmp_path):
    """An exercise's `preload` (course.toml): the fork server imports them at the first worker that
    asks, and every later worker starts with them loaded (a second per check otherwise:
    sklearn.metrics for s1_23_evaluation, torch._dynamo for an optimizer); a worker that does not
    ask pays nothing before the first that does; a name that cannot be imported is left to the
    exercise that imports it."""
    sub = tmp_path / "sub" / "ch01"
    sub.mkdir(parents=True)
    (sub / "probe.py").write_text("import sys\n\ndef loaded(names):\n    return [n in sys.modules for n in names]\n")
    for p in (tmp_path, tmp_path / "sub", sub):
        os.chmod(p, 0o755)
    names = ["sklearn.metrics", "torch._dynamo", "no_such_module_here"]

    def ask(box, preload=()):
        worker = box.spawn(preload=preload)
        try:
            remote = Remote(worker, "probe", 5.0)
            remote._import("ch01/probe.py", [], "")
            return remote.loaded(names)
        finally:
            worker.close()

    with Sandbox(tmp_path / "sub") as box:
        assert ask(box) == [False, False, False]
        assert ask(box, tuple(names)) == [True, True, False]
        assert ask(box) == [True, True, False]  # shared from now on
