"""A backend of a few lines, registered by tests/test_registries.py as a new backend would be.

The model is a random bigram table in numpy (logits of a position from its token and the one
before it) over the real Mistral v1 tokenizer, so it needs no model file and every row of a pass
is computed alone: batches are exact by construction. The module has what a backend module
must have (decoder/backends/registry.py): `load`, `doctor` and `peers`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

from decoder.backends import threads
from decoder.backends.base import PrefixCaches, plan_sync, prefill
from decoder.backends.models import Model
from decoder.vocab import token_bytes
from tests.mistral_tokenizer import mistral_v1

WIDTH = 8


class TinyBackend:
    name = "tiny"
    context_length = 4096

    def __init__(self, seed: int):
        self.tokenizer = mistral_v1()
        self.table = token_bytes(self.tokenizer)
        self.eos_ids = frozenset({2})
        self.vocab_size = len(self.table)
        rng = np.random.default_rng(seed)
        self.embed = rng.normal(size=(self.vocab_size, WIDTH)).astype(np.float32)
        self.head = rng.normal(size=(2 * WIDTH, self.vocab_size)).astype(np.float32)
        self.ids: list[int] = []
        self.prefilled = 0
        self.pace = threads.Pace()
        self.caches = PrefixCaches(16)

    def _row(self, previous: int, token: int) -> np.ndarray:
        return np.concatenate([self.embed[previous], self.embed[token]]) @ self.head

    def forward(self, ids: list[int]) -> np.ndarray:
        history = [*self.ids[-1:], *ids] if self.ids else [ids[0], *ids]
        self.ids.extend(ids)
        return np.stack([self._row(p, t) for p, t in zip(history, history[1:], strict=False)])

    def prefill_chunk(self, ids: list[int]) -> None:
        self.ids.extend(ids)

    def rewind(self, n: int) -> None:
        del self.ids[len(self.ids) - n :]

    def whole_passes(self, start: int, n: int) -> int:
        return n

    def sync(self, ids: list[int], should_stop: Callable[[], bool] | None = None) -> np.ndarray:
        self.rewind(len(self.ids) - plan_sync(self.ids, ids))
        tail = ids[len(self.ids) :]
        self.prefilled = len(tail)
        return prefill(self, tail, should_stop)

    def select(self, key: str | None) -> None:
        changed, saved = self.caches.switch(key, lambda: (list(self.ids), 8 * len(self.ids)))
        if changed:
            self.ids = saved or []

    def forget(self, key: str | None) -> None:
        if self.caches.forget(key):
            self.ids = []

    def reset(self) -> None:
        self.ids = []
        self.caches.clear()

    def describe(self) -> dict:
        return {"backend": self.name, "model": f"random bigram, width {WIDTH}"}


def load(spec: str, settings, progress: bool = True) -> Model:
    """`seed:N`: a random model from seed N."""
    if not spec.startswith("seed:"):
        from decoder.backends.files import ModelLoadError

        raise ModelLoadError(f"the tiny backend loads seed:N, not {spec!r}")
    return Model(spec, TinyBackend(int(spec.removeprefix("seed:"))), Path(spec), "tiny")


def doctor(settings) -> list[str]:
    return [f"numpy {np.__version__}; random bigram models for tests"]


def peers(backend: TinyBackend) -> list[tuple[str, Callable[[list[int], int], Iterator[int]]]]:
    """A plain argmax loop over the same model: what a user of numpy alone would write."""

    def generate(prompt: list[int], max_tokens: int) -> Iterator[int]:
        backend.reset()
        logits = backend.sync(prompt)
        for _ in range(max_tokens):
            token = int(np.argmax(logits))
            yield token
            logits = backend.forward([token])[-1]

    return [("numpy argmax loop", generate)]
