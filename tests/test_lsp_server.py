"""End to end: the real server process over stdio, driven by pytest-lsp, with embedded models."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import converters, types
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig, LanguageClient

from lsp_server.compat import send_raw_request

ROOT = Path(__file__).resolve().parent.parent
pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]

TEXT = (
    "W początkach roku 1878, kiedy świat polityczny zajmował się pokojem san-stefańskim, "
    "warszawscy kupcy tudzież inteligencja pewnej okolicy Krakowskiego Przedmieścia niemniej "
    "gorąco interesowała się przyszłością galanteryjnego sklepu pod firmą "
    "J. Mincel i S. Wokulski.\n\n"
    "W renomowanej jadłodajni, gdzie na wieczorną przekąskę zbierali się właściciele składów"
)


class Editor:
    """The client side of open documents: applies the server's edits and echoes didChange."""

    def __init__(self, client: LanguageClient):
        self.client, self.texts, self.versions, self.statuses = client, {}, {}, []
        self.n = 0

    def open(self, text: str, name: str | None = None) -> str:
        self.n += 1
        uri = f"file:///tmp/{name or f'doc{self.n}.md'}"
        self.texts[uri], self.versions[uri] = text, 1
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=uri, language_id="markdown", version=1, text=text
                )
            )
        )
        return uri

    def end(self, uri: str) -> types.Position:
        lines = self.texts[uri].split("\n")
        return types.Position(
            line=len(lines) - 1, character=len(lines[-1].encode("utf-16-le")) // 2
        )

    def type(self, uri: str, text: str) -> None:
        """Insert `text` at the end of the document, as a user typing."""
        pos = self.end(uri)
        self.change(uri, types.Range(start=pos, end=pos), text)

    def change(self, uri: str, rng: types.Range, text: str) -> None:
        lines = self.texts[uri].split("\n")

        def off(p):  # ASCII-safe enough for the ends of these documents: count UTF-16 on the line
            line = lines[p.line]
            i, used = 0, 0
            while i < len(line) and used < p.character:
                used += len(line[i].encode("utf-16-le")) // 2
                i += 1
            return sum(len(line) + 1 for line in lines[: p.line]) + i

        a, b = off(rng.start), off(rng.end)
        self.texts[uri] = self.texts[uri][:a] + text + self.texts[uri][b:]
        self.versions[uri] += 1
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(
                    uri=uri, version=self.versions[uri]
                ),
                content_changes=[types.TextDocumentContentChangePartial(range=rng, text=text)],
            )
        )

    def apply(self, params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        for change in params.edit.document_changes:
            uri = change.text_document.uri
            if change.text_document.version != self.versions[uri]:
                return types.ApplyWorkspaceEditResult(
                    applied=False, failure_reason="version mismatch"
                )
            for edit in change.edits:
                self.change(uri, edit.range, edit.new_text)
        return types.ApplyWorkspaceEditResult(applied=True)


@pytest_lsp.fixture(
    scope="module",
    config=ClientServerConfig(
        server_command=[sys.executable, "-m", "app.cli", "serve"],
        server_env={**os.environ, "PYTHONPATH": str(ROOT)},
    ),
)
async def client(lsp_client: LanguageClient):
    result = await initialize_as_editor(
        lsp_client,
        {
            "debounceMs": 20,
            "inlineMaxTokens": 12,
            "timeBudgetMs": 20000,
            "suggestionMs": 20000,
            "prepareNext": False,  # counted model runs stay those of the requests
        },
    )
    assert result.capabilities.inline_completion_provider is not None
    yield
    await lsp_client.shutdown_session()


async def initialize_as_editor(
    client: LanguageClient, options: dict, wait_s: float = 300
) -> types.InitializeResult:
    """Initialize as an editor that applies edits and shows progress; wait for `ready`.

    Up to `wait_s`: a loaded CI machine may convert the models first.
    """
    editor = Editor(client)
    client.editor = editor
    client.feature(types.WORKSPACE_APPLY_EDIT)(lambda ls, params: editor.apply(params))
    client.feature("bielik/status")(lambda ls, params: editor.statuses.append(params))
    result = await client.initialize_session(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(
                window=types.WindowClientCapabilities(work_done_progress=True),
                workspace=types.WorkspaceClientCapabilities(
                    apply_edit=True,
                    workspace_edit=types.WorkspaceEditClientCapabilities(document_changes=True),
                ),
            ),
            initialization_options=options,
        )
    )
    for _ in range(int(wait_s / 0.2)):
        if any(s.state in ("ready", "error") for s in editor.statuses):
            break
        await asyncio.sleep(0.2)
    assert editor.statuses[-1].state == "ready", editor.statuses[-1]
    return result


