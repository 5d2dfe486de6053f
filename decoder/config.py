"""The engine's settings, shared by the CLI and the language server: models, drafter, budgets.

Read from a TOML file (`--config`, `$BIELIK_LSP_CONFIG`, or ~/.config/bielik-lsp/config.toml),
then overridden by command-line flags or LSP settings. Each field is declared once here
(decoder/schema.py); the CLI, the server and the editors derive theirs from it.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, replace
from pathlib import Path

from decoder.backends import registry as backends
from decoder.backends.exactness import PASSES
from decoder.drafting import registry as drafters
from decoder.drafting.drafter import TRANSLATION_DOCS, TRANSLATIONS
from decoder.sampling import Sampling
from decoder.schema import ConfigError, Entry, entries, setting, validate

__all__ = ["ConfigError", "Settings", "is_remote", "load_settings", "SCHEMA"]
REMOTE_SCHEMES = ("http://", "https://")


def backend_choices() -> tuple[str, ...]:
    return ("auto", *backends.BACKENDS)


def is_remote(spec: str) -> bool:
    """Whether a target names an inference server (an http(s) URL) rather than a model."""
    return spec.startswith(REMOTE_SCHEMES)


def _reconnects(old: Settings, new: Settings) -> bool:
    return is_remote(new.target)


def _drafter_loads(old: Settings, new: Settings) -> bool:
    """A drafter that needs the drafter model when the old one did not: load it."""
    return drafters.needs_model(new.drafter) and not drafters.needs_model(old.drafter)


def _drafter_model_loads(old: Settings, new: Settings) -> bool:
    return drafters.needs_model(new.drafter)


_EMBEDDED = backends.COMMON_PRESETS["embedded"]
MODEL_FORMS = "a Hugging Face repo id, an MLX/HF directory, a .gguf file or embedded:NAME"


@dataclass(frozen=True)
class Settings:
    """The engine's defaults table: every setting the decoder reads, named for what it does."""

    preset: str | None = setting(
        None,
        "model preset: sets target and drafter_model for the backend in use",
        choices=backends.preset_names,
        choice_docs=lambda: tuple(map(backends.describe_preset, backends.preset_names())),
        cli="global",
        restricted=True,
    )
    target: str = setting(
        _EMBEDDED["target"],
        f"target model: {MODEL_FORMS}, or an inference server's URL (http://HOST:PORT/v1)",
        reload=True,
        cli="global",
        restricted=True,
    )
    drafter_model: str = setting(
        _EMBEDDED["drafter_model"],
        f"drafter model for the model and cascade drafters: {MODEL_FORMS}; for the dflash "
        "drafter, a DFlash drafter directory",
        reload=_drafter_model_loads,
        cli="global",
        restricted=True,
    )
    drafter_adapter: str | None = setting(
        None,
        "a drafter tuned to the target (and your documents): the folder `bielik-lsp "
        "tune-drafter --out DIR` wrote; the drafter model runs with its LoRA on every engine "
        "(unset: the drafter as published)",
        reload=_drafter_model_loads,
        cli="global",
        restricted=True,
    )
    drafter: str = setting(
        "auto",
        "which drafter proposes tokens: auto lets the policy choose per cycle, none decodes "
        "plain, the others are fixed",
        choices=drafters.modes,
        choice_docs=drafters.mode_docs,
        reload=_drafter_loads,
        cli="continue",
    )
    k: int = setting(
        16,
        "draft length in target tokens (the upper bound for auto, which drafts long only where "
        "the text is being copied)",
        minimum=0,
        maximum=64,
        cli="continue",
    )
    max_tokens: int = setting(
        64, "tokens to generate (`continue`)", minimum=1, cli="continue", clients=False
    )
    temperature: float = setting(
        0.0, "sampling temperature; 0 is greedy", minimum=0, cli="continue"
    )
    top_p: float = setting(1.0, "nucleus sampling threshold", minimum=0, maximum=1, cli="continue")
    seed: int | None = setting(None, "random seed for sampling (unset: random)", cli="continue")
    dtype: str | None = setting(
        None, "cast loaded MLX weights, e.g. float32 (unset: the file's)", reload=True, cli="global"
    )
    translation: str = setting(
        "anchored",
        "how a drafter model with another tokenizer hands its drafts to the target",
        choices=TRANSLATIONS,
        choice_docs=tuple(TRANSLATION_DOCS.values()),
        cli="continue",
    )
    remote_model: str | None = setting(
        None, 'the "model" an inference server should use (unset: its default)', cli="global"
    )
    api_key_file: str | None = setting(
        None,
        "file holding the inference server's API key (unset: $BIELIK_LSP_API_KEY)",
        reload=_reconnects,
        cli="global",
    )
    connect_timeout_s: float = setting(
        3.0,
        "seconds to wait for an inference server to accept a connection",
        minimum=0.001,
        reload=_reconnects,
    )
    read_timeout_s: float = setting(
        60.0,
        "longest silence from an inference server mid-request, in seconds",
        minimum=0.001,
        reload=_reconnects,
    )
    tls_verify: bool = setting(
        True, "verify an https inference server's certificate", reload=_reconnects
    )
    backend: str = setting(
        "auto",
        "inference engine: auto is MLX on macOS, llama.cpp on Linux and Windows",
        choices=backend_choices,
        reload=True,
        cli="global",
    )
    exact: bool = setting(
        True,
        "speculative output equals plain greedy output bit for bit: kernels chosen for it and "
        "measured at load (false: the fastest kernels, drafts verified as llama-server does)",
        reload=True,
        cli="global",
    )
    exact_passes: str = setting(
        "auto",
        "MLX with exact on: how passes are made to give one-token logits. padded: every pass, "
        "one-token steps included, is 16 tokens wide, so every step multiplies the same shapes "
        "(exact on any BLAS, but a plain step costs a wide one); native: the kernels as they "
        "are, passes split to the widest width measured exact; auto: native where that is 8 "
        "tokens or more, else padded. `doctor --load` says which, and what it costs",
        choices=PASSES,
        reload=True,
        cli="global",
    )
    drafter_backend: str | None = setting(
        None,
        "the drafter model's engine (unset: the same as backend)",
        choices=backend_choices,
        reload=True,
        cli="global",
    )
    device: str = setting(
        "CPU",
        "OpenVINO device: CPU, GPU (Intel Arc or integrated), NPU (Core Ultra) or AUTO",
        choices=backends.DEVICES,
        reload=True,
        cli="global",
    )
    threads: int | None = setting(
        None,
        "CPU threads at most: llama.cpp's (with adapt_threads, each pass takes only the cores "
        "other programs leave free) and OpenVINO's (unset: the physical cores)",
        minimum=1,
        reload=True,
        cli="global",
    )
    adapt_threads: bool = setting(
        True,
        "llama.cpp: before each pass, count the cores other programs keep busy and use the rest "
        "(at least 1, at most threads); work done ahead of requests takes one core fewer "
        "(false: always threads)",
        reload=True,
        cli="global",
    )
    gpu_layers: int | None = setting(
        None,
        "llama.cpp layers offloaded to the GPU (unset: all when the build has a GPU)",
        reload=True,
        cli="global",
    )
    prefix_cache_mb: float = setting(
        512,
        "memory for per-document prompt caches kept across keystrokes (LRU)",
        minimum=0,
        reload=True,
        cli="global",
    )

    def __post_init__(self) -> None:
        validate(self, "engine")
        try:
            self.sampling  # noqa: B018 - builds it once to check the values
        except ValueError as error:
            raise ConfigError(str(error)) from None

    @property
    def sampling(self) -> Sampling:
        """How tokens are picked, unless a request brings its own."""
        return Sampling(self.temperature, self.top_p, self.seed)

    @property
    def target_backend(self) -> str:
        """The backend the target runs on (`auto` resolved for this platform)."""
        return backends.resolve(self.backend)

    @property
    def drafter_model_backend(self) -> str:
        return backends.resolve(self.drafter_backend or self.backend)

    def updated(self, values: dict) -> Settings:
        """A copy with `values` applied; a `preset` key expands first, None values are ignored."""
        values = {k.replace("-", "_"): v for k, v in values.items() if v is not None}
        unknown = sorted(set(values) - {e.name for e in SCHEMA})
        if unknown:
            raise ConfigError(f"unknown setting(s): {', '.join(unknown)}")
        if "preset" in values:
            chosen = values.get("backend", self.backend)
            backend = backends.resolve(chosen)
            known = backends.presets(backend)
            only = backends.only_backend(values["preset"])
            if values["preset"] not in known and chosen == "auto" and only is not None:
                # e.g. a PL model: published for MLX only, so `auto` takes MLX for it
                backend, values = only, {**values, "backend": only}
                known = backends.presets(backend)
            if values["preset"] not in known:
                raise ConfigError(
                    f"unknown preset {values['preset']!r} on {backend}; known: {', '.join(known)}"
                )
            values = {**known[values["preset"]], **values}
        return replace(self, **values)


SCHEMA: tuple[Entry, ...] = entries(Settings, "engine")


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
