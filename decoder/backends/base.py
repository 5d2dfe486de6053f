"""The backend interface: one model with a rewindable KV cache keyed by the exact ids it holds.

The engine loop, every drafter, the translator and the policy talk to a model only through
this protocol, so MLX (decoder/backends/mlx.py) and llama.cpp (decoder/backends/llamacpp.py)
are interchangeable, and the decoding core never imports an inference library. Logits are
float32 numpy arrays, one row per fed position. Whether a pass over n tokens gives, bit for
bit, the logits of n one-token passes (and so speculation equals plain greedy decoding) is not
declared here: it is measured on the model in use (decoder/backends/exactness.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol, runtime_checkable

import numpy as np

from decoder.backends import threads

PREFILL_CHUNK = 512  # prompt ids per prefill pass at most (llama.cpp's batch); stops between passes


class Stopped(Exception):
    """`sync` was asked to stop between prefill chunks; the cache holds a consistent prefix."""


@runtime_checkable
class Backend(Protocol):
    name: str  # "mlx" | "llamacpp"
    ids: list[int]  # exactly the ids whose keys and values are cached
    prefilled: int  # ids fed by the last `sync` (prefix-cache statistics)
    table: tuple[bytes, ...]  # token id -> the bytes it spells (special tokens: b"")
    eos_ids: frozenset[int]
    vocab_size: int  # width of a logits row (may exceed len(table): padded vocabularies)
    context_length: int
    tokenizer: object  # `encode(text)` with the model's own BOS
    pace: threads.Pace  # how long its prefill passes take (sizes them, estimates prompts)

    def forward(self, ids: list[int]) -> np.ndarray:
        """Feed `ids` after the cache; logits (len(ids), vocab_size)."""
        ...

    def prefill_chunk(self, ids: list[int]) -> None:
        """Feed `ids` after the cache and keep no logits (a prompt's body, chunk by chunk)."""
        ...

    def rewind(self, n: int) -> None:
        """Drop the last `n` cached positions, exactly."""
        ...

    def whole_passes(self, start: int, n: int) -> int:
        """Of `n` ids to verify from position `start`, how many to feed in one forward.

        `n` where a pass costs what it holds; fewer where every pass costs a fixed width (MLX's
        padded exact passes), so a draft's last few ids do not pay a whole pass of their own.
        """
        ...

    def sync(self, ids: list[int], should_stop: Callable[[], bool] | None = None) -> np.ndarray:
        """Make the cache hold `ids`; the logits after the last one (vocab_size,)."""
        ...

    def select(self, key: str | None) -> None:
        """Make the prefix cache of `key` (e.g. a document URI) current."""
        ...

    def forget(self, key: str | None) -> None:
        """Drop the prefix cache of `key` (a closed document), the current one included."""
        ...

    def reset(self) -> None: ...

    def describe(self) -> dict: ...


def common_prefix(a, b) -> int:
    """Length of the longest common prefix of two sequences (ids, bytes)."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def plan_sync(cached: list[int], ids: list[int]) -> int:
    """How many cached ids `sync(ids)` keeps.

    The common prefix, less at least the last id: its logits are needed, so it is fed again.
    """
    if not ids:
        raise ValueError("cannot run a model on an empty prompt")
    return min(common_prefix(cached, ids), len(ids) - 1)


def rewind_and_prefill(
    backend, ids: list[int], should_stop: Callable[[], bool] | None
) -> np.ndarray:
    """`sync` for a backend that rewinds exactly: keep the common prefix, feed the rest."""
    common = plan_sync(backend.ids, ids)
    backend.rewind(len(backend.ids) - common)
    tail = ids[common:]
    backend.prefilled = len(tail)
    return prefill(backend, tail, should_stop)


def prefill(backend, tail: list[int], should_stop: Callable[[], bool] | None) -> np.ndarray:
    """Feed `tail` and return the logits row after its last id.

    All but the last id go in passes of PREFILL_CHUNK ids, the widest the backends do best, with
    `should_stop` checked between them; where a writer's request may need the engine meanwhile
    (work that yields: `threads.lane`), in passes of about a fixed time, so the request waits for
    one short pass (`threads.Pace`). Where the backend's logits depend on the cuts, at fixed
    positions in every lane (`threads.AlignedPace`).
    """
    start, end = 0, len(tail) - 1
    while start < end:
        if should_stop is not None and should_stop():
            raise Stopped()
        size = backend.pace.chunk(PREFILL_CHUNK, at=len(backend.ids))
        chunk = tail[start : min(start + size, end)]
        began = time.perf_counter()
        backend.prefill_chunk(chunk)
        backend.pace.record(len(chunk), time.perf_counter() - began)
        start += len(chunk)
    return backend.forward(tail[-1:])[-1]


class PrefixCaches:
    """Per-key saved caches (one per document), least recently used dropped past `cap_mb`.

    A backend stashes its current cache under the current key when another key is selected,
    and restores the new key's cache if it has one; entries are opaque (a backend's own state)
    with their size in bytes.
    """

    def __init__(self, cap_mb: float):
        self.cap = int(cap_mb * 2**20)
        self.key: str | None = None
        self.saved: dict[str | None, tuple[object, int]] = {}  # insertion order = recency

    def switch(
        self, key: str | None, current: Callable[[], tuple[object, int]]
    ) -> tuple[bool, object | None]:
        """(whether the key changed, what `key` had saved or None).

        `current()` is saved under the old key. After a change with nothing saved, the backend
        starts empty.
        """
        if key == self.key:
            return False, None
        state, size = current()
        if 0 < size <= self.cap:
            self.saved[self.key] = (state, size)
        self.key = key
        entry = self.saved.pop(key, None)
        while self.saved and sum(s for _, s in self.saved.values()) > self.cap:
            del self.saved[next(iter(self.saved))]
        return True, entry[0] if entry else None

    def forget(self, key: str | None) -> bool:
        """Drop what is saved for `key`; True when `key` is current (the backend empties it)."""
        self.saved.pop(key, None)
        return key == self.key

    def clear(self) -> None:
        self.saved.clear()
