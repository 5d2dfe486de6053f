"""Grammar over LSP: the real server process over stdio, with the embedded models.

A rule's diagnostic at once and the model's a moment later, each with its own source and code;
the quick fix that writes the correction; grammarDisabledRules and grammar switching them off,
spelling left as it was.
"""

from __future__ import annotations

import asyncio

import pytest
from lsprotocol import types

from tests.test_lsp_spelling import client as spelling_client
from tests.test_lsp_spelling import diagnostics_of, open_doc

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]
TEXT = "Dzieci byli niegrzeczne. Jan powiedział że przyjdzie, ale zaczoł padać.\n"
# The spelling tests' server (its fixture, so one configuration), started for this module.
client = spelling_client


def found(diagnostics) -> set[tuple[str, str, str]]:
    return {(d.source, str(d.code), d.data["word"].strip()) for d in diagnostics}


async def test_grammar_diagnostics_have_their_source_code_and_quick_fix(client):
    uri = open_doc(client, TEXT, "grammar.md")
    expected = {
        ("bielik-grammar", "model", "byli"),
        ("bielik-grammar", "przecinek", "że"),
        ("bielik-spelling", "unknown", "zaczoł"),
    }
    diagnostics = await diagnostics_of(client, uri, lambda d: found(d) == expected)
    (d,) = [d for d in diagnostics if d.code == "model"]
    assert "były" in d.message and (d.range.start.character, d.range.end.character) == (7, 11)
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=d.range,
            context=types.CodeActionContext(diagnostics=[d]),
        )
    )
    (fix,) = actions  # no dictionary or ignore actions: these are real words
    assert fix.is_preferred and fix.title == "Replace with “były”"
    (edit,) = fix.edit.changes[uri]
    client.editor.change(uri, edit.range, edit.new_text)
    assert client.editor.texts[uri].startswith("Dzieci były niegrzeczne.")
    left = {e for e in expected if e[1] != "model"}
    await diagnostics_of(client, uri, lambda d: found(d) == left)


async def test_rules_and_grammar_are_switched_off_by_settings(client):
    uri = open_doc(client, TEXT, "settings.md")
    await diagnostics_of(client, uri, lambda d: len(found(d)) == 3)
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(
            settings={"bielik": {"grammarDisabledRules": ["przecinek"]}}
        )
    )
    await diagnostics_of(client, uri, lambda d: {c for _, c, _ in found(d)} == {"model", "unknown"})
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"bielik": {"grammar": False}})
    )
    await diagnostics_of(
        client, uri, lambda d: found(d) == {("bielik-spelling", "unknown", "zaczoł")}
    )


async def test_grammar_waits_while_the_writer_types(client):
    """Spelling follows each pause in typing; grammar, rules and model, only a longer one.

    Keystrokes 0.5 s apart: the spelling pass runs 0.4 s after each, grammar only once the
    writer has been quiet for 1.5 s (lsp_server/grammar.SETTLE_S), so it never takes the event
    loop or the engine from the next keystroke's ghost text.
    """
    client.workspace_did_change_configuration(  # as the server starts, whatever ran before
        types.DidChangeConfigurationParams(
            settings={"bielik": {"grammar": True, "grammarDisabledRules": []}}
        )
    )
    uri = open_doc(client, "Ala ma kota.", "typing.md")
    await diagnostics_of(client, uri)
    seen: set[tuple[str, str, str]] = set()
    client.editor.type(uri, " " + TEXT.strip())
    for _ in range(8):
        for _ in range(10):
            await asyncio.sleep(0.05)
            seen |= found(client.diagnostics.get(uri) or [])
        client.editor.type(uri, " ")
    assert not {s for s in seen if s[0] == "bielik-grammar"}, seen
    expected = {("bielik-grammar", "przecinek", "że"), ("bielik-spelling", "unknown", "zaczoł")}
    await diagnostics_of(client, uri, lambda d: expected <= found(d))
