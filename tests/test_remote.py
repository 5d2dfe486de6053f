"""The remote engine against real inference servers on 127.0.0.1, started by the tests.

mlx_lm.server (ships with mlx-lm) serves the embedded Gemma-3-270M directory; llama.cpp's
llama-server serves the same model's GGUF where the binary is installed.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest

from app.serving import llama_server_binary
from decoder.config import ConfigError, Settings
from decoder.engine import Engine
from decoder.remote import Health, RemoteEngine, ServerRefused, ServerUnavailable
from tests.servers import ROOT, InferenceServer
from tests.tiny import fresh

pytestmark = pytest.mark.slow

PROMPTS = [
    "Warszawa jest stolicą Polski. Największe miasta w Polsce to",
    "Lista zakupów:\n1. chleb\n2. masło\n3.",
]
LONG = "W początkach roku 1878, kiedy świat polityczny zajmował się pokojem san-stefańskim. " * 6
NO_LLAMA = "llama-server is not installed (put it on PATH or set $BIELIK_LSP_LLAMA_SERVER)"


@pytest.fixture(scope="module", params=["mlx", "llama"])
def server(request):
    if request.param == "llama" and llama_server_binary() is None:
        pytest.skip(NO_LLAMA)
    srv = InferenceServer(request.param)
    failed = request.session.testsfailed
    srv.start()
    yield srv
    srv.stop(keep_log=request.session.testsfailed > failed)  # kept: why a test failed


def remote(server: InferenceServer, **settings) -> RemoteEngine:
    return RemoteEngine.connect(Settings(target=server.url, read_timeout_s=300, **settings))


def cli_continue(server: InferenceServer, path, max_tokens: int) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "app.cli", "--target", server.url, "continue"]
    return subprocess.run(
        [*command, str(path), "--max-tokens", str(max_tokens), "--quiet"],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=600,
    )


def local_greedy(gemma, text: str, max_tokens: int) -> str:
    engine = Engine(fresh(gemma))
    chunks = engine.generate(engine.encode(text), max_tokens=max_tokens)
    return "".join(c.text for c in chunks)


def test_detects_the_server(server):
    engine = remote(server)
    assert engine.health.up
    assert engine.info.kind == ("llama-server" if server.kind == "llama" else "openai")
    described = engine.describe()
    assert described["url"] == server.url and described["up"] is True
    assert "server-side" in described["speculation"] or "llama-server" in described["speculation"]


@pytest.mark.parametrize("prompt", PROMPTS)
def test_cli_continue_prints_the_local_engines_greedy_text(server, gemma, tmp_path, prompt):
    """`bielik-lsp --target URL continue FILE` == the local MLX engine on the same model."""
    if server.kind == "llama":
        pytest.skip("llama-server runs the Q4_K_M GGUF; the local MLX engine its float32 weights")
    path = tmp_path / "prompt.txt"
    path.write_text(prompt, encoding="utf-8")
    result = cli_continue(server, path, 24)
    assert result.returncode == 0, result.stderr
    assert result.stdout == local_greedy(gemma, prompt, 24) + "\n"
    assert "stopped: max_tokens" in result.stderr or "stopped: eos" in result.stderr


def test_llama_server_gives_exact_ids_and_its_timings(server):
    if server.kind != "llama":
        pytest.skip("llama-server only: the OpenAI stream carries neither ids nor timings")
    chunks = list(remote(server).continue_text(PROMPTS[1], max_tokens=16))
    ids = [t for c in chunks for t in c.ids]
    stats = chunks[-1].stats
    assert len(ids) == stats.generated_tokens == 16
    assert stats.server["predicted_ms"] > 0 and stats.stop_reason == "max_tokens"


def test_stats_have_the_runs_shape(server):
    chunks = list(remote(server).continue_text(PROMPTS[0], max_tokens=12))
    assert chunks[-1].done and not any(c.done for c in chunks[:-1])
    stats = chunks[-1].stats
    assert stats.generated_tokens == 12 and stats.stop_reason == "max_tokens"
    assert stats.prompt_tokens > 5 and stats.prefill_seconds > 0 and stats.tokens_per_second > 0
    assert stats.server["wall_ms"] > stats.prefill_seconds * 1000
    assert stats.reasons and stats.to_dict()["server"]


def test_cancelling_mid_stream_frees_the_server(server):
    engine = remote(server)
    stop = threading.Event()
    chunks = engine.continue_text(LONG, max_tokens=400, should_stop=stop.is_set)
    next(chunks)  # the server is generating now
    stop.set()
    started = time.monotonic()
    rest = list(chunks)
    assert time.monotonic() - started < 1.0
    assert rest[-1].done and rest[-1].stats.stop_reason == "cancelled"
    assert server_goes_idle(server), "the server went on generating 400 tokens for nobody"
    assert engine.health.up


def server_goes_idle(server: InferenceServer, within_s: float = 20) -> bool:
    """True once the server uses under 15% of a core for a second.

    It notices a closed stream at its next token write; 400 tokens would keep it busy for
    minutes on this machine.
    """
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        used = server.cpu_seconds()
        time.sleep(1.0)
        if server.cpu_seconds() - used < 0.15:
            return True
    return False


def test_cancelling_while_the_server_is_busy_returns_at_once(server):
    """Stopped while blocked on the server (a long prompt): the socket is shut, no waiting."""
    engine = remote(server)
    stop = threading.Event()
    threading.Timer(0.05, stop.set).start()
    started = time.monotonic()
    chunks = list(engine.continue_text(LONG * 4, max_tokens=200, should_stop=stop.is_set))
    assert time.monotonic() - started < 1.0
    assert chunks[-1].stats.stop_reason == "cancelled" and engine.health.up


def test_killed_server_is_reported_once_and_recovers(server):
    engine = remote(server)
    events: list[tuple[bool, str]] = []
    engine.watch(lambda up, message: events.append((up, message)))
    chunks = engine.continue_text(LONG, max_tokens=400)
    next(chunks)
    server.kill()
    with pytest.raises(ServerUnavailable, match="inference server") as error:
        list(chunks)
    assert events == [(False, str(error.value))]
    for _ in range(3):  # no retry storm: refused at once, nothing new reported
        started = time.monotonic()
        with pytest.raises(ServerUnavailable, match="next try in"):
            engine.continue_text("Ala ma", max_tokens=4)
        assert time.monotonic() - started < 0.05
    assert len(events) == 1
    server.start()
    deadline = time.monotonic() + 120  # the background probe's back-off is capped at 30 s
    while not engine.health.up and time.monotonic() < deadline:
        time.sleep(0.2)
    assert events[1:] == [(True, f"inference server {server.url.removesuffix('/v1')} is back")]
    text = "".join(c.text for c in engine.continue_text("Ala ma", max_tokens=4))
    assert text.strip()


def test_a_server_that_is_not_there_is_one_clear_error(tmp_path):
    from tests.servers import free_port

    engine = RemoteEngine.connect(Settings(target=f"http://127.0.0.1:{free_port()}/v1"))
    assert not engine.health.up and "unreachable" in engine.health.message
    with pytest.raises(ServerUnavailable, match="unreachable"):
        engine.continue_text("Ala ma", max_tokens=4)
    path = tmp_path / "p.txt"
    path.write_text("Ala ma kota", encoding="utf-8")
    url = engine.base
    result = subprocess.run(
        [sys.executable, "-m", "app.cli", "--target", url, "continue", str(path)],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0 and "unreachable" in result.stderr


def test_api_key_file_errors_name_the_file_not_the_key(tmp_path):
    missing = tmp_path / "nokey"
    with pytest.raises(ConfigError, match="cannot read apiKeyFile"):
        RemoteEngine.connect(Settings(target="http://127.0.0.1:9/v1", api_key_file=str(missing)))
    key = tmp_path / "key"
    key.write_text("s3cret-key-value\n", encoding="utf-8")
    engine = RemoteEngine.connect(Settings(target="http://127.0.0.1:9/v1", api_key_file=str(key)))
    assert engine.client.headers["Authorization"] == "Bearer s3cret-key-value"
    assert "s3cret" not in str(engine.describe()) and "s3cret" not in engine.health.message
    engine.close()


def test_bad_urls_are_config_errors():
    with pytest.raises(ConfigError, match="not an http"):
        RemoteEngine.connect(Settings(target="http://"))


def test_back_off_doubles_is_capped_and_reports_only_changes():
    health = Health(first_s=0.5, max_s=4.0)
    assert health.wait_s() == 0
    reported = [health.failed("down") for _ in range(6)]
    assert reported == [True, False, False, False, False, False]
    assert 3.5 < health.wait_s() <= 4.0  # 0.5, 1, 2, 4, then capped at 4
    assert health.recovered() and not health.recovered()
    assert health.wait_s() == 0 and health.failures == 0


def test_the_key_goes_to_the_configured_host_only(tmp_path):
    """A server that redirects elsewhere: the redirect is refused, the other host hears nothing."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    heard: list[str | None] = []

    class Elsewhere(BaseHTTPRequestHandler):
        def do_POST(self):
            heard.append(self.headers.get("Authorization"))
            self.send_response(200)
            self.end_headers()

        do_GET = do_POST

    class Redirecting(BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200 if self.path == "/health" else 404)
            self.end_headers()

        def do_POST(self):
            self.send_response(307)
            self.send_header("Location", f"http://127.0.0.1:{other.server_port}{self.path}")
            self.end_headers()

    other = ThreadingHTTPServer(("127.0.0.1", 0), Elsewhere)
    redirecting = ThreadingHTTPServer(("127.0.0.1", 0), Redirecting)
    for srv in (other, redirecting):
        threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        key = tmp_path / "key"
        key.write_text("s3cret-key-value\n", encoding="utf-8")
        url = f"http://127.0.0.1:{redirecting.server_port}/v1"
        engine = RemoteEngine.connect(Settings(target=url, api_key_file=str(key)))
        assert engine.health.up
        with pytest.raises(ServerRefused, match="not followed"):
            list(engine.continue_text("Ala ma", max_tokens=4))
        assert heard == [] and engine.health.up
    finally:
        for srv in (other, redirecting):
            srv.shutdown()


