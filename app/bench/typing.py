"""`bielik-lsp bench --typing`: what a person typing in an editor gets from the real server.

The server runs as an editor runs it (a subprocess speaking LSP over stdio) and a simulated
typist drives it the way VS Code does: every keystroke is an incremental `didChange` followed by
an `inlineCompletion` request, and the previous request is cancelled (`$/cancelRequest`). The
typist types real Polish text from polish/data/bench.jsonl (structured and prose excerpts) at a
steady rate and pauses at each word end until a suggestion arrives (or gives up after a while).

Each excerpt is typed twice: at the end of its document, and inside it (the rest of the excerpt
after the cursor, as when one writes a sentence into the middle of a text). Next to each document
the typist has a few others open: other excerpts of the same source (the ring's context from
elsewhere); `--ring both` runs the whole benchmark with the ring on, then off.

Measured: pause -> suggestion latency (p50/p95), the share of pauses that got a suggestion, the
characters the typist then typed exactly as suggested, suggestions that repeat the text after the
cursor, stale answers (a non-empty suggestion the server sent for a document version when the
edit that left it already lay in the server's input; one checked before, that crossed the edit in
flight, is counted apart),
and the server's resident memory (sampled). `--minutes N` is a storm
instead: the typist never pauses, every excerpt becomes another open document, and typing goes
on through the corpus for N minutes (keystrokes and cancels only) while the memory is recorded
over time.
"""

from __future__ import annotations

import asyncio
import datetime
import json
import os
import re
import statistics
import sys
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import psutil
from lsprotocol import types
from pygls.lsp.client import LanguageClient
from tqdm import tqdm

from app.bench import machine
from app.bench.corpus import Excerpt, load_corpus
from app.errors import UserError
from decoder.backends.base import common_prefix
from lsp_server.compat import server_process
from lsp_server.server import DEBUG_ENV

LABELS = ("structured", "prose")
PLACES = ("end", "mid")  # where in its document an excerpt is typed
NEIGHBOURS = 2  # other documents open next to the one typed into
SOURCE = Path(__file__).resolve().parents[2]  # the server runs this checkout's code


class TypingBenchError(UserError):
    """The server could not be driven (it did not start, load or answer): one line for the user."""


STATUS = "bielik/status"


@dataclass(frozen=True)
class TypingConfig:
    per_class: int = 3  # excerpts per content type
    chars: int = 160  # characters typed per excerpt
    cps: float = 8.0  # typing speed, characters per second
    max_wait_s: float = 5.0  # how long the typist waits at a pause before typing on
    minutes: float | None = None  # storm: no pauses, documents left open, for this long
    rss_every_s: float = 0.25  # memory sampling period
    ready_timeout_s: float = 600.0  # model load (the first run converts the models)
    ring: str = "on"  # on | off | both (the whole run with the ring on, then off)
    out: Path = Path(".")
    command: str = "bielik-lsp bench --typing"


QUICK = TypingConfig(per_class=1, chars=24)


# ---------------------------------------------------------------- what is typed


@dataclass(frozen=True)
class Script:
    """One excerpt: the document as opened, the text then typed, and what the typist means."""

    id: str
    label: str
    context: str  # the document when opened, before the cursor
    typed: str  # typed one character at a time
    intended: str  # typed + what the typist would type next (a suggestion is judged against it)
    after: str = ""  # the document when opened, after the cursor (typing inside it)
    neighbours: tuple[str, ...] = ()  # other documents open meanwhile

    @property
    def place(self) -> str:
        return "mid" if self.after else "end"


