"""Speculative output equals plain greedy output, token for token, for every drafter here."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from decoder.drafting.drafter import ModelDrafter
from decoder.drafting.lookup import LookupDrafter
from decoder.engine import Engine, FixedPolicy, PromptTooLong
from decoder.generation import collect
from decoder.sampling import Sampling
from tests.texts import texts
from tests.tiny import fresh

SLOW_OK = settings(
    deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)


GREEDY = Sampling()


def run(engine: Engine, text: str, policy, max_tokens: int, sampling=GREEDY, first=b"", avoid=()):
    result = collect(
        engine.generate(
            engine.encode(text),
            max_tokens=max_tokens,
            policy=policy,
            sampling=sampling,
            prompt_text=text,
            first_bytes=first,
            avoid=avoid,
        )
    )
    return result.ids, result.text, result.stats


def check_same(engine, text, drafter, k, max_tokens, first=b"", avoid=()):
    how = {"first": first, "avoid": avoid}
    plain_ids, plain_text, _ = run(engine, text, FixedPolicy(None, 0), max_tokens, **how)
    spec_ids, spec_text, stats = run(engine, text, FixedPolicy(drafter, k), max_tokens, **how)
    assert spec_ids == plain_ids
    assert spec_text == plain_text
    assert "\ufffd" not in spec_text
    assert stats.accepted <= stats.drafted
    assert stats.generated_tokens == len(spec_ids) == 1 + stats.decode_tokens
    return stats


def check_same_tokenizer(engine, text, which, models, k, max_tokens):
    """check_same with a drafter of the target's vocabulary.

    `which` is lookup, or a key of `models`: "near" (another model) or "self" (the target's own
    weights with a cache of their own), which must then accept every draft.
    """
    vocab = len(engine.table)
    drafter = LookupDrafter() if which == "lookup" else ModelDrafter(models[which], vocab)
    stats = check_same(engine, text, drafter, k, max_tokens)
    if which == "self":
        assert stats.acceptance_rate == 1.0


@settings(SLOW_OK, max_examples=25)
@given(text=texts, k=st.integers(1, 8), which=st.sampled_from(["lookup", "near", "self"]))
def test_tiny_gemma_speculative_equals_plain(tiny_gemma, tiny_gemma_drafter, text, k, which):
    """Random Gemma-3 (16-token sliding window, so rewinds cross the window) + Gemma tokenizer."""
    engine = Engine(fresh(tiny_gemma))
    models = {"near": fresh(tiny_gemma_drafter), "self": fresh(tiny_gemma)}
    check_same_tokenizer(engine, text, which, models, k, max_tokens=40)


@settings(SLOW_OK, max_examples=25)
@given(text=texts, k=st.integers(1, 8))
def test_tiny_llama_bytelevel_speculative_equals_plain(tiny_llama, text, k):
    engine = Engine(fresh(tiny_llama))
    check_same(engine, text, LookupDrafter(), k, max_tokens=30)


@pytest.mark.slow
@settings(SLOW_OK, max_examples=6)
@given(text=texts, k=st.integers(1, 8))
def test_gemma_270m_lookup_equals_plain(gemma, text, k):
    engine = Engine(fresh(gemma))
    check_same(engine, text, LookupDrafter(), k, max_tokens=20)


@settings(SLOW_OK, max_examples=10)
@given(text=texts, k=st.integers(1, 8))
def test_first_token_begins_with_the_bytes_asked_for(tiny_gemma, text, k):
    """Token healing (a space the prompt left out) keeps speculation exact.

    Plain and speculative choose the same first token, the best of those that begin with the
    bytes, and the same text after it.
    """
    import numpy as np

    engine = Engine(fresh(tiny_gemma))
    check_same(engine, text, LookupDrafter(), k, max_tokens=12, first=b" ")
    ids, out, _ = run(engine, text, FixedPolicy(None, 0), 1, first=b" ")
    assert out.startswith(" ")
    logits = fresh(tiny_gemma).sync(engine.encode(text))
    allowed = [i for i, piece in enumerate(engine.table) if piece.startswith(b" ")]
    assert ids[0] == allowed[int(np.argmax(logits[allowed]))]


@settings(SLOW_OK, max_examples=10)
@given(text=texts, k=st.integers(1, 8), first=st.sampled_from([b"", b" "]))
def test_first_token_begins_no_text_to_avoid(tiny_gemma, text, k, first):
    """An alternative (Alt+]) begins otherwise than the suggestion shown, and stays exact.

    Its first token is the best of those that spell no start of the shown text (and begin with
    `first`, where token healing asks for it), so its text is not the shown one or its start.
    """
    import numpy as np

    engine = Engine(fresh(tiny_gemma))
    _, shown, _ = run(engine, text, FixedPolicy(None, 0), 8, first=first)
    avoid = (shown.encode("utf-8"),)
    check_same(engine, text, LookupDrafter(), k, max_tokens=12, first=first, avoid=avoid)
    ids, out, _ = run(engine, text, FixedPolicy(None, 0), 8, first=first, avoid=avoid)
    piece = engine.table[ids[0]]
    assert out.encode("utf-8").startswith(piece)
    assert not piece or not avoid[0].startswith(piece)  # an empty one: an end or control token
    logits = fresh(tiny_gemma).sync(engine.encode(text))
    allowed = [
        i
        for i, piece in enumerate(engine.table)
        if piece.startswith(first) and not (piece and avoid[0].startswith(piece))
    ]
    assert ids[0] == allowed[int(np.argmax(logits[allowed]))]


def test_long_context_beyond_sliding_window(tiny_gemma, tiny_gemma_drafter):
    """Rewinds stay exact when the context is many times the 16-token window."""
    engine = Engine(fresh(tiny_gemma))
    text = "1. jeden\n2. dwa\n3. trzy\n" * 12
    drafter = ModelDrafter(fresh(tiny_gemma_drafter), len(engine.table))
    stats = check_same(engine, text, drafter, 6, max_tokens=40)
    assert 0 < stats.accepted < stats.drafted  # drafts were rejected, so caches were rewound


def test_rewind_matches_recompute(tiny_gemma):
    """Logits after feed + rewind + feed equal those of a fresh cache (sliding layers included)."""
    import numpy as np

    from decoder.backends.mlx import MLXBackend

    ids = tiny_gemma.tokenizer.encode("Zażółć gęślą jaźń. " * 6)
    a, b = MLXBackend(tiny_gemma.model), MLXBackend(tiny_gemma.model)
    a.sync(ids[:-1])
    a.forward([5, 6, 7, 8, 9])
    a.rewind(5)
    la = a.forward(ids[-1:])[-1]
    lb = b.sync(ids)
    np.testing.assert_allclose(la, lb, atol=1e-4)
    assert a.ids == b.ids == ids


def test_a_forgotten_document_starts_over(tiny_gemma):
    """A closed document's cache is dropped, saved or current; the others' are kept."""
    b = fresh(tiny_gemma)
    ids = tiny_gemma.tokenizer.encode("Ala ma kota. " * 10)
    for key in ("a", "b", "c"):
        b.select(key)
        b.sync(ids)
    b.forget("a")  # saved
    b.forget("c")  # current
    assert b.ids == [] and all(c.offset == 0 for c in b.cache)
    b.select("a")
    assert b.ids == []
    b.select("b")
    assert b.ids == ids


def test_prefix_reuse_feeds_only_new_tokens(tiny_gemma):
    engine = Engine(fresh(tiny_gemma))
    text = "Ala ma kota. " * 10
    run(engine, text, FixedPolicy(None, 0), 5)
    _, _, stats = run(engine, text + "Kot ma Alę.", FixedPolicy(None, 0), 5)
    assert 0 < stats.prefilled_tokens < stats.prompt_tokens // 2


def test_max_tokens_and_stats_are_consistent(tiny_gemma):
    engine = Engine(fresh(tiny_gemma))
    for n in (1, 2, 7):
        ids, _, stats = run(engine, "a b a b a b a b", FixedPolicy(LookupDrafter(), 8), n)
        assert len(ids) == n
        assert stats.stop_reason in ("max_tokens", "eos")
        assert len(stats.cycles) == len(stats.to_dict()["per_cycle"])


def test_prompt_longer_than_context(tiny_gemma):
    engine = Engine(fresh(tiny_gemma))
    engine.context_length = 8
    with pytest.raises(PromptTooLong):
        run(
            engine, "to jest zdecydowanie zbyt długi tekst na ten kontekst", FixedPolicy(None, 0), 4
        )


@settings(SLOW_OK, max_examples=4)
@given(text=texts, k=st.integers(1, 6), seed=st.integers(0, 2**16))
def test_sampling_runs_are_reproducible_and_clean(tiny_gemma, tiny_gemma_drafter, text, k, seed):
    engine = Engine(fresh(tiny_gemma))
    sampling = Sampling(temperature=0.8, top_p=0.9, seed=seed)
    drafter = ModelDrafter(fresh(tiny_gemma_drafter), len(engine.table))
    a = run(engine, text, FixedPolicy(drafter, k), 20, sampling)
    b = run(engine, text, FixedPolicy(drafter, k), 20, sampling)
    assert a[0] == b[0] and "\ufffd" not in a[1]
