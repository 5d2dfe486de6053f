"""Convert a GGUF file once into an mlx-lm model directory, cached by the file's sha256.

MLX's own GGUF reader (mx.load) cannot read K-quants such as Q4_K, and mlx-lm's gguf.py only
writes GGUF, so weights are dequantized with the `gguf` package and saved as safetensors.
"""

import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from decoder.backends.files import DTYPES, ModelLoadError, cache_root, file_sha256
from decoder.errors import one_line

# Bump when the output of a conversion changes, so that stale cached directories are not reused.
CONVERTER_VERSION = 1
MODEL_TYPES = {"llama": "llama", "qwen2": "qwen2", "gemma3": "gemma3_text"}
STALE_TEMP_SECONDS = 3600


def converted_dir(gguf_path: Path, dtype: str = "float32") -> Path:
    """The cache directory a conversion of this file with this dtype goes to."""
    return cache_root() / "mlx" / f"{file_sha256(gguf_path)[:24]}-v{CONVERTER_VERSION}-{dtype}"


def convert_gguf(gguf_path: Path, *, dtype: str = "float32", progress: bool = True) -> Path:
    """MLX directory for a GGUF file, converting it on first use only.

    float32 by default: Gemma-3-270M in float16 drifts from the reference output.
    """
    gguf_path = Path(gguf_path)
    if not gguf_path.is_file():
        raise ModelLoadError(f"GGUF file not found: {gguf_path}")
    if dtype not in DTYPES:
        raise ModelLoadError(f"unsupported dtype {dtype!r}; use one of {', '.join(DTYPES)}")
    out = converted_dir(gguf_path, dtype)
    if out.is_dir():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_temps(out)
    # Built in a temp dir and renamed: a killed conversion never leaves a half directory at `out`.
    temp = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    temp.chmod(0o755)  # mkdtemp makes it private; the cache is an ordinary directory
    try:
        _convert(gguf_path, temp, dtype, progress)
        try:
            temp.rename(out)
        except OSError:
            if not out.is_dir():  # else another process finished the same conversion first
                raise
    finally:
        shutil.rmtree(temp, ignore_errors=True)
    return out


def _convert(gguf_path: Path, out: Path, dtype: str, progress: bool) -> None:
    """Write config.json, model.safetensors and the tokenizer files for one GGUF into `out`."""
    import mlx.core as mx
    from gguf.quants import dequantize
    from mlx.utils import tree_flatten
    from mlx_lm.utils import save_config, save_model
    from tqdm import tqdm

    from decoder.compat.mlx_lm import model_classes

    bar = tqdm(
        desc=f"converting {gguf_path.name}", unit="tensor", file=sys.stderr, disable=not progress
    )
    with bar:
        bar.set_postfix_str("reading header")
        reader = read_gguf(gguf_path)
        config = gguf_config(reader, gguf_path.name)
        model_class, args_class = model_classes(config)
        # Parameters stay lazy: nothing is allocated.
        model = model_class(args_class.from_dict(config))
        names = _hf_names(config, reader, [name for name, _ in tree_flatten(model.parameters())])
        bar.reset(total=len(reader.tensors) + 1)
        bar.set_postfix_str("weights")
        weights = {}
        for tensor in reader.tensors:
            if tensor.name not in names:
                raise ModelLoadError(
                    f"{gguf_path.name}: tensor {tensor.name} has no place in mlx-lm's "
                    f"{config['model_type']} model; this file's layout is not supported"
                )
            array = dequantize(tensor.data, tensor.tensor_type)
            array = array.reshape(tuple(reversed(tensor.shape.tolist()))).astype(np.float32)
            array = _fix_tensor(config, tensor.name, array)
            weights[names[tensor.name]] = mx.array(array).astype(getattr(mx, dtype))
            bar.update()
        weights = model.sanitize(weights)
        try:
            model.load_weights(list(weights.items()), strict=True)
        except ValueError as error:
            raise ModelLoadError(
                f"{gguf_path.name}: weights do not fit the model: {error}"
            ) from None
        save_model(out, model, donate_model=True)
        save_config(config, out / "config.json")
        bar.set_postfix_str("tokenizer")
        gguf_tokenizer(reader).save_pretrained(out)
        bar.update()


def read_gguf(gguf_path: Path):
    """GGUFReader over the file, with truncation and corruption reported as ModelLoadError."""
    from gguf import GGUFReader

    try:
        return GGUFReader(gguf_path)
    except Exception as error:  # a damaged file fails in many ways (bad magic, short data)
        raise ModelLoadError(
            f"{gguf_path} is not a readable GGUF file (truncated or corrupt?): {one_line(error)}"
        ) from None


def _field(reader, key: str, default=None):
    field = reader.fields.get(key)
    return default if field is None else field.contents()


