"""The drafter interface, and drafters that need no vocabulary translation.

A drafter proposes target-vocabulary ids that may follow the committed context. It may keep
any state it likes (a model cache, an n-gram index) but must resynchronise from the context it
is handed on every call: the engine's committed ids and text are the only truth. A drafter
whose model has another tokenizer translates inside `propose` and reports that time in
`Draft.translate_s`; the engine does not need to know.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import mlx.core as mx

from decoder.backends.mlx import ModelRunner
from decoder.sampling import Keys, Sampling, choose, probabilities
from decoder.stats import Clock


@dataclass
class Context:
    """What has been committed: target ids (prompt and generated) and the text they spell."""

    ids: list[int]  # target ids, prompt included; the last one is not yet in the target cache
    prompt_text: str  # the prompt as the user wrote it (before any tokenizer touched it)
    generated: bytes  # bytes spelled by the generated ids (complete or not as UTF-8)


@dataclass
class Draft:
    ids: list[int]  # proposed target ids, to follow Context.ids
    probs: mx.array | None = None  # (len(ids), vocab): drafter distribution, when sampling
    translate_s: float = 0.0
    passes: int = 0  # drafter model forward passes spent on this draft
    synced: bool | None = None  # a text-keyed drafter's context equalled the committed text


NO_DRAFT = Draft([])


class Drafter(Protocol):
    name: str

    def propose(self, ctx: Context, k: int, sampling: Sampling, keys: Keys) -> Draft:
        """Up to `k` ids likely to follow `ctx`; fewer, or none, when unsure."""
        ...


class ModelDrafter:
    """A smaller model that shares the target's tokenizer drafts greedily (or by sampling).

    Its cache is keyed by its own ids, so each cycle it rewinds only the rejected tail and
    feeds only the ids it has not seen: k forward passes per cycle for k drafted tokens.
    """

    name = "model"

    def __init__(self, model, vocab_size: int):
        self.runner = ModelRunner(model)
        self.vocab_size = vocab_size

    def propose(self, ctx: Context, k: int, sampling: Sampling, keys: Keys) -> Draft:
        if k <= 0:
            return NO_DRAFT
        logits = self.runner.sync(ctx.ids)
        ids, dists = [], []
        for i in range(k):
            logits = logits[None, : self.vocab_size]
            if not sampling.greedy:
                dists.append(probabilities(logits, sampling))
            token = choose(logits, sampling, keys.next()).item()
            ids.append(token)
            if i + 1 < k:
                logits = self.runner.forward([token])[-1]
        return Draft(ids, mx.concatenate(dists) if dists else None, passes=k)


def timed(
    drafter: Drafter, ctx: Context, k: int, sampling: Sampling, keys: Keys
) -> tuple[Draft, float]:
    """Propose and return the draft with the seconds spent drafting (translation excluded)."""
    clock = Clock()
    draft = drafter.propose(ctx, k, sampling, keys)
    return draft, clock.lap() - draft.translate_s