def script_for(excerpt: Excerpt, chars: int, place: str = "end") -> Script:
    """Open the excerpt's first part and type the next `chars` characters from a word start.

    `mid`: the rest of the excerpt is already there, after the cursor; the typed part ends at a
    word end, and what the typist means is that part only (the text after it exists).
    """
    text = excerpt.text
    start = max(len(text) // 3, len(text) - chars - len(text) // 4)
    while start < len(text) and not text[start - 1].isspace():
        start += 1
    typed = text[start : start + chars]
    if place == "end":
        return Script(excerpt.id, excerpt.label, text[:start], typed, text[start:])
    end = start + len(typed)
    while start < end < len(text) and not text[end].isspace():
        end -= 1
    typed = text[start:end]
    return Script(excerpt.id, excerpt.label, text[:start], typed, typed, text[end:])


def scripts(cfg: TypingConfig) -> list[Script]:
    """`per_class` excerpts of each content type at each place, spread over the corpus.

    Another excerpt for each place, none sharing a passage with one typed before: the server
    remembers places edited (the ring), and must not be handed text the typist already typed.
    """
    corpus = load_corpus()
    out: list[Script] = []
    for label in LABELS:
        items = [e for e in corpus if e.label == label]
        step = max(1, len(items) // cfg.per_class)
        for i in range(0, len(items), step):
            for place, e in zip(
                PLACES, (items[i], items[min(i + step // 2, len(items) - 1)]), strict=True
            ):
                if sum(s.label == label and s.place == place for s in out) >= cfg.per_class:
                    continue
                if not any(_shared(e.text, s.context + s.typed + s.after) for s in out):
                    script = script_for(e, cfg.chars, place)
                    out.append(replace(script, neighbours=neighbours(e, corpus)))
    return out


def _shared(a: str, b: str, n: int = 40) -> bool:
    """Whether `a` and `b` share an `n`-character passage."""
    return any(a[i : i + n] in b for i in range(0, max(1, len(a) - n + 1)))


def neighbours(excerpt: Excerpt, corpus: list[Excerpt], n: int = NEIGHBOURS) -> tuple[str, ...]:
    """Texts of up to `n` other excerpts of the same source file (else of the same repository).

    None shares a 40-character passage with `excerpt`: the ring must not hold the answer.
    """

    def source(e: Excerpt, depth: int) -> str:
        return e.source.split(" (")[0] if depth else e.source.split(":")[0]

    for depth in (1, 0):
        found = [
            e.text
            for e in corpus
            if e.id != excerpt.id
            and source(e, depth) == source(excerpt, depth)
            and not _shared(e.text, excerpt.text)
        ]
        if found:
            return tuple(found[:n])
    return ()


def word_end(text: str, i: int) -> bool:
    """Whether the typist pauses after text[i]: the last character of a word."""
    return not text[i].isspace() and (i + 1 == len(text) or text[i + 1].isspace())


def typed_as_suggested(suggestion: str, intended: str) -> int:
    """Characters of the suggestion the typist then typed exactly (the common prefix)."""
    return common_prefix(suggestion, intended)


def repeats(suggestion: str, after: str) -> bool:
    """Whether `suggestion`, inserted before `after`, would write part of `after` twice.

    It spells the start of `after` (its first words, 8 characters or more, or its whole first
    line if shorter) from one of its word starts, or it ends with whole words (4 characters or
    more) that `after` begins with.
    """
    ahead = after.lstrip()
    line = ahead.split("\n", 1)[0].rstrip()
    if not line or not suggestion.strip():
        return False
    words = [m.end() for m in re.finditer(r"\S+", line)]
    head = line[: next((end for end in words if end >= 8), len(line))]
    for start in [0, *(m.end() for m in re.finditer(r"\s+", suggestion))]:
        tail = suggestion[start:].rstrip()
        if tail.startswith(head):
            return True
        whole = len(tail) == len(ahead) or not ahead[len(tail) : len(tail) + 1].isalnum()
        if len(tail) >= 4 and ahead.startswith(tail) and whole:
            return True
    return False


# ---------------------------------------------------------------- records


@dataclass
class Pause:
    excerpt: str
    label: str
    at: int  # characters typed before the pause
    latency_ms: float | None  # keystroke -> non-empty suggestion; None: none came
    outcome: str  # suggestion | empty | timeout | error
    suggestion: str = ""
    matched: int = 0  # of its characters, typed exactly as suggested
    place: str = "end"  # end | mid (text after the cursor)
    repeats: bool = False  # it would write part of the text after the cursor twice
    items: int = 0  # items in the answer (alternatives)


ANSWER_SENT = re.compile(r"answer sent: (\S+) version (\d+) checked at ([\d.]+)")


@dataclass
class Counts:
    keystrokes: int = 0
    requests: int = 0
    cancelled: int = 0  # answered -32800 after our $/cancelRequest
    stale: int = 0  # a suggestion checked when the edit or close that outdated it was sent
    crossed: int = 0  # one checked before that edit or close was sent: they crossed
    stale_after_ms: list[float] = field(default_factory=list)  # each: since the outdating message
    outdated: list[tuple[str, int, float]] = field(default_factory=list)  # uri, version, left at
    while_typing: int = 0  # non-empty suggestions for the current version between pauses
    errors: int = 0  # other error answers
    documents: int = 0  # documents opened


@dataclass
class Memory:
    """The server's resident set size, sampled; series kept coarse (one point per second)."""

    peak_mb: float = 0.0
    series: list[tuple[float, float]] = field(default_factory=list)  # (seconds, MB)

    def sample(self, proc: psutil.Process, t: float) -> None:
        try:
            rss = proc.memory_info().rss / 2**20
        except psutil.Error:
            return
        self.peak_mb = max(self.peak_mb, rss)
        if not self.series or t - self.series[-1][0] >= 1.0:
            self.series.append((round(t, 1), round(rss, 1)))


# ---------------------------------------------------------------- the editor side


class Editor:
    """An LSP client that asks for suggestions as VS Code does.

    One request per keystroke, the previous one cancelled; the server's own requests (progress)
    are answered as an editor answers them.
    """

    def __init__(self) -> None:
        self.client = LanguageClient("bielik-typing-bench", "1")
        self.state, self.message = "starting", ""
        self.messages: list[str] = []
        self.counts = Counts()
        self.typed: dict[str, int] = {}  # characters typed per content type and per place
        self.uri, self.text, self.version, self.cursor = "", "", 0, 0
        self.next_id = 0
        self.pending: tuple[int, asyncio.Future] | None = None
        # (uri, version) -> when the edit or close that left it lay in the server's pipe (its clock)
        self.left_at: dict[tuple[str, int], float] = {}
        c = self.client

        @c.feature(STATUS)
        def status(params) -> None:
            self.state = getattr(params, "state", self.state)
            self.message = getattr(params, "message", "")

        @c.feature(types.WINDOW_SHOW_MESSAGE)
        def show(params: types.ShowMessageParams) -> None:
            self.messages.append(params.message)

        @c.feature(types.WINDOW_LOG_MESSAGE)
        def log(params: types.LogMessageParams) -> None:
            pass

        @c.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def diagnostics(params: types.PublishDiagnosticsParams) -> None:
            pass

        @c.feature(types.WINDOW_WORK_DONE_PROGRESS_CREATE)
        def progress_create(params) -> None:
            return None

        @c.feature(types.PROGRESS)
        def progress(params) -> None:
            pass

    async def launch(
        self, argv: list[str], log_path: Path, source: Path = SOURCE
    ) -> psutil.Process:
        """Start the server as an editor does (a subprocess on stdio); its stderr goes to a log.

        It imports its code from `source` (another install's, for `bench ab`).
        """
        await self.client.start_io(*argv, env=_server_env(source))
        process = server_process(self.client)
        self.log = log_path
        self._drain = asyncio.ensure_future(_drain(process.stderr, log_path))
        return psutil.Process(process.pid)

    async def initialise(self, timeout_s: float, options: dict | None = None) -> None:
        """initialize/initialized as VS Code sends them; wait until the models are ready."""
        try:
            await self.client.initialize_async(
                types.InitializeParams(
                    process_id=os.getpid(),
                    capabilities=types.ClientCapabilities(
                        window=types.WindowClientCapabilities(work_done_progress=True)
                    ),
                    initialization_options=options or {},
                )
            )
        except RuntimeError as e:  # pygls: the server process exited
            raise TypingBenchError(f"{e} (see {self.log})") from None
        self.client.initialized(types.InitializedParams())
        deadline = time.perf_counter() + timeout_s
        while self.state not in ("ready", "error"):
            if (code := server_process(self.client).returncode) is not None:
                raise TypingBenchError(f"the server exited with code {code} (see {self.log})")
            if time.perf_counter() > deadline:
                raise TypingBenchError(f"the server was not ready after {timeout_s:.0f} s")
            await asyncio.sleep(0.1)
        if self.state != "ready":
            raise TypingBenchError(f"the server could not load its models: {self.message}")

    async def stop(self) -> None:
        """shutdown/exit; kill the server if it does not go."""
        process = server_process(self.client)
        try:
            await asyncio.wait_for(self.client.shutdown_async(None), 10)
            self.client.exit(None)
            await asyncio.wait_for(process.wait(), 10)
        except (TimeoutError, RuntimeError):
            process.kill()
        await self.client.stop()
        await self._drain

    def open(self, uri: str, before: str, after: str = "") -> None:
        """Open a document and type into it between `before` and `after`."""
        self.uri, self.text, self.version, self.cursor = uri, before + after, 1, len(before)
        self.show(uri, self.text)

    def show(self, uri: str, text: str) -> None:
        """didOpen, for the document typed into or one open next to it."""
        self.counts.documents += 1
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=uri, language_id="markdown", version=1, text=text
                )
            )
        )

    def close(self, uri: str | None = None) -> None:
        uri = uri or self.uri
        self.client.text_document_did_close(
            types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri))
        )
        if uri == self.uri:
            self.left_at[(uri, self.version)] = time.monotonic()

    @property
    def after(self) -> str:
        return self.text[self.cursor :]

    def position(self) -> types.Position:
        before = self.text[: self.cursor]
        line = before.count("\n")
        last = before[before.rfind("\n") + 1 :]
        return types.Position(line=line, character=len(last.encode("utf-16-le")) // 2)

    def keystroke(self, char: str) -> tuple[asyncio.Future, float]:
        """Type one character at the cursor; ask for a suggestion, cancelling the previous ask."""
        pos = self.position()
        self.text = self.text[: self.cursor] + char + self.text[self.cursor :]
        self.cursor += len(char)
        self.version += 1
        self.counts.keystrokes += 1
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(
                    uri=self.uri, version=self.version
                ),
                content_changes=[
                    types.TextDocumentContentChangePartial(
                        range=types.Range(start=pos, end=pos), text=char
                    )
                ],
            )
        )
        self.left_at[(self.uri, self.version - 1)] = time.monotonic()
        self.cancel()
        return self.request(), time.perf_counter()

    def request(self) -> asyncio.Future:
        """Ask for suggestions at the cursor; resolves to (items, seconds, current)."""
        self.next_id += 1
        msg_id, uri, version, sent = self.next_id, self.uri, self.version, time.perf_counter()
        params = types.InlineCompletionParams(
            text_document=types.TextDocumentIdentifier(uri=self.uri),
            position=self.position(),
            context=types.InlineCompletionContext(
                trigger_kind=types.InlineCompletionTriggerKind.Automatic
            ),
        )
        answer: asyncio.Future = asyncio.get_running_loop().create_future()

        def arrived(fut) -> None:
            took = time.perf_counter() - sent
            try:
                items = _texts(fut.result())
            except Exception as e:  # an error answer: -32800 for a cancelled request
                if getattr(e, "code", None) == -32800:
                    self.counts.cancelled += 1
                else:
                    self.counts.errors += 1
                    self.messages.append(f"inlineCompletion error: {e}")
                items = []
            left = self.left_at.get((uri, version))
            if items and left is not None:
                self.counts.outdated.append((uri, version, left))
                self.counts.stale_after_ms.append(round((time.monotonic() - left) * 1000, 1))
            if not answer.done():
                answer.set_result((items, took, left is None))

        self.client.protocol.send_request(
            types.TEXT_DOCUMENT_INLINE_COMPLETION, params, msg_id=msg_id
        ).add_done_callback(lambda fut: answer.get_loop().call_soon_threadsafe(arrived, fut))
        self.counts.requests += 1
        self.pending = (msg_id, answer)
        return answer

    def cancel(self) -> None:
        if self.pending and not self.pending[1].done():
            self.client.cancel_request(types.CancelParams(id=self.pending[0]))
        self.pending = None

    async def stats(self) -> dict:
        result = await self.client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="bielik.showStats", arguments=[])
        )
        return _plain(result)


