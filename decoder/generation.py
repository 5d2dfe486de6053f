"""What every engine gives its callers: text in chunks with live statistics, behind one interface.

The local pipeline (decoder/pipeline.py: our speculative loop over a Backend) and an inference
server (decoder/remote.py) both implement `Generator`, so the CLI and the language server never
ask which of the two they hold.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from decoder.config import Settings
from decoder.sampling import Sampling
from decoder.stats import RunStats

Stage = Callable[[str], None]  # hears which step of a model load is under way


def print_nothing(stage: str) -> None:
    """The stage of a load nobody watches."""


@dataclass
class Chunk:
    ids: list[int]  # target ids committed by this step (empty when the engine does not say)
    text: str  # their text, complete UTF-8 only (held-back bytes arrive with a later chunk)
    stats: RunStats  # live statistics of the whole run
    done: bool = False


@dataclass
class Result:
    ids: list[int]  # every generated target id
    text: str  # the whole generated text
    stats: RunStats  # the final statistics


def collect(chunks: Iterable[Chunk], on_chunk: Callable[[Chunk], None] | None = None) -> Result:
    """Run a generation to its end (calling `on_chunk` as chunks stream in) and gather it."""
    ids: list[int] = []
    pieces: list[str] = []
    stats = RunStats()
    for chunk in chunks:
        ids += chunk.ids
        pieces.append(chunk.text)
        stats = chunk.stats
        if on_chunk is not None:
            on_chunk(chunk)
    return Result(ids, "".join(pieces), stats)


class Generator(Protocol):
    """An engine: continues text, keeps per-document caches, describes itself."""

    settings: Settings

    def policy(
        self,
        mode: str | None = None,
        k: int | None = None,
        *,
        text: str = "",
        cursor: int | None = None,
        override: str = "auto",
    ) -> Any:
        """How one request speculates: drafter `mode`, draft length `k`, a file's on/off/auto."""
        ...

    def continue_text(
        self,
        text: str,
        *,
        max_tokens: int | None = None,
        policy: Any = None,
        should_stop: Callable[[], bool] | None = None,
        sampling: Sampling | None = None,
        first_bytes: bytes = b"",
        avoid: tuple[bytes, ...] = (),
    ) -> Iterator[Chunk]:
        """Continue `text`; closing the iterator or `should_stop()` ends it between steps.

        `sampling` overrides the settings' for this run; `first_bytes` asks for a first token
        that begins with these bytes (token healing), and `avoid` for one that spells no start
        of these texts (an alternative), where the engine can constrain it.
        """
        ...

    def select(self, key: str | None) -> None:
        """Make the prompt caches of `key` (a document) current."""
        ...

    def forget(self, key: str | None) -> None:
        """Drop the prompt caches of `key` (a document the editor closed)."""
        ...

    def catch_up_s(self, text: str, key: str | None) -> float:
        """About how long `text` would take to prefill from `key`'s cache (0: unknown)."""
        ...

    def reset(self) -> None:
        """Forget cached prompts (benchmarks measure requests without them)."""
        ...

    def describe(self) -> dict:
        """Where and how it runs, for doctor and statistics; never runs a model."""
        ...

    def score(
        self, prefix: str, continuations: list[str], should_stop: Callable[[], bool] | None = None
    ) -> list[float] | None:
        """Log-probability of each continuation after `prefix`, in nats; None if unknown.

        The spelling checker's question (decoder/scoring.py): which correction fits a sentence.
        """
        ...

    def compare(
        self,
        text: str,
        edits: list[tuple[int, int, int, int, tuple[str, ...]]],
        floor: float | None = None,
        should_stop: Callable[[], bool] | None = None,
    ) -> list[list[float | None]] | None:
        """Per edit of `text`, each option's gain in nats (decoder/scoring.compare).

        None if unknown. The grammar checker's question: does another form read far likelier.
        """
        ...

    def apply(self, settings: Settings) -> None:
        """Take settings that need no reload (schema: `reload`) from now on."""
        ...

    def watch(self, on_health: Callable[[bool, str], None]) -> None:
        """Call `on_health(up, message)` when the engine goes down or comes back."""
        ...

    def close(self) -> None:
        """Free what it holds (models, connections)."""
        ...
