"""The language server on a remote engine: real mlx_lm.server on 127.0.0.1, real LSP on stdio."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time

import pytest
import pytest_asyncio
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.servers import ROOT, InferenceServer
from tests.test_lsp_server import TEXT, initialize_as_editor, inline, stats

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]
KEY = "test-key-5bd1c0ffee"


@pytest.fixture(scope="module")
def server(request):
    srv = InferenceServer("mlx")
    failed = request.session.testsfailed
    srv.start()
    yield srv
    srv.stop(keep_log=request.session.testsfailed > failed)  # kept: why a test failed


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def client(server):
    config = ClientServerConfig(
        server_command=[sys.executable, "-m", "app.cli", "--target", server.url, "serve"],
        server_env={**os.environ, "PYTHONPATH": str(ROOT), "BIELIK_LSP_API_KEY": KEY},
    )
    lsp = await config.start()
    options = {
        "debounceMs": 20,
        "inlineMaxTokens": 12,
        "timeBudgetMs": 120000,
        "suggestionMs": 120000,
        "readTimeoutS": 300,
    }
    await initialize_as_editor(lsp, options, wait_s=120)
    yield lsp
    await lsp.shutdown_session()
    await lsp.stop()


async def continue_document(client: LanguageClient, uri: str, max_tokens: int) -> dict:
    return await client.workspace_execute_command_async(
        types.ExecuteCommandParams(
            command="bielik.continueDocument", arguments=[{"uri": uri, "maxTokens": max_tokens}]
        )
    )


async def test_inline_completion_through_the_server(client: LanguageClient):
    uri = client.editor.open(TEXT)
    result = await inline(client, uri, client.editor.end(uri))
    assert len(result.items) == 1
    text = result.items[0].insert_text
    assert text.strip() and (text[0].isspace() or text[0] in ",.;:")
    f = (await stats(client, uri))["files"][uri]
    assert f["generated_tokens"] > 0 and f["last_first_token_ms"] > 0
    assert any("server-side" in r for r in f["policy_reasons"])


async def test_continue_document_streams_from_the_server(client: LanguageClient):
    uri = client.editor.open(TEXT)
    original = client.editor.texts[uri]
    done = await continue_document(client, uri, 10)
    assert done["text"] and client.editor.texts[uri] == original + done["text"]
    assert done["stopReason"] in ("max_tokens", "paragraph", "eos")
    assert done["stats"]["server"]["wall_ms"] > 0


async def test_speculation_toggle_is_shown_as_server_side(client: LanguageClient):
    uri = client.editor.open(TEXT)
    off = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="bielik.toggleSpeculation", arguments=[uri, "off"])
    )
    assert off["speculation"] == "off"
    await inline(client, uri, client.editor.end(uri))
    f = (await stats(client, uri))["files"][uri]
    assert f["policy_reasons"] == ["server-side: the server cannot switch speculation per request"]


async def test_show_stats_describes_the_server_but_never_the_key(client: LanguageClient):
    report = await stats(client)
    assert report["engine"]["url"].endswith("/v1") and report["engine"]["up"] is True
    assert report["engine"]["api_key"] == "from $BIELIK_LSP_API_KEY"
    assert KEY not in json.dumps(report)


async def test_killed_server_gives_one_status_and_recovers(client: LanguageClient, server):
    editor = client.editor
    uri = editor.open(TEXT)
    seen = len(editor.statuses)
    job = asyncio.ensure_future(continue_document(client, uri, 400))
    original = editor.texts[uri]
    for _ in range(600):  # until the first streamed text has landed in the document
        if editor.texts[uri] != original:
            break
        await asyncio.sleep(0.1)
    server.kill()
    with pytest.raises(JsonRpcException, match="inference server"):
        await job
    for _ in range(50):
        if any(s.state == "unavailable" for s in editor.statuses[seen:]):
            break
        await asyncio.sleep(0.1)
    # While it is down: typing gets no suggestions, quickly, and no new status or popup.
    for _ in range(3):
        started = time.monotonic()
        assert not (await inline(client, uri, editor.end(uri))).items
        assert time.monotonic() - started < 2.0
    down = [s for s in editor.statuses[seen:] if s.state == "unavailable"]
    assert len(down) == 1 and "inference server" in down[0].message
    warnings = [m for m in client.messages if "inference server" in m.message]
    assert len(warnings) == 1
    server.start()
    for _ in range(1200):  # the background probe brings it back (back-off capped at 30 s)
        if editor.statuses[-1].state == "ready":
            break
        await asyncio.sleep(0.1)
    assert editor.statuses[-1].state == "ready"
    result = await inline(client, uri, editor.end(uri))
    assert len(result.items) == 1 and result.items[0].insert_text.strip()
