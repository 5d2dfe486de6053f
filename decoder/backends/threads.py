"""How many CPU threads the next pass gets: the cores that nothing else runs on, now.

llama.cpp's CPU threads meet at a barrier after every operation of a pass, so a thread that has
lost its core to another process stalls all the others: with one core of two kept busy, two
threads decode at a third of their idle speed while one thread keeps its own. So before each
pass the backend asks `ThreadPlan.threads`: the kernel's count of runnable threads right now
(/proc/loadavg), less this process's own, says how many cores other programs hold; the pass
gets the rest, between 1 and the configured `threads`. The smallest count among the samples of
the last fraction of a second is used, so a process that runs for a moment (the editor drawing
a keystroke) does not halve a pass, while a compile or a browser tab that keeps a core busy
does, from the next pass on.

Work nobody waits for (a document prefilled on open, the next suggestion prepared, the
exactness and cost probes) runs in the background lane (`background()`): one core fewer than a
request would get, so a writer's other programs keep one, and in smaller prefill chunks, so a
keystroke's request waits for at most one short chunk.
"""

from __future__ import annotations

import os
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager

WINDOW_S = 0.25  # samples this recent count; the smallest wins
BACKGROUND_CHUNK = 64  # prompt ids per prefill pass in the background lane


def runnable_others() -> int | None:
    """Threads of other processes that are running or waiting for a core now (None: unknown).

    /proc/loadavg's fourth field counts every runnable thread of the machine, this one
    included; this process's own runnable threads (/proc/self/task) are subtracted, so
    llama.cpp's workers spinning after a pass do not count as someone else's load.
    """
    try:
        with open("/proc/loadavg", "rb") as f:
            running = int(f.read().split()[3].split(b"/")[0])
        ours = 0
        for tid in os.listdir("/proc/self/task"):
            try:
                with open(f"/proc/self/task/{tid}/stat", "rb") as f:
                    stat = f.read()
            except OSError:
                continue  # the thread ended meanwhile
            ours += stat[stat.rindex(b")") + 2 : stat.rindex(b")") + 3] == b"R"
        return max(0, running - ours)
    except (OSError, ValueError, IndexError):
        return None


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
        self._seen: deque[tuple[float, int]] = deque(maxlen=8)
        self.last = self.maximum  # the count given to the latest pass

    def busy(self) -> int:
        """Cores other programs hold now: the least runnable count seen within WINDOW_S."""
        others = self._sample()
        now = self._clock()
        if others is None:
            return 0
        self._seen.append((now, others))
        return min(n for t, n in self._seen if now - t <= WINDOW_S)

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
    """Whether this thread runs background work now (see `background`)."""
    return getattr(_lane, "background", False)


@contextmanager
def background(on: bool = True) -> Iterator[None]:
    """Run the block in the background lane (when `on`): fewer threads, shorter prefill chunks."""
    before = in_background()
    _lane.background = on
    try:
        yield
    finally:
        _lane.background = before


def prefill_chunk(default: int) -> int:
    """Ids per prefill pass: `default`, or BACKGROUND_CHUNK in the background lane."""
    return min(default, BACKGROUND_CHUNK) if in_background() else default