def _texts(result) -> list[str]:
    """The items' texts, in the order the server ranked them."""
    items = getattr(result, "items", result) or []
    texts = [getattr(item, "insert_text", None) for item in items]
    return [t for t in texts if isinstance(t, str) and t]


def _plain(value):
    """Unknown result shapes come back from pygls as named tuples: make them JSON values."""
    if hasattr(value, "_asdict"):
        return {k: _plain(v) for k, v in value._asdict().items()}
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


async def _drain(stream: asyncio.StreamReader, path: Path) -> None:
    """Keep the server's stderr flowing (a full pipe would block it) into a log file."""
    with path.open("wb") as f:
        while chunk := await stream.read(65536):
            f.write(chunk)


# ---------------------------------------------------------------- the typist


async def type_script(
    editor: Editor, script: Script, cfg: TypingConfig, bar: tqdm, n: int
) -> list[Pause]:
    """Type one excerpt into a new document; a Pause record for every word end.

    Its neighbours are open meanwhile. In a storm there are no pauses, no neighbours, and the
    document stays open.
    """
    near = [] if cfg.minutes else [f"file:///bench/near/{n:04d}-{i}.md" for i in range(3)]
    for uri, text in zip(near, script.neighbours, strict=False):
        editor.show(uri, text)
    editor.open(f"file:///bench/typing/{n:04d}-{script.id}.md", script.context, script.after)
    pauses: list[Pause] = []
    step = 1.0 / cfg.cps
    due = time.perf_counter() + step
    for i, char in enumerate(script.typed):
        await asyncio.sleep(max(0.0, due - time.perf_counter()))
        answer, _ = editor.keystroke(char)
        bar.update(1)
        if cfg.minutes or not word_end(script.typed, i):
            answer.add_done_callback(partial_while_typing(editor))
            due += step
            continue
        pauses.append(await wait_at_pause(answer, script, i + 1, cfg.max_wait_s, editor.after))
        due = time.perf_counter() + step
    editor.cancel()
    if not cfg.minutes:
        editor.close()
        for uri in near[: len(script.neighbours)]:
            editor.close(uri)
    return pauses


