"""DFlash: a block-diffusion drafter conditioned on the target's hidden states (MLX).

A DFlash drafter (z-lab's DFlash; speakleash publishes them for Bielik) is a few transformer
layers that share the target's embeddings and output head. Each cycle it reads the target's
hidden states at some of its layers for the positions the target has just computed, and fills a
block in one pass: the last committed token followed by `block_size - 1` mask tokens, every
mask position predicted at once. So one drafter pass drafts up to block_size - 1 tokens, and its
cost does not grow with them as an autoregressive drafter's does.

The published format, read here: `config.json` (the layers' shapes, `num_target_layers`, and
`dflash_config` with `target_layer_ids`, `mask_token_id`, `block_size`) and safetensors with
`fc` (target features to hidden size), `hidden_norm`, `layers.N.{self_attn,mlp,...}` and
`norm`. Each layer's attention sees the context (the target's features, projected by `fc`, as
keys and values, cached per position) and the block itself, with no causal mask within the
block. This module is our own implementation of that architecture (DFlashDraftModel in z-lab's
`dflash/model_mlx.py`, version 0.1.0); DFlash-2 drafters (convolutions and a candidate
selector) and sliding-window drafter layers are refused with a message.

Verification is ours (decoder/engine.py): the drafts are only proposals, so output equals plain
greedy decoding wherever the target's passes are exact, whatever the drafter's weights.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

import mlx.core as mx
import mlx.nn as nn
import numpy as np
from mlx_lm.models.cache import KVCache
from mlx_lm.models.rope_utils import initialize_rope

from decoder.backends.base import common_prefix
from decoder.drafting.drafter import NO_DRAFT, Context, Draft
from decoder.pricing import MODEL_PRIOR, Market, Offer
from decoder.sampling import Keys, Sampling, choose, probabilities
from decoder.schema import ConfigError

CONFIG_KEYS = ("target_layer_ids", "mask_token_id", "block_size")


class DFlashFormatError(ValueError):
    pass


@dataclass(frozen=True)
class DFlashConfig:
    hidden_size: int
    num_hidden_layers: int
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int
    intermediate_size: int
    vocab_size: int
    rms_norm_eps: float
    rope_theta: float
    max_position_embeddings: int
    num_target_layers: int
    target_layer_ids: tuple[int, ...]
    mask_token_id: int
    block_size: int
    rope_scaling: dict | None = None

    @classmethod
    def read(cls, path: Path) -> DFlashConfig:
        """The drafter's config.json; a clear error for anything else."""
        try:
            raw = json.loads((path / "config.json").read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as error:
            raise DFlashFormatError(f"{path}: no readable config.json ({error})") from None
        return cls.read_dict(raw, path)

    @classmethod
    def read_dict(cls, raw: dict, path: Path | str = "config.json") -> DFlashConfig:
        dflash = raw.get("dflash_config")
        if not isinstance(dflash, dict) or any(key not in dflash for key in CONFIG_KEYS):
            raise DFlashFormatError(
                f"{path}: config.json has no dflash_config with {', '.join(CONFIG_KEYS)}"
            )
        if "DFlash2DraftModel" in (raw.get("architectures") or []):
            raise DFlashFormatError(f"{path}: DFlash-2 drafters are not supported")
        if set(raw.get("layer_types") or ["full_attention"]) != {"full_attention"}:
            raise DFlashFormatError(f"{path}: sliding-window drafter layers are not supported")
        rope = raw.get("rope_parameters") or raw.get("rope_scaling")
        try:
            return cls(
                **{key: raw[key] for key in _SHAPE_KEYS},
                rope_theta=float(raw.get("rope_theta", (rope or {}).get("rope_theta", 10000.0))),
                target_layer_ids=tuple(int(i) for i in dflash["target_layer_ids"]),
                mask_token_id=int(dflash["mask_token_id"]),
                block_size=int(dflash["block_size"]),
                rope_scaling=rope if rope and rope.get("type", rope.get("rope_type")) else None,
            )
        except KeyError as missing:
            raise DFlashFormatError(f"{path}: config.json lacks {missing}") from None


_SHAPE_KEYS = (
    "hidden_size",
    "num_hidden_layers",
    "num_attention_heads",
    "num_key_value_heads",
    "head_dim",
    "intermediate_size",
    "vocab_size",
    "rms_norm_eps",
    "max_position_embeddings",
    "num_target_layers",
)


class Attention(nn.Module):
    """Block queries over the context's keys (cached) and the block's own (not cached)."""

    def __init__(self, cfg: DFlashConfig):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = (
            cfg.num_attention_heads,
            cfg.num_key_value_heads,
            cfg.head_dim,
        )
        self.scale = cfg.head_dim**-0.5
        self.q_proj = nn.Linear(cfg.hidden_size, self.heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(cfg.hidden_size, self.kv_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(cfg.hidden_size, self.kv_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(self.heads * self.head_dim, cfg.hidden_size, bias=False)
        self.q_norm = nn.RMSNorm(self.head_dim, eps=cfg.rms_norm_eps)
        self.k_norm = nn.RMSNorm(self.head_dim, eps=cfg.rms_norm_eps)

    def _heads(self, x: mx.array, n: int, norm=None) -> mx.array:
        x = x.reshape(1, x.shape[1], n, self.head_dim)
        return (norm(x) if norm else x).transpose(0, 2, 1, 3)

    def __call__(self, x: mx.array, context: mx.array, rope, cache) -> mx.array:
        start = cache.offset  # position of the first new context row
        block_at = start + context.shape[1]  # position of the block's first token
        q = rope(self._heads(self.q_proj(x), self.heads, self.q_norm), offset=block_at)
        ck = rope(self._heads(self.k_proj(context), self.kv_heads, self.k_norm), offset=start)
        cv = self._heads(self.v_proj(context), self.kv_heads)
        bk = rope(self._heads(self.k_proj(x), self.kv_heads, self.k_norm), offset=block_at)
        bv = self._heads(self.v_proj(x), self.kv_heads)
        keys, values = cache.update_and_fetch(ck, cv)
        keys = mx.concatenate([keys, bk], axis=2)
        values = mx.concatenate([values, bv], axis=2)
        out = mx.fast.scaled_dot_product_attention(q, keys, values, scale=self.scale, mask=None)
        return self.o_proj(out.transpose(0, 2, 1, 3).reshape(1, x.shape[1], -1))


class MLP(nn.Module):
    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.gate_proj = nn.Linear(dim, hidden, bias=False)
        self.up_proj = nn.Linear(dim, hidden, bias=False)
        self.down_proj = nn.Linear(hidden, dim, bias=False)

    def __call__(self, x: mx.array) -> mx.array:
        return self.down_proj(nn.silu(self.gate_proj(x)) * self.up_proj(x))


class Layer(nn.Module):
    def __init__(self, cfg: DFlashConfig):
        super().__init__()
        self.self_attn = Attention(cfg)
        self.mlp = MLP(cfg.hidden_size, cfg.intermediate_size)
        self.input_layernorm = nn.RMSNorm(cfg.hidden_size, eps=cfg.rms_norm_eps)
        self.post_attention_layernorm = nn.RMSNorm(cfg.hidden_size, eps=cfg.rms_norm_eps)

    def __call__(self, x: mx.array, context: mx.array, rope, cache) -> mx.array:
        h = x + self.self_attn(self.input_layernorm(x), context, rope, cache)
        return h + self.mlp(self.post_attention_layernorm(h))


class DFlashModel(nn.Module):
    """The drafter's own weights; embeddings and head are the target's (`bind`)."""

    def __init__(self, cfg: DFlashConfig):
        super().__init__()
        self.cfg = cfg
        self.fc = nn.Linear(
            len(cfg.target_layer_ids) * cfg.hidden_size, cfg.hidden_size, bias=False
        )
        self.hidden_norm = nn.RMSNorm(cfg.hidden_size, eps=cfg.rms_norm_eps)
        self.layers = [Layer(cfg) for _ in range(cfg.num_hidden_layers)]
        self.norm = nn.RMSNorm(cfg.hidden_size, eps=cfg.rms_norm_eps)
        self.rope = initialize_rope(
            cfg.head_dim,
            cfg.rope_theta,
            False,
            cfg.rope_scaling,
            cfg.max_position_embeddings,
        )

    def __call__(self, block: mx.array, features: mx.array, cache: list, embed, head) -> mx.array:
        """Logits for the block's positions after the first, given new context `features`."""
        h = embed(block)
        context = self.hidden_norm(self.fc(features))
        for layer, c in zip(self.layers, cache, strict=True):
            h = layer(h, context, self.rope, c)
        return head(self.norm(h[:, 1:]))


def load_dflash(path: str | Path) -> DFlashModel:
    """A DFlash drafter in the published format (config.json + safetensors).

    A directory, or a hub repo such as speakleash/Bielik-11B-v3.0-DFlash (downloaded once by
    mlx-lm's loader).
    """
    from decoder.backends.files import ModelLoadError
    from decoder.compat.mlx_lm import download

    local = Path(path).expanduser()
    path = local if local.exists() else download(str(path))  # a hub repo: its json + safetensors
    cfg = DFlashConfig.read(path)
    files = sorted(path.glob("*.safetensors"))
    if not files:
        raise ModelLoadError(f"{path}: no safetensors weights")
    weights = {k: v for f in files for k, v in mx.load(str(f)).items()}
    model = DFlashModel(cfg)
    try:
        model.load_weights(list(weights.items()))
    except ValueError as error:
        raise ModelLoadError(f"{path}: weights do not fit the config: {error}") from None
    mx.eval(model.parameters())
    return model


def bind(target_model) -> tuple:
    """(embed, head): the target's token embeddings and output head, as DFlash shares them."""
    language = getattr(target_model, "language_model", target_model)
    inner = next(
        m
        for m in (target_model, getattr(target_model, "model", None), language.model)
        if m is not None and hasattr(m, "embed_tokens")
    )
    table = inner.embed_tokens
    head = getattr(target_model, "lm_head", None) or getattr(language, "lm_head", None)
    return table, head or table.as_linear


class DFlashDrafter:
    """Drafts a block per cycle from the target's hidden states (MLX targets only).

    Its cache holds the context's keys and values per target position, keyed by the target ids
    they came from: each cycle it keeps the common prefix with what the target holds and feeds
    the hidden states of the rest (those of the last verification's accepted positions).
    """

    name = "dflash"

    def __init__(self, model: DFlashModel, target):
        if not hasattr(target, "capture"):
            raise ConfigError(
                "the dflash drafter runs on MLX targets (--backend mlx); llama-server drafts with "
                "DFlash itself (--spec-type draft-dflash, docs/deploy.md)"
            )
        cfg = model.cfg
        layers = getattr(target.model, "layers", None)
        if layers is not None and len(layers) != cfg.num_target_layers:
            raise ConfigError(
                f"this DFlash drafter was made for a target of {cfg.num_target_layers} layers; "
                f"the target has {len(layers)}"
            )
        self.model, self.target, self.cfg = model, target, cfg
        self.embed, self.head = bind(target.model)
        self.cache = [KVCache() for _ in model.layers]
        self.ids: list[int] = []  # target ids whose hidden states are in self.cache
        self.pass_seconds: float | None = None  # one drafter pass, measured on first use
        target.capture(cfg.target_layer_ids)

    def offer(self, market: Market) -> Offer | None:
        """One pass per cycle whatever k: a fixed cost, measured, beside the target's t(k+1)."""
        if market.prose:
            return None
        ratio = self.pass_cost() / market.costs.step_seconds
        expected = market.estimate((self.name, 0), MODEL_PRIOR).expected_tokens
        best = (0, 1.0)
        for k in range(1, min(market.k_max, self.cfg.block_size - 1) + 1):
            speedup = expected(k) / (market.costs.verify_ratio(k + 1) + ratio)
            best = max(best, (k, speedup), key=lambda kv: kv[1])
        return Offer(best[1], best[0], (self.name, 0))

    def pass_cost(self) -> float:
        """Seconds of one drafter pass over a full block, measured once (best of two)."""
        if self.pass_seconds is None:
            cfg = self.cfg
            width = len(cfg.target_layer_ids) * cfg.hidden_size
            block = mx.array([[cfg.mask_token_id] * cfg.block_size])
            times = []
            for _ in range(3):
                cache = [KVCache() for _ in self.model.layers]
                start = time.perf_counter()
                mx.eval(self.model(block, mx.zeros((1, 8, width)), cache, self.embed, self.head))
                times.append(time.perf_counter() - start)
            self.pass_seconds = min(times[1:])
        return self.pass_seconds

    def propose(self, ctx: Context, k: int, sampling: Sampling, keys: Keys) -> Draft:
        held = self.target.ids
        if k <= 0 or held != ctx.ids[: len(held)] or len(held) != len(ctx.ids) - 1:
            return NO_DRAFT  # the target does not hold the context up to its last id
        keep = common_prefix(self.ids, held)
        if keep < len(self.ids):
            for c in self.cache:
                c.trim(c.offset - keep)
        features = self.target.hidden(keep)[None]
        size = min(k, self.cfg.block_size - 1) + 1
        block = mx.array([[ctx.ids[-1]] + [self.cfg.mask_token_id] * (size - 1)])
        logits = self.model(block, features, self.cache, self.embed, self.head)[0]
        self.ids = list(held)
        rows = np.array(logits.astype(mx.float32))[:, : len(self.target.table)]
        if sampling.greedy:
            ids = rows.argmax(axis=-1).tolist()
            probs = None
        else:
            probs = probabilities(rows, sampling)
            ids = [int(choose(row[None], sampling, keys.next())[0]) for row in rows]
        return Draft(ids, probs, passes=1)


def write_random(
    path: str | Path,
    target_model,
    *,
    layers: int = 1,
    block_size: int = 16,
    target_layer_ids: tuple[int, ...] | None = None,
    mask_token_id: int | None = None,
    seed: int = 0,
) -> Path:
    """A randomly initialised DFlash drafter for `target_model` (an mlx-lm model).

    Written in the published format: config.json with dflash_config, and model.safetensors.
    Its drafts are noise, so it tests the plumbing and exactness, never speed or acceptance.
    """
    from decoder.compat.mlx_lm import decoder_layers

    table, _ = bind(target_model)
    vocab, hidden = table.weight.shape
    depth = len(decoder_layers(target_model))
    ids = target_layer_ids or tuple(sorted({1, depth // 2, depth - 2}))
    heads = max(1, hidden // 128)
    config = {
        "architectures": ["DFlashDraftModel"],
        "model_type": "qwen3",
        "hidden_size": hidden,
        "num_hidden_layers": layers,
        "num_attention_heads": heads,
        "num_key_value_heads": 1,
        "head_dim": hidden // heads,
        "intermediate_size": 2 * hidden,
        "vocab_size": vocab,
        "rms_norm_eps": 1e-6,
        "rope_theta": 1000000.0,
        "max_position_embeddings": 32768,
        "num_target_layers": depth,
        "dflash_config": {
            "target_layer_ids": list(ids),
            "mask_token_id": vocab - 1 if mask_token_id is None else mask_token_id,
            "block_size": block_size,
        },
    }
    mx.random.seed(seed)
    model = DFlashModel(DFlashConfig.read_dict(config))
    weights = {
        name: (
            mx.ones(w.shape) if name.endswith("norm.weight") else 0.02 * mx.random.normal(w.shape)
        )
        for name, w in _flat(model.parameters())
    }
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    (path / "config.json").write_text(json.dumps(config, indent=1), encoding="utf-8")
    mx.save_safetensors(str(path / "model.safetensors"), weights)
    return path


def _flat(tree) -> list[tuple[str, mx.array]]:
    from mlx.utils import tree_flatten

    return tree_flatten(tree)
