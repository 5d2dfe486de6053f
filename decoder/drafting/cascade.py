"""Lookup, then a model drafter, then the target: each cycle drafts from the cheapest source.

Polybasic speculation (a chain of drafters ordered by cost, each verified by the next) in one
cycle: a long lookup match is taken as it is (it costs nothing, and copies are accepted in
runs); with no match the model drafts alone; a short match proposes its few tokens and the
model drafts on after them, from the text they spell, up to k target tokens. The target
verifies the whole draft at once, so the output is the target's own either way.
"""

from __future__ import annotations

from decoder.drafting.drafter import NO_DRAFT, Context, Draft, Drafter
from decoder.drafting.lookup import LookupDrafter
from decoder.pricing import Market, Offer
from decoder.sampling import Keys, Sampling
from decoder.vocab import ids_to_bytes

LONG_MATCH = 3  # tokens of context repeating earlier text: the copy goes on without the model


class CascadeDrafter:
    name = "cascade"

    def __init__(self, lookup: LookupDrafter, model: Drafter, table: tuple[bytes, ...]):
        self.lookup, self.model = lookup, model
        self.table = table  # target id -> bytes: the text a lookup head spells
        self.long_match = LONG_MATCH

    def offer(self, market: Market) -> Offer | None:
        """Priced only for a short match: a long one is the lookup's own, none the model's."""
        if market.prose or not 0 < market.match < self.long_match:
            return None
        passes = getattr(self.model, "passes_per_token", 1.0)
        free = market.match * self.lookup.tokens_per_match
        return market.model_offer(self.name, passes, free=free)

    def propose(self, ctx: Context, k: int, sampling: Sampling, keys: Keys) -> Draft:
        if k <= 0:
            return NO_DRAFT
        match, _ = self.lookup.match(ctx.ids)
        head = self.lookup.propose(ctx, k, sampling, keys)
        if len(head.ids) >= k or (head.ids and match >= self.long_match):
            return head
        return self.extend(ctx, head.ids, k, sampling, keys)

    def extend(
        self, ctx: Context, head: list[int], k: int, sampling: Sampling, keys: Keys
    ) -> Draft:
        """`head` followed by the model's draft from the text it spells, k target ids in all."""
        if not head:
            return self.model.propose(ctx, k, sampling, keys)
        after = Context(
            [*ctx.ids, *head], ctx.prompt_text, ctx.generated + ids_to_bytes(self.table, head)
        )
        tail = self.model.propose(after, k - len(head), sampling, keys)
        # The lookup tokens have no distribution: verify the whole draft by the target's draws.
        return Draft([*head, *tail.ids], None, tail.translate_s, tail.passes, tail.synced)
