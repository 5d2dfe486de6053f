"""How many CPU threads the next pass gets: the cores that nothing else runs on, now.

llama.cpp's CPU threads meet at a barrier after every operation of a pass, so a thread that has
lost its core to another process stalls all the others: with one core of two kept busy, two
threads decode at a third of their idle speed while one thread keeps its own. So before each
pass the backend asks `ThreadPlan.threads`: the kernel's count of runnable threads right now
(/proc/loadavg), less this process's own, says how many cores other programs hold; the pass
gets the rest, between 1 and the configured `threads`. The smallest count among the samples of
the last fraction of a second is used, so a process that runs for a moment (the editor drawing
a keystroke) does not halve a pass, while a compile or a browser tab that keeps a core busy
does, from the next pass on. Reading the counts costs tens of microseconds (a file per thread
of ours), so once they say the machine is idle they are read again only after SAMPLE_S: where
a small model's passes take a few milliseconds, the plan then costs a read every few passes.

Work nobody waits for (a document prefilled on open, the next suggestion prepared) runs in the
background lane (`lane(background=True)`): one core fewer than a request would get, so a writer's
other programs keep one. Work that a writer's request may overtake (that, and `continueDocument`)
yields: its prefill passes are sized in time, not in ids (`Pace`): a pass of 64 ids takes 20 ms
on an idle laptop and 350 ms on one thread of a busy one, and a keystroke's request waits for
the pass under way (about 50 ms). Everything else (a request's own prefill, `continue`, the
probes at load) prefills in the widest passes the backend does best, since no request can be
waiting behind it: llama.cpp's batch, MLX's chunks of hundreds.

Threads are half of it; the other half is the share of the CPU the kernel gives. Linux (with
autogroup, the default of desktop kernels) shares the CPU fairly between sessions, not between
threads: a `make -j8` started in a terminal is one group, however many jobs it runs. A server or
a `continue` run started by a script or an editor without a terminal would be counted inside its
parent's session, beside whatever else that session runs; `own_group` gives it its own.
"""

from __future__ import annotations

import os
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager

WINDOW_S = 0.25  # samples this recent count; the smallest wins
SAMPLE_S = 0.02  # an idle run queue is read at most this often; passes in between reuse it
PASS_S = 0.05  # a prefill pass lasts about this long (CPU passes of 8 ids are as fast per id)
FIRST_CHUNK = 64  # prompt ids per prefill pass before any pass was timed
MIN_CHUNK = 8


def runnable_others() -> int | None:
    """Threads of other processes that are running or waiting for a core now (None: unknown).

    /proc/loadavg's fourth field counts every runnable thread of the machine, this one
    included; this process's own runnable threads (/proc/self/task) are subtracted, so
    llama.cpp's workers spinning after a pass do not count as someone else's load. The count
    is read before and after ours, and the larger taken: a thread of ours that wakes meanwhile
    (the server's loop, as a keystroke arrives) would otherwise be subtracted from a count that
    did not hold it, and a core kept busy would look free; the pass given that core's thread
    then waits at every barrier (one id under one busy core: 2.3 s instead of 10 ms, measured).
    """
    try:
        before = _machine_runnable()
        ours = runnable_threads()
        return max(0, max(before, _machine_runnable()) - ours)
    except (OSError, ValueError, IndexError):
        return None


def runnable_threads(pid: int | str = "self") -> int:
    """Threads of process `pid` that are running or waiting for a core now (OSError: no /proc).

    After a pass, llama.cpp's OpenMP threads (and OpenBLAS's) spin for some milliseconds
    before they sleep: runnable, though no work is left.
    """
    count = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue  # the thread ended meanwhile
        count += stat[stat.rindex(b")") + 2 : stat.rindex(b")") + 3] == b"R"
    return count


def _machine_runnable() -> int:
    with open("/proc/loadavg", "rb") as f:
        return int(f.read().split()[3].split(b"/")[0])


AUTOGROUP = "/proc/sys/kernel/sched_autogroup_enabled"


def own_group() -> str:
    """Lead a new session, so that Linux's autogroup gives this process its own share of CPU.

    Only where that changes something and costs nothing: Linux with autogroup on, not already a
    session leader, and no controlling terminal (in a terminal, Ctrl+C must keep reaching us,
    and the terminal's session is its own group already). Returns what was done, for `doctor`.
    """
    try:
        with open(AUTOGROUP, "rb") as f:
            if f.read().strip() != b"1":
                return "shared (autogroup off)"
    except OSError:
        return "shared (no autogroup)"
    if os.getsid(0) == os.getpid():
        return "own (session leader)"
    try:
        os.close(os.open("/dev/tty", os.O_RDONLY | os.O_NOCTTY))
        return "shared with the terminal's session"
    except OSError:
        pass
    try:
        os.setsid()
    except OSError as e:
        return f"shared (setsid: {e.strerror})"
    return "own (new session)"


def online_cpus() -> int:
    """Logical CPUs of the machine (the run queue counts threads on all of them)."""
    return os.cpu_count() or 1


