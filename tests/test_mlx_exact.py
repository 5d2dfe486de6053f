"""MLX exact passes padded to one width: one-token logits at every width, on any BLAS kernels.

OpenBLAS picks a kernel (and a thread split) by the shape of each product, and within one
product a row's sums can depend on its index (one thread here: rows from the 7th of 16 on).
Padded passes feed every pass, one-token steps included, PADDED_WIDTH ids wide, each position
at row (position mod PADDED_WIDTH): the shapes and a token's row never change, whatever the
kernels. One OpenBLAS thread, whose kernels differ from 4 rows up on this machine's CPU
(measured), stands in for an unlucky CPU here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from decoder.backends.exactness import PADDED_WIDTH, WIDE_ENOUGH, check_and_split
from decoder.backends.mlx import MLXBackend
from decoder.drafting.drafter import ModelDrafter
from decoder.drafting.lookup import LookupDrafter
from decoder.engine import Engine
from decoder.pricing import Costs
from tests.test_engine import SLOW_OK, check_same
from tests.texts import texts
from tests.tiny import wide_llama

ROOT = Path(__file__).resolve().parents[1]
LONG = (ROOT / "samples" / "konstytucja.txt").read_text(encoding="utf-8") * 4


def padded(model) -> MLXBackend:
    """An exact MLX backend over `model`'s weights whose every pass is padded."""
    module = getattr(model, "model", None)
    module = model.backend.model if hasattr(model, "backend") else module
    backend = MLXBackend(module, model.tokenizer, exact=True)
    backend.pad_passes(PADDED_WIDTH)
    return backend


@pytest.fixture(scope="module")
def wide(tiny_mistral):
    return wide_llama(tiny_mistral.tokenizer, seed=5)


def test_padded_passes_give_one_token_logits_at_every_width(wide):
    backend = MLXBackend(wide.model, wide.tokenizer, exact=True)
    found = check_and_split(backend, k=16, passes="padded")
    assert found.exact and found.max_diff == 0.0, found.describe()
    assert found.padded == backend.padded == PADDED_WIDTH and found.widths[-1] == 17
    assert found.native is not None and found.step_cost > 0
    assert f"every pass padded to {PADDED_WIDTH} tokens" in found.describe()
    assert "a one-token step costs" in found.describe()
    assert f"every pass padded to {PADDED_WIDTH}" in backend.describe()["numerics"]


def test_native_passes_are_never_padded(wide):
    backend = MLXBackend(wide.model, wide.tokenizer, exact=True)
    found = check_and_split(backend, k=16, passes="native")
    assert backend.padded is None and found.padded is None and found.native is None
    assert found.exact, found.describe()  # split to the widest width measured exact


def test_auto_pads_only_where_the_kernels_are_exact_for_too_few_tokens(wide):
    backend = MLXBackend(wide.model, wide.tokenizer, exact=True)
    found = check_and_split(backend, k=16)
    assert found.exact, found.describe()
    if found.padded:
        assert found.native.exact_width < WIDE_ENOUGH
    else:
        assert found.exact_width >= WIDE_ENOUGH and backend.padded is None


def test_a_bad_passes_value_is_refused(wide):
    with pytest.raises(ValueError, match="exact_passes must be one of"):
        check_and_split(MLXBackend(wide.model, wide.tokenizer, exact=True), k=2, passes="wide")


CHECK_ONE_THREAD = """
import json
from decoder.backends.blas import ensure_fast_blas
ensure_fast_blas()
from decoder.backends.exactness import check, check_and_split
from decoder.backends.mlx import MLXBackend
from tests.mistral_tokenizer import mistral_v1
from tests.tiny import wide_llama
wide = wide_llama(mistral_v1(), seed=5)
native = check(MLXBackend(wide.model, wide.tokenizer, exact=True), k=16)
found = check_and_split(MLXBackend(wide.model, wide.tokenizer, exact=True), k=16)
print(json.dumps({"native": native.exact_width, "exact": found.exact, "padded": found.padded,
                  "width": found.exact_width, "describe": found.describe()}))
"""


