"""Every setting declared once, as a dataclass field: type, choices, default, doc, flag, reload.

The engine's `Settings` (decoder/config.py) and the language server's `ServerOptions`
(lsp_server/settings.py) declare their fields with `setting(...)`. Validation, camelCase names,
reload decisions, the command line's flags and the editors' settings tables
(scripts/gen_settings.py) all derive from those fields, so a new setting is one entry.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass

# A reload rule: given (old, new) settings whose value of this field differs, whether the
# models must be loaded again (or the server reconnected) for the change to take effect.
Reload = bool | Callable[[typing.Any, typing.Any], bool]
KINDS = ("bool", "int", "float", "str", "strings")
_A_KIND = {
    "bool": "true or false",
    "int": "an integer",
    "float": "a number",
    "str": "a string",
    "strings": "a list of strings",
}


class ConfigError(ValueError):
    """A setting the user gave is wrong; the message names it and says what it takes."""


@dataclass(frozen=True)
class Meta:
    """What a field's type and default do not say about a setting."""

    doc: str  # one line, for --help, the editors and the README
    # The only values allowed (None too when the type says so), or a function giving them from
    # a registry, so a registered drafter or backend is a valid value at once.
    choices: tuple | Callable[[], tuple] = ()
    choice_docs: tuple[str, ...] | Callable[[], tuple[str, ...]] = ()  # a line per choice
    minimum: float | None = None
    maximum: float | None = None
    reload: Reload = False
    cli: str | None = None  # "global" (before the command), a command's name, or None
    clients: bool = True  # editors and LSP clients may set it
    restricted: bool = False  # chooses files to load: untrusted workspaces use the user's value


def setting(default: typing.Any, doc: str, **meta: typing.Any) -> typing.Any:
    """A dataclass field that is a setting (`meta`: the fields of Meta)."""
    return dataclasses.field(default=default, metadata={"setting": Meta(doc, **meta)})


@dataclass(frozen=True)
class Entry:
    """One setting as the schema describes it."""

    name: str  # snake_case, as in TOML files and Python
    kind: str  # one of KINDS
    nullable: bool  # None is a valid value (and means "unset")
    default: typing.Any
    scope: str  # "engine" (decoder.config.Settings) or "server" (lsp_server ServerOptions)
    meta: Meta

    @property
    def choices(self) -> tuple:
        c = self.meta.choices
        return c() if callable(c) else c

    @property
    def choice_docs(self) -> tuple[str, ...]:
        d = self.meta.choice_docs
        return d() if callable(d) else d

    @property
    def camel(self) -> str:
        return camel(self.name)

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    def check(self, value: typing.Any, as_name: str | None = None) -> typing.Any:
        """`value` as stored (lists become tuples); ConfigError says what is wrong with it."""
        name = as_name or self.name
        if value is None:
            if self.nullable:
                return None
            raise ConfigError(f"{name} must be {self.describe_kind()}, not null")
        if self.kind == "strings":
            if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
                return tuple(value)
        elif _is(value, self.kind):
            self._check_range(value, name)
            return value
        raise ConfigError(f"{name} must be {self.describe_kind()}, not {value!r}")

    def _check_range(self, value: typing.Any, name: str) -> None:
        if self.choices and value not in self.choices:
            shown = ", ".join(str(c) for c in self.choices)
            raise ConfigError(f"{name} must be one of {shown}, not {value!r}")
        low, high = self.meta.minimum, self.meta.maximum
        if low is not None and high is not None and not low <= value <= high:
            raise ConfigError(f"{name} must be between {low:g} and {high:g}, not {value!r}")
        if low is not None and value < low:
            raise ConfigError(f"{name} must be at least {low:g}, not {value!r}")
        if high is not None and value > high:
            raise ConfigError(f"{name} must be at most {high:g}, not {value!r}")

    def describe_kind(self) -> str:
        return _A_KIND[self.kind]

    def reloads(self, old: typing.Any, new: typing.Any) -> bool:
        """Whether going from `old` to `new` settings needs a reload because of this setting."""
        if getattr(old, self.name) == getattr(new, self.name):
            return False
        rule = self.meta.reload
        return rule(old, new) if callable(rule) else bool(rule)


_TYPES = {"int": int, "float": (int, float), "str": str}


def _is(value: typing.Any, kind: str) -> bool:
    """JSON's types: true is not a number, a number is not a string."""
    if isinstance(value, bool):
        return kind == "bool"
    return kind in _TYPES and isinstance(value, _TYPES[kind])


@functools.cache
def entries(cls: type, scope: str) -> tuple[Entry, ...]:
    """The settings a dataclass declares, in declaration order."""
    hints = typing.get_type_hints(cls)
    out = []
    for f in dataclasses.fields(cls):
        if "setting" not in f.metadata:
            continue
        kind, nullable = _kind(hints[f.name], f"{cls.__name__}.{f.name}")
        out.append(Entry(f.name, kind, nullable, f.default, scope, f.metadata["setting"]))
    return tuple(out)


def _kind(hint: typing.Any, where: str) -> tuple[str, bool]:
    """("int", True) for `int | None`, ("strings", False) for `tuple[str, ...]`..."""
    args = typing.get_args(hint)
    nullable = isinstance(hint, types.UnionType) and type(None) in args
    if nullable:
        (hint,) = [a for a in args if a is not type(None)]
    if typing.get_origin(hint) is tuple and typing.get_args(hint) == (str, ...):
        return "strings", nullable
    name = getattr(hint, "__name__", "")
    if name not in KINDS:
        raise TypeError(
            f"{where}: a setting's type must be bool, int, float, str or tuple[str, ...]"
        )
    return name, nullable


def validate(obj: typing.Any, scope: str) -> None:
    """Check every setting of a dataclass instance (its __post_init__ calls this)."""
    for entry in entries(type(obj), scope):
        stored = entry.check(getattr(obj, entry.name))
        if stored is not getattr(obj, entry.name):
            object.__setattr__(obj, entry.name, stored)


def snake(key: str) -> str:
    """`inlineMaxTokens` -> `inline_max_tokens` (snake_case and kebab-case pass through)."""
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", key).lower().replace("-", "_")


def camel(name: str) -> str:
    """`inline_max_tokens` -> `inlineMaxTokens`."""
    head, *rest = name.split("_")
    return head + "".join(p.title() for p in rest)
