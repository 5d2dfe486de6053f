"""Speculate only where it pays: choose the drafter and k per request and per cycle, and say why.

Three inputs (issue: polish/ and the speculation policy):
- the content type around the cursor (polish.content): free prose rarely repeats itself;
- a cost model measured on this machine: t(n)/t(1), the cost of verifying n tokens in one
  forward pass relative to one plain step, and the drafter's cost per token;
- the running acceptance, per drafter (per match length for lookup), turned into expected
  tokens per cycle: Leviathan et al.'s (1 - a^(k+1)) / (1 - a), generalised to one rate per
  draft position because copied text is accepted in runs, not token by token.
A cycle speculates only when the expected speedup beats plain decoding by a margin, and a run
of cycles that accept at most one token switches speculation off for a while, then probes again.
Confident prose speculates only while the model is copying earlier text (a long lookup match).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from decoder.backends.base import Backend
from decoder.drafting.drafter import Context, Drafter
from decoder.drafting.lookup import LookupDrafter
from decoder.engine import Choice
from decoder.stats import RunStats
from polish.content import ContentType

PROBE_SIZES = (1, 2, 3, 5, 9)
MARGIN = 1.05  # expected speedup needed to speculate: the cost model is measured, not exact
PROSE_CONFIDENCE = 0.75  # above this, prose only speculates when the text is being copied
PROSE_MIN_MATCH = 4  # tokens of context repeating earlier text: the model is copying, even in prose
# Acceptance before evidence, by lookup match length (structured text, then confident prose).
LOOKUP_PRIOR = {1: 0.35, 2: 0.5, 3: 0.65, 5: 0.8}
PROSE_PRIOR = {1: 0.1, 2: 0.2, 3: 0.35, 5: 0.6}
MODEL_PRIOR = 0.3  # a drafter on another tokenizer must earn its cost before it is used much


@dataclass(frozen=True)
class Costs:
    """What speculation costs on this machine, relative to one plain decoding step."""

    verify: dict[int, float]  # n tokens in one target pass -> t(n)/t(1)
    step_seconds: float  # t(1)
    drafter_ratio: float = 0.0  # model drafter's seconds per token / t(1)

    def verify_ratio(self, n: int) -> float:
        """t(n)/t(1), interpolated between measured sizes and extended linearly past them."""
        sizes = sorted(self.verify)
        if n in self.verify:
            return self.verify[n]
        lo = max([s for s in sizes if s < n], default=sizes[0])
        hi = min([s for s in sizes if s > n], default=None)
        if hi is None:
            prev = sizes[-2] if len(sizes) > 1 else lo
            slope = (self.verify[lo] - self.verify[prev]) / max(lo - prev, 1)
            return self.verify[lo] + slope * (n - lo)
        w = (n - lo) / (hi - lo)
        return self.verify[lo] * (1 - w) + self.verify[hi] * w

    def describe(self) -> str:
        parts = ", ".join(f"t({n})/t(1)={r:.2f}" for n, r in sorted(self.verify.items()) if n > 1)
        return f"step {self.step_seconds * 1000:.0f} ms; {parts}; drafter {self.drafter_ratio:.2f}x"


def _time_pass(runner: Backend, n: int, reps: int) -> float:
    best = float("inf")
    for _ in range(reps):
        start = time.perf_counter()
        runner.forward([runner.ids[-1]] * n)
        best = min(best, time.perf_counter() - start)
        runner.rewind(n)
    return best


def measure_costs(
    target: Backend,
    ids: list[int],
    drafter: Backend | None = None,
    drafter_ids: list[int] | None = None,
    reps: int = 2,
) -> Costs:
    """Time target passes of PROBE_SIZES tokens on a warm cache (and one drafter step).

    `drafter_ids` is the probe in the drafter's own vocabulary (it may differ from the target's).
    """
    target.sync(ids)
    _time_pass(target, 1, 1)  # warm-up
    times = {n: _time_pass(target, n, reps) for n in PROBE_SIZES}
    ratio = 0.0
    if drafter is not None:
        drafter.sync(drafter_ids or ids)
        _time_pass(drafter, 1, 1)
        ratio = _time_pass(drafter, 1, reps) / times[1]
    # Timing noise can make a larger pass look cheaper than a smaller one; costs never fall.
    ratios, floor = {}, 1.0
    for n in PROBE_SIZES:
        floor = ratios[n] = max(floor, times[n] / times[1])
    return Costs(ratios, times[1], ratio)


def best_k(
    expected: Callable[[int], float], costs: Costs, drafter_ratio: float, k_max: int
) -> tuple[int, float]:
    """(k, expected speedup over plain decoding) maximising tokens per unit of time.

    `expected(k)` is the expected number of tokens a cycle commits when k are drafted.
    """
    best = (0, 1.0)
    for k in range(1, k_max + 1):
        speedup = expected(k) / (costs.verify_ratio(k + 1) + k * drafter_ratio)
        if speedup > best[1]:
            best = (k, speedup)
    return best


@dataclass
class Acceptance:
    """Running acceptance per draft position, each conditional on the positions before it.

    Leviathan et al.'s formula assumes one i.i.d. rate; copied text breaks that (once a copy is
    accepted for three tokens it usually goes on), so we keep a Beta-prior rate per position,
    updated per cycle and forgetting old cycles. With equal rates this is exactly their formula.
    """

    prior: float
    weight: float = 2.0
    decay: float = 0.9
    size: int = 32
    hits: list[float] = field(init=False)
    trials: list[float] = field(init=False)

    def __post_init__(self) -> None:
        self.hits, self.trials = [0.0] * self.size, [0.0] * self.size

    def update(self, drafted: int, accepted: int) -> None:
        self.hits = [h * self.decay for h in self.hits]
        self.trials = [t * self.decay for t in self.trials]
        for j in range(min(drafted, accepted + 1, self.size)):  # positions the verifier reached
            self.trials[j] += 1
            self.hits[j] += j < accepted

    def rate(self, j: int) -> float:
        j = min(j, self.size - 1)
        return (self.hits[j] + self.prior * self.weight) / (self.trials[j] + self.weight)

    @property
    def alpha(self) -> float:
        """Acceptance of the first drafted token."""
        return self.rate(0)

    def expected_tokens(self, k: int) -> float:
        total, survive = 1.0, 1.0
        for j in range(k):
            survive *= self.rate(j)
            total += survive
        return total


def _bucket(match: int) -> int:
    return max(b for b in LOOKUP_PRIOR if b <= match)


class AutoPolicy:
    """The `auto` drafter: per request the content type, per cycle the cost model and acceptance."""

    def __init__(
        self,
        drafters: dict[str, Drafter],
        costs: Costs,
        content: ContentType | None,
        *,
        override: str = "auto",  # per-file: auto | on | off
        k_max: int = 8,
        fallback_cycles: int = 3,
        fallback_tokens: int = 16,  # pause after failing model drafts; lookup's misses cost
        # only the extra verified positions, so its pause is a quarter of this
    ):
        self.drafters, self.costs, self.content = drafters, costs, content
        self.override, self.k_max = override, k_max
        self.fallback_cycles, self.fallback_tokens = fallback_cycles, fallback_tokens
        self.acceptance: dict[tuple[str, int], Acceptance] = {}
        self._last: tuple[str, int] | None = None  # (drafter, bucket) of the previous choice
        self._poor = 0  # consecutive drafted cycles with at most one token accepted
        self._paused_until = 0  # generated-token count until which speculation is off
        self._pause = 0  # length of the current pause, for its reason

    @property
    def _prose(self) -> bool:
        return bool(
            self.content
            and self.content.label == "prose"
            and self.content.confidence >= PROSE_CONFIDENCE
            and self.override != "on"
        )

    def _estimate(self, key: tuple[str, int]) -> Acceptance:
        if key not in self.acceptance:
            priors = PROSE_PRIOR if self._prose else LOOKUP_PRIOR
            self.acceptance[key] = Acceptance(priors[key[1]] if key[0] == "lookup" else MODEL_PRIOR)
        return self.acceptance[key]

    def _learn(self, stats: RunStats) -> None:
        if self._last is None or not stats.cycles:
            return
        cycle, last = stats.cycles[-1], self._last
        self._last = None
        if cycle.drafted == 0:
            return
        self._estimate(last).update(cycle.drafted, cycle.accepted)
        poor = cycle.accepted <= 1 and cycle.accepted < cycle.drafted
        self._poor = self._poor + 1 if poor else 0
        if self._poor >= self.fallback_cycles and self.override != "on":
            self._pause = (
                self.fallback_tokens if last[0] == "model" else max(2, self.fallback_tokens // 4)
            )
            self._paused_until = stats.generated_tokens + self._pause
            self._poor = 0

    def choose(self, ctx: Context, stats: RunStats) -> Choice:
        self._learn(stats)
        if self.override == "off":
            return Choice(None, 0, "speculation off for this file")
        if stats.generated_tokens < self._paused_until:
            return Choice(
                None,
                0,
                f"fallback: {self.fallback_cycles} cycles with <=1 accepted; "
                f"plain decoding for {self._pause} tokens",
            )
        content = self.content.reason if self.content else "content unknown"
        options = []  # (expected speedup, k, drafter name, bucket)
        lookup = self.drafters.get("lookup")
        if isinstance(lookup, LookupDrafter):
            match, _ = lookup.match(ctx.ids)
            if self._prose and match < PROSE_MIN_MATCH:
                return Choice(None, 0, f"{content}: speculation off unless the text repeats")
            if match:
                b = _bucket(match)
                k, s = best_k(
                    self._estimate(("lookup", b)).expected_tokens,
                    self.costs,
                    0.0,
                    min(self.k_max, match * lookup.tokens_per_match),
                )
                options.append((s, k, "lookup", b))
        if "model" in self.drafters and not self._prose:
            k, s = best_k(
                self._estimate(("model", 0)).expected_tokens,
                self.costs,
                self.costs.drafter_ratio,
                self.k_max,
            )
            options.append((s, k, "model", 0))
        if not options:
            return Choice(None, 0, f"{content}: nothing to draft from")
        s, k, name, b = max(options)
        if k == 0 or (s < MARGIN and self.override != "on"):
            return Choice(None, 0, f"{content}: no drafter pays here")
        self._last = (name, b)
        return Choice(self.drafters[name], max(k, 1), f"{content}: {name}, k={k}")
