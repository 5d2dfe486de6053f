"""What speculation costs and earns on this machine: the arithmetic `auto` prices drafts with.

- Costs: t(n)/t(1), the cost of verifying n tokens in one target pass relative to one plain
  step, and the drafter model's cost per token, measured on the backend in use;
- Acceptance: a drafter model's running acceptance per draft position, turned into expected
  tokens per cycle (Leviathan et al.'s (1 - a^(k+1)) / (1 - a), generalised to one rate per
  position because copied text is accepted in runs, not token by token); a lookup draft is
  priced per token from the context's own n-gram counts instead (`LookupDrafter.rates`);
- Market and Offer: what a drafter is told when `auto` asks it for a price, and its answer
  (each drafter prices itself: `Drafter.offer`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from decoder.backends.base import Backend

# Pass widths timed at load: short drafts, and the long ones a long copy is drafted in (a pass
# over many tokens costs far less per token than one over few, on every backend measured).
PROBE_SIZES = (1, 2, 3, 5, 9, 17, 33)
# How often the target goes on copying, by how many tokens the context already repeats: the
# share of positions where its next token was the one lookup drafts, over the plain greedy
# continuations (128 tokens) of the corpus's 60 structured and prose excerpts by the embedded
# target on llama.cpp (`bielik-lsp bench priors`, docs/bench/priors). A lookup draft's tokens
# are priced from the context's own counts, smoothed towards this (decoder/drafting/lookup.py).
LOOKUP_PRIOR = {1: 0.28, 2: 0.62, 3: 0.76, 5: 0.88, 8: 0.93, 16: 0.97, 32: 0.99}
MODEL_PRIOR = 0.3  # a drafter model must earn its cost before it is used much


@dataclass(frozen=True)
class Costs:
    """What speculation costs on this machine, relative to one plain decoding step."""

    verify: dict[int, float]  # n tokens in one target pass -> t(n)/t(1)
    step_seconds: float  # t(1)
    drafter_ratio: float = 0.0  # model drafter's seconds per token / t(1)
    window: int | None = None  # passes are this wide, aligned to positions (MLX padded passes)
    start: int = 0  # the position a verification starts at (`at`)

    def at(self, position: int) -> Costs:
        """These costs for a verification that starts at `position` (aligned passes only)."""
        return replace(self, start=position) if self.window else self

    def verify_ratio(self, n: int) -> float:
        """t(n)/t(1), interpolated between measured sizes and extended linearly past them.

        With aligned passes every pass costs a one-token step, and n tokens from `start` take
        as many passes as the windows they touch.
        """
        if self.window:
            return float(-(-(self.start % self.window + n) // self.window))
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
        window = f"; passes {self.window} wide, aligned" if self.window else ""
        return (
            f"step {self.step_seconds * 1000:.0f} ms; {parts}; drafter {self.drafter_ratio:.2f}x"
            f"{window}"
        )


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
    return Costs(ratios, times[1], ratio, window=getattr(target, "padded", None))


def best_k(
    expected: Callable[[int], float],
    costs: Costs,
    drafter_ratio: float,
    k_max: int,
    free: int = 0,
) -> tuple[int, float]:
    """(k, expected speedup over plain decoding) maximising tokens per unit of time.

    `expected(k)` is the expected number of tokens a cycle commits when k are drafted;
    `drafter_ratio` what each drafted token costs the drafter, in plain steps, past the first
    `free` ones (a lookup head that a model extends costs nothing).
    """
    best = (0, 1.0)
    for k in range(1, k_max + 1):
        speedup = expected(k) / (costs.verify_ratio(k + 1) + max(0, k - free) * drafter_ratio)
        if speedup > best[1]:
            best = (k, speedup)
    return best


@dataclass
class Acceptance:
    """Running acceptance per draft position, each conditional on the positions before it.

    Leviathan et al.'s formula assumes one i.i.d. rate; copied text breaks that (once a copy is
    accepted for three tokens it usually goes on), so we keep a Beta-prior rate per position,
    updated per cycle and forgetting old cycles, each position's prior the rate of the one before.
    With no evidence this is exactly their formula.
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

    def rates(self, n: int) -> list[float]:
        """The first `n` positions' rates, each position's prior the rate of the one before.

        A position never reached yet so inherits what the positions before it showed: a copy
        accepted in full so far is priced as going on, not as starting over from the prior.
        Past the last tracked position, its rate holds.
        """
        out, rate = [], self.prior
        for j in range(n):
            if j < self.size:
                rate = (self.hits[j] + rate * self.weight) / (self.trials[j] + self.weight)
            out.append(rate)
        return out

    def rate(self, j: int) -> float:
        return self.rates(j + 1)[-1]

    @property
    def alpha(self) -> float:
        """Acceptance of the first drafted token."""
        return self.rate(0)

    def expected_tokens(self, k: int) -> float:
        return expected_tokens(self.rates(k))[-1]


def expected_tokens(rates: list[float]) -> list[float]:
    """Expected tokens a cycle commits when the first k are drafted, for k = 0..len(rates).

    `rates[j]` is draft position j's acceptance given the positions before it were accepted;
    the target's own token comes on top.
    """
    out, survive = [1.0], 1.0
    for rate in rates:
        survive *= rate
        out.append(out[-1] + survive)
    return out


def bucket(match: int) -> int:
    """The prior's bucket for a lookup match of `match` tokens."""
    return max(b for b in LOOKUP_PRIOR if b <= match)


@dataclass(frozen=True)
class Offer:
    """A drafter's price for the next cycle."""

    speedup: float  # expected, over plain decoding
    k: int  # draft length in target tokens
    key: tuple[str, int] | None  # whose running acceptance the outcome updates (None: no one's)
    pause_scale: float = 1.0  # after failing cycles, pause this share of the usual pause


@dataclass
class Market:
    """What `auto` knows when it asks drafters for a price."""

    costs: Costs
    k_max: int
    prose: bool  # confident prose: only copying pays
    match: int  # the context's longest earlier repeat, in tokens (the lookup index)
    ids: list[int] = field(default_factory=list)  # the committed context
    acceptance: dict[tuple[str, int], Acceptance] = field(default_factory=dict)

    def estimate(self, key: tuple[str, int], prior: float) -> Acceptance:
        """The running acceptance for `key`, starting from `prior`."""
        if key not in self.acceptance:
            self.acceptance[key] = Acceptance(prior)
        return self.acceptance[key]

    def lookup_prior(self) -> float:
        """The prior for a draft that starts with the current lookup match."""
        return LOOKUP_PRIOR[bucket(self.match)]

    def model_offer(self, name: str, passes_per_token: float, free: int = 0) -> Offer:
        """The price of a draft from the drafter model (after `free` lookup tokens)."""
        ratio = self.costs.drafter_ratio * passes_per_token
        key = (name, bucket(self.match) if free else 0)
        prior = self.lookup_prior() if free else MODEL_PRIOR
        k, s = best_k(
            self.estimate(key, prior).expected_tokens, self.costs, ratio, self.k_max, free
        )
        return Offer(s, k, key)
