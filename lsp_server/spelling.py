"""Spelling's state in the server, and how findings become diagnostics and quick fixes.

Per document: its paragraphs' dictionary results (polish/spelling.Paragraphs), the model's
verdicts per paragraph text, the diagnostics last computed and for which version. For the
writer: the words accepted, each with all its inflected forms (polish/dictionary.py), from the
user's dictionary (~/.config/bielik-lsp/dictionary.txt), each workspace folder's
(.bielik/dictionary.txt), the `spellingWords` setting, and the words ignored in one file
(.bielik/ignored.txt in its folder: `path<TAB>word` lines; in memory for a file outside any).
Diagnostics and code actions are built here; the flow (debounce, the engine thread, push or
pull) is lsp_server/diagnostics.py's.
"""

from __future__ import annotations

import asyncio
import bisect
import os
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlparse

from lsprotocol import types

from polish.dictionary import Accepted, append_word, read_words
from polish.spelling import REASONS, Finding, Paragraphs, slip

from .documents import index_to_column, line_starts

SOURCE = "bielik-spelling"
ADD_WORD = "bielik.addWord"
IGNORE_WORD = "bielik.ignoreWord"
FOLDER = ".bielik"  # in a workspace folder: dictionary.txt, ignored.txt


def user_dictionary() -> Path:
    """The user's dictionary file ($XDG_CONFIG_HOME or ~/.config, bielik-lsp/dictionary.txt)."""
    root = os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config"
    return Path(root) / "bielik-lsp" / "dictionary.txt"


def uri_path(uri: str) -> Path | None:
    """The local path of a file: URI (None for other schemes)."""
    parsed = urlparse(uri)
    return Path(unquote(parsed.path)) if parsed.scheme == "file" else None


@dataclass
class DocState:
    paragraphs: Paragraphs = field(default_factory=Paragraphs)
    version: int | None = None  # the document version `diagnostics` are for
    findings: list[Finding] = field(default_factory=list)
    diagnostics: list[types.Diagnostic] = field(default_factory=list)
    result_id: str = ""
    task: asyncio.Future | None = None  # the debounced check and model pass
    grammar_later: bool = False  # the last pass left edited paragraphs' grammar for a pause


class Words:
    """What the writer accepted: dictionaries (user, workspace folders, setting) and ignores."""

    def __init__(self, user: Path | None = None):
        self.user_path = user or user_dictionary()
        self.user = Accepted(read_words(self.user_path))
        self.folders: dict[Path, Accepted] = {}
        self.ignored: dict[str, set[str]] = {}  # uri -> lower-case words ignored there
        self.setting = Accepted()
        self.version = 0  # bumped on every change: cached results are per version

    def folder_of(self, uri: str, folders: list[Path]) -> Path | None:
        """The workspace folder holding the document (the deepest one)."""
        path = uri_path(uri)
        inside = [f for f in folders if path is not None and path.is_relative_to(f)]
        return max(inside, key=lambda f: len(f.parts), default=None)

    def folder(self, root: Path) -> Accepted:
        if root not in self.folders:
            self.folders[root] = Accepted(read_words(root / FOLDER / "dictionary.txt"))
            for line in read_words(root / FOLDER / "ignored.txt"):
                path, _, word = line.partition("\t")
                if word:
                    uri = (root / path).as_uri()
                    self.ignored.setdefault(uri, set()).add(word.lower())
        return self.folders[root]

    def use_setting(self, words: tuple[str, ...]) -> None:
        if tuple(self.setting.words) != words:
            self.setting = Accepted(words)
            self.version += 1

    def allowed(self, uri: str, folders: list[Path]):
        """The checker's `allowed(word)` for one document."""
        root = self.folder_of(uri, folders)
        accepted = [self.user, self.setting, *([self.folder(root)] if root else [])]
        ignored = self.ignored.get(uri, set())
        return lambda word: word.lower() in ignored or any(word in a for a in accepted)

    def add(self, word: str, scope: str, uri: str | None, folders: list[Path]) -> Path:
        """Accept `word` (and its forms) for the user or the document's workspace folder."""
        if scope == "workspace":
            root = self.folder_of(uri or "", folders)
            if root is None:
                raise ValueError("the document is in no workspace folder: add it for the user")
            accepted, path = self.folder(root), root / FOLDER / "dictionary.txt"
        else:
            accepted, path = self.user, self.user_path
        if accepted.add(word):
            append_word(path, word)
        self.version += 1
        return path

    def ignore(self, uri: str, word: str, folders: list[Path]) -> Path | None:
        """Ignore `word` in one document; kept in its folder's ignored.txt if it has one."""
        self.ignored.setdefault(uri, set()).add(word.lower())
        self.version += 1
        root = self.folder_of(uri, folders)
        path = uri_path(uri)
        if root is None or path is None:
            return None
        target = root / FOLDER / "ignored.txt"
        append_word(target, f"{path.relative_to(root).as_posix()}\t{word}")
        return target


