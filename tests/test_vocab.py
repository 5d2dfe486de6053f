"""Token-to-bytes tables reproduce the text exactly, and streaming never splits a character."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings

from decoder.vocab import TextStream, ids_to_bytes, special_ids, token_bytes
from tests.texts import texts

OK = settings(
    deadline=None, max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def roundtrip(model, text):
    table = token_bytes(model.tokenizer)
    ids = model.tokenizer.encode(text, add_special_tokens=False)
    assert ids_to_bytes(table, ids).decode("utf-8") == text
    stream = TextStream(table)
    pieces = [stream.add([i]) for i in ids] + [stream.flush()]
    assert "".join(pieces) == text
    assert all("\ufffd" not in p for p in pieces)


@OK
@given(text=texts)
def test_gemma_sentencepiece_roundtrip(gemma, text):
    roundtrip(gemma, text)


@OK
@given(text=texts)
def test_smollm_bytelevel_roundtrip(smollm, text):
    roundtrip(smollm, text)


def test_special_tokens_spell_nothing(gemma, smollm):
    for m in (gemma, smollm):
        table = token_bytes(m.tokenizer)
        for i in m.tokenizer.eos_token_ids:
            assert table[i] == b""
        assert set(m.tokenizer.eos_token_ids) <= special_ids(m.tokenizer)


def test_incomplete_utf8_is_held_back(smollm):
    table = token_bytes(smollm.tokenizer)
    ids = smollm.tokenizer.encode("ż😀", add_special_tokens=False)
    stream = TextStream(table)
    out = [stream.add([i]) for i in ids]
    assert "".join(out) == "ż😀" and all("\ufffd" not in o for o in out)
