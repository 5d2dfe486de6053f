"""The engines a model can run on in this process, one entry each.

An entry says which module implements the backend (imported only when a model loads there,
since it imports its inference library), which library that needs, the backend's presets and
how to install it. The module provides:

- `load(spec, settings, progress) -> Model`: a model spec loaded as a Backend;
- `doctor(settings) -> list[str]`: what `bielik-lsp doctor` prints about the library;
- `peers(backend) -> list[(name, generate)]`: the library's own generation on the same model,
  which `bielik-lsp bench` times beside ours;
- optionally `load_adapter(model, adapter)`: a tuned drafter LoRA (decoder/backends/adapters.py)
  applied to a loaded model.

Adding a backend is that module plus one entry in BACKENDS.
"""

from __future__ import annotations

import importlib
import importlib.util
import platform
from dataclasses import dataclass, field
from types import ModuleType

# Presets that mean the same on every backend: the models that install from PyPI (GGUF files,
# which MLX converts once and llama.cpp loads as shipped), and an inference server on this
# machine (llama-server and mlx_lm.server listen on 8080).
COMMON_PRESETS: dict[str, dict[str, str]] = {
    "embedded": {"target": "embedded:gemma-3-270m", "drafter_model": "embedded:smollm2-135m"},
    "server": {"target": "http://127.0.0.1:8080/v1"},
}
QWEN_GGUF = "Qwen/Qwen2.5-1.5B-Instruct-GGUF:qwen2.5-1.5b-instruct-q4_k_m.gguf"
BIELIK_GGUF = "speakleash/Bielik-11B-v3.0-Instruct-GGUF:Bielik-11B-v3.0-Instruct.Q4_K_M.gguf"


@dataclass(frozen=True)
class BackendKind:
    name: str
    doc: str
    module: str  # implements load, doctor and peers
    requires: str  # the library `module` imports
    install: str  # how a user gets that library
    presets: dict[str, dict[str, str]] = field(default_factory=dict)

    def available(self) -> bool:
        return importlib.util.find_spec(self.requires) is not None

    def implementation(self) -> ModuleType:
        return importlib.import_module(self.module)


BACKENDS: dict[str, BackendKind] = {
    kind.name: kind
    for kind in (
        BackendKind(
            "mlx",
            "MLX (mlx-lm): Apple silicon's GPU, or a CPU with OpenBLAS",
            "decoder.backends.mlx",
            requires="mlx",
            install="pip install 'mlx-lm>=0.32,<0.33' (./install.sh does it)",
            # Bielik's drafter on MLX is SpeakLeash's own 1.5B (Polish APT4 tokenizer, drafts
            # cross tokenizers); `bielik-qwen` keeps the multilingual Qwen2.5-1.5B.
            presets={
                "bielik": {
                    "target": "speakleash/Bielik-11B-v3.0-Instruct-MLX-8bit",
                    "drafter_model": "speakleash/Bielik-1.5B-v3.0-Instruct-MLX-8bit",
                },
                "bielik-qwen": {
                    "target": "speakleash/Bielik-11B-v3.0-Instruct-MLX-8bit",
                    "drafter_model": "mlx-community/Qwen2.5-1.5B-Instruct-4bit",
                },
            },
        ),
        BackendKind(
            "llamacpp",
            "llama.cpp (llama-cpp-python): GGUF files as shipped, on CPU, CUDA, Metal or Vulkan",
            "decoder.backends.llamacpp",
            requires="llama_cpp",
            install="./install.sh builds llama-cpp-python",
            presets={
                "bielik": {"target": BIELIK_GGUF, "drafter_model": QWEN_GGUF},
                "bielik-qwen": {"target": BIELIK_GGUF, "drafter_model": QWEN_GGUF},
                "bielik-v2.3": {
                    "target": "speakleash/Bielik-11B-v2.3-Instruct-GGUF:"
                    "Bielik-11B-v2.3-Instruct.Q4_K_M.gguf",
                    "drafter_model": QWEN_GGUF,
                },
            },
        ),
    )
}
PREFERRED = {"Darwin": ("mlx", "llamacpp")}  # elsewhere: llama.cpp, then MLX


def resolve(name: str) -> str:
    """`auto`: MLX on macOS (Metal), llama.cpp elsewhere (Linux, Windows), where installed."""
    if name != "auto":
        return name
    preferred = PREFERRED.get(platform.system(), ("llamacpp", "mlx"))
    return next((n for n in preferred if BACKENDS[n].available()), preferred[0])


def presets(backend: str) -> dict[str, dict[str, str]]:
    """The presets a backend knows: the common ones and its own."""
    return {**COMMON_PRESETS, **BACKENDS[backend].presets}


def describe_preset(name: str) -> str:
    """What a preset loads on each backend that knows it, in one line."""
    where = {}
    for backend in BACKENDS:
        models = presets(backend).get(name)
        if models is not None:
            where.setdefault(" + ".join(models.values()), []).append(backend)
    return "; ".join(f"{models} ({', '.join(b)})" for models, b in where.items())


def preset_names() -> tuple[str, ...]:
    """Every preset some backend knows, in a stable order."""
    names = dict.fromkeys(COMMON_PRESETS)
    for kind in BACKENDS.values():
        names.update(dict.fromkeys(kind.presets))
    return tuple(names)
