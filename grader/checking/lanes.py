"""One submission graded on several cores: lanes that share its checks and its grading budget.

`kata grade` of one submission runs its checks in lanes, one per core (at most 2, as the warm
grader does): lane k is a process forked from this one with a sandbox of its own, so two checks
run side by side without sharing a /tmp, a process namespace or a worker; each check still gets a
fresh worker from a fork server that never ran student code. The lanes take the exercises as they
come free, in the order one process would grade them: a lane that reaches an exercise no other lane
has taken grades all its checks, in their order, so that what each check says is what one process
says (an import that failed is named in the exercise's first check, "failed in an earlier check" in
the next ones).

The budget is the submission's, not the lane's: the lanes start its wall clock together, count
the CPU seconds of every lane's sandbox together, and when it runs out in one lane it has run out
in all (grader/worker/budget.py). The checks that no lane reached are "not run", as in one process.
"""

from __future__ import annotations

import json
import mmap
import multiprocessing
import os
import select
import signal
import struct
import time

from ..course.messages import t
from .results import GradeResult

MAX_UNITS = 1 << 16  # exercises (or checks) one grading's lanes can take
_SPENT = {0: None, 1: "wall", 2: "cpu"}


class Shared:
    """Memory the lanes of one grading share, made before they fork: which exercises are taken, each
    lane's CPU seconds, and whether (and how) the budget ran out. Only the grader's processes map
    it: student code runs in the sandboxes, which never see it."""

    def __init__(self, lanes: int, by_check: bool = False):
        self.lanes = lanes
        self.by_check = by_check  # what a lane takes: single checks, or (default) whole exercises
        self.started = time.monotonic()
        self._lock = multiprocessing.get_context("fork").Lock()
        self._mem = mmap.mmap(-1, 8 + 8 * lanes + MAX_UNITS)  # spent, CPU per lane, a byte per unit

    def claim(self, index: int) -> bool:
        """Take exercise `index` (its place in the course), or check `index` (by_check), for the
        calling lane: False when another lane took it first."""
        at = 8 + 8 * self.lanes + index
        with self._lock:
            if self._mem[at]:
                return False
            self._mem[at] = 1
            return True

    def spent(self) -> str | None:
        return _SPENT.get(self._mem[0])

    def spend(self, how: str) -> None:
        with self._lock:
            if not self._mem[0]:
                self._mem[0] = 1 if how == "wall" else 2

    def cpu_total(self, lane: int, own: float | None) -> float | None:
        """Publish lane `lane`'s CPU seconds and give every lane's sum (None where the sandbox
        cannot count them)."""
        if own is None:
            return None
        struct.pack_into("d", self._mem, 8 + 8 * lane, own)
        return sum(struct.unpack_from("d", self._mem, 8 + 8 * k)[0] for k in range(self.lanes))


class Lane:
    """Lane k of a grading (what runner.run is given): its claims and its share of the budget."""

    def __init__(self, shared: Shared, k: int):
        self.shared, self.k = shared, k
        self._own0: float | None = None

    def claim(self, index: int) -> bool:
        return self.shared.claim(index)

    @property
    def by_check(self) -> bool:
        return self.shared.by_check

    def cpu_used(self, own: float | None) -> float | None:
        """Every lane's CPU seconds since it started, given this lane's sandbox's total `own`."""
        if own is None:
            return None
        if self._own0 is None:
            self._own0 = own
        return self.shared.cpu_total(self.k, own - self._own0)

    # what Budget asks of `shared`
    @property
    def started(self) -> float:
        return self.shared.started

    def spent(self) -> str | None:
        return self.shared.spent()

    def spend(self, how: str) -> None:
        self.shared.spend(how)


MIN_CHECKS = 40  # fewer checks than this: a second sandbox's start (its torch import) costs more than it saves


