"""Model-free drafting: propose what followed the same tokens earlier in the context.

Prompt lookup decoding (Saxena, 2023) with suffix matching: the longest suffix of the context
that occurred before wins (ties go to the most recent occurrence), the draft is what followed
it, and its length grows with the length of the match. Nothing matches, nothing is proposed.
transformers' `prompt_lookup_num_tokens` does a fixed-size n-gram search over a torch tensor
each step; this keeps an incremental index so a cycle costs O(max_ngram), not O(context).

A draft is priced token by token from how often each n-gram of the context was followed by
what the draft says (as SuffixDecoding scores its candidates by frequency): a list item copied
so far goes on where every earlier item went on alike, and stops being trusted where the items
differed (the number, the next word after a repeated phrase).
"""

from __future__ import annotations

from typing import NamedTuple

from decoder.backends.base import common_prefix
from decoder.drafting.drafter import NO_DRAFT, Context, Draft
from decoder.pricing import LOOKUP_PRIOR, Market, Offer, best_k, bucket, expected_tokens
from decoder.sampling import Keys, Sampling

MAX_MATCH = 256  # a match is measured back this far (its length prices and sizes the draft)
EVIDENCE = 2.0  # weight of the prior against the counted continuations of an n-gram
BRANCH_ORDER = 3  # a long context's token is also checked against this short one's continuations
MAX_RATE = 0.98  # no drafted token is certain


class Gram(NamedTuple):
    """An n-gram of the context: where it ended, and which tokens followed it how often."""

    ends: list[int]
    after: dict[int, int]


class LookupDrafter:
    name = "lookup"

    def __init__(self, max_ngram: int = 8, min_ngram: int = 1, tokens_per_match: int = 2):
        self.max_ngram = max_ngram  # the index's longest n-gram; a match then extends back
        self.min_ngram = min_ngram
        self.tokens_per_match = tokens_per_match  # draft length allowed per matched token
        self.ids: list[int] = []
        self.grams: dict[tuple[int, ...], Gram] = {}
        self._tail: list[Gram] = []  # the n-grams ending at the last id: what comes next follows
        self._found: tuple[int, int] | None = None  # match() of the indexed ids, once asked

    def _sync(self, ids: list[int]) -> None:
        """Index `ids`, keeping what the last context shares with them (typing changes the end).

        A cycle asks about the same context several times (policy, offer, draft): the common
        case, the last context followed by new ids, is one C-level list comparison.
        """
        extends = ids[: len(self.ids)] == self.ids
        common = len(self.ids) if extends else common_prefix(self.ids, ids)
        if common == len(ids) == len(self.ids):
            return
        self._found = None
        if common < len(self.ids):
            while len(self.ids) > common:
                self._drop()
            self._tail = self._ending_at(common - 1)
        for token in ids[common:]:
            self._add(token)

    def _starts(self, end: int) -> range:
        return range(end, max(0, end - self.max_ngram + 1) - 1, -1)

    def _ending_at(self, end: int) -> list[Gram]:
        return [self.grams[tuple(self.ids[start : end + 1])] for start in self._starts(end)]

    def _add(self, token: int) -> None:
        for gram in self._tail:
            gram.after[token] = gram.after.get(token, 0) + 1
        self.ids.append(token)
        end, self._tail = len(self.ids) - 1, []
        for start in self._starts(end):
            gram = self.grams.setdefault(tuple(self.ids[start : end + 1]), Gram([], {}))
            gram.ends.append(end)
            self._tail.append(gram)

    def _drop(self) -> None:
        end = len(self.ids) - 1
        token = self.ids[end]
        for before in self._ending_at(end - 1):
            before.after[token] -= 1
            if not before.after[token]:
                del before.after[token]
        for start in self._starts(end):
            key = tuple(self.ids[start : end + 1])
            self.grams[key].ends.pop()
            if not self.grams[key].ends:
                del self.grams[key]
        self.ids.pop()

    def match(self, ids: list[int]) -> tuple[int, int]:
        """(length of the longest earlier match of the context's suffix, where it ended).

        The index finds the most recent earlier occurrence of the longest suffix up to
        max_ngram tokens; a full-length hit is then followed back token by token, so a copy of a
        whole paragraph counts as long as it is (up to MAX_MATCH).
        """
        self._sync(ids)
        if self._found is None:
            self._found = self._longest(ids)
        return self._found

    def _longest(self, ids: list[int]) -> tuple[int, int]:
        last = len(ids) - 1
        for n in range(min(self.max_ngram, len(ids) - 1), self.min_ngram - 1, -1):
            gram = self.grams.get(tuple(ids[last - n + 1 :]))
            ends = gram.ends if gram else []
            earlier = ends[:-1] if ends and ends[-1] == last else ends
            if earlier:
                return self._extend(ids, n, earlier[-1]), earlier[-1]
        return 0, -1

    @staticmethod
    def _extend(ids: list[int], n: int, end: int) -> int:
        """The match of `n` tokens ending at `end`, followed back while the tokens agree."""
        last = len(ids) - 1
        while n < MAX_MATCH and end - n >= 0 and ids[end - n] == ids[last - n]:
            n += 1
        return n

    def copy(self, ids: list[int], k: int) -> list[int]:
        """Up to `k` ids that followed the longest earlier match (fewer for a short match)."""
        n, end = self.match(ids)
        if n == 0 or k <= 0:
            return []
        return ids[end + 1 : end + 1 + min(k, n * self.tokens_per_match)]

    def propose(self, ctx: Context, k: int, sampling: Sampling, keys: Keys) -> Draft:
        ids = self.copy(ctx.ids, k)
        return Draft(ids) if ids else NO_DRAFT

    def rates(
        self, ids: list[int], draft: list[int], prior: dict[int, float], match: int = 0
    ) -> list[float]:
        """Per drafted token, its chance of acceptance if the ones before it were accepted.

        The longest n-gram before the token (draft included) that the context has seen gives
        the share of its continuations that were this token, smoothed by `prior` (by n-gram
        length); a long one is also discounted by how its last BRANCH_ORDER tokens went on.
        """
        context, out = list(ids[-self.max_ngram :]), []
        for i, token in enumerate(draft):
            out.append(self._rate(context, token, prior, match + i))
            context = [*context[1 - self.max_ngram :], token]
        return out

    def _rate(self, context: list[int], token: int, prior: dict[int, float], match: int) -> float:
        for n in range(min(self.max_ngram, len(context)), 0, -1):
            gram = self.grams.get(tuple(context[-n:]))
            if not gram or not gram.after:
                continue
            trust = prior[bucket(max(n, match if n == self.max_ngram else 0))]
            rate = share(gram.after, token, EVIDENCE, trust)
            if n > BRANCH_ORDER:
                rate *= share(self.grams[tuple(context[-BRANCH_ORDER:])].after, token, 1, 1) ** 0.5
            return min(rate, MAX_RATE)
        return 0.0

    def offer(self, market: Market) -> Offer | None:
        """A copy costs nothing to draft; its misses cost only the extra verified positions."""
        if not market.match:
            return None
        draft = self.copy(market.ids, market.k_max)
        expected = expected_tokens(self.rates(market.ids, draft, LOOKUP_PRIOR, market.match))
        k, speedup = best_k(expected.__getitem__, market.costs, 0.0, len(draft))
        return Offer(speedup, k, None, pause_scale=0.25)


def share(after: dict[int, int], token: int, weight: float, prior: float) -> float:
    """The share of continuations that were `token`, with `weight` pseudo-counts at `prior`."""
    return (after.get(token, 0) + weight * prior) / (sum(after.values()) + weight)