def inline(client: LanguageClient, uri: str, pos: types.Position):
    return client.text_document_inline_completion_async(
        types.InlineCompletionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=pos,
            context=types.InlineCompletionContext(
                trigger_kind=types.InlineCompletionTriggerKind.Automatic
            ),
        )
    )


async def stats(client: LanguageClient, uri: str | None = None) -> dict:
    return await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="bielik.showStats", arguments=[uri] if uri else [])
    )


async def test_loading_reported_with_progress(client: LanguageClient):
    states = [s.state for s in client.editor.statuses]
    assert states[0] == "loading" and "ready" in states
    loads = [
        r for r in client.progress_reports.values() if r and r[0].title == "Bielik: loading models"
    ]
    assert loads and isinstance(loads[0][-1], types.WorkDoneProgressEnd)


async def test_inline_completion_for_polish(client: LanguageClient):
    uri = client.editor.open(TEXT)
    result = await inline(client, uri, client.editor.end(uri))
    assert 1 <= len(result.items) <= 3
    text = result.items[0].insert_text
    assert text.strip() and "\ufffd" not in text
    assert text[0].isspace() or text[0] in ",.;:"  # the cursor is after a whole word
    # Typing the first letters of the suggestion keeps it, without a model run.
    before = (await stats(client, uri))["files"][uri]
    typed = text[: text.index(" ", 1) if " " in text[1:] else len(text) - 1]
    client.editor.type(uri, typed)
    again = await inline(client, uri, client.editor.end(uri))
    assert again.items[0].insert_text == text[len(typed) :]
    after = (await stats(client, uri))["files"][uri]
    assert after["cache_hits"] == before["cache_hits"] + 1
    assert after["generated_tokens"] == before["generated_tokens"]


async def test_a_long_new_document_is_answered_from_its_last_lines_first(client: LanguageClient):
    """Its whole prompt (about 2000 ids) would keep the first request waiting for seconds.

    The short prompt answers it; the whole one is prefilled behind; the next request reads it.
    """
    uri = client.editor.open("\n\n".join([TEXT] * 14))
    first = await inline(client, uri, client.editor.end(uri))
    counts = (await stats(client, uri))["files"][uri]
    assert counts["near"] == 1 and counts["generated_tokens"] > 0, counts
    assert all("\ufffd" not in i.insert_text for i in first.items)
    for _ in range(600):  # the whole prompt, in the background (seconds; a minute on a slow CI)
        if (await stats(client, uri))["files"][uri]["warmups"]:
            break
        await asyncio.sleep(0.2)
    client.editor.type(uri, " Był")
    await inline(client, uri, client.editor.end(uri))
    counts = (await stats(client, uri))["files"][uri]
    assert counts["warmups"] == 1 and counts["near"] == 1 and counts["requests"] == 2, counts


async def test_text_after_cursor_is_not_repeated(client: LanguageClient):
    uri = client.editor.open("Ala ma kota. Kot ma Alę. Ala ma kota. Kot ma Alę. Ala ma kota.")
    result = await inline(
        client, uri, types.Position(line=0, character=len("Ala ma kota. Kot ma Alę. Ala ma"))
    )
    assert not any(i.insert_text.strip().startswith("kota.") for i in result.items), [
        (i.insert_text, i.command) for i in result.items
    ]


async def test_inside_a_document_a_suggestion_joins_the_text_after_or_stops_before_it(
    client: LanguageClient,
):
    """The following lines are in the prompt; no item repeats them; one that joins comes first."""
    line = "Art. {n}. Rzeczpospolita Polska jest dobrem wspólnym wszystkich obywateli."
    text = "\n".join(line.format(n=n) for n in range(1, 9)).replace(
        "5. Rzeczpospolita Polska jest dobrem ", "5. Rzeczpospolita Polska jest "
    )
    uri = client.editor.open(text)
    head = "Art. 5. Rzeczpospolita Polska jest "
    after = text[text.index(head) + len(head) :]
    result = await inline(client, uri, types.Position(line=4, character=len(head)))
    assert result.items
    for item in result.items:
        inserted = item.insert_text
        assert "Art. 6." not in inserted and "wspólnym" not in inserted, inserted
    assert result.items[0].insert_text == "dobrem ", result.items  # joins "wspólnym ..." exactly
    assert head + result.items[0].insert_text + after.split("\n")[0] == line.format(n=5)


