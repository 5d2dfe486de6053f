"""Turn a user's model spec into a loaded mlx-lm model and its tokenizer."""

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from decoder.backends.embedded import embedded_gguf
from decoder.backends.files import DTYPES, ModelLoadError
from decoder.backends.gguf import convert_gguf
from decoder.errors import one_line

if TYPE_CHECKING:
    import mlx.nn as nn
    from mlx_lm.tokenizer_utils import TokenizerWrapper

EMBEDDED_PREFIX = "embedded:"
HUB_REPO = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")


@dataclass
class Model:
    spec: str
    model: "nn.Module"
    tokenizer: "TokenizerWrapper"
    path: Path
    source: str  # "embedded" | "hub" | "dir" | "gguf"


def load_model(spec: str, *, dtype: str | None = None, progress: bool = True) -> Model:
    """Load `embedded:<name>`, a .gguf file, a model directory or a Hugging Face repo id."""
    if dtype is not None and dtype not in DTYPES:
        raise ModelLoadError(f"unsupported dtype {dtype!r}; use one of {', '.join(DTYPES)}")
    path, source = resolve(spec, dtype=dtype, progress=progress)
    model, tokenizer = _load_dir(path, spec)
    if dtype is not None:
        import mlx.core as mx

        model.set_dtype(getattr(mx, dtype))  # casts floating parameters only
    _check_tokenizer_fits(model, tokenizer, spec)
    return Model(spec=spec, model=model, tokenizer=tokenizer, path=path, source=source)


def resolve(spec: str, *, dtype: str | None = None, progress: bool = True) -> tuple[Path, str]:
    """(local MLX/HF directory, source kind) for a spec, converting or downloading as needed."""
    if spec.startswith(EMBEDDED_PREFIX):
        gguf_path = embedded_gguf(spec[len(EMBEDDED_PREFIX) :])
        return convert_gguf(gguf_path, dtype=dtype or "float32", progress=progress), "embedded"
    path = Path(spec).expanduser()
    if path.suffix.lower() == ".gguf":
        return convert_gguf(path, dtype=dtype or "float32", progress=progress), "gguf"
    if path.is_dir():
        return path, "dir"
    if path.exists():
        raise ModelLoadError(f"{spec} is neither a .gguf file nor a model directory")
    if HUB_REPO.fullmatch(spec):
        return _download(spec), "hub"
    raise ModelLoadError(
        f"unknown model {spec!r}: give embedded:gemma-3-270m, embedded:smollm2-135m, "
        "a .gguf file, a model directory or a Hugging Face repo id (owner/name)"
    )


def _download(repo: str) -> Path:
    """Local snapshot of a hub repo, through mlx-lm's own downloader (hub's default timeouts)."""
    from decoder.compat.mlx_lm import download

    try:
        return download(repo)
    except Exception as error:  # network, auth and not-found errors all end the same way
        raise ModelLoadError(
            f"{repo!r} is no local path and cannot be fetched from the Hugging Face hub: "
            f"{one_line(error)}"
        ) from None


def _load_dir(path: Path, spec: str):
    """mlx-lm's loader on a local directory, its many failure types turned into ModelLoadError."""
    from mlx_lm.utils import load

    if not (path / "config.json").is_file():
        raise ModelLoadError(f"{spec}: no config.json in {path}; not a model directory")
    try:
        return load(str(path))
    except Exception as error:  # missing weights, unknown model type, bad json, broken tokenizer...
        raise ModelLoadError(f"cannot load model {spec} from {path}: {one_line(error)}") from None


def _check_tokenizer_fits(model: "nn.Module", tokenizer: "TokenizerWrapper", spec: str) -> None:
    """Token ids past the embedding table would crash or read garbage mid-completion: refuse."""
    import mlx.nn as nn

    tokens = max(tokenizer.get_vocab().values()) + 1
    embeddings = [
        m for _, m in model.named_modules() if isinstance(m, (nn.Embedding, nn.QuantizedEmbedding))
    ]
    if not embeddings:
        return
    rows = max(m.weight.shape[0] for m in embeddings)  # the token table, not e.g. GPT-2's positions
    if tokens > rows:
        raise ModelLoadError(
            f"tokenizer of {spec} has {tokens} tokens but model {spec} embeds {rows}"
        )
