"""The drafters, one entry each, so the settings, the loader and `auto` know every one.

An entry says whether the drafter needs the drafter model and how it is built from what the
pipeline has loaded; the drafter itself says how `auto` prices a draft (`Drafter.offer`).
Entries are built in order, so a drafter may use those before it (the cascade chains lookup
and the model). Adding a drafter is its module plus one entry in DRAFTERS.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from decoder.backends.base import Backend
from decoder.drafting.drafter import Drafter
from decoder.schema import ConfigError

HUB_REPO = re.compile(r"[\w.-]+/[\w.-]+")


@dataclass
class Parts:
    """What drafters are built from: the loaded models, and the drafters built before."""

    target: Backend
    drafter_model: Backend | None = None
    translation: str = "anchored"
    dflash: str | None = None  # a DFlash drafter directory (the drafter_model setting)
    built: dict[str, Drafter] = field(default_factory=dict)


@dataclass(frozen=True)
class DrafterKind:
    name: str
    doc: str
    needs_model: bool  # reads the drafter_model setting
    build: Callable[[Parts], Drafter]
    model_format: str = "lm"  # what drafter_model names: "lm" (a language model) or "dflash"


def _lookup(parts: Parts) -> Drafter:
    from decoder.drafting.lookup import LookupDrafter

    return LookupDrafter()


def _model(parts: Parts) -> Drafter:
    """The same tokenizer drafts ids directly; another one drafts through text."""
    from decoder.drafting.cross import CrossDrafter
    from decoder.drafting.drafter import ModelDrafter

    model, target = parts.drafter_model, parts.target
    if model.table == target.table:
        return ModelDrafter(model, len(target.table))
    return CrossDrafter(model, target.tokenizer, parts.translation)


def _cascade(parts: Parts) -> Drafter:
    from decoder.drafting.cascade import CascadeDrafter

    return CascadeDrafter(parts.built["lookup"], parts.built["model"], parts.target.table)


def _dflash(parts: Parts) -> Drafter:
    from decoder.drafting.dflash import DFlashDrafter, load_dflash

    return DFlashDrafter(load_dflash(parts.dflash), parts.target)


LOOKUP = DrafterKind(
    "lookup", "copies what followed the same text earlier (almost free)", False, _lookup
)
MODEL = DrafterKind(
    "model", "the drafter model (through text when tokenizers differ)", True, _model
)
CASCADE = DrafterKind("cascade", "lookup, then the drafter model where lookup ends", True, _cascade)
DFLASH = DrafterKind(
    "dflash",
    "a DFlash block drafter on the target's hidden states (MLX; drafter_model: its directory)",
    True,
    _dflash,
    model_format="dflash",
)
DRAFTERS: dict[str, DrafterKind] = {kind.name: kind for kind in (LOOKUP, MODEL, CASCADE, DFLASH)}


def modes() -> tuple[str, ...]:
    """The `drafter` setting: auto (the policy chooses per cycle), none (plain), or one drafter."""
    return ("auto", "none", *DRAFTERS)


def mode_docs() -> tuple[str, ...]:
    """One line per value of the `drafter` setting, in modes() order."""
    fixed = tuple(f"always {kind.name}: {kind.doc}" for kind in DRAFTERS.values())
    return ("the policy picks drafter and draft length per cycle", "plain decoding", *fixed)


def needs_model(mode: str) -> bool:
    """Whether decoding with drafter `mode` loads the drafter model (`auto` may use any)."""
    if mode == "auto":
        return any(kind.needs_model for kind in DRAFTERS.values())
    return mode in DRAFTERS and DRAFTERS[mode].needs_model


def model_format(spec: str | None) -> str:
    """What a drafter_model spec is: "dflash" or "lm" (a language model, loaded as a Backend).

    A DFlash drafter directory's config.json has a `dflash_config`; a hub repo is one when its
    name says DFlash (as SpeakLeash's and z-lab's are named), since it is not downloaded yet.
    """
    path = Path(spec or "").expanduser()
    if not path.exists() and HUB_REPO.fullmatch(spec or "") and "dflash" in spec.lower():
        return "dflash"
    config = path / "config.json"
    try:
        return "dflash" if "dflash_config" in json.loads(config.read_text("utf-8")) else "lm"
    except (OSError, ValueError, TypeError):
        return "lm"


def check_format(mode: str, spec: str | None) -> str:
    """The drafter model's format, or a ConfigError when drafter `mode` cannot use it."""
    found = model_format(spec)
    kind = DRAFTERS.get(mode)
    if kind is not None and kind.needs_model and kind.model_format != found:
        need = "a DFlash drafter directory" if kind.model_format == "dflash" else "a language model"
        other = "dflash" if found == "dflash" else "model or cascade"
        raise ConfigError(
            f"drafter {mode} needs {need} as drafter_model; {spec} is not one "
            f"(it suits --drafter {other})"
        )
    return found


def build(parts: Parts) -> dict[str, Drafter]:
    """Every drafter the loaded models allow, by name."""
    have = {"lm": parts.drafter_model is not None, "dflash": parts.dflash is not None}
    for kind in DRAFTERS.values():
        if not kind.needs_model or have[kind.model_format]:
            parts.built[kind.name] = kind.build(parts)
    return parts.built