class SpellingState:
    """Every open document's spelling, and the writer's words."""

    def __init__(self) -> None:
        self.docs: dict[str, DocState] = {}
        self.words: Words | None = None  # read on first use (the user's file)
        self.ranked: dict[tuple[str, int, int], Finding | None] = {}  # the model's verdicts
        self.waiting = 0  # completion requests not yet answered: the dictionary pass waits

    def doc(self, uri: str) -> DocState:
        return self.docs.setdefault(uri, DocState())

    def accepted(self) -> Words:
        if self.words is None:
            self.words = Words()
        return self.words

    def close(self, uri: str) -> None:
        state = self.docs.pop(uri, None)
        if state is not None and state.task is not None:
            state.task.cancel()


class Positions:
    """Code point offsets of one text as LSP positions (line starts found once).

    Offsets asked in order (findings are) convert from the last one asked, not from the line's
    start, so a document of one 200,000-character line with thousands of findings stays linear.
    """

    def __init__(self, text: str, encoding: str):
        self.text, self.encoding = text, encoding
        self.starts = line_starts(text)
        self._last = (-1, 0, 0)  # (line, offset, its column) of the last position asked

    def at(self, offset: int) -> types.Position:
        line = bisect.bisect_right(self.starts, offset) - 1
        last_line, base, column = self._last
        if last_line != line or base > offset:
            base, column = self.starts[line], 0
        column += index_to_column(self.text[base:offset], offset - base, self.encoding)
        self._last = (line, offset, column)
        return types.Position(line=line, character=column)


def message(finding: Finding) -> str:
    """'zaczoł': unknown: ... Did you mean: zaczął? (or the nearest known forms, or none)."""
    text = f"“{finding.word}”: {REASONS.get(finding.reason, finding.reason)}"
    shown = ", ".join(finding.suggestions[:3])
    if finding.suggestions and slip(finding):
        text += f". Did you mean: {shown}?"
    elif finding.suggestions:
        text += f". Nearest known forms: {shown}. If it is right, add it to the dictionary"
    elif finding.reason == "unknown":
        text += ". If it is right, add it to the dictionary"
    if finding.ranked_by == "model":
        text += " (ranked by the model in this sentence)"
    return text


def diagnostic(finding: Finding, positions: Positions) -> types.Diagnostic:
    return types.Diagnostic(
        range=types.Range(start=positions.at(finding.start), end=positions.at(finding.end)),
        message=message(finding),
        severity=types.DiagnosticSeverity.Information,
        source=SOURCE,
        code=finding.reason,
        data={"word": finding.word, "suggestions": list(finding.suggestions)},
    )


def code_actions(
    uri: str, diagnostics: list[types.Diagnostic], workspace: bool
) -> list[types.CodeAction]:
    """Per spelling diagnostic: its corrections (the first preferred), then accept or ignore."""
    actions: list[types.CodeAction] = []
    for d in diagnostics:
        data = d.data if isinstance(d.data, dict) else {}
        if d.source != SOURCE or not isinstance(data.get("word"), str):
            continue
        word = data["word"]
        actions += replacements(uri, d, data.get("suggestions") or [])
        scopes = [("user", "to the dictionary")]
        if workspace:
            scopes.append(("workspace", "to the workspace dictionary"))
        for scope, where in scopes:
            actions.append(
                _command(
                    f"Add “{word}” {where} (all its forms)",
                    d,
                    types.Command(
                        title="Add to dictionary",
                        command=ADD_WORD,
                        arguments=[{"word": word, "scope": scope, "uri": uri}],
                    ),
                )
            )
        actions.append(
            _command(
                f"Ignore “{word}” in this file",
                d,
                types.Command(
                    title="Ignore in this file",
                    command=IGNORE_WORD,
                    arguments=[{"uri": uri, "word": word}],
                ),
            )
        )
    return actions


def replacements(uri: str, d: types.Diagnostic, fixes: list[str]) -> list[types.CodeAction]:
    """A quick fix per correction, writing it over the diagnostic's range; the first preferred.

    Spelling's and grammar's alike.
    """
    return [
        types.CodeAction(
            title=f"Replace with “{fix.strip()}”",
            kind=types.CodeActionKind.QuickFix,
            diagnostics=[d],
            edit=types.WorkspaceEdit(changes={uri: [types.TextEdit(range=d.range, new_text=fix)]}),
            is_preferred=i == 0,
        )
        for i, fix in enumerate(fixes)
    ]


def _command(title: str, d: types.Diagnostic, command: types.Command) -> types.CodeAction:
    return types.CodeAction(
        title=title, kind=types.CodeActionKind.QuickFix, diagnostics=[d], command=command
    )
