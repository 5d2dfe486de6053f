"""The single engine thread, the loaded pipeline, and the tickets that stop stale work.

The engine is not thread-safe, so every model call (loading included) runs on one thread, in
order. Work is stopped between decoding cycles through `Ticket.should_stop`: a newer request,
an edit, a `$/cancelRequest` or the time budget all end up there.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from decoder.config import Settings
from decoder.stats import RunStats


class Ticket:
    """One piece of work; it should stop once cancelled or past its deadline."""

    def __init__(self, budget_s: float | None = None):
        self._cancelled = threading.Event()
        self.budget_s = budget_s
        self.deadline: float | None = None  # set when the engine thread starts the work

    def cancel(self) -> None:
        self._cancelled.set()

    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    def start_clock(self) -> None:
        if self.budget_s is not None:
            self.deadline = time.monotonic() + self.budget_s

    def should_stop(self) -> bool:
        return self.cancelled or (self.deadline is not None and time.monotonic() > self.deadline)


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


@dataclass
class Engine:
    """The pipeline behind the server and its state.

    loading | ready | error | unavailable (an inference server that is down, until it answers).
    """

    state: str = "loading"
    error: str = ""
    pipe: object | None = None  # decoder.pipeline.Pipeline or RemoteEngine once loaded
    _executor: ThreadPoolExecutor = field(
        default_factory=lambda: ThreadPoolExecutor(1, thread_name_prefix="bielik-engine")
    )

    async def call(self, fn: Callable, *args):
        """Run `fn(*args)` on the engine thread and await it."""
        return await asyncio.get_running_loop().run_in_executor(self._executor, fn, *args)

    def load(self, settings: Settings) -> None:
        """Load (or reload) the models; runs on the engine thread. Sets state, never raises."""
        from decoder.backends.remote import RemoteEngine
        from decoder.pipeline import load

        if isinstance(self.pipe, RemoteEngine):
            self.pipe.close()  # its client and background probe
        self.state, self.error = "loading", ""
        try:
            self.pipe = load(settings, progress=False)
            self.state = "ready"
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
        enough: Callable[[str], bool] = lambda text: False,
        on_text: Callable[[str, RunStats], None] | None = None,
    ) -> Generated:
        """Continue `prompt`; runs on the engine thread. Stops at `enough(text)`, the ticket,
        the token budget or end of text.
        """
        ticket.start_clock()
        pipe = self.pipe
        text, stats, stop = "", RunStats(), "cancelled"
        if ticket.should_stop():
            return Generated(text, stats, stop)
        chunks = pipe.continue_text(
            prompt,
            max_tokens=max_tokens,
            policy=pipe.policy(drafter, text=prompt, override=override),
            should_stop=ticket.should_stop,
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
        return Generated(text, stats, stop)

    def reset_prefix_cache(self) -> None:
        """Forget the target's cached prompt (benchmarks measure requests without it)."""
        self.pipe.engine.runner.reset()