def test_server_settings_from_a_client():
    from lsp_server.settings import Config, ServerOptions, needs_reload

    base = Config(Settings(), ServerOptions())
    config = base.updated({"preset": "server", "tlsVerify": False, "readTimeoutS": 5})
    assert config.engine.target == "http://127.0.0.1:8080/v1" and config.engine.tls_verify is False
    assert needs_reload(base.engine, config.engine)  # a new target
    assert needs_reload(config.engine, config.updated({"connectTimeoutS": 1}).engine)
    assert not needs_reload(config.engine, config.updated({"remoteModel": "bielik"}).engine)
    for bad in ({"tlsVerify": "no"}, {"readTimeoutS": 0}, {"apiKeyFile": 3}):
        with pytest.raises(ConfigError):
            config.updated(bad)


def test_spelling_ranks_by_the_dictionary_where_the_server_scores_no_prompt(server):
    """Servers that give no prompt log-probabilities (`echo`): the dictionary ranks alone.

    mlx_lm.server and llama-server: `score` says so with None, `doctor`'s description says the
    dictionary ranks alone, and words are still questioned with the dictionary's corrections.
    """
    from polish import spelling

    engine = remote(server)
    assert engine.info.logprobs is False
    assert engine.score("Nie wiem, czy ", [" się uda.", " sie uda."]) is None
    assert "dictionary ranks spelling corrections alone" in engine.describe()["spelling"]
    text = "Nie wiem, czy sie uda, bo wczoraj zaczoł padać."
    found = spelling.rank(text, spelling.check(text), engine.score)
    assert [(f.word, f.suggestions[0]) for f in found] == [("sie", "się"), ("zaczoł", "zaczął")]
