from decoder.drafting.drafter import Context
from decoder.drafting.lookup import LookupDrafter
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