def partial_while_typing(editor: Editor):
    def seen(fut: asyncio.Future) -> None:
        items, _, current = fut.result()
        if items and current:
            editor.counts.while_typing += 1

    return seen


async def wait_at_pause(
    answer: asyncio.Future, script: Script, at: int, wait_s: float, after: str
) -> Pause:
    """What the typist got at a pause: the first item is the one an editor shows."""
    base = {"excerpt": script.id, "label": script.label, "at": at, "place": script.place}
    try:
        items, took, _ = await asyncio.wait_for(asyncio.shield(answer), wait_s)
    except TimeoutError:
        return Pause(**base, latency_ms=None, outcome="timeout")
    if not items:
        return Pause(**base, latency_ms=None, outcome="empty")
    shown = items[0]
    return Pause(
        **base,
        latency_ms=took * 1000,
        outcome="suggestion",
        suggestion=shown,
        matched=typed_as_suggested(shown, script.intended[at:]),
        repeats=repeats(shown, after),
        items=len(items),
    )


# ---------------------------------------------------------------- summaries


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


def summarise(pauses: list[Pause], typed_chars: int) -> dict:
    lat = [p.latency_ms for p in pauses if p.latency_ms is not None]
    return {
        "pauses": len(pauses),
        "with_suggestion": len(lat),
        "share_with_suggestion": len(lat) / len(pauses) if pauses else 0.0,
        "p50_ms": percentile(lat, 50),
        "p95_ms": percentile(lat, 95),
        "mean_ms": statistics.fmean(lat) if lat else None,
        "timeouts": sum(p.outcome == "timeout" for p in pauses),
        "typed_chars": typed_chars,
        "suggested_chars": sum(len(p.suggestion) for p in pauses),
        "typed_as_suggested": covered(pauses, typed_chars),
        "repeats": sum(p.repeats for p in pauses),
        "with_alternatives": sum(p.items > 1 for p in pauses),
    }