def count(checks: int = MIN_CHECKS) -> int:
    """How many lanes grade `checks` checks of one submission: one per core this process may run
    on, at most 2 (each holds a sandbox whose fork server has torch loaded), and one for fewer than
    MIN_CHECKS checks; KATA_GRADE_LANES overrides."""
    try:
        return max(1, int(os.environ["KATA_GRADE_LANES"]))
    except (KeyError, ValueError):
        if checks < MIN_CHECKS:
            return 1
        try:
            cores = len(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            cores = os.cpu_count() or 1
        return max(1, min(2, cores))


def run(
    course, submission, exercises=None, public_only: bool = False, lanes: int | None = None, **options
) -> GradeResult:
    """runner.run, in `lanes` lanes (default: count()). One lane, or one check, is runner.run itself."""
    from . import asset_gate, runner

    exercises = exercises or course.exercises
    checks = sum(1 for ex in exercises for c in ex.checks if not (public_only and c.hidden))
    # a lane takes whole exercises: more lanes than exercises would start sandboxes that grade nothing
    n = max(1, min(count(checks) if lanes is None else lanes, checks, len(exercises)))
    if n == 1:  # runner.run checks the assets itself
        return runner.run(course, submission, exercises, public_only=public_only, **options)
    if not options.get("skip_missing_assets"):  # before any lane's sandbox starts
        asset_gate.require(course, exercises)
    t0 = time.perf_counter()
    boxes = [runner.sandbox_for(course, submission) for _ in range(n)]
    try:
        for box in boxes:  # the fork servers import torch while this process loads the checks
            box.launch()
        runner.preload(course, exercises)
        runner.import_preloads(exercises)
        for box in boxes:  # ready here, before the fork: a lane's copy would take the "ready" with it
            box.wait_ready()
        shared = Shared(n)  # the budget counts from here, as one process counts from its sandbox's start
        docs = _fork_lanes(course, submission, exercises, public_only, boxes, shared, options)
    finally:
        for box in boxes:
            box.close()
    return merge(course, docs, time.perf_counter() - t0)


def _fork_lanes(course, submission, exercises, public_only, boxes, shared, options) -> list[dict]:
    children: dict[int, tuple[int, int]] = {}  # read end -> (lane, pid)
    try:
        for k, box in enumerate(boxes):
            r, w = os.pipe()
            pid = os.fork()
            if pid == 0:
                os.close(r)
                _lane(course, submission, exercises, public_only, box, Lane(shared, k), w, options)
            os.close(w)
            children[r] = (k, pid)
        out: dict[int, bytes] = {k: b"" for k, _ in children.values()}
        open_fds = set(children)
        while open_fds:
            ready, _, _ = select.select(list(open_fds), [], [])
            for fd in ready:
                chunk = os.read(fd, 1 << 20)
                if chunk:
                    out[children[fd][0]] += chunk
                else:
                    open_fds.discard(fd)
    except BaseException:  # Ctrl-C: the lanes stop with this process
        for _, pid in children.values():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        raise
    finally:
        for fd, (_, pid) in children.items():
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
            os.close(fd)
    docs = []
    for k in range(len(boxes)):
        try:
            reply = json.loads(out[k].decode("utf-8"))
        except ValueError:
            reply = {"ok": False, "error": f"lane {k} of the grading ended without a result"}
        if not reply.get("ok"):
            raise _failure(reply)
        docs.append(dict(reply["result"], budget=reply.get("budget")))
    return docs


def _failure(reply: dict) -> BaseException:
    from ..worker.sandbox import SandboxUnavailable
    from .asset_gate import AssetUnavailable

    if reply.get("kind") == "SandboxUnavailable":
        return SandboxUnavailable(reply.get("error", ""))
    if reply.get("kind") == "AssetUnavailable":  # its own words: the reason and the repair
        return AssetUnavailable(reply.get("message") or reply.get("error", ""))
    return RuntimeError(reply.get("error", "a lane of the grading failed"))


def _lane(course, submission, exercises, public_only, box, lane: Lane, w: int, options) -> None:
    """One lane's process (forked) of `run`."""
    from . import runner

    signal.signal(signal.SIGINT, signal.SIG_DFL)  # Ctrl-C: the parent stops the lanes
    serve_lane(
        box,
        w,
        lambda: runner.run(course, submission, exercises, public_only=public_only, box=box, lane=lane, **options),
        lambda e: {
            "ok": False,
            "kind": type(e).__name__,
            "error": f"{type(e).__name__}: {e}"[:4000],
            "message": str(e)[:4000],
        },
    )


def serve_lane(box, w: int, grade, failure) -> None:
    """The body of a lane's forked process (here and in the warm grader): `grade()` its checks, write
    the reply (or `failure(exception)`) to `w`, close a sandbox it had to start again (its own), and
    leave without running any clean-up of the parent's."""
    try:
        import torch

        torch.set_num_threads(1)  # one lane per core
        started = box.proc.pid if box.proc else None
        try:
            result = grade()
            reply = {"ok": True, "result": result.as_dict(), "budget": getattr(result, "budget_spent", None)}
        except BaseException as e:
            reply = failure(e)
        data = json.dumps(reply).encode("utf-8")
        while data:
            data = data[os.write(w, data) :]
        if box.proc is not None and box.proc.pid != started:
            box.close()
    finally:
        os._exit(0)


def merge(course, docs: list[dict], seconds: float) -> GradeResult:
    """One result from the lanes' results: every check in the course's order, as one process gives;
    the notes once each, in the order the lanes wrote them."""
    order = {}
    for i, ex in enumerate(course.exercises):
        for j, c in enumerate(ex.checks):
            order[(ex.id, c.name)] = (i, j)
    results = [GradeResult.from_dict(d) for d in docs]
    first = results[0]
    rows = sorted((r for res in results for r in res.results), key=lambda r: order.get((r.exercise, r.name), (1e9, 0)))
    notes = list(dict.fromkeys(n for res in results for n in res.notes))
    spent = [d["budget"] for d in docs if d.get("budget")]
    if spent:  # one note for the submission: where it ran out first, and every check not run
        notes.append(
            t(
                "budget_note",
                exercise=spent[0]["exercise"],
                count=sum(s["not_run"] for s in spent),
                seconds=spent[0]["seconds"],
                what=spent[0]["what"],
            )
        )
    imports: dict = {}
    for res in results:
        for ex_id, deps in res.imports.items():
            imports.setdefault(ex_id, {}).update(deps)
    return GradeResult(
        first.submission,
        first.sandbox,
        rows,
        notes,
        max(res.worker_startup_s for res in results),
        float(round(seconds)),
        first.manifest,
        imports,
    )
