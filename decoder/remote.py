"""An inference server as the engine: any OpenAI-compatible `/v1/completions`, or llama-server.

A team runs the big model once (vLLM, SGLang, llama-server, mlx_lm.server) and every editor
streams from it. The server does the speculation; this side keeps the interface the CLI and the
language server already use (`policy`, `continue_text` yielding `Chunk`s with `RunStats`), so
the Polish cutting, supersession and statistics above it do not know the model is remote.

llama.cpp's llama-server is recognised by its `/props` and spoken to in its native
`/completion`, which gives exact token ids, `cache_prompt`, the prompt cache hit and the
server's own timings, including how many drafted tokens it accepted.

Network rules: requests go only to the configured host (no redirects followed, no proxy or
netrc from the environment); the API key comes from $BIELIK_LSP_API_KEY or `api_key_file` and
is sent as a bearer token, never logged or described; TLS certificates are verified unless
`tls_verify` is false. A server that stops answering is marked down once; requests then fail at
once without touching the network until a back-off delay (doubling, capped) has passed, while a
background probe brings it back as soon as it answers.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from decoder import scoring
from decoder.config import ConfigError, Settings, is_remote
from decoder.generation import Chunk
from decoder.sampling import Sampling
from decoder.stats import Cycle, RunStats

__all__ = ["RemoteEngine", "ServerError", "ServerRefused", "ServerUnavailable", "is_remote"]

API_KEY_ENV = "BIELIK_LSP_API_KEY"
BACKOFF_FIRST_S = 0.5
BACKOFF_MAX_S = 30.0
CANCEL_POLL_S = 0.01  # how often a running request looks at its ticket
STOP_REASONS = {"stop": "eos", "eos": "eos", "length": "max_tokens", "limit": "max_tokens"}


class ServerError(RuntimeError):
    """The inference server cannot serve this request; the message is one line for the user."""


class ServerUnavailable(ServerError):
    """The server is down, restarting or overloaded: retried later, with back-off."""


class ServerRefused(ServerError):
    """The server answered but refused the request (bad key, bad parameters): not retried."""


@dataclass(frozen=True)
class ServerInfo:
    """What the server told us about itself when it last came up."""

    kind: str = "openai"  # "llama-server" | "openai" (any OpenAI-compatible server)
    speculates: bool | None = None  # llama-server's /props says; None: the server does not say
    per_request_speculation: bool = False  # accepts speculative.n_max / n_min per request
    context_length: int | None = None
    model: str = ""  # what the server says it serves
    build: str = ""
    logprobs: bool = False  # /v1/completions gives the prompt's log-probabilities (echo)


@dataclass(frozen=True)
class ServerSpeculation:
    """A remote request's policy: the server speculates; we can at most ask it not to."""

    off: bool
    reason: str


class Health:
    """Up or down, and after a failure when to try again: the wait doubles, capped, per failure."""

    def __init__(self, first_s: float = BACKOFF_FIRST_S, max_s: float = BACKOFF_MAX_S):
        self.first_s, self.max_s = first_s, max_s
        self.up, self.message, self.failures, self.retry_at = True, "", 0, 0.0
        self._lock = threading.Lock()

    def failed(self, message: str) -> bool:
        """Record a failure; True when this one took the server down (report it once)."""
        with self._lock:
            was_up = self.up
            delay = min(self.max_s, self.first_s * 2**self.failures)
            self.up, self.message = False, message
            self.failures += 1
            self.retry_at = time.monotonic() + delay
            return was_up

    def recovered(self) -> bool:
        """Record a success; True when the server was down until now."""
        with self._lock:
            was_down = not self.up
            self.up, self.message, self.failures = True, "", 0
            return was_down

    def wait_s(self) -> float:
        """Seconds before the next attempt may touch the network (0 when up)."""
        return 0.0 if self.up else max(0.0, self.retry_at - time.monotonic())


@dataclass
class _Request:
    """One streaming request's wire form and how to read its events."""

    path: str
    body: dict
    native: bool  # llama-server's /completion events, else OpenAI's text_completion chunks


