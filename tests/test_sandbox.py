"""What the worker can and cannot see or do, tested directly on the sandbox."""
import os
import shutil

import pytest

from grader.worker.client import Sandbox, WorkerFault
from grader.worker.proxy import Remote, StudentError

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")

PROBE = '''
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
'''


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
    assert set(env) <= {"PATH", "LANG", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "PYTHONHASHSEED",
                        "PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED", "HOME", "LC_CTYPE", "PWD"}
    uid, gid, pid = remote.ids()
    if os.getuid() == 0:
        assert uid == 65534 and gid == 65534  # dropped from root to nobody
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
    with pytest.raises(StudentError, match="unreachable|refused|Cannot assign"):
        remote.connect()


def test_a_hung_call_times_out_and_the_next_worker_is_fresh(tmp_path):
    sub = tmp_path / "sub" / "ch01"
    sub.mkdir(parents=True)
    (sub / "hang.py").write_text("import time\n\ndef hang():\n    while True:\n        pass\n\ndef ok():\n    return 1\n")
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
