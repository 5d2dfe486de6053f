"""Spelling and grammar diagnostics: when they are computed, where the model reads, how.

How the client hears of them too.

After an edit (debounced by `spellingDelayMs`), the first pass re-checks only the paragraphs
whose text changed (the others come from their caches), on the event loop, one paragraph at a
time, stepping aside whenever a completion request waits for the engine: the spelling
dictionary (polish/spelling.py) and grammar's certain rules and questions (polish/grammar.py).
The diagnostics go out at once. Then the model reads what the checkers asked about, through one
scoring queue (lsp_server/grammar.ScoringQueue): each questioned word of spelling
(polish/spelling.needs_model), each paragraph's grammar questions in one call (few passes: the
sentence is read once, each form after it), on the engine thread, behind any completion request
and yielding to one between passes; each verdict is cached per paragraph text, and the
diagnostics go out again.

Clients that pull diagnostics (LSP 3.17 `textDocument/diagnostic`: VS Code, Neovim 0.10+) get
the dictionary pass for their version on request, and a `workspace/diagnostic/refresh` once
the model has answered; others get `textDocument/publishDiagnostics`.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace
from functools import partial
from pathlib import Path

import attrs
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from polish.dictionary import inflect
from polish.spelling import Finding, drop_terms, needs_model, rank_one

from . import grammar as grammar_state
from .commands import parse
from .language_server import BielikServer
from .spelling import (
    ADD_WORD,
    IGNORE_WORD,
    SOURCE,
    DocState,
    Positions,
    code_actions,
    diagnostic,
    uri_path,
)

log = logging.getLogger(__name__)
PAUSE_S = 0.01  # how often a paused dictionary pass looks whether it may go on
READ_PATIENCE_S = 0.5  # how long it lets a message on its way in go first, per paragraph
# A client that pulls but cannot be asked to pull again (Neovim 0.12): its pull waits this long
# for the model's verdicts on the version it asks about, or answers with what there is.
PULL_WAIT_S = 30.0
__all__ = ["ADD_WORD", "IGNORE_WORD", "actions", "add_word", "ignore_word", "pull", "schedule"]


# -- when ------------------------------------------------------------------------------------
def schedule(ls: BielikServer, uri: str, debounce: bool = True) -> None:
    """(Re)start a document's check: the one running for an older version stops."""
    state = ls.spelling.doc(uri)
    if state.task is not None:
        state.task.cancel()
    delay = ls.config.server.spelling_delay_ms / 1000 if debounce else 0.0
    state.task = asyncio.ensure_future(_run(ls, uri, delay))
    state.task.add_done_callback(lambda t: t.cancelled() or t.exception())


def schedule_all(ls: BielikServer) -> None:
    """Check every open document again (dictionaries or settings changed)."""
    for uri in list(ls.spelling.docs):
        ls.spelling.doc(uri).version = None
        schedule(ls, uri, debounce=False)


def closed(ls: BielikServer, uri: str) -> None:
    ls.spelling.close(uri)
    if not _pulls(ls):
        ls.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=[])
        )


async def _run(ls: BielikServer, uri: str, delay: float) -> None:
    """Spelling at once; grammar, rules and model, once the writer pauses (ScoringQueue)."""
    await asyncio.sleep(delay)
    pending = await dictionary_pass(ls, uri, grammar_now=ls.scoring.quiet())
    if pending is None:
        return
    _tell(ls, uri)
    if ls.spelling.doc(uri).grammar_later:
        await ls.scoring.settle()
        pending = await dictionary_pass(ls, uri)
        if pending is None:
            return
        _tell(ls, uri)
    server = ls.config.server
    pending = [p for p in pending if p[0] == "grammar" or server.spelling_model]
    if pending:
        await _model_pass(ls, uri, pending)


# -- the dictionary pass -----------------------------------------------------------------------
def _folders(ls: BielikServer) -> list[Path]:
    try:
        folders = ls.workspace.folders.values()
    except RuntimeError:  # not initialized
        return []
    return [p for f in folders if (p := uri_path(f.uri)) is not None]


def _wanted(ls: BielikServer, uri: str) -> tuple[bool, bool]:
    """(spelling, grammar) wanted for this document."""
    doc = ls.documents.get(uri)
    if doc is None:
        return False, False
    server = ls.config.server
    return server.spells(doc.language_id), server.checks_grammar(doc.language_id)


def _disabled(ls: BielikServer) -> tuple[str, ...]:
    """The grammar codes switched off (the model's too, where it may not read)."""
    server = ls.config.server
    off = tuple(sorted(server.grammar_disabled_rules))
    return off if server.grammar_model else tuple(sorted({*off, "model"}))


async def _pause(ls: BielikServer) -> None:
    """Between paragraphs: let other messages in; wait while a completion request is pending.

    From its arrival to its answer, the check of its staleness included. A message on its way
    in is let in first (WatchedInput.let_in), so a request is seen while the pass runs.
    """
    await asyncio.sleep(0)
    if ls.input is not None:
        await ls.input.let_in(READ_PATIENCE_S)
    while ls.spelling.waiting or ls.worker.urgent:
        await asyncio.sleep(PAUSE_S)


