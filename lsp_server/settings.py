"""Server configuration: the engine's Settings plus what only the language server needs.

Clients send one flat object (initializationOptions or workspace/didChangeConfiguration, either
bare or under a "bielik" section) with camelCase or snake_case keys. A bad value raises
ConfigError with a message for the user; the caller keeps the old configuration.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, fields, replace

from decoder.backends.remote import is_remote
from decoder.config import ConfigError, Settings

SECTION = "bielik"


@dataclass(frozen=True)
class ServerOptions:
    debounce_ms: int = 150  # wait this long for more typing before generating
    time_budget_ms: int = 2500  # stop generating a suggestion after this long
    inline_max_tokens: int = 24  # token budget of one inline suggestion
    continue_max_tokens: int = 128  # default budget of bielik.continueDocument
    max_prompt_chars: int = 8000  # context kept before the cursor (huge documents)
    languages: tuple[str, ...] = ()  # languageIds to serve; empty: all
    globs: tuple[str, ...] = ()  # file path globs to serve; empty: all
    enabled: bool = True

    def __post_init__(self) -> None:
        for name in ("debounce_ms", "time_budget_ms"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 0:
                raise ConfigError(
                    f"{_camel(name)} must be a non-negative integer, not {getattr(self, name)!r}"
                )
        for name in ("inline_max_tokens", "continue_max_tokens", "max_prompt_chars"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
                raise ConfigError(
                    f"{_camel(name)} must be a positive integer, not {getattr(self, name)!r}"
                )
        for name in ("languages", "globs"):
            value = getattr(self, name)
            if not all(isinstance(v, str) for v in value):
                raise ConfigError(f"{name} must be a list of strings, not {list(value)!r}")
        if not isinstance(self.enabled, bool):
            raise ConfigError(f"enabled must be true or false, not {self.enabled!r}")

    def serves(self, uri: str, language_id: str | None) -> bool:
        """Whether completions are wanted for this document."""
        if not self.enabled:
            return False
        if self.languages and language_id not in self.languages:
            return False
        path = uri.split("://", 1)[-1]
        return not self.globs or any(fnmatch.fnmatch(path, g) for g in self.globs)


@dataclass(frozen=True)
class Config:
    engine: Settings
    server: ServerOptions

    def updated(self, values: object) -> Config:
        """A copy with a client's settings object applied; ConfigError names the bad key."""
        if values is None:
            return self
        if not isinstance(values, dict):
            raise ConfigError(f"settings must be an object, not {type(values).__name__}")
        if isinstance(values.get(SECTION), dict):
            values = values[SECTION]
        engine_keys = {f.name for f in fields(Settings)} | {"preset"}
        server_keys = {f.name for f in fields(ServerOptions)}
        engine, server = {}, {}
        for key, value in values.items():
            name = _snake(key)
            if name in engine_keys:
                engine[name] = value
            elif name in server_keys:
                server[name] = (
                    tuple(value)
                    if name in ("languages", "globs") and isinstance(value, list)
                    else value
                )
            else:
                raise ConfigError(f"unknown setting {key!r}")
        for name, value in engine.items():
            _check_type(name, value)
        # null means "back to the default" (Settings.updated itself ignores None: CLI flags not given).
        engine_defaults = {f.name: f.default for f in fields(Settings)}
        server = {k: getattr(ServerOptions, k) if v is None else v for k, v in server.items()}
        try:
            base = replace(
                self.engine,
                **{k: engine_defaults[k] for k, v in engine.items() if v is None and k != "preset"},
            )
            return Config(base.updated(engine), replace(self.server, **server))
        except TypeError as e:
            raise ConfigError(str(e)) from None

    def describe(self) -> dict:
        """The effective configuration, camelCase, as clients write it."""
        out = {_camel(f.name): getattr(self.engine, f.name) for f in fields(Settings)}
        out.update({_camel(f.name): getattr(self.server, f.name) for f in fields(ServerOptions)})
        return out


def needs_reload(old: Settings, new: Settings) -> bool:
    """Whether a settings change means loading models or reconnecting; the rest applies now."""
    connection = ("api_key_file", "connect_timeout_s", "read_timeout_s", "tls_verify")
    if is_remote(new.target) and any(getattr(old, f) != getattr(new, f) for f in connection):
        return True
    target = ("target", "dtype", "backend", "threads", "gpu_layers", "prefix_cache_mb")
    drafter = ("drafter_model", "drafter_backend", "translation")
    uses_model = ("model", "cascade", "auto")
    return any(getattr(old, f) != getattr(new, f) for f in target) or (
        new.drafter in uses_model
        and (
            any(getattr(old, f) != getattr(new, f) for f in drafter)
            or old.drafter not in uses_model
        )
    )


def _check_type(name: str, value: object) -> None:
    """Settings is a plain dataclass: check JSON types here so "k": "4" fails clearly."""
    expected = {
        "k": int,
        "max_tokens": int,
        "seed": int,
        "temperature": (int, float),
        "top_p": (int, float),
        "connect_timeout_s": (int, float),
        "read_timeout_s": (int, float),
        "tls_verify": bool,
    }
    want = expected.get(name, str)
    if value is None:
        return
    if (isinstance(value, bool) and want is not bool) or not isinstance(value, want):
        raise ConfigError(f"{_camel(name)} has the wrong type: {value!r}")


def _snake(key: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", key).lower().replace("-", "_")


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p.title() for p in rest)
