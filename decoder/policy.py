"""Speculate only where it pays: choose the drafter and k per request and per cycle, and say why.

Three inputs:
- the content type around the cursor (polish.content): free prose rarely repeats itself;
- the costs measured on this machine (decoder/pricing.py);
- what each draft is likely to keep: a copy's tokens from how the context's n-grams went on
  before, a drafter model's from its running acceptance.
Each cycle every drafter prices itself (`Drafter.offer`) and the best offer wins, if it beats
plain decoding by a margin. A run of cycles that accept at most one token switches speculation
off for a while, then it probes again. Confident prose speculates only while the model is
copying earlier text (a long lookup match), unless passes are padded to a fixed width (MLX's
aligned exact passes): there a draft that fits the pass costs nothing.
"""

from __future__ import annotations

from decoder.drafting.drafter import Context, Drafter
from decoder.engine import Choice
from decoder.pricing import Acceptance, Costs, Market, Offer
from decoder.stats import RunStats
from polish.content import ContentType

MARGIN = 1.05  # expected speedup needed to speculate: the cost model is measured, not exact
PROSE_CONFIDENCE = 0.75  # above this, prose only speculates when the text is being copied
PROSE_MIN_MATCH = 4  # tokens of context repeating earlier text: the model is copying, even in prose


class AutoPolicy:
    """The `auto` drafter: per request the content type, per cycle the drafters' offers."""

    def __init__(
        self,
        drafters: dict[str, Drafter],
        costs: Costs,
        content: ContentType | None,
        *,
        override: str = "auto",  # per-file: auto | on | off
        k_max: int = 8,
        fallback_cycles: int = 3,
        fallback_tokens: int = 16,  # pause after failing drafts (an offer may scale it)
        note: str = "",  # said with every speculating choice (e.g. that output may differ)
    ):
        self.drafters, self.costs, self.content = drafters, costs, content
        self.override, self.k_max = override, k_max
        self.fallback_cycles, self.fallback_tokens = fallback_cycles, fallback_tokens
        self.note = note
        self.acceptance: dict[tuple[str, int], Acceptance] = {}
        self._last: Offer | None = None  # the offer the previous cycle took
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

    def _learn(self, stats: RunStats) -> None:
        if self._last is None or not stats.cycles:
            return
        cycle, last = stats.cycles[-1], self._last
        self._last = None
        if cycle.drafted == 0:
            return
        if last.key is not None:
            self.acceptance[last.key].update(cycle.drafted, cycle.accepted)
        poor = cycle.accepted <= 1 and cycle.accepted < cycle.drafted
        self._poor = self._poor + 1 if poor else 0
        if self._poor >= self.fallback_cycles and self.override != "on":
            self._pause = max(2, round(self.fallback_tokens * last.pause_scale))
            self._paused_until = stats.generated_tokens + self._pause
            self._poor = 0

    def _match(self, ids: list[int]) -> int:
        """How many tokens of the context repeat earlier text (0 without a lookup index)."""
        lookup = self.drafters.get("lookup")
        return lookup.match(ids)[0] if hasattr(lookup, "match") else 0

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
        match = self._match(ctx.ids)
        costs = self.costs.at(len(ctx.ids) - 1)  # the verification starts at the last id
        market = Market(costs, self.k_max, self._prose, match, ctx.ids, self.acceptance)
        if market.prose and market.match < PROSE_MIN_MATCH and not costs.window:
            return Choice(None, 0, f"{content}: speculation off unless the text repeats")
        offers = [
            (offer.speedup, offer.k, name, offer)
            for name, drafter in self.drafters.items()
            if (offer := drafter.offer(market)) is not None
        ]
        if not offers:
            return Choice(None, 0, f"{content}: nothing to draft from")
        speedup, k, name, offer = max(offers, key=lambda o: o[:3])
        if k == 0 or (speedup < MARGIN and self.override != "on"):
            return Choice(None, 0, f"{content}: no drafter pays here")
        self._last = offer
        note = f"; {self.note}" if self.note else ""
        return Choice(self.drafters[name], max(k, 1), f"{content}: {name}, k={k}{note}")
