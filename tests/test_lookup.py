from hypothesis import given, settings
from hypothesis import strategies as st

from decoder.drafting.drafter import Context
from decoder.drafting.lookup import LookupDrafter
from decoder.pricing import LOOKUP_PRIOR
from decoder.sampling import Keys, Sampling


def propose(ids, k=8, **kw):
    return LookupDrafter(**kw).propose(Context(ids, "", b""), k, Sampling(), Keys(None)).ids


def test_no_match_no_proposal():
    assert propose([1, 2, 3, 4]) == []


def test_longest_match_wins_over_more_recent_shorter_one():
    #            [7 8 9] -> 10 ...     [8 9] -> 20 ...      suffix 7 8 9
    ids = [7, 8, 9, 10, 11, 12, 13, 8, 9, 20, 21, 7, 8, 9]
    assert propose(ids)[:2] == [10, 11]


def test_most_recent_occurrence_among_equal_matches():
    ids = [5, 6, 1, 5, 6, 2, 5, 6]
    assert propose(ids, k=1) == [2]


def test_draft_length_grows_with_match_length():
    short = propose([1, 2, 3, 4, 5, 6, 9, 1], k=8)  # match of 1 token
    long = propose([1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2, 3, 4], k=8)  # match of 4 tokens
    assert len(short) == 2 and long == [5, 6, 7, 8, 9, 1, 2, 3]


def test_incremental_index_equals_fresh_index():
    d = LookupDrafter()
    seq = [1, 2, 3, 1, 2, 4, 1, 2, 3, 1, 2]
    for end in range(1, len(seq) + 1):
        inc = d.propose(Context(seq[:end], "", b""), 5, Sampling(), Keys(None)).ids
        assert inc == propose(seq[:end], k=5)


def test_diverged_context_rebuilds_index():
    d = LookupDrafter()
    d.propose(Context([1, 2, 3, 1, 2], "", b""), 4, Sampling(), Keys(None))
    assert d.propose(Context([9, 8, 9], "", b""), 4, Sampling(), Keys(None)).ids == [8, 9]


def test_a_long_copy_is_measured_whole_and_drafted_long():
    """The index holds n-grams up to max_ngram; a longer repeat is followed back to its start."""
    paragraph = list(range(100, 140))  # 40 tokens
    ids = [1, 2, *paragraph, 3, *paragraph[:30]]
    d = LookupDrafter(max_ngram=8)
    n, end = d.match(ids)
    assert (n, end) == (30, 31)  # 30 tokens repeat, not just the 8 the index holds
    draft = d.propose(Context(ids, "", b""), 32, Sampling(), Keys(None)).ids
    assert draft == [*paragraph[30:], 3, *paragraph[:22]][:32]


def offer(ids, k_max=16):
    from decoder.pricing import Costs, Market

    costs = Costs({1: 1.0, 2: 1.6, 3: 2.2, 5: 3.0, 9: 5.0, 17: 10.0}, 0.01)
    d = LookupDrafter()
    market = Market(costs, k_max, prose=False, match=d.match(ids)[0], ids=ids)
    return d, d.offer(market)


def test_a_copy_is_trusted_where_earlier_copies_agreed_and_not_where_they_differed():
    """List items: `7 8 9` then the item's number; the items so far went on alike to `9`."""
    items = [[1, 7, 8, 9, n, 5, 6] for n in (20, 21, 22, 23)]
    ids = [tok for item in items for tok in item] + [1, 7]
    d = LookupDrafter()
    draft = d.copy(ids, 8)
    assert draft[:3] == [8, 9, 23]  # the most recent item's number
    rates = d.rates(ids, draft, {b: 0.5 for b in (1, 2, 3, 5, 8, 16, 32)})
    assert min(rates[:2]) >= 0.8 and rates[2] < 0.4  # every item went on to 8 9; one had 23


def test_offer_drafts_up_to_where_copies_diverge():
    items = [[1, 7, 8, 9, n, 5, 6] for n in (20, 21, 22, 23)]
    ids = [tok for item in items for tok in item] + [1, 7]
    _, price = offer(ids)
    assert price.k == 2 and price.speedup > 1.05


def test_a_long_exact_repeat_is_offered_long():
    paragraph = list(range(100, 140))
    ids = [1, 2, *paragraph, 3, *paragraph[:20]]
    _, price = offer(ids)
    assert price.k >= 8 and price.speedup > 1.3


def test_rates_are_rebuilt_with_the_index():
    d = LookupDrafter()
    d.copy([1, 2, 3, 1, 2, 3, 1, 2], 4)
    fresh = LookupDrafter()
    ids = [1, 2, 4, 1, 2, 4, 1, 2]
    assert d.copy(ids, 4) == fresh.copy(ids, 4) == [4, 1, 2]
    prior = {b: 0.5 for b in (1, 2, 3, 5, 8, 16, 32)}
    assert d.rates(ids, [4, 1, 2], prior) == fresh.rates(ids, [4, 1, 2], prior)


@given(st.lists(st.lists(st.integers(0, 5), max_size=30), min_size=1, max_size=6))
@settings(max_examples=60, deadline=None)
def test_an_index_kept_across_edits_equals_a_fresh_one(contexts):
    """Each context is indexed from the last one's common prefix: as if built from scratch."""
    kept = LookupDrafter(max_ngram=4)
    for ids in contexts:
        fresh = LookupDrafter(max_ngram=4)
        assert kept.match(ids) == fresh.match(ids)
        assert kept.grams == fresh.grams
        assert kept.rates(ids, [1, 2], LOOKUP_PRIOR) == fresh.rates(ids, [1, 2], LOOKUP_PRIOR)
