"""Loading never depends on the client.

Real LSP clients over stdio (pytest-lsp) that refuse the work-done progress request, never
answer it, or do not advertise progress all reach `ready` and get a suggestion; a load that
fails or hangs ends in `error` and a config change or `bielik.reload` recovers; a change made
during a load is applied after it.

The target is the embedded SmolLM2-135M with the lookup drafter (the fastest real model to load).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import sys
import weakref
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInternalError
from pytest_lsp import ClientServerConfig, LanguageClient
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

from lsp_server.language_server import PROGRESS_CREATE_S
from tests.test_lsp_server import Editor, inline

ROOT = Path(__file__).resolve().parent.parent
pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="function")]
FAST = {
    "target": "embedded:smollm2-135m",
    "backend": "mlx",  # loading behaves the same on every backend; MLX needs no build
    "drafter": "lookup",
    "debounceMs": 0,
    "timeBudgetMs": 20000,  # these tests are about loading, not answer times on a busy CPU
    "suggestionMs": 20000,
}
TEXT = "The quick brown fox jumps over the lazy dog. The quick brown fox jumps over the"


def refuse(client, params):
    raise JsonRpcInternalError("this client does not show progress")


async def never(client, params):
    await asyncio.Event().wait()


async def late(client, params):
    """A busy editor: the answer comes after the server stopped waiting for it."""
    await asyncio.sleep(PROGRESS_CREATE_S + 1)


@contextlib.asynccontextmanager
async def session(
    create=None, progress: bool = True, options: dict | None = None, env: dict | None = None
):
    """A real client over stdio with the given answer to window/workDoneProgress/create."""

    def factory() -> LanguageClient:
        client = LanguageClient()
        features = dict(DEFAULT_CLIENT_FEATURES)
        if create is not None:
            features[types.WINDOW_WORK_DONE_PROGRESS_CREATE] = create
        register_lsp_features(client, features)
        return client

    config = ClientServerConfig(
        server_command=[sys.executable, "-m", "app.cli", "serve"],
        server_env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
        client_factory=factory,
    )
    client = await config.start()
    editor = Editor(client)
    client.editor = editor
    client.feature("bielik/status")(lambda ls, params: editor.statuses.append(params))
    await client.initialize_session(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(
                window=types.WindowClientCapabilities(work_done_progress=progress)
            ),
            initialization_options={**FAST, **(options or {})},
        )
    )
    try:
        yield client
    finally:
        await client.shutdown_session()


async def settled(client: LanguageClient, after: int = 0, timeout: float = 300) -> str:
    """The state once loading ends (statuses from index `after` on)."""
    for _ in range(int(timeout / 0.1)):
        states = [s.state for s in client.editor.statuses[after:]]
        if states and states[-1] in ("ready", "error"):
            return states[-1]
        await asyncio.sleep(0.1)
    raise AssertionError(f"still loading after {timeout} s: {client.editor.statuses[-3:]}")


async def suggests(client: LanguageClient) -> None:
    uri = client.editor.open(TEXT, "fox.txt")
    result = await inline(client, uri, client.editor.end(uri))
    report = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="bielik.showStats", arguments=[uri])
    )
    assert result.items and result.items[0].insert_text.strip(), (report["files"], client.messages)


@pytest.mark.parametrize(
    "create, progress",
    [(refuse, True), (never, True), (late, True), (None, False)],
    ids=["refuses-progress", "never-answers-progress", "answers-late", "no-progress-capability"],
)
async def test_every_client_reaches_ready_and_gets_suggestions(create, progress):
    async with session(create, progress) as client:
        assert await settled(client) == "ready"
        await suggests(client)
        await asyncio.sleep(PROGRESS_CREATE_S + 1.5)  # a late answer has come by now
        assert not client.messages, client.messages  # no "Error in server" for it


async def test_failed_load_ends_in_error_and_reload_or_config_recovers(tmp_path):
    async with session(options={"target": str(tmp_path / "missing.gguf")}) as client:
        assert await settled(client) == "error"
        error = client.editor.statuses[-1].message
        assert "missing.gguf" in error
        assert any("cannot load the model" in m.message for m in client.messages)
        # Inline requests stay silent (no error answer per keystroke).
        uri = client.editor.open(TEXT)
        assert not (await inline(client, uri, client.editor.end(uri))).items
        # A retry with the same settings fails the same way, with an answer.
        again = await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="bielik.reload")
        )
        assert again["state"] == "error"
        n = len(client.editor.statuses)
        client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"target": FAST["target"]})
        )
        assert await settled(client, after=n) == "ready"
        await suggests(client)


@contextlib.asynccontextmanager
async def silent_hub():
    """A local "Hugging Face hub" that accepts connections and never answers.

    A real hang of a model download (the hub's own timeouts are longer than the load timeout
    used here).
    """
    held: list[asyncio.StreamWriter] = []

    async def hold(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append(writer)

    server = await asyncio.start_server(hold, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield {"HF_ENDPOINT": f"http://127.0.0.1:{port}", "HF_HUB_ETAG_TIMEOUT": "600"}
    finally:
        for writer in held:
            writer.close()
        server.close()


async def test_hung_load_times_out_and_a_change_during_it_is_applied():
    hung = {"target": "bielik-test/never-answers", "loadTimeoutS": 3}
    async with silent_hub() as env, session(options=hung, env=env) as client:
        await asyncio.sleep(0.5)
        # Changed while the first load hangs: applied once it ends, never dropped.
        client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(
                settings={"target": FAST["target"], "loadTimeoutS": 300}
            )
        )
        assert await settled(client) == "ready", client.editor.statuses
        report = await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="bielik.showStats", arguments=[])
        )
        assert report["config"]["target"] == FAST["target"] and report["state"] == "ready"
        await suggests(client)


async def test_hung_load_alone_ends_in_error():
    hung = {"target": "bielik-test/never-answers", "loadTimeoutS": 2}
    async with silent_hub() as env, session(options=hung, env=env) as client:
        assert await settled(client) == "error"
        assert "did not finish within 2 s" in client.editor.statuses[-1].message
        with pytest.raises(JsonRpcException) as err:
            await client.workspace_execute_command_async(
                types.ExecuteCommandParams(
                    command="bielik.continueDocument", arguments=[client.editor.open(TEXT)]
                )
            )
        assert err.value.code == -32803 and "failed to load" in err.value.message


async def test_a_reload_frees_the_old_models_before_loading_new_ones(monkeypatch):
    """Two models never share memory: the old engine is gone when the new load starts.

    Though the server froze the heap after the first load (settle_heap): the old models' cycles
    are only the collector's to free.
    """
    import decoder.pipeline
    from decoder.config import Settings
    from lsp_server.worker import Worker, settle_heap

    settings = Settings(target=FAST["target"], backend="mlx", drafter="lookup")
    worker = Worker()
    await worker.load(settings, timeout_s=600)
    assert worker.state == "ready"
    await worker.call(settle_heap, lambda: None)
    assert gc.get_freeze_count() > 0
    old = weakref.ref(worker.pipe)
    alive_at_load: list[bool] = []
    real_load = decoder.pipeline.load

    def load_watching_the_old(settings, **kwargs):
        alive_at_load.append(old() is not None)
        return real_load(settings, **kwargs)

    monkeypatch.setattr(decoder.pipeline, "load", load_watching_the_old)
    await worker.load(settings, timeout_s=600)
    assert worker.state == "ready" and alive_at_load == [False]


async def test_a_load_says_what_it_does_and_how_long_it_took_last_time(tmp_path):
    """Progress names each stage with its seconds; the next start knows how long the last took."""
    env = {"BIELIK_LSP_CACHE": str(tmp_path)}
    async with session(env=env) as client:
        assert await settled(client) == "ready"
        (reports,) = client.progress_reports.values()
        said = [getattr(r, "message", None) or "" for r in reports]
        first = [m for m in said if m.startswith("loading embedded:") and "first start here" in m]
        assert first, said
        assert any("checking that batched passes are exact" in m for m in said), said
        loading = [s.message for s in client.editor.statuses if s.state == "loading"]
        assert any(m.startswith("model loading: ") for m in loading), loading
    assert (tmp_path / "load-seconds.json").exists()
    async with session(env=env) as client:
        assert await settled(client) == "ready"
        (reports,) = client.progress_reports.values()
        said = [getattr(r, "message", None) or "" for r in reports]
        assert not any("first start here" in m for m in said), said
