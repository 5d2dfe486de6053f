"""The decoding loop: draft, verify, commit, rewind; plain decoding is the same loop with no draft.

One code path for every caller (CLI, language server, benchmarks) and every drafter, so the
equality "speculative output == plain greedy output" is a property of one loop, not of several.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Protocol

from decoder.backends.base import Backend, Stopped
from decoder.drafting.drafter import NO_DRAFT, Context, Drafter, timed
from decoder.generation import Chunk
from decoder.sampling import GREEDY, Keys, Sampling, choose
from decoder.stats import Clock, Cycle, RunStats, count_chars
from decoder.verifier import accept
from decoder.vocab import Beginnings, TextStream


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
class Run:
    """One generation's state, handed from cycle to cycle."""

    ids: list[int]  # prompt and committed ids; the last one is not yet in the target's cache
    prompt_len: int
    prompt_text: str
    max_tokens: int
    sampling: Sampling
    first_bytes: bytes = b""  # the first token must begin with these (token healing)
    avoid: tuple[bytes, ...] = ()  # nor spell a start of these (an alternative to what is shown)
    text: bytearray = field(default_factory=bytearray)  # what the generated ids spell
    stats: RunStats = field(init=False)
    keys: Keys = field(init=False)
    clock: Clock = field(default_factory=Clock)

    def __post_init__(self) -> None:
        self.stats = RunStats(prompt_tokens=self.prompt_len)
        self.keys = Keys(self.sampling.seed)

    @property
    def generated(self) -> int:
        return len(self.ids) - self.prompt_len

    def context(self) -> Context:
        return Context(self.ids, self.prompt_text, bytes(self.text))

    def commit(self, new: list[int], table: tuple[bytes, ...]) -> int:
        """Append `new` and its bytes; the number of characters they begin."""
        self.ids.extend(new)
        spelled = b"".join(table[token] for token in new)
        self.text += spelled
        chars = count_chars(spelled)
        self.stats.generated_tokens += len(new)
        self.stats.generated_chars += chars
        return chars


class Engine:
    """The target: a Backend (its prefix-keyed cache, token-to-bytes table, EOS ids)."""

    def __init__(self, backend: Backend):
        self.runner = backend
        self.tokenizer = backend.tokenizer
        self.table = backend.table
        self.eos = backend.eos_ids
        self.context_length = backend.context_length
        self.beginnings = Beginnings(self.table)

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
        first_bytes: bytes = b"",
        avoid: tuple[bytes, ...] = (),
    ) -> Iterator[Chunk]:
        """Continue `prompt_ids` by up to `max_tokens` tokens, one Chunk per cycle.

        `first_bytes`: the first token is chosen among those that begin with these bytes (a
        space the prompt left out), the same way whatever the policy, so speculation stays exact.
        `avoid`: nor among those that spell a start of one of these texts (an alternative to
        suggestions already shown).
        """
        if len(prompt_ids) >= self.context_length:
            raise PromptTooLong(
                f"prompt has {len(prompt_ids)} tokens; the model's context is {self.context_length}"
            )
        run = Run(
            list(prompt_ids), len(prompt_ids), prompt_text, max_tokens, sampling, first_bytes, avoid
        )
        stream = TextStream(self.table)
        try:
            first = self._prefill(run, should_stop)
        except Stopped:
            run.stats.stop_reason = "cancelled"
            yield Chunk([], "", run.stats, done=True)
            return
        yield Chunk(first, stream.add(first), run.stats)
        while not (stop := self._stop_reason(run, should_stop)):
            new = self._cycle(run, policy)
            yield Chunk(new, stream.add(new), run.stats)
        run.stats.stop_reason = stop
        yield Chunk([], stream.flush(), run.stats, done=True)

    def _prefill(self, run: Run, should_stop: Callable[[], bool] | None) -> list[int]:
        """Feed the prompt (what the cache lacks of it) and choose the first token."""
        logits = self.beginnings.restrict(run.first_bytes, self.runner.sync(run.ids, should_stop))
        logits = self.beginnings.exclude(run.avoid, logits)
        y = int(choose(logits[None], run.sampling, run.keys.next())[0])
        run.stats.prefilled_tokens, run.stats.prefill_seconds = (
            self.runner.prefilled,
            run.clock.lap(),
        )
        run.commit([y], self.table)
        return [y]

    def _cycle(self, run: Run, policy: Policy) -> list[int]:
        """Draft, verify the draft in one target pass, commit what it accepts, rewind the rest."""
        choice = policy.choose(run.context(), run.stats)
        if choice.reason not in run.stats.reasons:
            run.stats.reasons.append(choice.reason)
        room = min(run.max_tokens - run.generated, self.context_length - len(run.ids))
        # ids that would start a padded pass of their own are not drafted (MLX exact)
        k = self.runner.whole_passes(len(run.ids) - 1, min(choice.k, room - 1) + 1) - 1
        other_s = run.clock.lap()
        draft, draft_s = NO_DRAFT, 0.0
        if choice.drafter is not None and k > 0:
            draft, draft_s = timed(choice.drafter, run.context(), k, run.sampling, run.keys)
            draft.ids = draft.ids[:k]
        run.clock.lap()
        logits = self.runner.forward([run.ids[-1], *draft.ids])
        n, y = accept(logits, draft, run.sampling, run.keys)
        verify_s = run.clock.lap()
        new = [*draft.ids[:n], y]
        cut = next((i for i, t in enumerate(new) if t in self.eos), len(new) - 1)
        self.runner.rewind(len(draft.ids) - n + len(new) - 1 - cut)  # y and past an EOS
        new = new[: cut + 1]
        chars = run.commit(new, self.table)
        run.stats.cycles.append(
            Cycle(
                drafter=choice.drafter.name if choice.drafter and k > 0 else "none",
                k=k if choice.drafter else 0,
                drafted=len(draft.ids),
                accepted=n,
                emitted=len(new),
                draft_s=draft_s,
                translate_s=draft.translate_s,
                verify_s=verify_s,
                other_s=other_s + run.clock.lap(),
                reason=choice.reason,
                passes=draft.passes,
                synced=draft.synced,
                chars=chars,
            )
        )
        return new

    def _stop_reason(self, run: Run, should_stop: Callable[[], bool] | None) -> str:
        if run.ids[-1] in self.eos:
            return "eos"
        if run.generated >= run.max_tokens:
            return "max_tokens"
        if len(run.ids) >= self.context_length:
            return "context"
        if should_stop is not None and should_stop():
            return "cancelled"
        return ""