def covered(pauses: list[Pause], typed_chars: int) -> int:
    """Typed characters that a suggestion shown at a pause had right (each counted once)."""
    seen: set[tuple[str, str, int]] = set()
    for p in pauses:
        seen.update((p.excerpt, p.place, p.at + j) for j in range(p.matched))
    return len(seen)


# ---------------------------------------------------------------- the run


@dataclass
class Run:
    config: dict
    machine: str
    started: str
    server: list[str]
    load_seconds: float = 0.0
    load_average: list[float | None] = field(default_factory=list)  # 1-minute, start and end
    settings: dict = field(default_factory=dict)
    summary: dict = field(default_factory=dict)
    counts: dict = field(default_factory=dict)
    memory: dict = field(default_factory=dict)
    server_stats: dict = field(default_factory=dict)
    messages: list[str] = field(default_factory=list)
    pauses: list[dict] = field(default_factory=list)
    ring_off: dict | None = None  # --ring both: the same run with the ring off


async def run(
    server_argv: list[str],
    cfg: TypingConfig,
    progress: bool = True,
    ring: bool = True,
    source: Path = SOURCE,
    options: dict | None = None,
) -> Run:
    """One server session: every script typed, with the ring on or off.

    `source`: whose code; `options`: more initializationOptions, e.g. {"grammar": False}.
    """
    cfg.out.mkdir(parents=True, exist_ok=True)
    record = Run(
        config={k: str(v) if isinstance(v, Path) else v for k, v in asdict(cfg).items()},
        machine=machine.describe(),
        started=datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        server=server_argv,
        load_average=[machine.load_average()],
    )
    editor = Editor()
    memory = Memory()
    t0 = time.perf_counter()
    log = cfg.out / ("server.log" if ring else "server-ring-off.log")
    proc = await editor.launch(server_argv, log, source)
    sampler = asyncio.ensure_future(_sample(proc, memory, t0, cfg.rss_every_s))
    try:
        await editor.initialise(cfg.ready_timeout_s, {"ring": ring, **(options or {})})
        record.load_seconds = time.perf_counter() - t0
        record.settings = (await editor.stats()).get("config", {})
        pauses = await _type_all(editor, scripts(cfg), cfg, memory, progress)
        record.server_stats = (await editor.stats()).get("session", {})
    finally:
        sampler.cancel()
        await editor.stop()
    split_outdated(editor.counts, log)
    record.summary = summaries(pauses, editor.typed)
    record.load_average.append(machine.load_average())
    record.counts = asdict(editor.counts)
    record.memory = {"peak_mb": round(memory.peak_mb, 1), "series": memory.series}
    record.messages = editor.messages
    record.pauses = [asdict(p) for p in pauses]
    return record


