"""`workspace/executeCommand`: the server's commands.

Continue the document, toggle speculation per file, show stats, reload the models, count an
accepted suggestion.

Arguments come positionally or as one object with named (camelCase or snake_case) fields and
are structured into typed classes; a wrong shape is a one-line invalid-params error.
"""

from __future__ import annotations

from typing import TypeVar

import attrs
import cattrs
from lsprotocol import converters, types
from pygls.exceptions import JsonRpcInvalidParams

from .background import cancel_prepared
from .completion import build_prompt
from .continuing import Continuation
from .documents import MODES
from .language_server import BielikServer
from .settings import camel, snake
from .status import memory_mb, peak_memory_mb

CONTINUE = "bielik.continueDocument"
TOGGLE = "bielik.toggleSpeculation"
STATS = "bielik.showStats"
RELOAD = "bielik.reload"
EDIT_ECHO_S = 2.0  # how long to wait for the didChange that echoes our own applyEdit
T = TypeVar("T")


def _positive(instance, attribute, value) -> None:
    if value is not None and value < 1:
        raise ValueError(f"{camel(attribute.name)} must be a positive integer, not {value!r}")


def _mode(instance, attribute, value) -> None:
    if value is not None and value not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, not {value!r}")


@attrs.define
class ContinueArgs:
    uri: str
    position: types.Position | None = None
    max_tokens: int | None = attrs.field(default=None, validator=_positive)


@attrs.define
class ToggleArgs:
    uri: str
    mode: str | None = attrs.field(default=None, validator=_mode)


@attrs.define
class StatsArgs:
    uri: str | None = None


@attrs.define
class AcceptedArgs:
    uri: str
    id: str


def _strict(kind: type, name: str):
    def structure(value, _):
        if isinstance(value, bool) or not isinstance(value, kind):
            raise TypeError(f"expected {name}, not {value!r}")
        return value

    return structure


_converter = converters.get_converter()  # lsprotocol's, so Position and friends structure
_converter.register_structure_hook(str, _strict(str, "a string"))
_converter.register_structure_hook(int, _strict(int, "an integer"))


def _why(error: BaseException, _type: object) -> str:
    return "required" if isinstance(error, KeyError) else str(error)


def parse(cls: type[T], args: tuple) -> T:
    """Command arguments, positional or one object, as a `cls`; invalid params otherwise."""
    names = [camel(f.name) for f in attrs.fields(cls)]  # lsprotocol's converter speaks camelCase
    if len(args) == 1 and isinstance(args[0], dict):
        values = {camel(snake(k)): v for k, v in args[0].items()}
    elif len(args) > len(names):
        raise JsonRpcInvalidParams(
            f"expected at most {len(names)} arguments ({', '.join(names)}), got {len(args)}"
        )
    else:
        values = dict(zip(names, args, strict=False))
    unknown = sorted(set(values) - set(names))
    if unknown:
        raise JsonRpcInvalidParams(f"unknown argument(s): {', '.join(unknown)}")
    try:
        return _converter.structure(values, cls)
    except Exception as e:
        if isinstance(e, cattrs.BaseValidationError):
            detail = "; ".join(cattrs.transform_error(e, format_exception=_why))
        else:
            detail = str(e).strip().splitlines()[0]
        raise JsonRpcInvalidParams(f"invalid arguments: {detail}") from None


def toggle_speculation(ls: BielikServer, args: tuple) -> dict:
    """Set a file's speculation to on/off/auto, or cycle auto -> off -> on -> auto."""
    values = parse(ToggleArgs, args)
    doc = ls.document(values.uri)
    mode = values.mode
    if mode is None:
        current = ls.speculation(values.uri, doc.source)[0]
        mode = {"auto": "off", "off": "on", "on": "auto"}[current]
    ls.toggles[values.uri] = mode
    cancel_prepared(ls, values.uri)
    mode, _, drafter, reason = ls.publish_speculation(values.uri, doc.source)
    return {"uri": values.uri, "speculation": mode, "drafter": drafter, "reason": reason}


def show_stats(ls: BielikServer, args: tuple) -> dict:
    """Per-file and session statistics, plus the model state and effective configuration."""
    values = parse(StatsArgs, args)
    report = ls.stats.report(values.uri)
    report.update(
        state=ls.worker.state,
        error=ls.worker.error,
        config=ls.config.describe(),
        memory_mb=memory_mb(),
        peak_memory_mb=peak_memory_mb(),
    )
    if ls.worker.pipe is not None:
        report["engine"] = ls.worker.pipe.describe()  # never an API key
    return report


async def reload(ls: BielikServer, args: tuple) -> dict:
    """Load the models again (after an error, or to pick up changed files); waits for it."""
    if args:
        raise JsonRpcInvalidParams(f"{RELOAD} takes no arguments, got {len(args)}")
    if ls.loads is None or ls.loads.done():
        ls.worker.state = "loading"  # a retry even when the settings did not change
    await ls.load_models()
    return {"state": ls.worker.state, "error": ls.worker.error}


def accepted(ls: BielikServer, args: tuple) -> None:
    """The editor accepted a suggestion (the item's command): count it for its document."""
    values = parse(AcceptedArgs, args)
    delivered = ls.delivered.get(values.id)
    if delivered is not None and delivered[0] == values.uri:
        ls.stats.count(values.uri, "suggestions_accepted")
        ls.stats.count_kind(values.uri, delivered[1], "accepted")


async def continue_document(ls: BielikServer, args: tuple) -> dict:
    """Generate at a position (default: end of the document), streaming versioned edits."""
    values = parse(ContinueArgs, args)
    doc = ls.document(values.uri)
    offset = len(doc.source) if values.position is None else ls.offset(doc, values.position)
    ls.require_engine()
    ls.supersession.supersede(values.uri)
    cancel_prepared(ls, values.uri)
    prompt = build_prompt(doc.source[:offset], ls.config.server.max_prompt_chars)
    budget = values.max_tokens or ls.config.server.continue_max_tokens
    return await Continuation(ls, values.uri, prompt, offset, budget).run()