@dataclass
class _Run:
    """The state of one streamed generation, turned into a RunStats as events arrive."""

    stats: RunStats
    reason: str
    started: float
    last: float = 0.0
    first: bool = True
    counted: int = 0  # tokens counted from events (exact ids natively, one per event otherwise)
    usage: dict = field(default_factory=dict)


class RemoteEngine:
    """Generation on an inference server, behind the interface of decoder.pipeline.Pipeline."""

    name = "remote"

    def __init__(self, settings: Settings, client: httpx.Client, base: str, root: str):
        self.settings = settings
        self.client = client
        self.base, self.root = base, root  # OpenAI API base (.../v1) and the server's root
        self.info = ServerInfo()
        self.health = Health()
        self.on_health: Callable[[bool, str], None] | None = None  # told of every transition
        self._watching = threading.Lock()
        self._closed = False

    # -- construction ------------------------------------------------------------------------
    @classmethod
    def connect(cls, settings: Settings) -> RemoteEngine:
        """An engine for the server named by `settings.target`.

        A server that is down is no error here (it is reported and watched); a bad URL or an
        unreadable key file is.
        """
        base, root = endpoints(settings.target)
        client = httpx.Client(
            headers=_auth_headers(settings),
            timeout=httpx.Timeout(
                settings.read_timeout_s,
                connect=settings.connect_timeout_s,
                pool=settings.connect_timeout_s,
            ),
            verify=settings.tls_verify,
            follow_redirects=False,  # the key goes to the configured host and nowhere else
            trust_env=False,  # no proxies or netrc from the environment: no other network access
        )
        engine = cls(settings, client, base, root)
        engine.probe()
        return engine

    def close(self) -> None:
        self._closed = True
        self.client.close()

    def watch(self, on_health: Callable[[bool, str], None]) -> None:
        """Call `on_health(up, message)` now if down, and on every change from now on.

        While the server is down a background probe retries with back-off, so it comes back by
        itself even when no request arrives.
        """
        self.on_health = on_health
        if not self.health.up:
            on_health(False, self.health.message)
            self._watch()

    # -- what the server is and whether it answers -------------------------------------------
    def probe(self) -> bool:
        """Ask the server whether it is up (and what it is); update the health state."""
        try:
            response = self.client.get(f"{self.root}/health")
            if response.status_code == 404:  # servers without /health still list their models
                response = self.client.get(f"{self.base}/models")
            if response.status_code == 503:
                raise ServerUnavailable(f"{self._where()} is starting (loading its model)")
            _raise_for_status(response, self._where())
            self.info = self._detect()
        except (httpx.HTTPError, ServerError) as error:
            self._down(_explain(error, self._where()))
            return False
        self._up()
        return True

    def _detect(self) -> ServerInfo:
        """llama-server if its /props looks like llama-server's, else plain OpenAI-compatible."""
        response = self.client.get(f"{self.root}/props")
        props = _json(response) if response.status_code == 200 else None
        settings = props.get("default_generation_settings") if isinstance(props, dict) else None
        logprobs = self._reads_prompts()
        if not isinstance(settings, dict):
            return ServerInfo(logprobs=logprobs)
        params = settings.get("params") or {}
        return ServerInfo(
            logprobs=logprobs,
            kind="llama-server",
            speculates=bool(settings.get("speculative", False)),
            per_request_speculation="speculative.n_max" in params,
            context_length=settings.get("n_ctx"),
            model=Path(str(props.get("model_path", ""))).name,
            build=str(props.get("build_info", "")),
        )

    def _reads_prompts(self) -> bool:
        """Whether the server scores a prompt (`echo` + `logprobs`), asked with a short one.

        vLLM and SGLang do; llama-server and mlx_lm.server refuse.
        """
        try:
            return self._prompt_logprobs(["Ala ma kota."]) is not None
        except (httpx.HTTPError, ServerError):
            return False

    def _prompt_logprobs(self, prompts: list[str]) -> list[tuple[list, list]] | None:
        """(text offsets, log-probabilities) of each prompt's tokens; None when not given."""
        body: dict = {"prompt": prompts, "max_tokens": 1, "echo": True, "logprobs": 0}
        body["temperature"] = 0.0
        if self.settings.remote_model:
            body["model"] = self.settings.remote_model
        response = self.client.post(f"{self.base}/completions", json=body)
        if response.status_code >= 400:
            return None
        choices = (_json(response) or {}).get("choices") or []
        out = []
        for choice in sorted(choices, key=lambda c: c.get("index", 0)):
            logprobs = choice.get("logprobs") or {}
            offsets, values = logprobs.get("text_offset"), logprobs.get("token_logprobs")
            if not offsets or not values or len(values) < 2:
                return None
            out.append((offsets, values))
        return out if len(out) == len(prompts) else None

    def score(
        self, prefix: str, continuations: list[str], should_stop: Callable[[], bool] | None = None
    ) -> list[float] | None:
        """Log-probability of each continuation after `prefix`, from the server; None if none.

        From the prompt's log-probabilities (`echo`); where the server gives none, the
        spelling checker ranks by its dictionary alone.
        """
        if not self.info.logprobs or self._closed or self.health.wait_s() > 0:
            return None
        try:
            found = self._prompt_logprobs([prefix + c for c in continuations])
        except httpx.HTTPError:
            return None
        if found is None:
            return None
        cut = len(prefix.rstrip())  # a token of the continuation may carry the space before it
        return [
            sum(
                v
                for o, v in zip(offsets, values, strict=False)
                if v is not None and cut <= o < len(prefix) + len(c)  # not the generated token
            )
            for (offsets, values), c in zip(found, continuations, strict=True)
        ]

    def compare(
        self,
        text: str,
        edits: list[scoring.Edit],
        floor: float | None = None,
        should_stop: Callable[[], bool] | None = None,
    ) -> list[list[float | None]] | None:
        """`scoring.compare` through the prompt's log-probabilities; None where none come."""
        return scoring.compare_by_score(self.score, text, edits)

    def apply(self, settings: Settings) -> None:
        """Sampling and the model name apply to the next request (the connection reloads)."""
        self.settings = settings

    def select(self, key: str | None) -> None:
        """Nothing to select: the server keeps its own prompt cache (llama-server: cache_prompt)."""

    def forget(self, key: str | None) -> None:
        """Nothing to drop on this side; the server's cache is its own."""

    def catch_up_s(self, text: str, key: str | None) -> float:
        """Unknown: the server's cache is its own."""
        return 0.0

    def reset(self) -> None:
        """Nothing to forget on this side; the server's cache is its own."""

    def describe(self) -> dict:
        """Where the model runs, for `doctor` and statistics (never the API key)."""
        info = self.info
        server = f"{info.kind} {info.build}".strip()
        if info.context_length:
            server += f", context {info.context_length} tokens"
        return {
            "engine": "remote",
            "url": self.base,
            "server": server,
            "model": info.model or self.settings.remote_model or "(server default)",
            "speculation": self.policy().reason,
            "spelling": (
                "the model ranks corrections (prompt log-probabilities)"
                if info.logprobs
                else "the server gives no prompt log-probabilities: the dictionary ranks "
                "spelling corrections alone"
            ),
            "api_key": _key_source(self.settings),
            "tls_verify": self.settings.tls_verify,
            "up": self.health.up,
            "status": self.health.message or "ready",
            **({} if self.health.up else {"WARNING": self.health.message}),
        }

    def _where(self) -> str:
        return f"inference server {self.root}"

    def _down(self, message: str) -> None:
        if self.health.failed(message):
            self._notify(False, message)
        self._watch()

    def _up(self) -> None:
        if self.health.recovered():
            self._notify(True, f"{self._where()} is back")

    def _notify(self, up: bool, message: str) -> None:
        if self.on_health is not None:
            self.on_health(up, message)

    def _watch(self) -> None:
        """Probe in the background, with back-off, until the server answers again."""
        if self.on_health is None or not self._watching.acquire(blocking=False):
            return

        def run() -> None:
            try:
                while not self._closed and not self.health.up:
                    time.sleep(self.health.wait_s())
                    if self._closed or self.health.up:
                        break
                    self.probe()
            finally:
                self._watching.release()

        threading.Thread(target=run, name="bielik-remote-probe", daemon=True).start()

    # -- the generation interface ------------------------------------------------------------
    def policy(
        self,
        mode: str | None = None,
        k: int | None = None,
        *,
        text: str = "",
        cursor: int | None = None,
        override: str = "auto",
    ) -> ServerSpeculation:
        """Speculation runs server-side, as the server is configured.

        A file's "off" becomes speculative.n_max=0 where the server takes per-request
        speculation settings, and is only reported where it does not.
        """
        off = override == "off" or (mode or self.settings.drafter) == "none"
        info = self.info
        if info.kind == "llama-server" and not info.speculates:
            return ServerSpeculation(off, "server-side: llama-server runs without speculation")
        if info.kind == "llama-server" and info.per_request_speculation:
            if off:
                return ServerSpeculation(
                    True, "llama-server: speculation off (speculative.n_max=0)"
                )
            return ServerSpeculation(False, "llama-server: speculation on (its own settings)")
        where = "llama-server" if info.kind == "llama-server" else "the server"
        if off:
            return ServerSpeculation(
                True, f"server-side: {where} cannot switch speculation per request"
            )
        return ServerSpeculation(False, f"server-side: as {where} is configured")

    def continue_text(
        self,
        text: str,
        *,
        max_tokens: int | None = None,
        policy: ServerSpeculation | None = None,
        should_stop: Callable[[], bool] | None = None,
        sampling: Sampling | None = None,
        first_bytes: bytes = b"",
        avoid: tuple[bytes, ...] = (),
    ) -> Iterator[Chunk]:
        """Stream a continuation of `text` from the server, one Chunk per server event.

        Raises ServerUnavailable when the server is down or goes away mid-stream, ServerRefused
        when it refuses the request. Closing the iterator, or `should_stop()` turning true,
        closes the stream at once. `sampling` overrides the settings' for this request;
        `first_bytes` and `avoid` are not applied (these APIs cannot constrain the first token;
        callers check what comes back).
        """
        if self._closed:
            raise ServerUnavailable(f"{self._where()}: the connection was closed")
        if self.health.wait_s() > 0:
            raise ServerUnavailable(
                f"{self.health.message} (next try in {self.health.wait_s():.0f}s)"
            )
        policy, s = policy or self.policy(), self.settings
        request = self._request(text, max_tokens or s.max_tokens, policy, sampling or s.sampling)
        return self._stream(request, policy, should_stop or (lambda: False))

    def _request(
        self, text: str, max_tokens: int, policy: ServerSpeculation, how: Sampling
    ) -> _Request:
        s = self.settings
        sampling = {"temperature": how.temperature, "top_p": how.top_p}
        if how.seed is not None:
            sampling["seed"] = how.seed
        if self.info.kind == "llama-server":
            body = {
                "prompt": text,
                "n_predict": max_tokens,
                "stream": True,
                "cache_prompt": True,
                "return_tokens": True,
                **sampling,
            }
            if how.greedy:
                body["top_k"] = 1  # greedy, whatever the server's default samplers are
            if policy.off and self.info.per_request_speculation:
                body.update({"speculative.n_max": 0, "speculative.n_min": 0})
            return _Request(f"{self.root}/completion", body, native=True)
        body = {
            "prompt": text,
            "max_tokens": max_tokens,
            "stream": True,
            "stream_options": {"include_usage": True},
            **sampling,
        }
        if s.remote_model:
            body["model"] = s.remote_model
        return _Request(f"{self.base}/completions", body, native=False)

    def _stream(
        self, request: _Request, policy: ServerSpeculation, should_stop: Callable[[], bool]
    ) -> Iterator[Chunk]:
        run = _Run(RunStats(reasons=[policy.reason]), policy.reason, time.perf_counter())
        stop = ""
        try:
            with self.client.stream("POST", request.path, json=request.body) as response:
                _raise_for_status(response, self._where())
                with _closed_when(response, should_stop):
                    for event in _events(response):
                        if should_stop():
                            stop = "cancelled"
                            break
                        chunk, finish = self._read(event, request.native, run)
                        if chunk is not None:
                            yield chunk
                        if finish:
                            stop = STOP_REASONS.get(finish, finish)
                    else:
                        stop = stop or ("cancelled" if should_stop() else "")
        except httpx.HTTPError as error:
            if should_stop():  # we closed the stream ourselves
                stop = "cancelled"
            else:
                self._down(_explain(error, self._where()))
                raise ServerUnavailable(self.health.message) from None
        except ServerUnavailable as error:
            self._down(str(error))
            raise
        self._up()
        if not stop:
            self._down(f"{self._where()} ended the stream without finishing")
            raise ServerUnavailable(self.health.message)
        yield self._finish(run, stop)

    def _read(self, event: dict, native: bool, run: _Run) -> tuple[Chunk | None, str]:
        """One server event as a Chunk (None when it carries no text), and its finish reason."""
        if native:
            text, ids = str(event.get("content") or ""), list(event.get("tokens") or [])
            finish = str(event.get("stop_type") or "") if event.get("stop") else ""
            if finish:
                run.usage = event
            n = len(ids)
        else:
            if event.get("usage"):
                run.usage = event["usage"]
            choice = (event.get("choices") or [{}])[0]
            text, ids = str(choice.get("text") or ""), []
            finish = str(choice.get("finish_reason") or "")
            n = 1 if text else 0
        if not text and not ids:
            return None, finish
        now = time.perf_counter()
        stats = run.stats
        if run.first:
            stats.prefill_seconds, run.first = now - run.started, False
        else:
            stats.cycles.append(_cycle(n, now - run.last, run.reason, chars=len(text)))
        run.last, run.counted = now, run.counted + n
        stats.generated_tokens = run.counted
        stats.generated_chars += len(text)
        return Chunk(ids, text, stats), finish

    def _finish(self, run: _Run, stop: str) -> Chunk:
        """The closing Chunk: server-reported counts and timings folded into the statistics."""
        stats, usage = run.stats, run.usage
        stats.stop_reason = stop
        timings = usage.get("timings") or {}
        if "tokens_evaluated" in usage:  # llama-server
            stats.prompt_tokens = int(usage["tokens_evaluated"])
            stats.prefilled_tokens = int(timings.get("prompt_n", stats.prompt_tokens))
            stats.server = {
                "prompt_ms": timings.get("prompt_ms"),
                "predicted_ms": timings.get("predicted_ms"),
                "cached_tokens": usage.get("tokens_cached"),
            }
            if timings.get("draft_n"):
                stats.cycles.append(
                    _cycle(0, 0.0, "server-reported speculation", timings["draft_n"],
                           timings.get("draft_n_accepted", 0))
                )  # fmt: skip
        elif "prompt_tokens" in usage:  # OpenAI usage chunk
            cached = int((usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0)
            stats.prompt_tokens = int(usage["prompt_tokens"])
            stats.prefilled_tokens = stats.prompt_tokens - cached
            stats.server = {"cached_tokens": cached}
            total = int(usage.get("completion_tokens") or run.counted)
            if stats.cycles and total != run.counted:  # events are not always one token each
                stats.cycles[-1].emitted += total - run.counted
            stats.generated_tokens = total
        stats.server["wall_ms"] = (time.perf_counter() - run.started) * 1000
        return Chunk([], "", stats, done=True)


def endpoints(target: str) -> tuple[str, str]:
    """(OpenAI API base ending in /v1, server root) for a target URL."""
    url = httpx.URL(target.rstrip("/"))
    if url.scheme not in ("http", "https") or not url.host:
        raise ConfigError(f"target {target!r} is not an http(s) URL of an inference server")
    text = str(url).rstrip("/")
    if text.endswith("/v1"):
        return text, text[: -len("/v1")]
    return text + "/v1", text


def _cycle(
    emitted: int, seconds: float, reason: str, drafted: int = 0, accepted: int = 0, chars: int = 0
) -> Cycle:
    return Cycle(
        drafter="server",
        k=0,
        drafted=int(drafted),
        accepted=int(accepted),
        emitted=emitted,
        draft_s=0.0,
        translate_s=0.0,
        verify_s=seconds,
        other_s=0.0,
        reason=reason,
        chars=chars,
    )


def _events(response: httpx.Response) -> Iterator[dict]:
    """Server-sent events' JSON payloads (comments and keep-alives skipped) until [DONE]."""
    for line in response.iter_lines():
        if not line.startswith("data:"):
            continue  # blank separators, ": keepalive" comments, event names
        data = line[len("data:") :].strip()
        if data == "[DONE]":
            return
        try:
            event = json.loads(data)
        except json.JSONDecodeError:
            raise ServerUnavailable(f"the server sent a malformed event: {data[:80]!r}") from None
        if isinstance(event, dict) and "error" in event:
            raise ServerUnavailable(f"the server failed: {_error_text(event)}")
        if isinstance(event, dict):
            yield event


class _closed_when:
    """While active, a thread shuts the response's socket once `should_stop()` is true.

    So a cancelled request ends at once, even while blocked waiting for the server.
    """

    def __init__(self, response: httpx.Response, should_stop: Callable[[], bool]):
        self.response, self.should_stop = response, should_stop
        self.done = threading.Event()

    def __enter__(self) -> _closed_when:
        threading.Thread(target=self._run, name="bielik-remote-cancel", daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self.done.set()

    def _run(self) -> None:
        while not self.done.wait(CANCEL_POLL_S):
            if self.should_stop():
                stream = self.response.extensions.get("network_stream")
                sock = stream.get_extra_info("socket") if stream is not None else None
                if sock is not None:
                    try:
                        sock.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass  # already closed by the server
                return


def _raise_for_status(response: httpx.Response, where: str) -> None:
    if response.status_code < 300:
        return
    if response.status_code < 400:
        raise ServerRefused(
            f"{where} redirects to {response.headers.get('location', '?')}; not followed "
            "(the API key goes to the configured host only): give the final URL as the target"
        )
    if response.is_stream_consumed is False:
        response.read()
    detail = _error_text(_json(response)) or response.text[:200].strip()
    if response.status_code in (401, 403):
        raise ServerRefused(
            f"{where} refused the API key (HTTP {response.status_code}); set ${API_KEY_ENV} "
            "or apiKeyFile"
        )
    error = (
        ServerUnavailable
        if response.status_code >= 500 or response.status_code == 429
        else ServerRefused
    )
    raise error(f"{where} answered HTTP {response.status_code}: {detail}")


def _json(response: httpx.Response) -> object:
    try:
        return response.json()
    except (ValueError, UnicodeDecodeError):
        return None


def _error_text(payload: object) -> str:
    if not isinstance(payload, dict):
        return ""
    error = payload.get("error", payload.get("detail", payload.get("message", "")))
    if isinstance(error, dict):
        error = error.get("message", "")
    return " ".join(str(error).split())[:200]


def _explain(error: Exception, where: str) -> str:
    """One line for the user: what went wrong with the server, without the request's details."""
    if isinstance(error, ServerError):
        return str(error)
    if isinstance(error, httpx.ConnectTimeout):
        return f"{where} does not answer (connect timeout)"
    if isinstance(error, httpx.ConnectError):
        cause = str(error).split("] ")[-1] or "connection failed"
        return f"{where} is unreachable ({cause})"
    if isinstance(error, httpx.ReadTimeout):
        return f"{where} went silent (read timeout)"
    if isinstance(error, (httpx.RemoteProtocolError, httpx.ReadError)):
        return f"{where} closed the connection mid-request"
    return f"{where}: {type(error).__name__}"


def _auth_headers(settings: Settings) -> dict[str, str]:
    key = _api_key(settings)
    return {"Authorization": f"Bearer {key}"} if key else {}


def _api_key(settings: Settings) -> str:
    """The key from `api_key_file` (first line) or $BIELIK_LSP_API_KEY; "" when neither."""
    if settings.api_key_file:
        path = Path(settings.api_key_file).expanduser()
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as e:
            raise ConfigError(f"cannot read apiKeyFile {path}: {type(e).__name__}") from None
        key = lines[0].strip() if lines else ""
        if not key:
            raise ConfigError(f"apiKeyFile {path} is empty")
        return key
    return os.environ.get(API_KEY_ENV, "").strip()


def _key_source(settings: Settings) -> str:
    if settings.api_key_file:
        return f"from file {settings.api_key_file}"
    return f"from ${API_KEY_ENV}" if os.environ.get(API_KEY_ENV, "").strip() else "none"
