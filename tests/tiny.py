"""Small randomly initialised mlx-lm models over real tokenizers, for exactness tests.

Random weights keep the tests fast while exercising the real architectures (Gemma-3 with its
sliding-window layers, Llama) and real vocabularies; exactness does not depend on quality.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import mlx.core as mx
from mlx_lm.models import gemma3_text, llama

from decoder.backends.mlx import MLXBackend
from decoder.backends.models import Model, load_model
from decoder.config import Settings
from decoder.vocab import token_bytes

CONFIGS = {
    "gemma3_text": dict(
        model_type="gemma3_text",
        hidden_size=64,
        num_hidden_layers=6,
        intermediate_size=128,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=32,
        rms_norm_eps=1e-6,
        sliding_window=16,
        sliding_window_pattern=3,
        max_position_embeddings=4096,
        query_pre_attn_scalar=32,
        rope_theta=10000.0,
        rope_local_base_freq=10000.0,
    ),
    "llama": dict(
        model_type="llama",
        hidden_size=64,
        num_hidden_layers=2,
        intermediate_size=128,
        num_attention_heads=2,
        num_key_value_heads=1,
        rms_norm_eps=1e-5,
        max_position_embeddings=4096,
        rope_theta=10000.0,
        tie_word_embeddings=True,
    ),
}


@dataclass
class Tiny:
    model: object
    tokenizer: object


def tiny_model(arch: str, tokenizer, seed: int) -> Tiny:
    module = {"gemma3_text": gemma3_text, "llama": llama}[arch]
    mx.random.seed(seed)
    args = module.ModelArgs.from_dict({**CONFIGS[arch], "vocab_size": len(token_bytes(tokenizer))})
    model = module.Model(args)
    # Larger-than-default embeddings make logits spread out, so argmax ties are not an issue.
    model.update(
        {
            "model": {
                "embed_tokens": {"weight": mx.random.normal(model.model.embed_tokens.weight.shape)}
            }
        }
    )
    mx.eval(model.parameters())
    return Tiny(model, tokenizer)


def wide_llama(tokenizer, seed: int) -> Tiny:
    """A random 2-layer Llama as wide as Gemma-3-270M (640), so OpenBLAS takes its real kernels.

    At the tiny models' width every product is small enough for one kernel whatever the rows;
    at this one the kernels (and their thread split) change with the rows, as in real models.
    """
    mx.random.seed(seed)
    config = {
        **CONFIGS["llama"],
        "hidden_size": 640,
        "intermediate_size": 2048,
        "num_attention_heads": 4,
        "vocab_size": len(token_bytes(tokenizer)),
    }
    model = llama.Model(llama.ModelArgs.from_dict(config))
    mx.eval(model.parameters())
    return Tiny(model, tokenizer)


def perturbed(tiny: Tiny, arch: str, scale: float, seed: int) -> Tiny:
    """A copy of `tiny` with noise on every weight: a drafter that agrees with it only often."""
    from mlx.utils import tree_map

    mx.random.seed(seed)
    twin = tiny_model(arch, tiny.tokenizer, seed)
    twin.model.update(
        tree_map(lambda w: w + scale * w.std() * mx.random.normal(w.shape), tiny.model.parameters())
    )
    mx.eval(twin.model.parameters())
    return twin


@cache
def embedded(name: str) -> Model:
    return load_model(f"embedded:{name}", Settings(dtype="float32"), "mlx", progress=False)


def fresh(model: Tiny | Model) -> MLXBackend:
    """A new MLX backend (an empty cache of its own) over a tiny or loaded model's weights."""
    module = model.backend.model if isinstance(model, Model) else model.model
    return MLXBackend(module, model.tokenizer)
