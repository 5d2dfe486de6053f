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
# Engine settings the server never reads (it has its own per-request budgets).
_ENGINE_ONLY = frozenset({"max_tokens"})


@dataclass(frozen=True)
class ServerOptions:
    """The defaults table: every server setting, named for what the user notices."""

    debounce_ms: int = 30  # wait this long for more typing before generating
    # A new suggestion shows this long after the request, once it holds a whole word; the rest
    # is prepared behind it (llama.vim's quick first request, then the follow-up).
    suggestion_ms: int = 120
    time_budget_ms: int = 2500  # a suggestion arrives at most this long after the request
    prepare_next: bool = True  # after a suggestion, compute the next one as if it were accepted
    inline_max_tokens: int = 24  # token budget of one inline suggestion
    continue_max_tokens: int = 128  # default budget of bielik.continueDocument
    max_prompt_chars: int = 8000  # context kept before the cursor (huge documents)
    load_timeout_s: int = 900  # a model load taking longer ends in the error state
    languages: tuple[str, ...] = ()  # languageIds to serve; empty: all
    globs: tuple[str, ...] = ()  # file path globs to serve; empty: all
    enabled: bool = True

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if f.type == "int":
                low = 0 if f.name.endswith("_ms") else 1
                if not isinstance(value, int) or isinstance(value, bool) or value < low:
                    kind = "non-negative" if low == 0 else "positive"
                    raise ConfigError(f"{camel(f.name)} must be a {kind} integer, not {value!r}")
            elif f.type == "bool" and not isinstance(value, bool):
                raise ConfigError(f"{camel(f.name)} must be true or false, not {value!r}")
            elif f.type.startswith("tuple") and not all(isinstance(v, str) for v in value):
                raise ConfigError(f"{f.name} must be a list of strings, not {list(value)!r}")

    def serves(self, uri: str, language_id: str | None) -> bool:
        """Whether completions are wanted for this document."""
        if not self.enabled:
            return False
        if self.languages and language_id not in self.languages:
            return False
        path = uri.split("://", 1)[-1]
        return not self.globs or any(fnmatch.fnmatch(path, g) for g in self.globs)


def engine_keys() -> list[str]:
    """The engine settings a client may set through the server."""
    return [f.name for f in fields(Settings) if f.name not in _ENGINE_ONLY]


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
        engine_names = {*engine_keys(), "preset"}
        server_names = {f.name for f in fields(ServerOptions)}
        engine, server = {}, {}
        for key, value in values.items():
            name = snake(key)
            if name in engine_names:
                _check_type(name, value)
                engine[name] = value
            elif name in server_names:
                if name in ("languages", "globs") and value is not None:
                    if not isinstance(value, list):
                        raise ConfigError(f"{name} must be a list of strings, not {value!r}")
                    value = tuple(value)
                server[name] = value
            else:
                raise ConfigError(f"unknown setting {key!r}")
        # null means "back to the default" (Settings.updated ignores None: CLI flags not given).
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
        out = {camel(name): getattr(self.engine, name) for name in engine_keys()}
        out.update({camel(f.name): getattr(self.server, f.name) for f in fields(ServerOptions)})
        return out


# Settings the models are loaded with: changing one means loading them again.
_CONNECTION = ("api_key_file", "connect_timeout_s", "read_timeout_s", "tls_verify")
_LOADED_WITH = (
    "target",
    "dtype",
    "backend",
    "drafter_backend",
    "threads",
    "gpu_layers",
    "prefix_cache_mb",
)


def needs_reload(old: Settings, new: Settings) -> bool:
    """Whether a settings change means loading models or reconnecting (the rest applies now)."""
    if is_remote(new.target) and any(getattr(old, n) != getattr(new, n) for n in _CONNECTION):
        return True
    uses_model = ("model", "cascade", "auto")
    return any(getattr(old, n) != getattr(new, n) for n in _LOADED_WITH) or (
        new.drafter in uses_model
        and (old.drafter_model != new.drafter_model or old.drafter not in uses_model)
    )


def _check_type(name: str, value: object) -> None:
    """Settings is a plain dataclass: check JSON types here so "k": "4" fails clearly."""
    number = (int, float)
    expected = {
        "k": int,
        "seed": int,
        "threads": int,
        "gpu_layers": int,
        "temperature": number,
        "top_p": number,
        "prefix_cache_mb": number,
        "connect_timeout_s": number,
        "read_timeout_s": number,
        "tls_verify": bool,
    }
    want = expected.get(name, str)
    if value is None:
        return
    if (isinstance(value, bool) and want is not bool) or not isinstance(value, want):
        raise ConfigError(f"{camel(name)} has the wrong type: {value!r}")


def snake(key: str) -> str:
    """`inlineMaxTokens` -> `inline_max_tokens` (snake_case and kebab-case pass through)."""
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", key).lower().replace("-", "_")


def camel(name: str) -> str:
    """`inline_max_tokens` -> `inlineMaxTokens`."""
    head, *rest = name.split("_")
    return head + "".join(p.title() for p in rest)
