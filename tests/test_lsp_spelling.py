"""Spelling over LSP: the real server process over stdio, with the embedded models.

Diagnostics (pushed, and pulled as LSP 3.17 clients do), quick fixes that write the correction,
"add to dictionary" with all the word's forms (user and workspace), "ignore in this file", the
magic comment and the per-language setting, and a long document that never holds up a
completion request.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.test_lsp_server import Editor, inline

ROOT = Path(__file__).resolve().parent.parent
HOME = Path(tempfile.mkdtemp(prefix="bielik-spelling-"))  # the user's config folder
WORKSPACE = HOME / "workspace"
pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]
ZACZOL = "Wczoraj wieczorem zaczoł padać deszcz, więc zostaliśmy w domu.\n"


@pytest_lsp.fixture(
    scope="module",
    config=ClientServerConfig(
        server_command=[sys.executable, "-m", "app.cli", "serve"],
        server_env={**os.environ, "PYTHONPATH": str(ROOT), "XDG_CONFIG_HOME": str(HOME)},
    ),
)
async def client(lsp_client: LanguageClient):
    WORKSPACE.mkdir(parents=True, exist_ok=True)
    editor = Editor(lsp_client)
    lsp_client.editor = editor
    lsp_client.feature("bielik/status")(lambda ls, params: editor.statuses.append(params))
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(
                workspace=types.WorkspaceClientCapabilities(apply_edit=True),
            ),
            workspace_folders=[types.WorkspaceFolder(uri=WORKSPACE.as_uri(), name="workspace")],
            initialization_options={
                "debounceMs": 20,
                "spellingDelayMs": 50,
                "timeBudgetMs": 20000,
                "suggestionMs": 20000,
                "inlineMaxTokens": 8,
                "prepareNext": False,
            },
        )
    )
    for _ in range(1500):
        if any(s.state in ("ready", "error") for s in editor.statuses):
            break
        await asyncio.sleep(0.2)
    assert editor.statuses[-1].state == "ready", editor.statuses[-1]
    yield
    await lsp_client.shutdown_session()
    shutil.rmtree(HOME, ignore_errors=True)


def open_doc(client: LanguageClient, text: str, name: str, language: str = "markdown") -> str:
    uri = (WORKSPACE / name).as_uri()
    editor = client.editor
    editor.texts[uri], editor.versions[uri] = text, 1
    client.diagnostics.pop(uri, None)
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id=language, version=1, text=text
            )
        )
    )
    return uri


async def diagnostics_of(client: LanguageClient, uri: str, check=lambda d: True, wait_s=120):
    """The diagnostics pushed for `uri` once `check(diagnostics)` holds."""
    for _ in range(int(wait_s / 0.05)):
        found = client.diagnostics.get(uri)
        if found is not None and check(found):
            return found
        await asyncio.sleep(0.05)
    raise AssertionError(f"no such diagnostics for {uri}: {client.diagnostics.get(uri)}")


def words_of(diagnostics) -> list[str]:
    return [d.data["word"] for d in diagnostics]


async def test_zaczol_gets_a_diagnostic_and_a_quick_fix_that_writes_zaczal(client):
    uri = open_doc(client, ZACZOL, "zaczol.md")
    found = await diagnostics_of(client, uri, lambda d: "zaczoł" in words_of(d))
    (d,) = [d for d in found if d.data["word"] == "zaczoł"]
    assert (d.range.start.line, d.range.start.character, d.range.end.character) == (0, 18, 24)
    assert d.source == "bielik-spelling" and "zaczął" in d.message
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=d.range,
            context=types.CodeActionContext(diagnostics=[d]),
        )
    )
    fix = actions[0]
    assert fix.is_preferred and fix.kind == types.CodeActionKind.QuickFix
    (edit,) = fix.edit.changes[uri]
    assert edit.new_text == "zaczął"
    titles = [a.title for a in actions]
    assert any("dictionary" in t for t in titles) and any("Ignore" in t for t in titles)
    client.editor.change(uri, edit.range, edit.new_text)  # the editor applies it
    assert client.editor.texts[uri].startswith("Wczoraj wieczorem zaczął padać")
    await diagnostics_of(client, uri, lambda d: "zaczoł" not in words_of(d))


async def test_a_name_written_small_and_an_unknown_word_get_their_fixes(client):
    text = "Rywalizował skutecznie z francją.\n\nStała tam szafa treliażowej konstrukcji.\n"
    uri = open_doc(client, text, "case.md")
    found = await diagnostics_of(client, uri, lambda d: len(d) == 2)
    name, unknown = found
    assert (name.data["word"], name.code, name.data["suggestions"][0]) == (
        "francją",
        "case",
        "Francją",
    )
    assert (unknown.data["word"], unknown.code, unknown.data["suggestions"]) == (
        "treliażowej",
        "unknown",
        [],
    )
    assert "unknown word" in unknown.message and "add it to the dictionary" in unknown.message
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=unknown.range,
            context=types.CodeActionContext(diagnostics=[unknown]),
        )
    )
    assert [a.title for a in actions][:2] == [  # no correction: adding it comes first
        "Add “treliażowej” to the dictionary (all its forms)",
        "Add “treliażowej” to the workspace dictionary (all its forms)",
    ]


async def test_a_pulling_client_gets_the_same_diagnostics(client):
    uri = open_doc(client, "Nie wiem, czy sie uda.\n", "pull.md")
    report = await client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    assert words_of(report.items) == ["sie"] and report.items[0].data["suggestions"][0] == "się"
    again = await client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            previous_result_id=report.result_id,
        )
    )
    assert again.kind == "unchanged"


async def test_code_spans_urls_paths_and_options_are_left_alone(client):
    text = (
        "Uruchom `zaczoł --wogule` i zobacz https://example.com/wogule/zaczoł.\n\n"
        "Plik /etc/wogule.conf, adres zaczoł@example.com, opcja --zaczoł=1.\n\n"
        "Tu jednak sie myli.\n"
    )
    uri = open_doc(client, text, "code.md")
    found = await diagnostics_of(client, uri)
    assert words_of(found) == ["sie"]


async def test_adding_a_word_accepts_all_its_forms_for_the_user_and_the_workspace(client):
    uri = open_doc(client, "Wysłałem dżejsony. Bez dżejsonów i z dżejsonem.\n", "json.md")
    found = await diagnostics_of(client, uri, lambda d: len(d) == 3)
    assert words_of(found) == ["dżejsony", "dżejsonów", "dżejsonem"]
    result = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(
            command="bielik.addWord", arguments=[{"word": "dżejsony", "scope": "user"}]
        )
    )
    assert Path(result["path"]) == HOME / "bielik-lsp" / "dictionary.txt"
    assert (HOME / "bielik-lsp" / "dictionary.txt").read_text(encoding="utf-8") == "dżejsony\n"
    await diagnostics_of(client, uri, lambda d: not d)
    other = open_doc(client, "Fajne hajtki i hajtkami.\n", "hajtki.md")
    await diagnostics_of(client, other, lambda d: len(d) == 2)
    await client.workspace_execute_command_async(
        types.ExecuteCommandParams(
            command="bielik.addWord",
            arguments=[{"word": "hajtki", "scope": "workspace", "uri": other}],
        )
    )
    saved = WORKSPACE / ".bielik" / "dictionary.txt"
    assert saved.read_text(encoding="utf-8") == "hajtki\n"
    await diagnostics_of(client, other, lambda d: not d)


async def test_ignoring_a_word_in_one_file_leaves_it_questioned_elsewhere(client):
    first = open_doc(client, "To jest pszykład.\n", "first.md")
    second = open_doc(client, "I tu pszykład.\n", "second.md")
    await diagnostics_of(client, first, lambda d: words_of(d) == ["pszykład"])
    await client.workspace_execute_command_async(
        types.ExecuteCommandParams(
            command="bielik.ignoreWord", arguments=[{"uri": first, "word": "pszykład"}]
        )
    )
    await diagnostics_of(client, first, lambda d: not d)
    assert words_of(await diagnostics_of(client, second)) == ["pszykład"]
    ignored = (WORKSPACE / ".bielik" / "ignored.txt").read_text(encoding="utf-8")
    assert ignored == "first.md\tpszykład\n"


async def test_a_magic_comment_or_the_language_setting_turns_it_off(client):
    off = open_doc(client, "<!-- bielik: spelling=off -->\nzaczoł wogule\n", "off.md")
    assert not await diagnostics_of(client, off)
    python = open_doc(client, "# zaczoł\nx = 1\n", "code.py", language="python")
    assert not await diagnostics_of(client, python)
    plain = open_doc(client, "zaczoł\n", "plain.txt", language="plaintext")
    await diagnostics_of(client, plain, lambda d: words_of(d) == ["zaczoł"])
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"bielik": {"spellingLanguages": ["markdown"]}})
    )
    await diagnostics_of(client, plain, lambda d: not d)
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"bielik": {"spellingLanguages": None}})
    )
    await diagnostics_of(client, plain, lambda d: words_of(d) == ["zaczoł"])


async def test_a_long_document_does_not_delay_a_completion(client):
    """The dictionary pass over a long document steps aside for a completion.

    The completion asked right after the document opened is answered before that document's
    diagnostics are ready. The document is long enough (70,000 words, seconds of dictionary
    work) that a pass which did not step aside would finish first on any machine. The other
    document's prompt is read once before: a first completion in a document just opened (a
    cold prompt) can take as long as the whole pass on a fast machine.
    """
    paragraph = ZACZOL + "Nie wiem, czy sie uda, ale wogule warto spróbować jeszcze raz.\n\n"
    text = "".join(f"Akapit numer {i}.\n{paragraph}" for i in range(3000))
    short = client.editor.open("Wczoraj wieczorem poszliśmy na spacer nad rzekę i")
    assert (await inline(client, short, client.editor.end(short))).items
    long = open_doc(client, text, "long.md")
    result = await inline(client, short, client.editor.end(short))
    assert result.items and long not in client.diagnostics  # not checked to its end yet
    found = await diagnostics_of(client, long, wait_s=600)
    assert len(found) == 3 * 3000
