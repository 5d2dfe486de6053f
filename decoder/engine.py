"""The decoding loop: draft, verify, commit, rewind; plain decoding is the same loop with no draft.

One code path for every caller (CLI, language server, benchmarks) and every drafter, so the
equality "speculative output == plain greedy output" is a property of one loop, not of several.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Protocol

from decoder.backends.base import Backend, Stopped
from decoder.drafting.drafter import NO_DRAFT, Context, Drafter, as_backend, timed
from decoder.sampling import GREEDY, Keys, Sampling, choose
from decoder.stats import Clock, Cycle, RunStats
from decoder.verifier import accept
from decoder.vocab import TextStream


class PromptTooLong(ValueError):
    pass


@dataclass(frozen=True)
class Choice:
    drafter: Drafter | None  # None: plain decoding for this cycle
    k: int
    reason: str


class Policy(Protocol):
    def choose(self, ctx: Context, stats: RunStats) -> Choice:
        """Which drafter and draft length to use for the next cycle, and why."""
        ...


class FixedPolicy:
    """Always the same drafter and k (the CLI's explicit --drafter, and experiments)."""

    def __init__(self, drafter: Drafter | None, k: int, reason: str | None = None):
        name = drafter.name if drafter else "none"
        self.choice = Choice(drafter, k if drafter else 0, reason or f"fixed: {name}, k={k}")

    def choose(self, ctx: Context, stats: RunStats) -> Choice:
        return self.choice


PLAIN = FixedPolicy(None, 0, "fixed: plain decoding")


@dataclass
class Chunk:
    ids: list[int]  # target ids committed by this step
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


class Engine:
    """The target: a Backend (its prefix-keyed cache, token-to-bytes table, EOS ids)."""

    def __init__(self, backend: Backend, tokenizer=None):
        """`Engine(backend)`; `Engine(mlx_model, tokenizer)` wraps the model in the MLX backend."""
        if tokenizer is not None and not isinstance(backend, Backend):
            from decoder.backends.mlx import MLXBackend

            backend = MLXBackend(backend, tokenizer)
        self.runner = as_backend(backend)
        self.tokenizer = self.runner.tokenizer
        self.table = self.runner.table
        self.eos = self.runner.eos_ids
        self.context_length = self.runner.context_length

    @property
    def model(self):
        """The backend's model object (an mlx-lm module, or llama.cpp's model handle)."""
        return getattr(self.runner, "model", None)

    def encode(self, text: str) -> list[int]:
        """The prompt as the target sees it: its own BOS (if it uses one) and its tokens."""
        return self.tokenizer.encode(text)

    def generate(
        self,
        prompt_ids: list[int],
        *,
        max_tokens: int,
        policy: Policy = PLAIN,
        sampling: Sampling = GREEDY,
        prompt_text: str = "",
        should_stop: Callable[[], bool] | None = None,
    ) -> Iterator[Chunk]:
        """Continue `prompt_ids` by up to `max_tokens` tokens, one Chunk per cycle."""
        if len(prompt_ids) >= self.context_length:
            raise PromptTooLong(
                f"prompt has {len(prompt_ids)} tokens; the model's context is {self.context_length}"
            )
        stats, keys, clock = RunStats(prompt_tokens=len(prompt_ids)), Keys(sampling.seed), Clock()
        stream = TextStream(self.table)
        try:
            logits = self.runner.sync(prompt_ids, should_stop)
        except Stopped:
            stats.stop_reason = "cancelled"
            yield Chunk([], "", stats, done=True)
            return
        y = int(choose(logits[None], sampling, keys.next())[0])
        stats.prefilled_tokens, stats.prefill_seconds = self.runner.prefilled, clock.lap()
        ids, generated = [*prompt_ids, y], bytearray(self.table[y])
        stats.generated_tokens = 1
        yield Chunk([y], stream.add([y]), stats)
        while not (stop := self._stop_reason(ids, len(prompt_ids), max_tokens, should_stop)):
            choice = policy.choose(Context(ids, prompt_text, bytes(generated)), stats)
            if choice.reason not in stats.reasons:
                stats.reasons.append(choice.reason)
            k = min(
                choice.k,
                max_tokens - (len(ids) - len(prompt_ids)) - 1,
                self.context_length - len(ids) - 1,
            )
            other_s = clock.lap()
            draft, draft_s = NO_DRAFT, 0.0
            if choice.drafter is not None and k > 0:
                ctx = Context(ids, prompt_text, bytes(generated))
                draft, draft_s = timed(choice.drafter, ctx, k, sampling, keys)
                draft.ids = draft.ids[:k]
            clock.lap()
            logits = self.runner.forward([y, *draft.ids])
            n, y = accept(logits, draft, sampling, keys)
            verify_s = clock.lap()
            new = [*draft.ids[:n], y]
            cut = next((i for i, t in enumerate(new) if t in self.eos), len(new) - 1)
            self.runner.rewind(len(draft.ids) - n + len(new) - 1 - cut)
            new, y = new[: cut + 1], new[cut]
            ids.extend(new)
            for t in new:
                generated += self.table[t]
            stats.generated_tokens += len(new)
            text = stream.add(new)
            stats.cycles.append(
                Cycle(
                    drafter=choice.drafter.name if choice.drafter and k > 0 else "none",
                    k=k if choice.drafter else 0,
                    drafted=len(draft.ids),
                    accepted=n,
                    emitted=len(new),
                    draft_s=draft_s,
                    translate_s=draft.translate_s,
                    verify_s=verify_s,
                    other_s=other_s + clock.lap(),
                    reason=choice.reason,
                    passes=draft.passes,
                    synced=draft.synced,
                )
            )
            yield Chunk(new, text, stats)
        stats.stop_reason = stop
        yield Chunk([], stream.flush(), stats, done=True)

    def _stop_reason(self, ids, n_prompt, max_tokens, should_stop) -> str:
        if ids[-1] in self.eos:
            return "eos"
        if len(ids) - n_prompt >= max_tokens:
            return "max_tokens"
        if len(ids) >= self.context_length:
            return "context"
        if should_stop is not None and should_stop():
            return "cancelled"
        return ""
