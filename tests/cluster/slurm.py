"""A one-node Slurm cluster on this machine, for the test of the job-array recipe.

    with one_node_cluster(tmp_path) as cluster:
        proc = cluster.run("sbatch", "--wait", "--array=0-3", script, ...)

Everything lives in one temporary folder: a munge key and munged's socket, slurm.conf (this host,
its CPUs from os.sched_getaffinity and its memory, proctrack/linuxproc, task/none, no accounting),
the daemons' state, spool, pid and log files. munged, slurmctld and slurmd run in the foreground as
children of this process; on exit every job is cancelled and every daemon started here is stopped
and waited for, so nothing is left running. Skips (pytest.skip, with the reason) where the Debian packages
slurm-wlm and munge are not installed or we are not root (slurmd starts jobs as their user).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

BINARIES = ("munged", "mungekey", "slurmctld", "slurmd", "sbatch", "sinfo", "squeue", "scancel", "scontrol")
PACKAGES = "apt-get install -y slurm-wlm munge"


@dataclass
class Cluster:
    folder: Path
    conf: Path
    node: str
    cpus: int
    env: dict[str, str]
    daemons: dict[str, subprocess.Popen] = field(default_factory=dict)

    def run(
        self,
        *argv: str,
        timeout: float = 60,
        cwd: Path | None = None,
        check: bool = False,
        env: dict[str, str] | None = None,
    ) -> subprocess.CompletedProcess:
        """A Slurm client command (sbatch, sinfo, ...) against this cluster."""
        return subprocess.run(
            list(argv),
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=cwd,
            env={**self.env, **(env or {})},
            check=check,
        )

    def logs(self) -> str:
        """Every daemon's log, for an assertion's message."""
        return "\n".join(
            f"--- {p.name}\n{p.read_text(errors='replace')[-4000:]}"
            for p in sorted((self.folder / "log").glob("*.log"))
        )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _missing() -> str | None:
    absent = [b for b in BINARIES if shutil.which(b) is None and not Path("/usr/sbin", b).exists()]
    if absent:
        return f"Slurm is not installed here ({', '.join(absent)} missing; {PACKAGES})"
    if os.geteuid() != 0:
        return "a Slurm cluster of our own needs root (slurmd starts each job as its user)"
    return None


def _which(name: str) -> str:
    return shutil.which(name) or str(Path("/usr/sbin", name))


SLURM_CONF = """\
# A one-node cluster for the tests (tests/cluster/slurm.py): everything under {d}
ClusterName=kata
SlurmctldHost={node}(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={d}/munge/munge.socket
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool/%n
SlurmctldPidFile={d}/run/slurmctld.pid
SlurmdPidFile={d}/run/slurmd-%n.pid
SlurmctldLogFile={d}/log/slurmctld.log
SlurmdLogFile={d}/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
PlugStackConfig={d}/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=1
MaxArraySize=1001
NodeName={node} NodeAddr=127.0.0.1 CPUs={cpus} RealMemory={memory_mb} State=UNKNOWN
PartitionName=kata Nodes={node} Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
"""


@contextlib.contextmanager
def one_node_cluster(base: Path, wait_s: float = 60):
    """Start munged, slurmctld and slurmd under `base`/slurm, wait until `sinfo` shows the node
    idle, yield a Cluster, and stop everything started here on the way out."""
    reason = _missing()
    if reason:
        pytest.skip(reason)
    d = Path(base) / "slurm"
    node = socket.gethostname().split(".")[0]
    for sub in ("munge", "state", f"spool/{node}", "run", "log"):
        (d / sub).mkdir(parents=True, exist_ok=True)
    os.chmod(d, 0o755)  # munged wants its socket's folders searchable by all
    (d / "plugstack.conf").write_text("")
    cpus = len(os.sched_getaffinity(0))
    conf = d / "slurm.conf"
    memory_mb = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 2**20 * 9 // 10  # slurmd finds more
    conf.write_text(
        SLURM_CONF.format(
            d=d, node=node, cpus=cpus, memory_mb=memory_mb, ctld_port=_free_port(), slurmd_port=_free_port()
        )
    )
    env = {**os.environ, "SLURM_CONF": str(conf)}
    for name in list(env):  # a test run inside a Slurm job must not hand its own job's settings on
        if name.startswith(("SLURM_", "SBATCH_", "SALLOC_", "SRUN_")) and name != "SLURM_CONF":
            del env[name]
    cluster = Cluster(folder=d, conf=conf, node=node, cpus=cpus, env=env)
    key = d / "munge" / "munge.key"
    subprocess.run([_which("mungekey"), "--create", f"--keyfile={key}"], check=True, capture_output=True)
    os.chmod(key, 0o600)

    def start(name: str, argv: list[str]) -> None:
        log = open(d / "log" / f"{name}.out.log", "wb")
        with log:
            cluster.daemons[name] = subprocess.Popen(
                argv, stdout=log, stderr=subprocess.STDOUT, env=env, stdin=subprocess.DEVNULL, start_new_session=True
            )

    try:
        start(
            "munged",
            [
                _which("munged"),
                "--foreground",
                "--force",
                f"--key-file={key}",
                f"--socket={d}/munge/munge.socket",
                f"--pid-file={d}/run/munged.pid",
                f"--log-file={d}/log/munged.log",
                f"--seed-file={d}/munge/munge.seed",
            ],
        )
        _until(lambda: (d / "munge" / "munge.socket").exists(), wait_s, "munged's socket", cluster)
        start("slurmctld", [_which("slurmctld"), "-D", "-i", "-f", str(conf)])
        _until(
            lambda: cluster.run("scontrol", "ping", timeout=10).stdout.count("UP") > 0,
            wait_s,
            "slurmctld to answer `scontrol ping`",
            cluster,
        )
        start("slurmd", [_which("slurmd"), "-D", "-f", str(conf), "-N", node])
        _until(
            lambda: cluster.run("sinfo", "-h", "-N", "-o", "%T", timeout=10).stdout.strip() == "idle",
            wait_s,
            "the node to be idle in sinfo",
            cluster,
        )
        yield cluster
    finally:
        _stop(cluster)


def _until(ready, wait_s: float, what: str, cluster: Cluster) -> None:
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        dead = [n for n, p in cluster.daemons.items() if p.poll() is not None]
        if dead:
            raise RuntimeError(f"{', '.join(dead)} exited while waiting for {what}\n{cluster.logs()}")
        try:
            if ready():
                return
        except subprocess.TimeoutExpired:
            pass
        time.sleep(0.5)
    raise RuntimeError(f"timed out after {wait_s:.0f} s waiting for {what}\n{cluster.logs()}")


def _stop(cluster: Cluster) -> None:
    """Cancel every job (its slurmstepd and processes end with it), then stop slurmd, slurmctld and
    munged in that order, each with SIGTERM, then SIGKILL after 20 s; wait for each."""
    if "slurmctld" in cluster.daemons and cluster.daemons["slurmctld"].poll() is None:
        with contextlib.suppress(subprocess.TimeoutExpired, OSError):
            cluster.run("scancel", "--full", "--user", "root", timeout=20)
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and cluster.run("squeue", "-h", timeout=10).stdout.strip():
                time.sleep(0.5)
    for name in ("slurmd", "slurmctld", "munged"):
        proc = cluster.daemons.get(name)
        if proc is None:
            continue
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=20)
        with contextlib.suppress(ProcessLookupError, PermissionError):  # anything the daemon left in its session
            os.killpg(proc.pid, signal.SIGKILL)
