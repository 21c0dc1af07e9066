"""A submission's grading budget: wall seconds, and CPU seconds of its sandbox, across all its checks.

Every other limit is per call (a check's time limit) or per process (rlimits): a submission whose
every import forks hundreds of sleepers, sleeps, burns CPU or kills the fork server pays that cost
again in each of its ~250 checks, and held a grader for half an hour. The budget bounds the sum.
The checking layer starts it before the checks are collected and asks it before each one; each call into the
worker waits at most what is left of it (`cap`), and a long call stops as soon as the sandbox's
CPU time runs out (`stop`). The CPU time is the sandbox's cgroup's (every process in it, the
children a student's code forks too); where no cgroup can be made, only wall time is counted.
"""

from __future__ import annotations

import time
from typing import Callable

from ..course.messages import t


class Budget:
    def __init__(
        self,
        wall_s: float,
        cpu_s: float | None = None,
        cpu_used: Callable[[], float | None] | None = None,
        clock: Callable[[], float] = time.monotonic,
        shared=None,
    ):
        """`shared`: the budget of several lanes grading one submission side by side
        (grader/checking/lanes.py): `started` (their common start on `clock`), `spent()` (how it ran
        out in any lane: "wall", "cpu" or None) and `spend(how)`. `cpu_used` then counts every lane."""
        self.wall_s = float(wall_s)
        self._shared = shared
        self.cpu_s = None if cpu_s is None else float(cpu_s)
        self._cpu_used = cpu_used or (lambda: None)
        self._clock = clock
        self._started: float | None = None
        self._cpu0: float | None = None
        self.spent_in: str | None = None  # the exercise whose check was running when it ran out
        self.spent_on: str | None = None  # "wall" | "cpu"

    def start(self) -> None:
        """Start counting (the first call counts; later calls do nothing)."""
        if self._started is None:
            self._started = self._clock() if self._shared is None else self._shared.started
            self._cpu0 = self._cpu_used()

    def wall_left(self) -> float:
        self.start()
        return self.wall_s - (self._clock() - self._started)

    def cpu_left(self) -> float | None:
        """CPU seconds left, or None where the sandbox's CPU time cannot be read."""
        self.start()
        if self.cpu_s is None or self._cpu0 is None:
            return None
        used = self._cpu_used()
        return None if used is None else self.cpu_s - (used - self._cpu0)

    def exhausted(self, exercise: str | None = None) -> bool:
        """Whether it has run out; the first time it is seen so, `exercise` is where."""
        if self.spent_on is None:
            cpu = self.cpu_left()
            elsewhere = self._shared.spent() if self._shared is not None else None
            if elsewhere is not None:  # another lane saw it run out: so has this one
                self.spent_on = elsewhere
            elif self.wall_left() <= 0:
                self.spent_on = "wall"
            elif cpu is not None and cpu <= 0:
                self.spent_on = "cpu"
            else:
                return False
            self.spent_in = exercise
            self._tell()
        return True

    def _tell(self) -> None:
        if self._shared is not None and self.spent_on is not None:
            self._shared.spend(self.spent_on)

    def mark(self, exercise: str) -> None:
        """A call was cut short by the budget (in `exercise`): it has run out, whatever the clocks say now."""
        if self.spent_on is None:
            cpu = self.cpu_left()
            self.spent_on = "cpu" if cpu is not None and cpu <= 0 and self.wall_left() > 0 else "wall"
            self.spent_in = exercise
            self._tell()

    def cap(self, limit: float) -> tuple[float, bool]:
        """The time a call may take: its own limit, or what is left of the budget if that is less
        (at least a few milliseconds, so that the call is made and fails as the budget's).
        Returns (seconds, whether the budget is what limits it)."""
        left = self.wall_left()
        if left < limit:
            return max(left, 0.005), True
        return limit, False

    def stop(self) -> bool:
        """For a call in progress: whether the sandbox's CPU time has run out."""
        cpu = self.cpu_left()
        return (cpu is not None and cpu <= 0) or (self._shared is not None and self._shared.spent() is not None)

    def said(self) -> dict:
        """The fields a message about it fills: `seconds` of the limit that ran out, and `what` it
        counted ("wall time" or "CPU time", in the report's language)."""
        said = self.describe()
        return {"seconds": said["seconds"], "what": t("budget_cpu" if said["kind"] == "cpu" else "budget_wall")}

    def describe(self) -> dict:
        """What the messages say of it: the limit that ran out, in seconds."""
        if self.spent_on == "cpu":
            return {"seconds": f"{self.cpu_s:g}", "kind": "cpu"}
        return {"seconds": f"{self.wall_s:g}", "kind": "wall"}