class ThreadPlan:
    """Threads for the next pass, from the configured maximum and what other programs run now.

    `adaptive=False` always gives the maximum (a user who pinned the process with taskset, or
    a GPU build whose CPU threads barely work). `sample` and `cpus` are the machine's; tests
    give their own.
    """

    def __init__(
        self,
        maximum: int,
        *,
        adaptive: bool = True,
        sample: Callable[[], int | None] = runnable_others,
        cpus: int | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.maximum = max(1, maximum)
        self.adaptive = adaptive
        self._sample = sample
        self._cpus = cpus or online_cpus()
        self._clock = clock
        self._seen: deque[tuple[float, int]] = deque(maxlen=16)
        self._read_at: float | None = None  # when the run queue was last read
        self._busy = 0  # what busy() found then
        self.last = self.maximum  # the count given to the latest pass

    def busy(self) -> int:
        """Cores other programs hold now: the least runnable count seen within WINDOW_S.

        Where the last read found every core free, a pass within SAMPLE_S of it reuses that; a
        busy count is read again at the next pass, so a pass that got fewer threads for a
        moment's load (a process that ran as the request came) gets them back at once.
        """
        now = self._clock()
        if self._busy == 0 and self._read_at is not None and now - self._read_at < SAMPLE_S:
            return 0
        others = self._sample()
        now = self._read_at = self._clock()
        if others is None:
            self._busy = 0
        else:
            self._seen.append((now, others))
            self._busy = min(n for t, n in self._seen if now - t <= WINDOW_S)
        return self._busy

    def threads(self) -> int:
        """Threads for the next pass (the background lane leaves one more core free)."""
        n = self.maximum
        if self.adaptive:
            n = max(1, min(n, self._cpus - self.busy()))
        if in_background():
            n = max(1, n - 1)
        self.last = n
        return n


_lane = threading.local()


def in_background() -> bool:
    """Whether this thread runs work nobody waits for now: one thread fewer (see `lane`)."""
    return getattr(_lane, "background", False)


def yielding() -> bool:
    """Whether a writer's request may need the engine before this thread's work ends (`lane`)."""
    return getattr(_lane, "yields", False)


@contextmanager
def lane(*, yields: bool = False, background: bool = False) -> Iterator[None]:
    """Run the block in a lane.

    `yields` (a request may overtake it) cuts prefill passes short; `background` (nobody waits
    for it) yields too and takes one thread fewer.
    """
    before = (in_background(), yielding())
    _lane.background, _lane.yields = background, yields or background
    try:
        yield
    finally:
        _lane.background, _lane.yields = before


def background(on: bool = True) -> AbstractContextManager[None]:
    """The background lane (when `on`): one thread fewer, prefill in short passes."""
    return lane(background=on)


class Pace:
    """How a prompt is cut into prefill passes, and how long passes of each kind take.

    Passes are as wide as the backend does best (`maximum`, its batch) unless a request may need
    the engine meanwhile (`yielding`): then about PASS_S of work each, sized from the recent short
    passes. The wide passes' measure says how long a request's prompt would take to prefill
    (`seconds`), so a request can choose a shorter prompt where the whole one would keep the
    writer waiting. Cutting a prompt either way is fine only where the cuts change nothing the
    model computes (measured at load: decoder/backends/exactness.py); elsewhere `AlignedPace`.
    """

    def __init__(self) -> None:
        self.short_per_id: float | None = None  # seconds per id of the passes cut short
        self.wide_per_id: float | None = None  # of the wide ones (None: none of MIN_CHUNK+ yet)

    def cuts_short(self) -> bool:
        """Whether this thread's passes are cut short now: a request may need the engine."""
        return yielding()

    def record(self, n: int, seconds: float) -> None:
        """A prefill pass of `n` ids, cut as `chunk` said, took `seconds` (half weight to it)."""
        if n < MIN_CHUNK:
            return
        new = seconds / n
        if self.cuts_short():
            old = self.short_per_id
            self.short_per_id = new if old is None else (old + new) / 2
        else:
            old = self.wide_per_id
            self.wide_per_id = new if old is None else (old + new) / 2

    def chunk(self, maximum: int, at: int = 0) -> int:
        """Ids for the next prefill pass: `maximum`, or about PASS_S of work where work yields.

        `at`, the position of its first id, matters to `AlignedPace` only.
        """
        if not self.cuts_short():
            return maximum
        if self.short_per_id is None:
            return min(maximum, FIRST_CHUNK)
        return max(MIN_CHUNK, min(maximum, int(PASS_S / self.short_per_id)))

    def seconds(self, n: int) -> float:
        """About how long `n` ids would take a request to prefill now (0 before any pass)."""
        per_id = self.wide_per_id or self.short_per_id
        return 0.0 if per_id is None else n * per_id


class AlignedPace(Pace):
    """Passes at fixed positions (every `size` ids from 0) in every lane, whatever they take.

    For an engine whose logits depend on how a prompt is cut into passes (OpenVINO's CPU
    plug-in; MLX on a CPU; measured at load): a prompt is then always cut the same way, so plain
    decoding gives the same text from a fresh cache in every process, whether the prompt was
    prefilled for a request or in the background. Work that yields waits for a whole `size`.
    """

    def __init__(self, size: int) -> None:
        super().__init__()
        self.size = size

    def cuts_short(self) -> bool:
        return False  # cut alike in every lane: every pass is a request's kind of pass

    def chunk(self, maximum: int, at: int = 0) -> int:
        return min(maximum, self.size - at % self.size)
