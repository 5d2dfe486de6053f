"""A drafter on another tokenizer: speculative == plain, and its text == the committed text."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from decoder.drafting.cross import CrossDrafter
from decoder.drafting.translator import MODES
from decoder.engine import Engine
from tests.test_engine import SLOW_OK, check_same
from tests.texts import texts


class Checked(CrossDrafter):
    """Asserts the invariants every cycle: the drafter's text equals the committed text after
    its resync, at most k + 1 drafter passes, no special token in a draft."""

    def resync(self, ctx):
        super().resync(ctx)
        assert self.text() == ctx.generated

    def propose(self, ctx, k, sampling, keys):
        fed = self.fed
        draft = super().propose(ctx, k, sampling, keys)
        assert self.fed - fed <= k + 1
        assert not set(draft.ids) & self.target.special
        return draft


def checked(model, tokenizer, target_tokenizer, mode="anchored") -> Checked:
    return Checked(model, tokenizer, target_tokenizer, mode)


PAIRS = [
    ("tiny_gemma", "tiny_llama"),
    ("tiny_llama", "tiny_gemma"),
    ("tiny_mistral", "tiny_llama"),
    ("tiny_gemma", "tiny_mistral"),
]


@pytest.mark.parametrize("pair", PAIRS, ids="-".join)
@settings(SLOW_OK, max_examples=6)
@given(text=texts, k=st.integers(1, 8), mode=st.sampled_from(MODES))
def test_tiny_pairs_speculative_equals_plain(request, pair, text, k, mode):
    target, drafter = (request.getfixturevalue(name) for name in pair)
    engine = Engine(target.model, target.tokenizer)
    d = checked(drafter.model, drafter.tokenizer, target.tokenizer, mode)
    check_same(engine, text, d, k, max_tokens=24)


def test_self_drafting_across_a_copy_is_accepted(tiny_gemma):
    """The target drafting for itself through text loses little: only where the random model's
    own tokens are not how its tokenizer would split the text (re-encoding cannot know)."""
    engine = Engine(tiny_gemma.model, tiny_gemma.tokenizer)
    d = checked(tiny_gemma.model, tiny_gemma.tokenizer, tiny_gemma.tokenizer)
    stats = check_same(engine, "Lista zakupów:\n1. mleko\n2. chleb\n3.", d, 4, max_tokens=30)
    assert stats.drafted > 0 and stats.acceptance_rate >= 0.9


@settings(SLOW_OK, max_examples=2)
@given(
    text=st.sampled_from(["Stolica Polski to", "Lista zakupów:\n1. mleko\n2. chleb\n3."]),
    mode=st.sampled_from(["anchored", "context"]),
)
def test_embedded_pair_speculative_equals_plain(gemma, smollm, text, mode):
    engine = Engine(gemma.model, gemma.tokenizer)
    d = checked(smollm.model, smollm.tokenizer, gemma.tokenizer, mode)
    check_same(engine, text, d, 4, max_tokens=12)


def test_pipeline_builds_a_cross_drafter(gemma, smollm):
    from decoder.config import Settings
    from decoder.pipeline import Pipeline

    pipe = Pipeline(Settings(translation="naive"), gemma, Engine(gemma.model, gemma.tokenizer))
    pipe.attach_drafter_model(smollm)
    assert isinstance(pipe.drafters["model"], CrossDrafter)
    assert pipe.drafters["model"].translation == "naive"
