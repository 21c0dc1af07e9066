"""`kata watch [ID]`: check the current exercise each time its file is saved.

The current exercise is ID, or the first one not passing. Each save (seen by watchfiles, which
also sees an editor's save-by-rename and a file deleted and written again) re-runs its public
checks in the sandbox, through the course's warm grader (grader/student/warm/, kept alive while
watching), and redraws the screen; when they all pass, the watch moves on to the
next exercise not passing. Keys: h shows the next hint (the same hints and state as
`kata hint`), q quits; Ctrl-C quits too. The terminal is put in cbreak mode (keys without
Enter, no echo) only while watching, and restored on every way out.
"""

from __future__ import annotations

import contextlib
import os
import queue
import select
import signal
import sys
import threading
from pathlib import Path

from rich.console import Console
from rich.text import Text

from ..checking.submission import SubmissionError
from ..course.manifest import Course, Exercise
from ..course.messages import t
from . import checkview, hints, progress
from .listing import progress_bar
from .progress import EMPTY, MISSING


class Quit(Exception):
    pass


@contextlib.contextmanager
def cbreak(fd: int | None):
    """Keys arrive one by one and are not echoed; the old settings come back on exit."""
    if fd is None:
        yield
        return
    import termios
    import tty

    saved = termios.tcgetattr(fd)
    try:
        tty.setcbreak(fd)
        yield
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)


class Watch:
    def __init__(self, course: Course, start: Exercise | None, console: Console):
        self.course = course
        self.console = console
        self.events: queue.Queue = queue.Queue()
        self.stop = threading.Event()
        self.busy = False
        self.interrupted = False
        self.current = start
        self.keys = sys.stdin.isatty()

    # -- the threads that feed `events`
    def _files(self) -> None:
        import watchfiles

        try:
            for changes in watchfiles.watch(
                self.course.exercises_dir, stop_event=self.stop, debounce=150, step=50, raise_interrupt=False
            ):
                self.events.put(("changed", {Path(p) for _, p in changes}))
        except Exception as e:  # the folder vanished, too many watches, ...
            self.events.put(("watch_failed", str(e)))

    def _keys(self, fd: int) -> None:
        while not self.stop.is_set():
            try:
                ready, _, _ = select.select([fd], [], [], 0.1)
                if not ready:
                    continue
                ch = os.read(fd, 1)
            except OSError:
                return
            if not ch:  # end of input
                return
            key = ch.decode("latin-1").lower()
            if key == "q":
                self.events.put(("quit",))
                if self.busy:  # checks running: stop them now, as Ctrl-C would
                    os.kill(os.getpid(), signal.SIGINT)
            elif key == "h":
                self.events.put(("hint",))

    def _keep_warm(self) -> None:
        """Keep the course's warm grader alive while watching, so that a save after a long read
        is checked at once instead of after the server's idle stop (grader/student/warm/)."""
        from .warm import address, client

        every = min(60.0, address.idle_seconds() / 3)
        while not self.stop.wait(every):
            if not self.busy:
                client.ping(self.course)

    def _sigint(self, signum, frame):
        self.interrupted = True
        raise KeyboardInterrupt

    # -- the screen
    def target(self) -> Path:
        return progress.student_file(self.course, self.current)

    def draw(self, banner: list[Text]) -> bool:
        """Run the current exercise's checks and redraw; True when they all pass."""
        ex = self.current
        status, _ = progress.static_status(self.course, ex)
        unrun = {ex.id: status} if status in (MISSING, EMPTY) else {}
        result = None
        error = ""
        if not unrun:
            self.busy = True
            try:
                result, _ = progress.grade(self.course, [ex])
            except SubmissionError as e:
                error = t("check_cannot_run", path="exercises/", reason=str(e))
            except RuntimeError:
                if not self.interrupted:
                    raise
            finally:
                self.busy = False
            if self.interrupted:
                raise KeyboardInterrupt
        found = progress.standings(self.course, run=False)
        number = [s.exercise.id for s in found].index(ex.id) + 1
        c = self.console
        c.clear()
        head = Text(t("watch_title", n=number, total=len(found), id=ex.id, section=ex.section), style="bold")
        c.print(head)
        c.print(progress_bar(found, width=30))
        for line in banner:
            c.print(line)
        c.print()
        if error:
            c.print(Text(error, style="red"))
        else:
            checkview.show(self.course, [ex], result, unrun, c)
        c.print()
        keys = t("watch_keys") if self.keys else t("watch_keys_nokeys")
        c.print(Text(t("watch_footer", path=progress.shown_path(self.course, ex)) + "  " + keys, style="cyan"))
        shown = hints.revealed(self.course, ex)
        if shown:
            self.show_hints(hints.Reveal(ex, hints.texts(ex), shown, 0))
        return bool(result and result.results and all(r.status == "passed" for r in result.results))

    def show_hints(self, rev: hints.Reveal) -> None:
        self.console.print()
        hints.show(rev, self.console, key="h" if self.keys else "")

    def advance(self, banner: list[Text]) -> None:
        """Checks of the current exercise, moving on while they pass."""
        while self.draw(banner):
            found = progress.standings(self.course, run=False)
            nxt = progress.next_unsolved(found, after=self.current.id)
            done = self.current
            if nxt is None:
                self.console.print()
                self.console.print(Text(t("watch_all_done", id=done.id), style="bold green"))
                raise Quit
            self.current = nxt.exercise
            banner = [Text(t("watch_passed", id=done.id, next=self.current.id), style="bold green")]

    # -- the loop
    def run(self) -> int:
        if self.current is None:
            nxt = progress.next_unsolved(progress.standings(self.course, run=False))
            if nxt is None:
                self.console.print(Text(t("list_all_done"), style="bold green"))
                return 0
            self.current = nxt.exercise
        # A copy of the terminal's descriptor: pytest points fd 0 at /dev/null while checks run.
        fd = os.dup(sys.stdin.fileno()) if self.keys else None
        old = signal.signal(signal.SIGINT, self._sigint)
        threads = [
            threading.Thread(target=self._files, daemon=True),
            threading.Thread(target=self._keep_warm, daemon=True),
        ]
        if fd is not None:
            threads.append(threading.Thread(target=self._keys, args=(fd,), daemon=True))
        try:
            with cbreak(fd):
                for th in threads:
                    th.start()
                self.advance([])
                self.loop()
        except (KeyboardInterrupt, Quit):
            pass
        finally:
            self.stop.set()
            signal.signal(signal.SIGINT, old)
            for th in threads:
                th.join(timeout=2)
            if fd is not None:
                os.close(fd)
        self.console.print(Text(t("watch_bye"), style="dim"))
        return 0

    def loop(self) -> None:
        while True:
            try:
                event = self.events.get(timeout=0.25)
            except queue.Empty:
                continue
            kind = event[0]
            if kind == "quit":
                return
            if kind == "watch_failed":
                self.console.print(Text(t("watch_failed", reason=event[1]), style="red"))
                return
            if kind == "hint":
                self.show_hints(hints.reveal(self.course, self.current))
            elif kind == "changed":
                changed = set(event[1])
                while True:  # one re-run for a burst of saves
                    try:
                        more = self.events.get_nowait()
                    except queue.Empty:
                        break
                    if more[0] == "changed":
                        changed |= more[1]
                    else:
                        self.events.put(more)
                        break
                mine = {self.target(), progress.notebook_file(self.course, self.current)}  # a notebook counts too
                if mine & changed or {p.resolve() for p in mine} & {p.resolve() for p in changed}:
                    self.advance([])
