"""The engines a model can run on in this process, one entry each.

An entry says which module implements the backend (imported only when a model loads there,
since it imports its inference library), which library that needs, the backend's presets and
how to install it. The module provides:

- `load(spec, settings, progress) -> Model`: a model spec loaded as a Backend;
- `doctor(settings) -> list[str]`: what `bielik-lsp doctor` prints about the library;
- `peers(backend) -> list[(name, generate)]`: the library's own generation on the same model,
  which `bielik-lsp bench` times beside ours;
- optionally `outlook(settings) -> exactness.Outlook`: whether speculation will be exact here,
  judged from the build before any model loads (`doctor`; unknown where not given);
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
# The Bielik v3 family as published (README "Which Bielik for which machine" gives the source of
# each name). The small v3 models use the Polish APT4 tokenizer; the 1.5B drafts for them with
# the same tokenizer, and for the PL models with it too if their Polish vocabulary is APT4's
# (not verified: the model drafter compares the token tables at load and drafts through text
# where they differ). DFlash drafters are published for the 11B-v3.0 and the Minitron-7B-v3.0
# (Mistral tokenizer); none for the PL models, whose vocabulary differs.
APT4_DRAFTER_MLX = "speakleash/Bielik-1.5B-v3.0-Instruct-MLX-8bit"
APT4_DRAFTER_GGUF = "speakleash/Bielik-1.5B-v3.0-Instruct-GGUF:Bielik-1.5B-v3.0-Instruct.Q8_0.gguf"
SMALL_GGUF = "speakleash/Bielik-4.5B-v3.0-Instruct-GGUF:Bielik-4.5B-v3.0-Instruct.Q8_0.gguf"
MINITRON_GGUF = (
    "speakleash/Bielik-Minitron-7B-v3.0-Instruct-GGUF:Bielik-Minitron-7B-v3.0-Instruct.Q4_K_M.gguf"
)


@dataclass(frozen=True)
class Family:
    """What a Bielik preset's models are: their tokenizer, and how each backend drafts for them."""

    model: str
    tokenizer: str
    drafters: dict[str, str]  # backend -> the drafter its preset gives, and its kind