async def test_alternatives_from_the_ring_counted_per_kind(client: LanguageClient):
    """Alternatives: what followed the same words in another open document (the ring's lookup).

    No item twice; shown and accepted counts are kept per kind; with the ring off, no lookup
    in the other document.
    """
    other = client.editor.open(
        "Zamawiający zapłaci wynagrodzenie przelewem w terminie czternastu dni od dnia "
        "doręczenia prawidłowo wystawionej faktury.\n"
    )
    uri = client.editor.open("Umowa.\n\nZamawiający zapłaci wynagrodzenie przelewem ")
    params = types.InlineCompletionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        position=client.editor.end(uri),
        context=types.InlineCompletionContext(
            trigger_kind=types.InlineCompletionTriggerKind.Invoked
        ),
    )
    result = await client.text_document_inline_completion_async(params)
    texts = [i.insert_text for i in result.items]
    assert any(t.startswith("w terminie czternastu dni") for t in texts), texts
    assert len(set(texts)) == len(texts) <= 3
    f = (await stats(client, uri))["files"][uri]
    kinds = f["kinds"]
    assert kinds["lookup"]["delivered"] == 1 and sum(k["delivered"] for k in kinds.values()) == len(
        texts
    )
    assert f["warmups"] + f["requests"] >= 1
    for item in result.items:  # each shown, then accepted
        client.protocol.notify(
            "textDocument/didShowCompletion",
            {"item": converters.get_converter().unstructure(item)},
        )
        await client.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command=item.command.command, arguments=item.command.arguments
            )
        )
    kinds = (await stats(client, uri))["files"][uri]["kinds"]
    assert kinds["lookup"]["shown"] == kinds["lookup"]["accepted"] == 1
    assert sum(k["shown"] for k in kinds.values()) == len(texts)
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"ring": False})
    )
    await asyncio.sleep(0.1)
    fresh = client.editor.open("Umowa druga.\n\nZamawiający zapłaci wynagrodzenie przelewem ")
    params.text_document = types.TextDocumentIdentifier(uri=fresh)
    params.position = client.editor.end(fresh)
    result = await client.text_document_inline_completion_async(params)
    assert not any(i.insert_text.startswith("w terminie czternastu") for i in result.items)
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"ring": True})
    )
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(other))
    )


async def test_explicit_request_gets_a_different_sampled_item(client: LanguageClient):
    """Alt+] (an explicit request) shows a sampled item that is not the greedy one or its start.

    The model's draws often repeat the greedy text; a draw that would show nothing new is redrawn.
    """
    uri = client.editor.open("Zamówienie.\n\nDostawca dostarczy towar do magazynu ", "alt.md")
    params = types.InlineCompletionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        position=client.editor.end(uri),
        context=types.InlineCompletionContext(
            trigger_kind=types.InlineCompletionTriggerKind.Invoked
        ),
    )
    texts = [
        i.insert_text for i in (await client.text_document_inline_completion_async(params)).items
    ]
    kinds = (await stats(client, uri))["files"][uri]["kinds"]
    assert kinds["model"]["delivered"] == kinds["sampled"]["delivered"] == 1, (kinds, texts)
    assert len(texts) == len(set(texts)) >= 2
    assert not any(a != b and a.rstrip() and b.startswith(a.rstrip()) for a in texts for b in texts)


async def test_cancel_request_gives_32800(client: LanguageClient):
    uri = client.editor.open(TEXT)
    params = types.InlineCompletionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        position=client.editor.end(uri),
        context=types.InlineCompletionContext(
            trigger_kind=types.InlineCompletionTriggerKind.Invoked
        ),
    )
    future = asyncio.ensure_future(
        client.protocol.send_request_async(
            types.TEXT_DOCUMENT_INLINE_COMPLETION, params, msg_id="cancel-me"
        )
    )
    await asyncio.sleep(0.05)
    client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="cancel-me"))
    with pytest.raises(JsonRpcException) as err:
        await future
    assert err.value.code == -32800


async def test_superseded_request_delivers_no_stale_suggestion(client: LanguageClient):
    uri = client.editor.open(TEXT)
    first = asyncio.ensure_future(inline(client, uri, client.editor.end(uri)))
    await asyncio.sleep(0.005)
    client.editor.type(uri, " i")
    second = await inline(client, uri, client.editor.end(uri))
    assert not (await first).items
    assert len(second.items) <= 3
    assert (await stats(client, uri))["files"][uri]["superseded"] >= 1