async def _type_all(
    editor: Editor, todo: list[Script], cfg: TypingConfig, memory: Memory, progress: bool
) -> list[Pause]:
    """Every script once (a storm: round and round until the time is up)."""
    pauses: list[Pause] = []
    total = None if cfg.minutes else sum(len(s.typed) for s in todo)
    with tqdm(total=total, desc="typing", unit="char", disable=not progress) as bar:
        stop_at = time.perf_counter() + 60 * cfg.minutes if cfg.minutes else None
        n = 0
        while True:
            script = todo[n % len(todo)]
            pauses += await type_script(editor, script, cfg, bar, n)
            for group in (script.label, script.place):
                editor.typed[group] = editor.typed.get(group, 0) + len(script.typed)
            n += 1
            bar.set_postfix_str(_postfix(pauses, memory), refresh=False)
            if stop_at is None and n == len(todo):
                break
            if stop_at is not None and time.perf_counter() >= stop_at:
                break
    return pauses


def summaries(pauses: list[Pause], typed: dict[str, int]) -> dict:
    """Per content type, per place in the document, and all together."""
    out = {}
    for label in LABELS:
        out[label] = summarise([p for p in pauses if p.label == label], typed.get(label, 0))
    for place in PLACES:
        out[place] = summarise([p for p in pauses if p.place == place], typed.get(place, 0))
    out["all"] = summarise(pauses, sum(typed.get(label, 0) for label in LABELS))
    return out


def split_outdated(counts: Counts, log: Path) -> None:
    """Answers for an outdated version: checked before the outdating edit (crossed), or after.

    The server logs when it last saw its input empty before it sent each answer, on the
    machine's monotonic clock; the typist stamps each keystroke once it is in the server's pipe.
    An answer checked after that was sent while the edit lay there unread: stale.
    """
    sent: dict[tuple[str, int], float] = {}
    for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
        if found := ANSWER_SENT.search(line):
            uri, version, at = found.groups()
            key = (uri, int(version))
            sent[key] = max(sent.get(key, 0.0), float(at))
    for uri, version, key_at in counts.outdated:
        if sent.get((uri, version), float("inf")) < key_at:
            counts.crossed += 1
        else:
            counts.stale += 1


async def settle(proc, quiet_cpu_s: float = 0.05, limit_s: float = 300.0) -> None:
    """Wait until a whole second passes in which the server uses under `quiet_cpu_s`."""
    deadline = time.monotonic() + limit_s
    last = cpu_seconds(proc)
    while time.monotonic() < deadline:
        await asyncio.sleep(1.0)
        now = cpu_seconds(proc)
        if now - last < quiet_cpu_s:
            return
        last = now


