"""Model-free drafting: propose what followed the same tokens earlier in the context.

Prompt lookup decoding (Saxena, 2023) with suffix matching: the longest suffix of the context
that occurred before wins (ties go to the most recent occurrence), the draft is what followed
it, and its length grows with the length of the match. Nothing matches, nothing is proposed.
transformers' `prompt_lookup_num_tokens` does a fixed-size n-gram search over a torch tensor
each step; this keeps an incremental index so a cycle costs O(max_ngram), not O(context).
"""

from __future__ import annotations

from decoder.drafting.drafter import NO_DRAFT, Context, Draft
from decoder.pricing import Market, Offer, best_k, bucket
from decoder.sampling import Keys, Sampling

MAX_MATCH = 256  # a match is measured back this far (its length prices and sizes the draft)


class LookupDrafter:
    name = "lookup"

    def __init__(self, max_ngram: int = 8, min_ngram: int = 1, tokens_per_match: int = 2):
        self.max_ngram = max_ngram  # the index's longest n-gram; a match then extends back
        self.min_ngram = min_ngram
        self.tokens_per_match = tokens_per_match  # draft length allowed per matched token
        self.ids: list[int] = []
        self.index: dict[tuple[int, ...], tuple[int, int]] = {}  # n-gram -> (previous, last) end

    def _sync(self, ids: list[int]) -> None:
        same = len(self.ids) <= len(ids) and ids[: len(self.ids)] == self.ids
        if not same:
            self.ids, self.index = [], {}
        for end in range(len(self.ids), len(ids)):
            for n in range(1, min(self.max_ngram, end + 1) + 1):
                key = tuple(ids[end - n + 1 : end + 1])
                prev = self.index.get(key)
                self.index[key] = (prev[1] if prev else -1, end)
        self.ids = list(ids)

    def match(self, ids: list[int]) -> tuple[int, int]:
        """(length of the longest earlier match of the context's suffix, where it ended).

        The index finds the most recent earlier occurrence of the longest suffix up to
        max_ngram tokens; a full-length hit is then followed back token by token, so a copy of a
        whole paragraph counts as long as it is (up to MAX_MATCH).
        """
        self._sync(ids)
        last = len(ids) - 1
        for n in range(min(self.max_ngram, len(ids) - 1), self.min_ngram - 1, -1):
            hit = self.index.get(tuple(ids[last - n + 1 :]))
            if hit is None:
                continue
            end = hit[0] if hit[1] == last else hit[1]
            if end >= 0:
                return self._extend(ids, n, end), end
        return 0, -1

    @staticmethod
    def _extend(ids: list[int], n: int, end: int) -> int:
        """The match of `n` tokens ending at `end`, followed back while the tokens agree."""
        last = len(ids) - 1
        while n < MAX_MATCH and end - n >= 0 and ids[end - n] == ids[last - n]:
            n += 1
        return n

    def propose(self, ctx: Context, k: int, sampling: Sampling, keys: Keys) -> Draft:
        n, end = self.match(ctx.ids)
        if n == 0 or k <= 0:
            return NO_DRAFT
        length = min(k, n * self.tokens_per_match)
        return Draft(ctx.ids[end + 1 : end + 1 + length])

    def offer(self, market: Market) -> Offer | None:
        """A copy costs nothing to draft; its misses cost only the extra verified positions."""
        if not market.match:
            return None
        key = (self.name, bucket(market.match))
        expected = market.estimate(key, market.lookup_prior()).expected_tokens
        k_max = min(market.k_max, market.match * self.tokens_per_match)
        k, speedup = best_k(expected, market.costs, 0.0, k_max)
        return Offer(speedup, k, key, pause_scale=0.25)