def test_where_the_kernels_differ_from_few_rows_auto_pads_and_is_exact():
    """One OpenBLAS thread (its own kernels, no thread split), in a process of its own."""
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}
    run = subprocess.run(
        [sys.executable, "-c", CHECK_ONE_THREAD], env=env, cwd=ROOT, capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr[-2000:]
    found = json.loads(run.stdout.strip().splitlines()[-1])
    assert found["exact"] and found["width"] == 17, found["describe"]
    assert bool(found["padded"]) == (found["native"] < WIDE_ENOUGH), found["describe"]


@settings(SLOW_OK, max_examples=20)
@given(text=texts, k=st.integers(1, 15), which=st.sampled_from(["lookup", "near", "self"]))
def test_tiny_gemma_padded_speculation_equals_plain(tiny_gemma, tiny_gemma_drafter, text, k, which):
    """Padded passes across drafters, draft lengths and texts (16-token sliding windows)."""
    engine = Engine(padded(tiny_gemma))
    vocab = len(engine.table)
    drafters = {
        "lookup": LookupDrafter(),
        "near": ModelDrafter(padded(tiny_gemma_drafter), vocab),
        "self": ModelDrafter(padded(tiny_gemma), vocab),
    }
    stats = check_same(engine, text, drafters[which], k, max_tokens=30)
    if which == "self":
        assert stats.acceptance_rate == 1.0


@pytest.mark.slow
@settings(SLOW_OK, max_examples=4)
@given(start=st.integers(0, 1100), k=st.integers(1, 15))
def test_gemma_270m_padded_lookup_equals_plain_past_512_positions(gemma, start, k):
    """The real model's shapes, a prompt of more than 600 tokens: identical ids and text."""
    engine = Engine(padded(gemma))
    text = LONG[start : start + 2400]
    assert len(engine.encode(text)) > 512
    stats = check_same(engine, text, LookupDrafter(), k, max_tokens=24)
    assert stats.drafted > 0


def test_aligned_passes_cost_one_step_per_window_they_touch():
    costs = Costs({1: 1.0, 2: 1.0}, 0.1, window=16)
    assert costs.at(600).verify_ratio(8) == 1.0  # rows 8-15 of one pass
    assert costs.at(600).verify_ratio(9) == 2.0  # one more row starts the next window
    assert costs.at(15).verify_ratio(1) == 1.0 and costs.at(15).verify_ratio(2) == 2.0
    assert Costs({1: 1.0, 2: 1.4}, 0.1).at(600).verify_ratio(2) == 1.4  # unaligned: as measured


def test_the_cache_holds_what_was_fed_after_aligned_passes(wide):
    backend = padded(wide)
    ids = list(range(100, 140))
    for cut in (3, 1, 13, 16, 7):  # pieces that start and end anywhere in a window
        backend.forward(ids[len(backend.ids) : len(backend.ids) + cut])
    assert backend.ids == ids
    assert all(c.offset == len(ids) for c in backend.cache)
    backend.rewind(5)
    assert all(c.offset == len(ids) - 5 for c in backend.cache) and backend.ids == ids[:-5]


def test_drafts_are_cut_to_the_windows_they_fill(wide):
    """A padded pass costs the same full or not: a draft does not start one for its last ids."""
    backend = padded(wide)
    assert backend.whole_passes(600, 8) == 8  # rows 8-15: one window
    assert backend.whole_passes(600, 17) == 8  # 9 more would start a second window for 9 rows
    assert backend.whole_passes(600, 24) == 24  # ... which they fill
    assert backend.whole_passes(607, 10) == 1  # the window's last row, then a fresh window
    assert MLXBackend(wide.model, wide.tokenizer, exact=True).whole_passes(600, 17) == 17


def test_attention_is_batched_outside_exact_passes():
    """Prefill attends in one call per pass; only inside an exact pass, one call per query.

    (Row by row everywhere made prefill 0.60x as fast, `bench ab 2554ded --backend mlx`.)
    """
    import mlx.core as mx
    from mlx_lm.models.base import scaled_dot_product_attention

    from decoder.compat.mlx_lm import _rowwise, one_query_at_a_time

    calls = []

    def attend(*args, **kwargs):
        calls.append(args[0].shape[2])
        return scaled_dot_product_attention(*args, **kwargs)

    attention = _rowwise(attend)
    queries, keys = mx.random.normal((1, 2, 5, 8)), mx.random.normal((1, 2, 5, 8))
    batched = attention(queries, keys, keys, None, 0.5, "causal")
    assert calls == [5]
    with one_query_at_a_time():
        rowwise = attention(queries, keys, keys, None, 0.5, "causal")
    assert calls == [5, 1, 1, 1, 1, 1]
    assert mx.allclose(batched, rowwise, atol=1e-5).item()