async def test_continue_document_streams_edits_and_stops_on_cancel(client: LanguageClient):
    uri = client.editor.open(TEXT)
    original = client.editor.texts[uri]
    done = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(
            command="bielik.continueDocument", arguments=[{"uri": uri, "maxTokens": 10}]
        )
    )
    assert done["text"] and client.editor.texts[uri] == original + done["text"]
    assert done["stopReason"] in ("max_tokens", "paragraph", "eos")
    token, reports = next(
        (t, r)
        for t, r in client.progress_reports.items()
        if r and r[0].title == "Bielik: continuing the document" and t
    )
    assert isinstance(reports[-1], types.WorkDoneProgressEnd)
    # $/cancelRequest stops it: -32800, and the document keeps only what was applied.
    future = asyncio.ensure_future(
        client.protocol.send_request_async(
            types.WORKSPACE_EXECUTE_COMMAND,
            types.ExecuteCommandParams(
                command="bielik.continueDocument", arguments=[uri, None, 200]
            ),
            msg_id="continue-cancel",
        )
    )
    await asyncio.sleep(1.5)
    client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="continue-cancel"))
    with pytest.raises(JsonRpcException) as err:
        await future
    assert err.value.code == -32800
    await asyncio.sleep(0.5)  # an edit already on its way when the cancel came may still land
    applied = client.editor.texts[uri]
    await asyncio.sleep(1.0)
    assert client.editor.texts[uri] == applied  # nothing more arrives after the cancel


async def test_toggle_and_magic_comment_change_speculation(client: LanguageClient):
    text = (
        "Liczymy: jeden, dwa, trzy, cztery, pięć, sześć, siedem, osiem, dziewięć, dziesięć. " * 3
        + "Jeden, dwa,"
    )
    uri = client.editor.open(text)
    off = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="bielik.toggleSpeculation", arguments=[uri, "off"])
    )
    assert off["drafter"] == "none"
    await inline(client, uri, client.editor.end(uri))
    f = (await stats(client, uri))["files"][uri]
    assert f["drafted"] == 0 and f["speculation"] == "off" and f["source"] == "toggle"
    uri = client.editor.open(
        text
    )  # a fresh file: the same text would come from the suggestion cache
    on = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="bielik.toggleSpeculation", arguments=[uri, "on"])
    )
    assert on["drafter"] == "auto"  # the default drafter; "on" makes auto speculate even on prose
    await inline(client, uri, client.editor.end(uri))
    f = (await stats(client, uri))["files"][uri]
    assert f["drafted"] > 0 and f["speculation"] == "on"

    magic = client.editor.open("<!-- bielik: speculation=off -->\n" + text)
    await inline(client, magic, client.editor.end(magic))
    f = (await stats(client, magic))["files"][magic]
    assert f["drafted"] == 0 and f["source"] == "magic comment"
    assert client.editor.statuses[-1].speculation == "off"


async def test_configuration_change_takes_effect_and_bad_values_are_refused(client: LanguageClient):
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"bielik": {"inlineMaxTokens": 3, "k": 2}})
    )
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"k": "many"})
    )
    await asyncio.sleep(0.2)
    config = (await stats(client))["config"]
    assert config["inlineMaxTokens"] == 3 and config["k"] == 2
    assert any("k must be an integer" in m.message for m in client.messages)
    uri = client.editor.open(TEXT)
    await inline(client, uri, client.editor.end(uri))
    assert (await stats(client, uri))["files"][uri]["generated_tokens"] <= 3
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"inlineMaxTokens": 12, "k": 4})
    )


async def test_bad_requests_get_errors_and_the_server_keeps_serving(client: LanguageClient):
    async def code(method, params):
        with pytest.raises(JsonRpcException) as err:
            await client.protocol.send_request_async(method, params)
        return err.value.code

    malformed = send_raw_request(
        client,
        "malformed",
        types.TEXT_DOCUMENT_INLINE_COMPLETION,
        {"textDocument": {"uri": "file:///x"}},
    )
    with pytest.raises(JsonRpcException) as err:
        await malformed
    assert err.value.code == -32602
    # Inline requests never answer with an error (a client may pop each one up): no suggestion,
    # the cause in the status and, once, in a message.
    shown = len(client.messages)
    unknown = types.TextDocumentIdentifier(uri="file:///never-opened.md")
    uri = client.editor.open("Zażółć 😀 gęślą jaźń")
    binary = client.editor.open("abc\x00\x01\x02def")
    for _ in range(3):
        for doc, pos in (
            (unknown, types.Position(line=0, character=0)),
            (types.TextDocumentIdentifier(uri=uri), types.Position(line=5, character=0)),
            (types.TextDocumentIdentifier(uri=binary), types.Position(line=0, character=2)),
        ):
            result = await client.text_document_inline_completion_async(
                types.InlineCompletionParams(
                    text_document=doc,
                    position=pos,
                    context=types.InlineCompletionContext(
                        trigger_kind=types.InlineCompletionTriggerKind.Invoked
                    ),
                )
            )
            assert not result.items
    await asyncio.sleep(0.2)
    new = [m.message for m in client.messages[shown:]]
    assert len(new) == 3 and any("binary" in m for m in new), new
    assert any(s.message and "binary" in s.message for s in client.editor.statuses[-9:])
    inside_pair = await inline(
        client, uri, types.Position(line=0, character=8)
    )  # between the surrogates
    assert all("\ufffd" not in i.insert_text for i in inside_pair.items)
    # Commands still answer with clear errors.
    assert (
        await code(
            types.WORKSPACE_EXECUTE_COMMAND,
            types.ExecuteCommandParams(command="bielik.continueDocument", arguments=[binary]),
        )
        == -32803
    )
    assert (
        await code(
            types.WORKSPACE_EXECUTE_COMMAND,
            types.ExecuteCommandParams(
                command="bielik.toggleSpeculation", arguments=[uri, "sometimes"]
            ),
        )
        == -32602
    )
    many = [inline(client, uri, types.Position(line=0, character=c)) for c in range(0, 20, 2)]
    results = await asyncio.gather(*many)
    assert all(len(r.items) <= 3 for r in results)
    ok = await inline(client, uri, client.editor.end(uri))
    assert isinstance(ok, types.InlineCompletionList)