def gguf_config(reader, name: str) -> dict:
    """mlx-lm config.json contents from GGUF metadata (transformers' own mapping needs torch)."""
    arch = _field(reader, "general.architecture")
    if arch not in MODEL_TYPES:
        raise ModelLoadError(
            f"{name}: architecture {arch!r} is not supported (supported: {', '.join(MODEL_TYPES)})"
        )
    tensors = {t.name: t for t in reader.tensors}
    if "token_embd.weight" not in tensors:
        raise ModelLoadError(f"{name}: no token_embd.weight tensor")
    if "rope_freqs.weight" in tensors:
        raise ModelLoadError(
            f"{name}: per-frequency RoPE scaling (rope_freqs, Llama 3.1) is not supported"
        )

    def key(suffix: str, default=None):
        value = _field(reader, f"{arch}.{suffix}", default)
        if value is None:
            raise ModelLoadError(f"{name}: GGUF metadata lacks {arch}.{suffix}")
        return value

    hidden, heads, layers = key("embedding_length"), key("attention.head_count"), key("block_count")
    head_dim = key("attention.key_length", hidden // heads)
    config = {
        "model_type": MODEL_TYPES[arch],
        "hidden_size": hidden,
        "num_hidden_layers": layers,
        "intermediate_size": key("feed_forward_length"),
        "num_attention_heads": heads,
        "num_key_value_heads": key("attention.head_count_kv", heads),
        "head_dim": head_dim,
        "rms_norm_eps": key("attention.layer_norm_rms_epsilon"),
        "max_position_embeddings": key("context_length"),
        "rope_theta": key("rope.freq_base", 10000.0),
        "vocab_size": int(tensors["token_embd.weight"].shape[-1]),
        # llama.cpp writes output.weight only when it is not the embedding matrix
        "tie_word_embeddings": "output.weight" not in tensors,
        "bos_token_id": _field(reader, "tokenizer.ggml.bos_token_id"),
        "eos_token_id": _field(reader, "tokenizer.ggml.eos_token_id"),
    }
    scaling = key("rope.scaling.type", "none")
    if scaling == "linear":
        config["rope_scaling"] = {"type": "linear", "factor": key("rope.scaling.factor")}
    elif scaling != "none":
        raise ModelLoadError(f"{name}: RoPE scaling {scaling!r} is not supported")
    if arch == "gemma3":
        # Gemma-3 values llama.cpp hardcodes instead of storing them in the file.
        config |= {
            "sliding_window": key("attention.sliding_window", 512),
            "sliding_window_pattern": 6,
            "rope_local_base_freq": 10000.0,
            # llama.cpp scales queries by head_dim, except for the 27B model (62 layers)
            "query_pre_attn_scalar": hidden // heads if layers == 62 else head_dim,
        }
    return config


def _hf_names(config: dict, reader, model_names: list[str]) -> dict[str, str]:
    """GGUF tensor name -> mlx-lm parameter name, through gguf-py's own name table."""
    from gguf import MODEL_ARCH_NAMES, get_tensor_name_map

    arch = {v: k for k, v in MODEL_ARCH_NAMES.items()}[_field(reader, "general.architecture")]
    table = get_tensor_name_map(arch, config["num_hidden_layers"])
    names = {}
    for hf_name in model_names:
        base, _, suffix = hf_name.rpartition(".")
        gguf_base = table.get_name(base)
        if gguf_base is not None:
            names[f"{gguf_base}.{suffix}"] = hf_name
    return names


def _fix_tensor(config: dict, name: str, array: np.ndarray) -> np.ndarray:
    """Undo what llama.cpp's converter did to a tensor on its way into the GGUF."""
    if config["model_type"] == "llama" and (".attn_q." in name or ".attn_k." in name):
        heads = (
            config["num_attention_heads"] if ".attn_q." in name else config["num_key_value_heads"]
        )
        # llama.cpp permutes q/k rows for its rotary layout; the inverse of its permute():
        return array.reshape(heads, -1, 2, *array.shape[1:]).swapaxes(1, 2).reshape(array.shape)
    if config["model_type"] == "gemma3_text" and name.endswith("norm.weight"):
        return array - 1.0  # stored as 1+w; mlx-lm's Gemma RMSNorm computes x * (1 + w)
    return array


def gguf_tokenizer(reader):
    """HF fast tokenizer from GGUF metadata, built by transformers' GGUF converter.

    transformers' get_gguf_tokenizer does the same but reads the file with a reader that imports
    torch, which is not a dependency here, so its field mapping is replayed over GGUFReader.
    """
    from transformers import PreTrainedTokenizerFast

    from decoder.compat.transformers import convert_gguf_tokenizer, gguf_tokenizer_mapping

    groups = {
        group: {
            name: _field(reader, f"tokenizer.{key}")
            for key, name in renames.items()
            if f"tokenizer.{key}" in reader.fields
        }
        for group, renames in gguf_tokenizer_mapping().items()
    }
    tokenizer_dict, tokenizer_config = groups["tokenizer"], groups["tokenizer_config"]
    if "tokens" not in tokenizer_dict:
        raise ModelLoadError("GGUF file carries no tokenizer (tokenizer.ggml.tokens missing)")
    if tokenizer_dict.get("tokenizer_type") == "llama":
        # llama.cpp's default for SentencePiece files.
        tokenizer_config.setdefault("add_bos_token", True)
    specials = {
        "bos_token": "bos",
        "eos_token": "eos",
        "unk_token": "unknown",
        "pad_token": "padding",
    }
    for name, key in specials.items():
        token_id = _field(reader, f"tokenizer.ggml.{key}_token_id")
        tokenizer_config[name] = (
            tokenizer_dict["tokens"][token_id] if token_id is not None else None
        )
    try:
        backend, extra = convert_gguf_tokenizer(
            _field(reader, "general.architecture"), tokenizer_dict
        )
    except ValueError as error:
        raise ModelLoadError(f"cannot build a tokenizer from this GGUF: {error}") from None
    return PreTrainedTokenizerFast(tokenizer_object=backend, **tokenizer_config, **extra)


def _remove_stale_temps(out: Path) -> None:
    """Delete temp dirs that killed conversions of `out` left behind (a live one takes minutes)."""
    for temp in out.parent.glob(f".{out.name}-*"):
        if time.time() - temp.stat().st_mtime > STALE_TEMP_SECONDS:
            shutil.rmtree(temp, ignore_errors=True)