def cpu_seconds(proc) -> float:
    """CPU seconds a server process and its children have used."""
    total = 0.0
    for p in [proc, *proc.children(recursive=True)]:
        times = p.cpu_times()
        total += times.user + times.system
    return total


def _server_env(source: Path = SOURCE) -> dict:
    return {
        **os.environ,
        DEBUG_ENV: "lsp_server.inline",  # when each answer was sent: split_outdated
        "PYTHONPATH": os.pathsep.join(filter(None, [str(source), os.environ.get("PYTHONPATH")])),
    }


async def _sample(proc: psutil.Process, memory: Memory, t0: float, every: float) -> None:
    while True:
        memory.sample(proc, time.perf_counter() - t0)
        await asyncio.sleep(every)


def _postfix(pauses: list[Pause], memory: Memory) -> str:
    lat = [p.latency_ms for p in pauses if p.latency_ms is not None]
    p50 = percentile(lat, 50)
    return (
        f"p50 {p50:.0f} ms, RSS {memory.peak_mb:.0f} MB" if p50 else f"RSS {memory.peak_mb:.0f} MB"
    )


# ---------------------------------------------------------------- report


def report(record: Run) -> str:
    """The Markdown section for docs/benchmarks.md."""
    s, cfg, c = record.settings, record.config, record.counts
    model = ", ".join(
        f"{k} `{s[k]}`" for k in ("backend", "target", "drafterModel", "drafter") if s.get(k)
    )
    head = (
        f"`{cfg['command']}` ({record.started}; {record.machine}). The server as an editor runs "
        f"it (stdio), {model}; models ready {record.load_seconds:.1f} s after start. "
    )
    if cfg.get("minutes"):
        return head + _storm(record, cfg)
    lines = [
        head + f"A typist types {cfg['chars']} characters of each excerpt at {cfg['cps']:g} "
        f"characters/s, one `didChange` and one `inlineCompletion` per keystroke, the previous "
        f"request cancelled, and waits at each word end for a suggestion (at most "
        f"{cfg['max_wait_s']:g} s). Each excerpt is typed at the end of its document and inside "
        f"it (the rest of the excerpt after the cursor), with up to {NEIGHBOURS} other excerpts "
        f"of its source open. The ring (`ring`: context from the other open documents) is "
        f"{'on' if s.get('ring', True) else 'off'}. {_load(record)}",
        "",
        *_table(record.summary),
        "",
        f"{c['keystrokes']} keystrokes, {c['requests']} requests ({c['cancelled']} answered as "
        f"cancelled, {c['errors']} errors), {c['while_typing']} suggestions shown while typing, "
        f"**{c['stale']} stale** (a suggestion the server checked and sent for a document "
        f"version when the edit or close that left it lay in its input){_crossed(c)}, "
        f"**{record.summary['mid']['repeats']} suggestions repeating "
        f"the text after the cursor**, {record.summary['all']['with_alternatives']} answers "
        "with alternatives. "
        f"Server peak RSS {record.memory['peak_mb']:.0f} MB.",
    ]
    if record.ring_off:
        lines += ["", *_ring_compared(record)]
    if record.messages:
        lines += ["", "Server messages: " + "; ".join(sorted(set(record.messages)))]
    return "\n".join(lines) + "\n"


def _table(summary: dict) -> list[str]:
    names = {"end": "at a document's end", "mid": "inside a document"}
    lines = [
        "| text | pauses | with a suggestion | pause → suggestion p50 | p95 | typed exactly as "
        "suggested | repeating the text after |",
        "|---|---|---|---|---|---|---|",
    ]
    for group in (*LABELS, *PLACES, "all"):
        r = summary[group]
        lines.append(
            f"| {names.get(group, group)} | {r['pauses']} | {r['share_with_suggestion']:.0%} "
            f"| {_ms(r['p50_ms'])} | {_ms(r['p95_ms'])} | {r['typed_as_suggested']} of "
            f"{r['typed_chars']} characters ({_share(r)}) | {r['repeats']} |"
        )
    return lines