async def dictionary_pass(
    ls: BielikServer, uri: str, grammar_now: bool = True
) -> list[tuple] | None:
    """Diagnostics for the document's current version; what the model should read.

    That comes as ("spelling", paragraph text, its offset, finding) and ("grammar", paragraph
    text, its offset, its grammar Entry); None if the document went away or changed meanwhile.
    Unless `grammar_now`, a paragraph whose grammar is not cached is left for later (its rules
    cost the event loop what a keystroke's ghost text is waiting for): `grammar_later` says so.
    """
    doc = ls.documents.get(uri)
    if doc is None:
        return None
    state = ls.spelling.doc(uri)
    spells, checks = _wanted(ls, uri)
    if not spells and not checks:
        _store(ls, state, doc.version, [], doc.source)
        return []
    words = ls.spelling.accepted()
    words.use_setting(ls.config.server.spelling_words)
    allowed = words.allowed(uri, _folders(ls))
    version, text = doc.version, doc.source
    shown: list[Finding] = []
    found_grammar: list[Finding] = []
    pending: list[tuple] = []
    later = False
    model = ls.config.server.spelling_model
    disabled = _disabled(ls)
    for start, end, found, fresh in state.paragraphs.walk(text, allowed, words.version):
        paragraph = text[start:end]
        for finding in found if spells else ():
            key = (paragraph, finding.start - start, words.version)
            if model and needs_model(finding):
                if key in ls.spelling.ranked:
                    verdict = ls.spelling.ranked[key]
                    shown += [_at(verdict, finding.start)] if verdict is not None else []
                    continue
                pending.append(("spelling", paragraph, start, finding))
            if finding.reason != "context":
                shown.append(finding)
        new = False
        if checks and (grammar_now or ls.grammar.has(paragraph, disabled)):
            entry, new = ls.grammar.get(paragraph, disabled)
            found_grammar += [_moved(f, start) for f in entry.findings + (entry.verdicts or [])]
            if entry.verdicts is None:
                pending.append(("grammar", paragraph, start, entry))
        later = later or (checks and not ls.grammar.has(paragraph, disabled))
        if fresh or new:
            await _pause(ls)
            if ls.documents.get(uri) is not doc or doc.version != version:
                return None  # edited meanwhile: the newer check takes over
    _store(ls, state, version, grammar_state.merged(drop_terms(shown), found_grammar), text)
    state.grammar_later = later
    return pending


def _moved(finding: Finding, by: int) -> Finding:
    return replace(finding, start=finding.start + by, end=finding.end + by)


def _at(finding: Finding, start: int) -> Finding:
    """A paragraph's finding (offsets in the paragraph) at `start` in the document."""
    return replace(finding, start=start, end=start + len(finding.word))


def _store(ls: BielikServer, state: DocState, version: int, found: list[Finding], text: str):
    positions = Positions(text, ls.encoding)
    state.version, state.findings = version, sorted(found, key=lambda f: f.start)
    state.diagnostics = [
        grammar_state.diagnostic(f, positions) if f.kind == "grammar" else diagnostic(f, positions)
        for f in state.findings
    ]
    state.result_id = f"{version}:{ls.spelling.accepted().version}:{len(state.diagnostics)}"
    state.result_id += f":{hash(tuple(d.message for d in state.diagnostics)) & 0xFFFFFFFF:x}"


# -- the model pass ----------------------------------------------------------------------------
async def _model_pass(ls: BielikServer, uri: str, pending: list) -> None:
    """The model's verdicts on what the checkers asked, through the one scoring queue."""
    while ls.worker.state == "loading":
        await asyncio.sleep(0.5)
    if ls.worker.state != "ready" or ls.worker.pipe is None:
        return
    version = ls.spelling.accepted().version
    changed = False
    for kind, paragraph, start, item in pending:
        if ls.documents.get(uri) is None:
            return
        if kind == "grammar":
            await _pause(ls)  # never while a completion request waits
            changed = await _ask_grammar(ls, paragraph, item) or changed
            continue
        key = (paragraph, item.start - start, version)
        if key in ls.spelling.ranked:
            continue
        local = replace(item, start=item.start - start, end=item.end - start)
        try:
            verdict = await ls.scoring.run(partial(_rank, paragraph, local))
        except Exception as e:  # an engine that cannot score: the dictionary's ranking stays
            log.warning("spelling: the model could not rank %r: %s", item.word, e)
            verdict = local
        ls.spelling.ranked[key] = verdict
        changed = changed or verdict != local
    if changed:
        pending_again = await dictionary_pass(ls, uri)
        if pending_again is not None:
            _tell(ls, uri, refresh=True)