async def test_form_feed_keeps_edits_on_their_lsp_line(client: LanguageClient):
    r"""LSP lines end at \n, \r\n, \r only: an edit after a form feed stays where it was made.

    So continueDocument appends exactly at the end of the editor's document.
    """
    text = "Art. 1.\fArt. 2. Ustawa wchodzi w życie.\nArt. 3. Przepisy"
    uri = client.editor.open(text)
    client.editor.type(uri, " końcowe")  # on LSP line 1, the line after the form feed's line
    done = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(
            command="bielik.continueDocument", arguments=[{"uri": uri, "maxTokens": 4}]
        )
    )
    assert done["stopReason"] != "edited", done
    assert client.editor.texts[uri] == text + " końcowe" + done["text"]


async def test_items_carry_the_accept_command_and_stats_count_what_users_take(
    client: LanguageClient,
):
    uri = client.editor.open(TEXT)
    result = await inline(client, uri, client.editor.end(uri))
    item = result.items[0]
    assert item.command.command == "bielik.accepted" and item.command.arguments[0] == uri
    shown = {"item": converters.get_converter().unstructure(item)}
    client.protocol.notify("textDocument/didShowCompletion", shown)
    for length in (3, 8):  # a word, then the next: acceptedLength is what the text holds
        client.protocol.notify(
            "textDocument/didPartiallyAcceptCompletion", {**shown, "acceptedLength": length}
        )
    await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=item.command.command, arguments=item.command.arguments)
    )
    f = (await stats(client, uri))["files"][uri]
    assert (f["shown"], f["partially_accepted"], f["accepted_chars"]) == (1, 2, 8)
    assert f["suggestions_accepted"] == 1


async def test_inline_requests_go_before_a_running_continue(client: LanguageClient):
    uri = client.editor.open(TEXT)
    other = client.editor.open(TEXT.replace("kupcy", "kupcy i rzemieślnicy"))
    run = asyncio.ensure_future(
        client.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command="bielik.continueDocument", arguments=[{"uri": uri, "maxTokens": 400}]
            )
        )
    )
    await asyncio.sleep(1.0)
    quick = await inline(client, other, client.editor.end(other))
    assert quick.items
    done = await run
    assert done["resumed"] >= 1, done  # it stepped aside and went on afterwards
    assert client.editor.texts[uri] == TEXT + done["text"]


async def test_prepared_suggestion_serves_the_text_after_an_accept(client: LanguageClient):
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"prepareNext": True})
    )
    await asyncio.sleep(0.1)
    uri = client.editor.open(TEXT)
    first = (await inline(client, uri, client.editor.end(uri))).items[0].insert_text
    # The user reads until the next suggestion is prepared: polled, up to 120 s (a fixed 8 s
    # wasted most of itself on an idle machine and could be too short on a loaded one).
    for _ in range(600):
        if (await stats(client, uri))["files"].get(uri, {}).get("prepared", 0) >= 1:
            break
        await asyncio.sleep(0.2)
    client.editor.type(uri, first)  # accepted
    await inline(client, uri, client.editor.end(uri))
    f = (await stats(client, uri))["files"][uri]
    assert f["prepared"] >= 1 and f["prepared_used"] + f["cache_hits"] >= 1, f
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"prepareNext": False})
    )