def _ring_compared(record: Run) -> list[str]:
    """The same benchmark with the ring off (`--ring both`), side by side."""
    off = record.ring_off
    lines = [
        f"The same run with the ring off (a second server session, {off['started']}; "
        f"{_load_text(off['load_average'])}):",
        "",
        "| ring | pause → suggestion p50 | p95 | typed exactly as suggested | end | inside | "
        "repeating | stale | crossed in flight |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, run in (("on", asdict(record)), ("off", off)):
        a, summary = run["summary"]["all"], run["summary"]
        lines.append(
            f"| {name} | {_ms(a['p50_ms'])} | {_ms(a['p95_ms'])} | {a['typed_as_suggested']} of "
            f"{a['typed_chars']} ({_share(a)}) | {_share(summary['end'])} | "
            f"{_share(summary['mid'])} | {summary['mid']['repeats']} | {run['counts']['stale']} | "
            f"{run['counts'].get('crossed', 0)} |"
        )
    return lines


def _crossed(counts: dict) -> str:
    """The answers for an outdated version that the server checked before the outdating edit."""
    crossed = counts.get("crossed", 0)
    if not crossed:
        return ""
    after = counts.get("stale_after_ms") or [0.0]
    return (
        f", {crossed} crossed an edit in flight (checked before the edit or close that outdated "
        f"them, arriving {min(after):.0f}–{max(after):.0f} ms after it: the editor had "
        "cancelled them)"
    )


def _share(r: dict) -> str:
    return f"{r['typed_as_suggested'] / max(1, r['typed_chars']):.0%}"


def _storm(record: Run, cfg: dict) -> str:
    """The storm's Markdown: what was sent, and the server's memory minute by minute."""
    c = record.counts
    lines = [
        f"Storm: {cfg['minutes']:g} minutes of typing at {cfg['cps']:g} characters/s with no "
        f"pauses, one `didChange` and one `inlineCompletion` per keystroke, the previous request "
        f"cancelled; each excerpt a new document, all left open ({c['documents']} documents, "
        f"{c['keystrokes']} keystrokes, {c['cancelled']} requests answered as cancelled, "
        f"{c['errors']} errors, {c['stale']} stale). {_load(record)}",
        "",
        "| minute | server RSS |",
        "|---|---|",
    ]
    lines += [f"| {t / 60:.1f} | {mb:.0f} MB |" for t, mb in _per_minute(record.memory["series"])]
    lines += ["", f"Peak {record.memory['peak_mb']:.0f} MB."]
    if record.messages:
        lines += ["", "Server messages: " + "; ".join(sorted(set(record.messages)))]
    return "\n".join(lines) + "\n"


def _load(record: Run) -> str:
    text = _load_text(record.load_average)
    return text[0].upper() + text[1:] + "."


def _load_text(load_average: list[float | None]) -> str:
    start, end = load_average[0], load_average[-1]
    if start is None or end is None:
        return "no load average on this OS"
    return f"load average (1 min) {start:g} at start, {end:g} at end"


def _ms(value: float | None) -> str:
    return "–" if value is None else f"{value:.0f} ms"


def _per_minute(series: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """One RSS point per minute (the first sample of each), plus the last."""
    out, minute = [], -1
    for t, mb in series:
        if int(t // 60) > minute:
            minute = int(t // 60)
            out.append((t, mb))
    if series and out[-1] != series[-1]:
        out.append(series[-1])
    return out


def write(record: Run, out: Path) -> Path:
    """OUT/typing.json (everything, every pause) and OUT/typing.md; returns the Markdown path."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "typing.json").write_text(
        json.dumps(asdict(record), ensure_ascii=False, indent=1), encoding="utf-8"
    )
    md = out / "typing.md"
    md.write_text(report(record), encoding="utf-8")
    return md


def run_typing(server_argv: list[str], cfg: TypingConfig, progress: bool = True) -> Path:
    """Run the typing benchmark against `server_argv` and write its outputs.

    `--ring both`: one session with the ring on, then one with it off, in one report.
    """
    record = asyncio.run(run(server_argv, cfg, progress, ring=cfg.ring != "off"))
    if cfg.ring == "both":
        record.ring_off = asdict(asyncio.run(run(server_argv, cfg, progress, ring=False)))
    return write(record, cfg.out)


def server_command(global_args: list[str]) -> list[str]:
    """This Python running the server with the same global options (config, preset, models)."""
    return [sys.executable, "-m", "app.cli", *global_args, "serve"]