MISTRAL = "Mistral-based SentencePiece, 32,128 entries"
POLISH = "Polish, 32,000 entries (APT4 per a third-party study; unconfirmed)"
APT4 = "Polish APT4"
CROSS = "cross-tokenizer model (Qwen2.5-1.5B, through text)"
SAME_OR_CROSS = "Bielik-1.5B-v3.0 (APT4): same tokenizer if the tables match at load, else cross"
FAMILY: dict[str, Family] = {
    "bielik": Family(
        "Bielik-11B-v3.0-Instruct",
        MISTRAL,
        {"mlx": "dflash (speakleash/Bielik-11B-v3.0-DFlash)", "llamacpp": CROSS, "openvino": CROSS},
    ),
    "bielik-qwen": Family(
        "Bielik-11B-v3.0-Instruct", MISTRAL, {"mlx": CROSS, "llamacpp": CROSS, "openvino": CROSS}
    ),
    "bielik-v2.3": Family(
        "Bielik-11B-v2.3-Instruct", MISTRAL, {"llamacpp": CROSS, "openvino": CROSS}
    ),
    "bielik-pl": Family("Bielik-PL-11B-v3.0-Instruct", POLISH, {"mlx": SAME_OR_CROSS}),
    "bielik-minitron": Family(
        "Bielik-Minitron-7B-v3.0-Instruct",
        MISTRAL,
        {"mlx": "dflash (speakleash/Bielik-Minitron-7B-v3.0-DFlash)", "llamacpp": CROSS},
    ),
    "bielik-pl-minitron": Family(
        "Bielik-PL-Minitron-7B-v3.0-Instruct", POLISH, {"mlx": SAME_OR_CROSS}
    ),
    "bielik-4.5b": Family(
        "Bielik-4.5B-v3.0-Instruct",
        APT4,
        {
            "mlx": "Bielik-1.5B-v3.0 (APT4): same tokenizer",
            "llamacpp": "Bielik-1.5B-v3.0 (APT4): same tokenizer",
        },
    ),
}
# Intel devices (OpenVINO) run a GGUF through OpenVINO GenAI's reader, which takes Q4_K_M of a
# llama-architecture model whose rows are multiples of 256 (Q4_K and Q6_K tensors only): Bielik
# 11B's and Qwen2.5-1.5B's are. speakleash's own OpenVINO IR (int4, AWQ) exists for v2.3.
BIELIK_OV_IR = "speakleash/Bielik-11B-v2.3-Instruct-4bit-ov"
DEVICES = ("CPU", "GPU", "NPU", "AUTO")  # the `device` setting (OpenVINO)


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
            install="the full bielik-lsp package has it (bielik-lsp-remote does not)",
            # Where SpeakLeash publishes a DFlash drafter it drafts (decoder/drafting/dflash.py);
            # the Polish-tokenizer models draft with the 1.5B; `bielik-qwen` keeps the
            # multilingual Qwen2.5-1.5B. No MLX conversion is published for the PL models, the
            # Minitron or the 4.5B: mlx-lm loads their safetensors as published.
            presets={
                "bielik": {
                    "target": "speakleash/Bielik-11B-v3.0-Instruct-MLX-8bit",
                    "drafter_model": "speakleash/Bielik-11B-v3.0-DFlash",
                },
                "bielik-qwen": {
                    "target": "speakleash/Bielik-11B-v3.0-Instruct-MLX-8bit",
                    "drafter_model": "mlx-community/Qwen2.5-1.5B-Instruct-4bit",
                },
                "bielik-pl": {
                    "target": "speakleash/Bielik-PL-11B-v3.0-Instruct",
                    "drafter_model": APT4_DRAFTER_MLX,
                },
                "bielik-minitron": {
                    "target": "speakleash/Bielik-Minitron-7B-v3.0-Instruct",
                    "drafter_model": "speakleash/Bielik-Minitron-7B-v3.0-DFlash",
                },
                "bielik-pl-minitron": {
                    "target": "speakleash/Bielik-PL-Minitron-7B-v3.0-Instruct",
                    "drafter_model": APT4_DRAFTER_MLX,
                },
                "bielik-4.5b": {
                    "target": "speakleash/Bielik-4.5B-v3.0-Instruct",
                    "drafter_model": APT4_DRAFTER_MLX,
                },
            },
        ),
        BackendKind(
            "llamacpp",
            "llama.cpp (llama-cpp-python): GGUF files as shipped, on CPU, CUDA, Metal or Vulkan",
            "decoder.backends.llamacpp",
            requires="llama_cpp",
            install="the full bielik-lsp package compiles it (bielik-lsp-remote does not)",
            presets={
                "bielik": {"target": BIELIK_GGUF, "drafter_model": QWEN_GGUF},
                "bielik-qwen": {"target": BIELIK_GGUF, "drafter_model": QWEN_GGUF},
                "bielik-v2.3": {
                    "target": "speakleash/Bielik-11B-v2.3-Instruct-GGUF:"
                    "Bielik-11B-v2.3-Instruct.Q4_K_M.gguf",
                    "drafter_model": QWEN_GGUF,
                },
                # No GGUF is published for the PL models (convert_hf_to_gguf.py makes one; then
                # --target FILE.gguf --drafter-model the 1.5B's).
                "bielik-minitron": {"target": MINITRON_GGUF, "drafter_model": QWEN_GGUF},
                "bielik-4.5b": {"target": SMALL_GGUF, "drafter_model": APT4_DRAFTER_GGUF},
            },
        ),
        BackendKind(
            "openvino",
            "OpenVINO (openvino-genai): Intel CPUs, GPUs (Arc, iGPU) and NPUs; a GGUF it reads "
            "(llama/qwen2/qwen3; Q4_0, Q4_1, Q8_0, Q4_K, Q6_K) or an OpenVINO IR directory",
            "decoder.backends.openvino",
            requires="openvino_genai",
            install="the openvino extra: uv tool install 'bielik-lsp[openvino]'",
            presets={
                "bielik": {"target": BIELIK_GGUF, "drafter_model": QWEN_GGUF},
                "bielik-qwen": {"target": BIELIK_GGUF, "drafter_model": QWEN_GGUF},
                "bielik-v2.3": {"target": BIELIK_OV_IR, "drafter_model": QWEN_GGUF},
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


def only_backend(preset: str) -> str | None:
    """The one installed backend that knows `preset`, if only one does."""
    where = [b for b, kind in BACKENDS.items() if preset in kind.presets and kind.available()]
    return where[0] if len(where) == 1 else None


def describe_family(name: str, backend: str) -> list[str]:
    """What preset `name` loads on `backend`: its models, tokenizer and drafter kind."""
    models = presets(backend).get(name)
    if models is None:
        where = [b for b in BACKENDS if name in presets(b)]
        return [f"preset {name} is not available on {backend} (it is on: {', '.join(where)})"]
    lines = [f"{key:<13} {value}" for key, value in models.items()]
    family = FAMILY.get(name)
    if family is not None:
        lines += [
            f"{'model':<13} {family.model}",
            f"{'tokenizer':<13} {family.tokenizer}",
            f"{'drafter kind':<13} {family.drafters.get(backend, 'none published')}",
        ]
    return lines


def preset_names() -> tuple[str, ...]:
    """Every preset some backend knows, in a stable order."""
    names = dict.fromkeys(COMMON_PRESETS)
    for kind in BACKENDS.values():
        names.update(dict.fromkeys(kind.presets))
    return tuple(names)
