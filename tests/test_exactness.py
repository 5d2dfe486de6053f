"""The exactness self-check: it says yes where batched logits are bit-identical, no where not.

On llama.cpp a yes needs a libllama built without tinyBLAS (install.sh builds it so); with
tinyBLAS compiled in no configuration is exact, and the tests expecting a yes are skipped.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from decoder.backends import threads
from decoder.backends.base import Stopped
from decoder.backends.exactness import (
    ALIGNED_PASS,
    MIN_POSITIONS,
    check,
    check_and_split,
    probe_ids,
)
from decoder.backends.threads import AlignedPace, Pace

llama_cpp = pytest.importorskip("llama_cpp")

from decoder.backends.embedded import embedded_gguf  # noqa: E402
from decoder.backends.llamacpp import LlamaCppBackend  # noqa: E402
from decoder.compat import llama_cpp as compat  # noqa: E402
from tests.tiny_gguf import mistral_vocab, random_llama  # noqa: E402

needs_exact_build = pytest.mark.skipif(
    compat.llamafile_compiled(),
    reason="this libllama has tinyBLAS (GGML_LLAMAFILE): no configuration of it is exact; "
    "bielik-llama-cpp (./install.sh) is built without it",
)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return random_llama(tmp_path_factory.mktemp("gguf") / "tiny.gguf", mistral_vocab, seed=4)


@needs_exact_build
def test_exact_configuration_passes_at_every_width():
    gemma = LlamaCppBackend(embedded_gguf("gemma-3-270m"), threads=2)
    result = check(gemma, k=8)
    assert result.exact and result.max_diff == 0.0, result.describe()
    assert result.widths == tuple(range(2, 10)) and result.exact_width == 9
    assert result.positions >= 600 and len(gemma.ids) == result.positions + 1
    assert result.describe().startswith("exact: yes")


@needs_exact_build
def test_exact_configuration_passes_on_a_tiny_float32_model(tiny):
    result = check(LlamaCppBackend(tiny, threads=2), k=15)
    assert result.exact and result.exact_width == 16, result.describe()


def test_flash_attention_fails_the_check(tiny):
    """Flash attention decodes one token past 512 positions with a split-KV kernel, not a batch."""
    # Fixed threads: with one thread (a busy machine) the split-KV kernel is not taken.
    backend = LlamaCppBackend(tiny, threads=2, adapt_threads=False, flash_attention=True)
    result = check(backend, k=4)
    assert not result.exact and result.max_diff > 0, result.describe()
    assert result.describe().startswith("exact: no") or "only up to" in result.describe()


def test_the_check_shares_the_callers_ids_and_leaves_them_cached(tiny):
    backend = LlamaCppBackend(tiny, threads=2)
    ids = probe_ids(backend, MIN_POSITIONS + 5, seed=3)
    assert all(backend.table[i] for i in ids)
    check(backend, k=2, ids=ids)
    assert backend.ids == ids[: MIN_POSITIONS + 1]
    with pytest.raises(ValueError, match="needs 604 ids"):
        check(backend, k=3, ids=ids[:600])


def test_the_check_runs_on_mlx_through_the_protocol(tiny_mistral):
    """MLX answers through forward/rewind/sync; its verdict matches a direct comparison."""
    from decoder.backends.mlx import MLXBackend

    backend = MLXBackend(tiny_mistral.model, tiny_mistral.tokenizer)
    result = check(backend, k=4)
    fed = [int(i) for i in probe_ids(backend, 5, seed=9)]
    one = np.stack([backend.forward([i])[0] for i in fed])
    backend.rewind(5)
    batch = backend.forward(fed)
    assert result.exact == (result.max_diff == 0.0)
    if result.exact:
        np.testing.assert_array_equal(batch, one)


@pytest.fixture(scope="module")
def wide(tiny):
    """An exact tiny llama.cpp model, and a prompt's logits after a prefill in the widest passes."""
    backend = LlamaCppBackend(tiny, threads=2, adapt_threads=False)
    ids = probe_ids(backend, 700, seed=7)
    return backend, ids, backend.sync(ids)


@needs_exact_build
@settings(deadline=None, max_examples=12, suppress_health_check=[HealthCheck.too_slow])
@given(cuts=st.lists(st.integers(1, 96), min_size=1, max_size=12))
def test_exact_llama_cpp_logits_do_not_depend_on_how_a_prompt_is_cut(wide, cuts):
    """Short passes of any width (a busy machine's background prefill), then the widest."""
    backend, ids, want = wide
    backend.reset()
    at = 0
    for n in cuts:
        backend.prefill_chunk(ids[at : at + n])
        at += n
    assert np.array_equal(backend.sync(ids), want)


@needs_exact_build
def test_the_check_finds_exact_llama_cpp_prefill_cut_invariant(tiny):
    backend = LlamaCppBackend(tiny, threads=2)
    found = check_and_split(backend, k=4)
    assert found.cut_invariant and found.aligned is None, found.describe()
    assert type(backend.pace) is Pace and "any cuts give the same logits" in found.describe()


def lanes_agree(backend, ids) -> bool:
    """A prompt prefilled in the background lane and for a request: the same next logits?"""
    backend.reset()
    with threads.background():
        behind = backend.sync(ids)
    backend.reset()
    return bool(np.array_equal(backend.sync(ids), behind))


@pytest.mark.slow
def test_where_cuts_matter_exact_mode_cuts_prompts_alike_in_every_lane(gemma):
    """MLX on a CPU: the logits depend on the cuts, so exact mode fixes them (every 256 ids).

    Measured, not declared: where the check finds prefill cut-invariant, nothing is fixed and
    the lanes agree anyway.
    """
    from decoder.backends.mlx import MLXBackend

    backend = MLXBackend(gemma.backend.model, gemma.tokenizer, exact=True)
    ids = probe_ids(backend, 700, seed=3)
    if not lanes_agree(backend, ids):
        found = check_and_split(backend, k=16)  # as loaded: split into exact widths, checked again
        assert not found.cut_invariant and found.aligned == ALIGNED_PASS, found.describe()
        assert isinstance(backend.pace, AlignedPace) and "cut every 256 ids" in found.describe()
        backend.reset()
        with threads.background(), pytest.raises(Stopped):  # a request waits for a fixed pass
            backend.sync(ids, should_stop=lambda: len(backend.ids) > 0)
        assert backend.ids == ids[:ALIGNED_PASS]
    assert lanes_agree(backend, ids)
