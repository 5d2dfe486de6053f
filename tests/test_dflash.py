"""The dflash drafter on MLX, and MLX's exact passes that keep it (and every drafter) lossless.

A DFlash drafter is randomly initialised here, in the published format (config.json with
dflash_config, and safetensors; z-lab's `dflash` loads it), and bound to a random target:
its drafts are noise, so these tests show exactness and the plumbing (hidden states per cached
position, rewound with the cache), never speed or acceptance, which need the trained weights.
"""

from __future__ import annotations

import json

import pytest

from decoder.backends.exactness import check, check_and_split
from decoder.backends.mlx import MLXBackend
from decoder.drafting import registry
from decoder.drafting.dflash import DFlashDrafter, load_dflash, write_random
from decoder.engine import Engine
from decoder.schema import ConfigError
from decoder.stats import count_chars
from tests.test_engine import check_same
from tests.tiny import tiny_model, wide_llama

POLISH = (
    "Art. 1. Rzeczpospolita Polska jest dobrem wspólnym wszystkich obywateli.\n"
    "Art. 2. Rzeczpospolita Polska jest demokratycznym państwem prawnym.\n"
    "Wokulski szedł przez Krakowskie Przedmieście, myśląc o pannie Izabeli. "
)


@pytest.fixture(scope="module")
def target(gemma):
    """A random Gemma-3 of its own (the drafter taps its layers) with Gemma's tokenizer."""
    return tiny_model("gemma3_text", gemma.tokenizer, seed=7)


@pytest.fixture(scope="module")
def drafter_dir(target, tmp_path_factory):
    return write_random(tmp_path_factory.mktemp("dflash"), target.model, block_size=8, seed=3)


def exact_backend(tiny) -> MLXBackend:
    backend = MLXBackend(tiny.model, tiny.tokenizer, exact=True)
    assert check_and_split(backend, k=15).exact
    return backend


def test_the_random_drafter_is_in_the_published_format(target, drafter_dir):
    config = json.loads((drafter_dir / "config.json").read_text())
    assert set(config["dflash_config"]) == {"target_layer_ids", "mask_token_id", "block_size"}
    assert config["num_target_layers"] == len(target.model.layers)
    assert registry.model_format(str(drafter_dir)) == "dflash"
    assert registry.model_format("embedded:smollm2-135m") == "lm"
    assert registry.model_format("speakleash/Bielik-11B-v3.0-DFlash") == "dflash"  # a hub repo
    assert registry.model_format("speakleash/Bielik-11B-v3.0-Instruct-MLX-8bit") == "lm"
    model = load_dflash(drafter_dir)
    assert model.cfg.block_size == 8 and model.cfg.target_layer_ids == (1, 3, 4)


def test_a_drafter_model_of_the_wrong_kind_is_refused(drafter_dir):
    with pytest.raises(ConfigError, match="needs a DFlash drafter directory"):
        registry.check_format("dflash", "embedded:smollm2-135m")
    with pytest.raises(ConfigError, match="suits --drafter dflash"):
        registry.check_format("model", str(drafter_dir))


def test_a_drafter_for_another_target_is_refused(gemma, drafter_dir):
    other = tiny_model("llama", gemma.tokenizer, seed=8)  # 2 layers, not 6
    with pytest.raises(ConfigError, match="target of 6 layers"):
        DFlashDrafter(load_dflash(drafter_dir), MLXBackend(other.model, other.tokenizer))


@pytest.mark.parametrize("k", [1, 3, 7, 12])
def test_dflash_equals_plain_past_600_positions(target, drafter_dir, k):
    """Every draft length up to a block, a prompt of more than 600 tokens, rewinds each cycle."""
    backend = exact_backend(target)
    engine = Engine(backend)
    drafter = DFlashDrafter(load_dflash(drafter_dir), backend)
    text = POLISH * 10
    assert len(engine.encode(text)) > 600
    stats = check_same(engine, text, drafter, k, max_tokens=24)
    assert stats.drafted >= min(k, 7) * 10  # it drafted (a block holds 7 after the last token)
    assert all(c.passes == 1 for c in stats.cycles if c.drafted)  # one pass per block
    assert backend.features.size == len(backend.ids)  # hidden states rewound with the cache


def test_hidden_states_follow_the_document_caches(target, drafter_dir):
    backend = exact_backend(target)
    drafter = DFlashDrafter(load_dflash(drafter_dir), backend)
    engine = Engine(backend)
    for key, text in (("a", POLISH), ("b", POLISH * 2), ("a", POLISH + "Art. 3.")):
        backend.select(key)
        check_same(engine, text, drafter, 5, max_tokens=8)
        assert backend.features.size == len(backend.ids)


def test_mlx_exact_passes_are_bit_identical_at_every_width(tiny_mistral):
    """A model wide enough for OpenBLAS to batch: attention query by query, passes split or padded.

    Without exact passes MLX's batched attention (and OpenBLAS products over more rows than it
    computes like one) differ from one-token passes on this CPU; with them, none does.
    """
    wide = wide_llama(tiny_mistral.tokenizer, seed=5)
    fast = check(MLXBackend(wide.model, wide.tokenizer), k=16)
    exact = check_and_split(MLXBackend(wide.model, wide.tokenizer, exact=True), k=16)
    assert exact.exact and exact.max_diff == 0.0, (fast.describe(), exact.describe())


def test_characters_are_counted_across_split_utf8():
    text = "Zażółć gęślą jaźń 🌱".encode()
    assert count_chars(text) == 19
    assert sum(count_chars(text[i : i + 3]) for i in range(0, len(text), 3)) == 19
