"""A drafter on another tokenizer: speculative == plain, and its text == the committed text."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from decoder.drafting.cascade import CascadeDrafter
from decoder.drafting.cross import MAX_PASSES_PER_TOKEN, CrossDrafter
from decoder.drafting.drafter import TRANSLATIONS as MODES
from decoder.drafting.drafter import Context
from decoder.drafting.lookup import LookupDrafter
from decoder.engine import Engine
from decoder.sampling import GREEDY, Keys
from tests.test_engine import SLOW_OK, check_same
from tests.texts import texts
from tests.tiny import fresh


class Checked(CrossDrafter):
    """A CrossDrafter that asserts the invariants of every cycle.

    The drafter's text equals the committed text after its resync, at most MAX_PASSES_PER_TOKEN
    passes per target token asked for, at most k target tokens, no special token.
    """

    def resync(self, ctx):
        synced = super().resync(ctx)
        assert synced and self.text() == ctx.generated
        return synced

    def propose(self, ctx, k, sampling, keys):
        fed = self.fed
        draft = super().propose(ctx, k, sampling, keys)
        passes = self.fed - fed
        assert passes == draft.passes <= MAX_PASSES_PER_TOKEN * k
        assert len(draft.ids) <= k
        assert not set(draft.ids) & self.target.special
        return draft


def checked(model, target_tokenizer, mode="anchored") -> Checked:
    return Checked(fresh(model), target_tokenizer, mode)


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
    engine = Engine(fresh(target))
    d = checked(drafter, target.tokenizer, mode)
    stats = check_same(engine, text, d, k, max_tokens=24)
    exact, checked_cycles = stats.integrity
    assert exact == checked_cycles == sum(c.drafter == "model" for c in stats.cycles)


def test_self_drafting_across_a_copy_is_accepted(tiny_gemma):
    """The target drafting for itself through text loses little.

    Only where the random model's own tokens are not how its tokenizer would split the text
    (re-encoding cannot know).
    """
    engine = Engine(fresh(tiny_gemma))
    d = checked(tiny_gemma, tiny_gemma.tokenizer)
    stats = check_same(engine, "Lista zakupów:\n1. mleko\n2. chleb\n3.", d, 4, max_tokens=30)
    assert stats.drafted > 0 and stats.acceptance_rate >= 0.9


@settings(SLOW_OK, max_examples=2)
@given(
    text=st.sampled_from(["Stolica Polski to", "Lista zakupów:\n1. mleko\n2. chleb\n3."]),
    mode=st.sampled_from(["anchored", "context"]),
)
def test_embedded_pair_speculative_equals_plain(gemma, smollm, text, mode):
    engine = Engine(fresh(gemma))
    d = checked(smollm, gemma.tokenizer, mode)
    check_same(engine, text, d, 4, max_tokens=12)


def test_pipeline_builds_a_cross_drafter(gemma, smollm):
    from decoder.config import Settings
    from decoder.pipeline import Pipeline

    pipe = Pipeline(Settings(translation="naive"), gemma, smollm)
    assert isinstance(pipe.drafters["model"], CrossDrafter)
    assert pipe.drafters["model"].translation == "naive"


@pytest.mark.parametrize("mode", ["naive", "anchored"])
def test_k_counts_target_tokens(tiny_gemma, tiny_llama, mode):
    """A draft covers k target tokens, or the drafter spent its pass cap.

    A byte-level drafter spelling Polish needs several tokens per target token: it drafts on.
    """
    target = tiny_gemma.tokenizer
    d = CrossDrafter(fresh(tiny_llama), target, mode)
    prompt = "Notatka:"
    gen = d.target.tokenize(" Zażółć gęślą jaźń. Źdźbło trawy, żółć i gęś.".encode())[0]
    for k in (1, 2, 4, 6):
        for cut in (len(gen) // 2, len(gen)):
            ctx = Context(target.encode(prompt) + gen[:cut], prompt, d.target.bytes(gen[:cut]))
            draft = d.propose(ctx, k, GREEDY, Keys(None))
            assert len(draft.ids) == k or draft.passes == MAX_PASSES_PER_TOKEN * k
            assert draft.passes >= 1 and draft.synced


@pytest.fixture(scope="module")
def tiny_nobytes():
    """A random Llama over a real BPE tokenizer with no byte fallback.

    Trained here on Polish text: emoji, CJK and other characters it never saw have no token.
    """
    from mlx_lm.tokenizer_utils import TokenizerWrapper
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    from tests.test_translator import POLISH
    from tests.tiny import tiny_model

    backend = Tokenizer(models.BPE(unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.Metaspace()
    backend.decoder = decoders.Metaspace()
    trainer = trainers.BpeTrainer(vocab_size=600, special_tokens=["<unk>", "<s>", "</s>"])
    backend.train_from_iterator(POLISH, trainer)
    hf = PreTrainedTokenizerFast(
        tokenizer_object=backend, unk_token="<unk>", bos_token="<s>", eos_token="</s>"
    )
    return tiny_model("llama", TokenizerWrapper(hf), seed=5)


def test_resync_when_the_drafter_cannot_spell_a_byte(tiny_gemma, tiny_nobytes):
    """No KeyError: the drafter reads the text as its tokenizer can.

    The integrity counter says so, and the output is still the target's own.
    """
    d = CrossDrafter(fresh(tiny_nobytes), tiny_gemma.tokenizer)
    assert 0xF0 not in d.vocab.byte_id  # no token for an emoji's first byte
    gen = "Ala 😀 ma kota".encode()
    ctx = Context(tiny_gemma.tokenizer.encode("Notatka:") + [0], "Notatka:", gen)
    assert d.resync(ctx) is False
    assert d.text() != gen and d.ids
    draft = d.propose(ctx, 2, GREEDY, Keys(None))
    assert draft.synced is False
    engine = Engine(fresh(tiny_gemma))
    d = CrossDrafter(fresh(tiny_nobytes), tiny_gemma.tokenizer)
    stats = check_same(engine, "Źdźbło trawy 🌱 i żółć 😀", d, 3, max_tokens=24)
    exact, checked_cycles = stats.integrity
    assert checked_cycles > 0 and exact < checked_cycles


def test_cascade_takes_a_long_match_and_extends_a_short_one(gemma, smollm):
    """Lookup alone on a long copy, the model alone with no match, both in between.

    Every way, the output equals plain greedy decoding.
    """
    model = checked(smollm, gemma.tokenizer)
    engine = Engine(fresh(gemma))
    cascade = CascadeDrafter(LookupDrafter(), model, engine.table)
    text = "Lista zakupów:\n1. mleko – 2 l\n2. chleb – 1 szt.\n3. masło – 1 szt.\n4."
    stats = check_same(engine, text, cascade, 4, max_tokens=24)
    assert stats.drafted > 0
    copy = "Adres: ul. Długa 5, 00-950 Warszawa.\nKopia: ul. Długa 5, 00-950"
    ids = engine.encode(copy)
    long = cascade.propose(Context(ids, copy, b""), 4, GREEDY, Keys(None))
    assert cascade.lookup.match(ids)[0] >= cascade.long_match and long.passes == 0
    new = Context(engine.encode("Zupełnie nowe zdanie"), "Zupełnie nowe zdanie", b"")
    alone = cascade.propose(new, 3, GREEDY, Keys(None))
    assert cascade.lookup.match(new.ids)[0] == 0 and alone.passes > 0
    ctx = Context(engine.encode(text), text, b"")
    head = cascade.lookup.propose(ctx, 1, GREEDY, Keys(None)).ids
    both = cascade.extend(ctx, head, 4, GREEDY, Keys(None))
    assert both.ids[:1] == head and both.passes > 0 and both.synced


def test_each_document_keeps_its_drafter_cache_too():
    """Switching files reuses the drafter model's prompt cache as well as the target's."""
    from decoder.config import Settings
    from decoder.generation import collect
    from decoder.pipeline import Pipeline

    pipe = Pipeline.load(Settings(backend="mlx", drafter="model", k=2), progress=False)
    docs = {
        "file:///a.md": "Art. 1. Rzeczpospolita Polska jest dobrem wspólnym. Art. 2.",
        "file:///b.md": "Lista zakupów:\n1. chleb\n2. mleko\n3.",
    }
    held = {}
    for uri, text in docs.items():
        pipe.select(uri)
        collect(pipe.continue_text(text, max_tokens=6, policy=pipe.policy("model", 2)))
        held[uri] = (list(pipe.engine.runner.ids), list(pipe.drafter_runner.ids))
        assert held[uri][1]  # the drafter drafted for this document
    pipe.select("file:///a.md")
    assert (pipe.engine.runner.ids, pipe.drafter_runner.ids) == held["file:///a.md"]


def test_a_respelled_last_token_is_redrawn_and_an_own_one_kept(tiny_gemma, tiny_llama):
    """Token healing, only where the drafter's last token is its encoding of the target's text.

    The committed text ends where the target cut it; the drafter redraws its last token from
    the context before it, among the tokens that begin with the same bytes. After a cycle in
    which the target accepted exactly what the drafter drafted, its own last token stays.
    """
    target = tiny_gemma.tokenizer
    d = checked(tiny_llama, target)
    prompt, text = "Notatka:", " Zażółć gęślą jaźń, źdźbło trawy, gę"
    gen = d.target.tokenize(text.encode())[0]
    ctx = Context(target.encode(prompt) + gen, prompt, d.target.bytes(gen))
    spelled = d._respell(ctx.generated)
    d.propose(ctx, 2, GREEDY, Keys(None))
    assert d.heals and d.respelled
    assert d.ids[: len(spelled) - 1] == spelled[:-1]
    assert d.vocab.table[d.ids[len(spelled) - 1]].startswith(d.vocab.table[spelled[-1]])
    assert d.text().startswith(ctx.generated)

    own = d.ids[: len(spelled) + 1]  # the target accepts the drafter's next token's text
    more = d.target.tokenize(d.vocab.bytes(own)[len(ctx.generated) :])
    if more is None or more[1][:1] not in ([], [0]):
        pytest.skip("the drafted text has no exact target spelling")
    ctx = Context(ctx.ids + more[0], prompt, d.vocab.bytes(own))
    d.propose(ctx, 2, GREEDY, Keys(None))
    assert not d.respelled and d.ids[: len(own)] == own


def test_extending_rules_out_every_token_not_beginning_with_the_head(tiny_llama):
    """Checked against a scan of the whole vocabulary, for a letter, a space, a lone lead byte."""
    vocab = CrossDrafter(fresh(tiny_llama), tiny_llama.tokenizer).vocab
    logits = np.zeros(vocab.size, dtype=np.float32)
    assert vocab.extending(b"", logits) is logits
    for head in (b"g", b" g", "ę".encode()[:1], b"\xff\xff"):
        kept = np.flatnonzero(vocab.extending(head, logits) == 0)
        want = [
            i
            for i, piece in enumerate(vocab.table)
            if piece.startswith(head) and i not in vocab.special
        ]
        assert kept.tolist() == want
