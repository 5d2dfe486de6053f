"""The drafter interface, and drafters that need no vocabulary translation.

A drafter proposes target-vocabulary ids that may follow the committed context. It may keep
any state it likes (a model cache, an n-gram index) but must resynchronise from the context it
is handed on every call: the engine's committed ids and text are the only truth. A drafter
whose model has another tokenizer translates inside `propose` and reports that time in
`Draft.translate_s`; the engine does not need to know.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from decoder.backends.base import Backend
from decoder.pricing import Market, Offer
from decoder.sampling import Keys, Sampling, choose, probabilities
from decoder.stats import Clock

# How a drafter model with another tokenizer hands its drafts to the target (translator.py).
TRANSLATION_DOCS = {
    "none": "no translation: drafter ids are used as target ids (same vocabulary only)",
    "naive": "decode the draft, encode it again with no context (the published baseline)",
    "context": "decode with a few committed tokens of context, encode, drop the context",
    "anchored": "byte-exact, from a checked token boundary, holding back what may still merge",
}
TRANSLATIONS = tuple(TRANSLATION_DOCS)


@dataclass
class Context:
    """What has been committed: target ids (prompt and generated) and the text they spell."""

    ids: list[int]  # target ids, prompt included; the last one is not yet in the target cache
    prompt_text: str  # the prompt as the user wrote it (before any tokenizer touched it)
    generated: bytes  # bytes spelled by the generated ids (complete or not as UTF-8)


@dataclass
class Draft:
    ids: list[int]  # proposed target ids, to follow Context.ids
    probs: np.ndarray | None = None  # (len(ids), vocab): drafter distribution, when sampling
    translate_s: float = 0.0
    passes: int = 0  # drafter model forward passes spent on this draft
    synced: bool | None = None  # a text-keyed drafter's context equalled the committed text


NO_DRAFT = Draft([])


class Drafter(Protocol):
    name: str

    def propose(self, ctx: Context, k: int, sampling: Sampling, keys: Keys) -> Draft:
        """Up to `k` ids likely to follow `ctx`; fewer, or none, when unsure."""
        ...

    def offer(self, market: Market) -> Offer | None:
        """What drafting the next cycle is worth (`auto` takes the best offer); None: nothing."""
        ...


def draft_loop(
    runner: Backend,
    ids: list[int],
    k: int,
    sampling: Sampling,
    keys: Keys,
    width: int,
    stop: Callable[[int], bool] = lambda token: False,
) -> tuple[list[int], list[np.ndarray]]:
    """Up to `k` ids a model proposes after `ids`, with their distributions when sampling.

    It chooses among the first `width` logits; a token `stop` rejects ends the draft unfed.
    """
    logits = runner.sync(ids)
    drafted, dists = [], []
    for i in range(k):
        row = logits[None, :width]
        if not sampling.greedy:
            dists.append(probabilities(row, sampling))
        token = int(choose(row, sampling, keys.next())[0])
        if stop(token):
            break
        drafted.append(token)
        if i + 1 < k:
            logits = runner.forward([token])[-1]
    return drafted, dists[: len(drafted)]


class ModelDrafter:
    """A smaller model that shares the target's tokenizer drafts greedily (or by sampling).

    Its cache is keyed by its own ids, so each cycle it rewinds only the rejected tail and
    feeds only the ids it has not seen: k forward passes per cycle for k drafted tokens.
    `vocab_size` is the number of ids both share: padded output rows past it are never drafted.
    """

    name = "model"
    passes_per_token = 1.0

    def __init__(self, runner: Backend, vocab_size: int):
        self.runner = runner
        self.vocab_size = vocab_size

    def offer(self, market: Market) -> Offer | None:
        return None if market.prose else market.model_offer(self.name, self.passes_per_token)

    def propose(self, ctx: Context, k: int, sampling: Sampling, keys: Keys) -> Draft:
        if k <= 0:
            return NO_DRAFT
        ids, dists = draft_loop(self.runner, ctx.ids, k, sampling, keys, self.vocab_size)
        return Draft(ids, np.concatenate(dists) if dists else None, passes=len(ids))


def timed(
    drafter: Drafter, ctx: Context, k: int, sampling: Sampling, keys: Keys
) -> tuple[Draft, float]:
    """Propose and return the draft with the seconds spent drafting (translation excluded)."""
    clock = Clock()
    draft = drafter.propose(ctx, k, sampling, keys)
    return draft, clock.lap() - draft.translate_s