async def _ask_grammar(ls: BielikServer, paragraph: str, entry) -> bool:
    """A paragraph's grammar questions, in one call; whether anything was flagged."""
    if entry.verdicts is not None:
        return False
    try:
        entry.verdicts = await ls.scoring.run(
            partial(grammar_state.ask, paragraph=paragraph, entry=entry)
        )
    except Exception as e:  # an engine that cannot score: nothing is flagged by the model
        log.warning("grammar: the model could not read a paragraph: %s", e)
        entry.verdicts = []
    return bool(entry.verdicts)


def _rank(paragraph: str, finding: Finding, pipe, should_stop) -> Finding | None:
    """On the engine thread: rank_one with the engine's log-probabilities."""
    return rank_one(
        paragraph, finding, lambda prefix, options: pipe.score(prefix, options, should_stop)
    )


# -- how the client hears ----------------------------------------------------------------------
def _pulls(ls: BielikServer) -> bool:
    text = ls.client_capabilities.text_document
    return bool(text and text.diagnostic)


def _tell(ls: BielikServer, uri: str, refresh: bool = False) -> None:
    """Push the diagnostics, or ask a pulling client to pull again (after the model answered)."""
    state = ls.spelling.doc(uri)
    if not _pulls(ls):
        ls.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(
                uri=uri, version=state.version, diagnostics=state.diagnostics
            )
        )
        return
    if refresh and _refreshes(ls):
        ls.workspace_diagnostic_refresh(None)


def _refreshes(ls: BielikServer) -> bool:
    """The client can be asked to pull diagnostics again (LSP 3.17 refresh support)."""
    workspace = ls.client_capabilities.workspace
    return bool(workspace and workspace.diagnostics and workspace.diagnostics.refresh_support)


async def pull(
    ls: BielikServer, params: types.DocumentDiagnosticParams
) -> types.DocumentDiagnosticReport:
    """`textDocument/diagnostic`: the diagnostics of the current version.

    Checked now if need be, without the debounce: the client asked.
    """
    uri = params.text_document.uri
    doc = ls.documents.get(uri)
    if doc is None:
        raise JsonRpcInvalidParams(f"unknown document {uri}: the client has not opened it")
    state = ls.spelling.doc(uri)
    waiting = state.task is not None and not state.task.done()
    if waiting and not _refreshes(ls) and ls.worker.state == "ready":
        # The model's verdicts, since the client will not be told of them later; an edit that
        # starts a newer check, or a slow engine, ends the wait with what there is. (While the
        # model loads, the first pass answers at once: the verdicts come with the next edit.)
        await asyncio.wait({state.task}, timeout=PULL_WAIT_S)
    if state.version != doc.version:
        if await dictionary_pass(ls, uri) is None:
            state = ls.spelling.doc(uri)
    if params.previous_result_id and params.previous_result_id == state.result_id:
        return types.UnchangedDocumentDiagnosticReport(result_id=state.result_id)
    return types.FullDocumentDiagnosticReport(items=state.diagnostics, result_id=state.result_id)


def actions(ls: BielikServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    """`textDocument/codeAction`: quick fixes for the spelling diagnostics in the range."""
    uri = params.text_document.uri
    sources = (SOURCE, grammar_state.SOURCE)
    ours = [d for d in params.context.diagnostics if d.source in sources]
    if not ours:  # a client that sends no diagnostics back: ours in the range
        state = ls.spelling.docs.get(uri)
        start, end = params.range.start, params.range.end
        ours = [
            d
            for d in (state.diagnostics if state else [])
            if (d.range.start.line, d.range.start.character) <= (end.line, end.character)
            and (start.line, start.character) <= (d.range.end.line, d.range.end.character)
        ]
    folder = ls.spelling.accepted().folder_of(uri, _folders(ls))
    return grammar_state.code_actions(uri, ours) + code_actions(
        uri, ours, workspace=folder is not None
    )


# -- commands ----------------------------------------------------------------------------------
@attrs.define
class AddWordArgs:
    word: str
    scope: str = attrs.field(default="user", validator=attrs.validators.in_(("user", "workspace")))
    uri: str | None = None


@attrs.define
class IgnoreWordArgs:
    uri: str
    word: str


def add_word(ls: BielikServer, args: tuple) -> dict:
    """Accept a word with all its forms, for the user or the workspace; re-check documents."""
    values = parse(AddWordArgs, args)
    words = ls.spelling.accepted()
    try:
        path = words.add(values.word, values.scope, values.uri, _folders(ls))
    except ValueError as e:
        raise JsonRpcInvalidParams(str(e)) from None
    schedule_all(ls)
    forms = len(inflect(values.word))
    return {"word": values.word, "scope": values.scope, "path": str(path), "forms": forms}


def ignore_word(ls: BielikServer, args: tuple) -> dict:
    """Ignore a word in one document (kept in its workspace folder's .bielik/ignored.txt)."""
    values = parse(IgnoreWordArgs, args)
    path = ls.spelling.accepted().ignore(values.uri, values.word, _folders(ls))
    schedule(ls, values.uri, debounce=False)
    return {"uri": values.uri, "word": values.word, "path": str(path) if path else None}
