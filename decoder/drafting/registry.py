"""The drafters, one entry each, so the settings, the loader and `auto` know every one.

An entry says whether the drafter needs the drafter model and how it is built from what the
pipeline has loaded; the drafter itself says how `auto` prices a draft (`Drafter.offer`).
Entries are built in order, so a drafter may use those before it (the cascade chains lookup
and the model). Adding a drafter is its module plus one entry in DRAFTERS.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from decoder.backends.base import Backend
from decoder.drafting.drafter import Drafter


@dataclass
class Parts:
    """What drafters are built from: the loaded models, and the drafters built before."""

    target: Backend
    drafter_model: Backend | None = None
    translation: str = "anchored"
    built: dict[str, Drafter] = field(default_factory=dict)


@dataclass(frozen=True)
class DrafterKind:
    name: str
    doc: str
    needs_model: bool  # loads the drafter model (settings.drafter_model)
    build: Callable[[Parts], Drafter]


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


LOOKUP = DrafterKind(
    "lookup", "copies what followed the same text earlier (almost free)", False, _lookup
)
MODEL = DrafterKind(
    "model", "the drafter model (through text when tokenizers differ)", True, _model
)
CASCADE = DrafterKind("cascade", "lookup, then the drafter model where lookup ends", True, _cascade)
DRAFTERS: dict[str, DrafterKind] = {kind.name: kind for kind in (LOOKUP, MODEL, CASCADE)}


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


def build(parts: Parts) -> dict[str, Drafter]:
    """Every drafter the loaded models allow, by name."""
    for kind in DRAFTERS.values():
        if not kind.needs_model or parts.drafter_model is not None:
            parts.built[kind.name] = kind.build(parts)
    return parts.built
