"""The single engine thread, the loaded pipeline, and the tickets that stop stale work.

The engine is not thread-safe, so every model call (loading included) runs on one thread, in
order. Work is stopped between decoding cycles (and between prefill chunks) through
`Ticket.should_stop`: a newer request, an edit, a `$/cancelRequest`, the time budget, or for
background work an inline request waiting for the thread all end up there. Work that an inline
request may overtake (prefilling on open, a prepared suggestion, continueDocument) prefills in
short passes, so the request waits for one; a request's own prompt goes in the widest passes.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import gc
import itertools
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from decoder.backends import threads
from decoder.config import Settings
from decoder.generation import Generator, Stage, print_nothing
from decoder.sampling import Sampling
from decoder.stats import RunStats


class Ticket:
    """One piece of work, and when it should stop.

    Once cancelled, past its deadline (counted from the request's arrival), or (`yields_to`) as
    soon as an inline request waits for the engine thread.
    """

    def __init__(
        self,
        budget_s: float | None = None,
        *,
        arrived: float | None = None,
        yields_to: Callable[[], bool] | None = None,
        background: bool = False,
    ):
        self._cancelled = threading.Event()
        self.background = background  # work nobody waits for: the background lane's threads
        start = time.monotonic() if arrived is None else arrived
        self.deadline = None if budget_s is None else start + budget_s
        self._yields_to = yields_to
        self.yields = yields_to is not None  # a request may overtake it: prefill in short passes

    def cancel(self) -> None:
        self._cancelled.set()

    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    @property
    def yielding(self) -> bool:
        return self._yields_to is not None and self._yields_to()

    def should_stop(self) -> bool:
        return (
            self.cancelled
            or self.yielding
            or (self.deadline is not None and time.monotonic() > self.deadline)
        )


class Supersession:
    """Per document, the newest inline request: a new request or an edit cancels the older one."""

    def __init__(self) -> None:
        self._current: dict[str, Ticket] = {}

    def start(self, uri: str, ticket: Ticket) -> None:
        self.supersede(uri)
        self._current[uri] = ticket

    def supersede(self, uri: str) -> None:
        old = self._current.pop(uri, None)
        if old is not None:
            old.cancel()

    def is_current(self, uri: str, ticket: Ticket) -> bool:
        return self._current.get(uri) is ticket and not ticket.cancelled

    def finish(self, uri: str, ticket: Ticket) -> None:
        if self._current.get(uri) is ticket:
            del self._current[uri]


@dataclass
class Generated:
    text: str
    stats: RunStats
    stop: str  # eos | max_tokens | context | cancelled | unit (the caller had enough)
    key: str | None = None  # the prefix cache it ran on


class EngineThread:
    """One daemon thread running submitted calls: urgent ones first, each level in order.

    A keystroke's suggestion must not wait behind work nobody is waiting for (a document
    prepared ahead, a continuation, a cache dropped), so urgent calls overtake the queue; the
    call already running stops at its next pass boundary through its ticket. A daemon, unlike
    the threads of a ThreadPoolExecutor, so a hung model load never keeps the server process
    from exiting.
    """

    def __init__(self) -> None:
        self._jobs: queue.PriorityQueue = queue.PriorityQueue()
        self._order = itertools.count()
        threading.Thread(target=self._run, name="bielik-engine", daemon=True).start()

    def submit(self, fn: Callable, *args, urgent: bool = False) -> concurrent.futures.Future:
        future: concurrent.futures.Future = concurrent.futures.Future()
        self._jobs.put((0 if urgent else 1, next(self._order), (future, fn, args)))
        return future

    def abandon(self) -> None:
        """Stop taking work: calls still queued are cancelled, the running one is left to itself.

        The stop goes ahead of the queue, so no queued call runs on this thread beside the
        thread that replaces it.
        """
        self._jobs.put((-1, next(self._order), None))

    def _run(self) -> None:
        while (job := self._jobs.get()[2]) is not None:
            future, fn, args = job
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(fn(*args))
            except BaseException as e:
                future.set_exception(e)
        while True:
            try:
                job = self._jobs.get_nowait()[2]
            except queue.Empty:
                return
            if job is not None:
                job[0].cancel()


class Worker:
    """The engine behind the server, its state and its thread.

    loading | ready | error | unavailable (an inference server that is down, until it answers).
    """

    def __init__(self) -> None:
        self.state = "loading"
        self.error = ""
        self.pipe: Generator | None = None  # once loaded
        self.urgent = 0  # inline requests waiting for or using the thread
        self._thread = EngineThread()

    async def call(self, fn: Callable, *args, urgent: bool = False):
        """Run `fn(*args)` on the engine thread and await it.

        `urgent` work runs before queued work and makes background work (continueDocument,
        prepared suggestions) step aside between cycles.
        """
        self.urgent += urgent
        try:
            return await asyncio.wrap_future(self._thread.submit(fn, *args, urgent=urgent))
        finally:
            self.urgent -= urgent

    async def calm(self) -> None:
        """Return once no inline request waits for the thread (background work resumes)."""
        while self.urgent:
            await asyncio.sleep(0.02)

    async def load(
        self, settings: Settings, timeout_s: float, stage: Stage = print_nothing
    ) -> None:
        """Free the old models, then load new ones; sets state and error, never raises.

        A load that hangs (a stuck download, a file that never ends) ends in `error` after
        `timeout_s`; its thread is abandoned and a fresh one serves what comes next.
        """
        self.state, self.error = "loading", ""
        try:
            self.pipe = await asyncio.wait_for(self.call(_load, self, settings, stage), timeout_s)
            self.state = "ready"
        except TimeoutError:
            self._thread.abandon()
            self._thread = EngineThread()
            self.pipe, self.state = None, "error"
            self.error = f"loading {settings.target} did not finish within {timeout_s:g} s"
        except Exception as e:  # ModelLoadError, ConfigError, or anything a broken model raises
            self.pipe, self.state = None, "error"
            self.error = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__

    def generate(
        self,
        prompt: str,
        *,
        max_tokens: int,
        drafter: str,
        override: str = "auto",
        ticket: Ticket,
        key: str | None = None,
        enough: Callable[[str], bool] = lambda text: False,
        on_text: Callable[[str, RunStats], None] | None = None,
        first_bytes: bytes = b"",
        avoid: tuple[bytes, ...] = (),
        sampling: Sampling | None = None,
    ) -> Generated:
        """Continue `prompt`; runs on the engine thread.

        Stops at `enough(text)`, the ticket, the token budget or end of text. `key` (a document
        URI) picks its prefix cache; `first_bytes`, `avoid` and `sampling` go to the engine as
        they are. A ticket already stopped (work superseded while it waited in the queue) costs
        nothing.
        """
        if ticket.should_stop():
            return Generated("", RunStats(), "cancelled", key)
        # Work that yields prefills in short passes; background work also takes one core fewer.
        with threads.lane(yields=ticket.yields, background=ticket.background):
            pipe = self.pipe
            text, stats, stop = "", RunStats(), "cancelled"
            pipe.select(key)
            chunks = pipe.continue_text(
                prompt,
                max_tokens=max_tokens,
                policy=pipe.policy(drafter, text=prompt, override=override),
                should_stop=ticket.should_stop,
                sampling=sampling,
                first_bytes=first_bytes,
                avoid=avoid,
            )
            try:
                for chunk in chunks:
                    text += chunk.text
                    stats = chunk.stats
                    if on_text is not None and chunk.text:
                        on_text(chunk.text, stats)
                    if chunk.done:
                        stop = stats.stop_reason
                    elif enough(text):
                        stop = "unit"
                        break
            finally:
                chunks.close()
            return Generated(text, stats, stop, key)

    def apply(self, settings: Settings) -> None:
        """On the engine thread: settings that need no reload reach the engine."""
        if self.pipe is not None:
            self.pipe.apply(settings)

    def forget(self, key: str) -> None:
        """Drop `key`'s prefix caches on the engine thread, after the work already queued."""
        self._thread.submit(self._forget, key)

    def _forget(self, key: str) -> None:
        if self.pipe is not None:
            self.pipe.forget(key)


def _load(worker: Worker, settings: Settings, stage: Stage) -> Generator:
    """On the engine thread: drop the old engine (so two models never share memory), load."""
    from decoder.pipeline import load

    if worker.pipe is not None:
        stage("freeing the previous models")
        worker.pipe.close()  # its models, or its client and background probe
    worker.pipe = None
    gc.unfreeze()  # `settle_heap` froze the old models with the rest: their cycles go now
    gc.collect()
    return load(settings, progress=False, stage=stage)


def settle_heap(read_tables: Callable[[], object]) -> None:
    """After a load, on the engine thread: read the tables, then exempt the heap from the GC.

    What is loaded by then (the models, spelling's lexicon: 300,000 containers) lives as long
    as the models. A full collection walked it all, 24 ms here, at any keystroke's moment;
    frozen, it walks only what came after. `read_tables` also moves the lexicon's first read
    (0.3 s) and Morfeusz's opening (80 ms) off the event loop, where the first document's
    check did them.
    """
    read_tables()
    gc.collect()
    gc.freeze()
