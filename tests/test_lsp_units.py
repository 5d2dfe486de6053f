"""Pure unit tests of the server's text logic: positions, cutting, repeats, the suggestion cache."""

from __future__ import annotations

import bisect
import concurrent.futures
import importlib.metadata
import random
import threading
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lsprotocol import types
from pygls.client import JsonRPCClient
from pygls.exceptions import JsonRpcInvalidParams
from pygls.progress import Progress

from decoder.backends import threads
from decoder.config import ConfigError, Settings
from decoder.pipeline import Pipeline
from lsp_server import compat
from lsp_server.commands import ContinueArgs, ToggleArgs, parse
from lsp_server.completion import (
    Item,
    Prompt,
    SuggestionCache,
    align,
    avoid_repeat,
    build_prompt,
    cut,
    following,
    join_point,
    lookup,
    prompt_window,
    unit_end,
)
from lsp_server.documents import (
    NotText,
    PositionError,
    check_text,
    column_to_index,
    index_to_column,
    line_starts,
    magic_mode,
    offset_at,
    position_at,
    split_at,
)
from lsp_server.settings import Config, ServerOptions, camel, snake
from lsp_server.speculation import drafter_for
from lsp_server.spelling import Positions
from lsp_server.worker import EngineThread, Ticket, Worker


def test_utf16_columns_count_surrogate_pairs():
    line = "a😀ż"  # 😀 is two UTF-16 units, ż one
    assert [column_to_index(line, c) for c in range(5)] == [0, 1, 1, 2, 3]  # 2 is inside the pair
    assert index_to_column(line, 2) == 3 and index_to_column(line, 3) == 4
    assert column_to_index(line, 99) == 3  # past the end clamps
    assert column_to_index("żółw", 2, "utf-8") == 1 and column_to_index("żółw", 4, "utf-32") == 4


def test_offsets_lines_and_errors():
    text = "ab\r\ncd\ref\ng"
    assert [offset_at(text, line, 0) for line in range(4)] == [0, 4, 7, 10]
    assert offset_at(text, 0, 10) == 2  # clamps before the line break
    with pytest.raises(PositionError):
        offset_at(text, 4, 0)
    with pytest.raises(PositionError):
        offset_at(text, 0, -1)
    cursor = split_at("Ala ma\nkota", 1, 2)
    assert (cursor.before, cursor.after) == ("Ala ma\nko", "ta")


@given(st.text(alphabet=st.sampled_from("aż😀\n \r"), max_size=30), st.data())
def test_position_roundtrip(text, data):
    offset = data.draw(st.integers(0, len(text)))
    if offset and text[offset - 1] == "\r" and text[offset : offset + 1] == "\n":
        offset -= 1  # between \r and \n is no position
    line, character = position_at(text, offset)
    assert offset_at(text, line, character) == offset


def test_binary_and_magic_comments():
    with pytest.raises(NotText):
        check_text("abc\x00def")
    with pytest.raises(NotText):
        check_text("\x01\x02\x03\x04abc")
    check_text("Zwykły tekst\tz tabulatorem.\n")
    assert magic_mode("<!-- bielik: speculation=off -->\ntekst") == "off"
    assert magic_mode("% bielik: speculation=on") == "on"
    assert magic_mode("# bielik: speculation=auto") == "auto"
    assert magic_mode("bielik: speculation=off bez komentarza") is None


def test_cut_at_sentence_clause_or_whole_word():
    assert cut(" i psa. A potem", finished=False) == " i psa."
    assert cut(" w 1878 r. poszedł do domu. Dalej", finished=False) == " w 1878 r. poszedł do domu."
    assert cut(" np. psa i kota. Dalej", finished=False) == " np. psa i kota."
    assert cut(" pierwsza linia\ndruga", finished=False) == " pierwsza linia"
    assert (
        cut(" kiedy świat polityczny zajmował się, warszawscy kup", finished=False)
        == " kiedy świat polityczny zajmował się,"
    )
    assert cut(" i psa a potem poszli do", finished=False) == " i psa a potem poszli"
    assert cut(" kota", finished=False) == ""  # the only word may be unfinished
    assert cut(" kota", finished=True) == " kota"
    assert unit_end(" bez końca") is None


def test_prompt_drops_trailing_space_and_align_undoes_it():
    prompt = build_prompt("Ala ma ", 100)
    assert prompt == Prompt("Ala ma", dropped=" ") and prompt.first_bytes == b" "
    assert align(" kota.", prompt) == "kota."
    assert align("ło", prompt) is None  # the model went on with "ma" although a space was typed
    assert align("ło", build_prompt("Ala ma", 100)) == "ło"
    two = build_prompt("Ala ma  ", 100)
    assert two.first_bytes == b"  " and align("  kota", two) == "kota"


def test_prompt_reads_context_then_the_text_after_then_the_text_before():
    prompt = build_prompt(
        "Art. 4. Tekst ", 100, after=" dalej.\nArt. 5. Koniec.", suffix_chars=100, extra=("Obcy.",)
    )
    assert prompt.text == "Obcy.\n\ndalej.\nArt. 5. Koniec.\n\nArt. 4. Tekst"
    assert build_prompt("a ", 100, after="b", suffix_chars=0).text == "a"  # no suffix asked
    # While the user types at one place, the prompt only grows at its end (the prefix cache).
    typed = [
        build_prompt("Art. 4. Tekst" + "x" * n, 100, after=" dalej.", suffix_chars=100)
        for n in range(5)
    ]
    assert all(b.text.startswith(a.text) for a, b in zip(typed, typed[1:], strict=False))


def test_following_keeps_whole_lines_or_words():
    assert following("abc def\nghi jkl\nmno", 12) == "abc def"
    assert following(" abc def ghi", 8) == "abc"
    assert following("\n\n", 100) == "" and following("abc", 0) == ""


def test_prompt_window_is_stable_while_typing():
    words = " ".join(f"słowo{i}" for i in range(400))
    windows = [prompt_window(words + " dalej" * n, 1000) for n in range(10)]
    assert all(len(w) <= 1000 for w in windows)
    starts = {w[:20] for w in windows}
    assert len(starts) <= 2  # the start moves in quarter-window steps, not with every keystroke
    assert all(not w.startswith(" ") for w in windows)


def test_avoid_repeat_of_text_after_cursor():
    assert avoid_repeat(" kota.", " kota. Kot ma Alę.") == ""
    assert avoid_repeat(" psa i kota. Kot", " kota. Kot ma Alę.") == " psa i"
    assert avoid_repeat(" psa.", " kota.") == " psa."
    assert avoid_repeat(" psa.", "\nnowa linia") == " psa."
    # The following lines count too: a suggestion never spells the start of the next ones.
    assert avoid_repeat(" psa.\nArt. 5. Koniec", "\n\nArt. 5. Koniec ustawy.") == " psa."
    assert avoid_repeat("\nArt. 6. Dalej", "\nArt. 5. Koniec.\nArt. 6. Dalej.") == ""
    assert avoid_repeat("\nArt. 7. Nowy", "\nArt. 5. Koniec.\nArt. 6. Dalej.") == "\nArt. 7. Nowy"


def test_join_point_is_where_a_suggestion_runs_into_the_text_after_the_cursor():
    assert join_point("ła ma kota. Kot ma", " kota. Kot ma Alę.") == 5
    assert join_point("ła ma kota.", " kota. Kot ma Alę.") == 5  # its end begins the text after
    assert join_point("ła ma kota.", " kota. Kot ma Alę.", partial=False) is None
    assert join_point("i kota. Kot", "kota. Kot ma") == 2
    assert join_point("pokota. Kot", "kota. Kot ma") is None  # never inside a word
    assert join_point("cokolwiek", "") is None and join_point("x", "\n \n") is None


def test_lookup_continues_an_earlier_occurrence():
    text = "Sąd Okręgowy w Krakowie oddalił powództwo. Potem Sąd Okręgowy w Krakowie "
    assert lookup(text).startswith("oddalił powództwo.")
    assert lookup("Zupełnie nowy tekst tutaj ") == ""
    other = ("Wcześniej: zupełnie nowy tekst tutaj jest inny.",)
    assert lookup("To jest zupełnie nowy tekst tutaj ", other) == "jest inny."
    assert lookup("Całkiem inny początek ", other) == ""
    assert lookup("tutaj ", other) == ""  # a match shorter than 12 characters is no evidence


def test_suggestion_cache_follows_typing():
    cache = SuggestionCache(size=2)
    cache.put("u", "Ala ma", "", [Item(" kota i psa.", "model"), Item(" konia.", "sampled")])

    def texts(before, after=""):
        return [i.text for i in cache.get("u", before, after)]

    assert texts("Ala ma") == [" kota i psa.", " konia."]
    assert texts("Ala ma ko") == ["ta i psa.", "nia."]  # every item the typing goes through
    assert texts("Ala ma kot") == ["a i psa."]
    assert texts("Ala ma ka") == []  # typed something else
    assert cache.get("v", "Ala ma ko", "") == []  # another document
    assert texts("Ala ma ko", " tekst dalej") == []  # different text after the cursor
    assert texts("Ala ma kota i psa.") == []  # typed all of it
    cache.put("u", "a", "", [Item(" b", "model")])
    cache.put("u", "c", "", [Item(" d", "model")])
    assert texts("Ala ma") == []  # evicted (LRU)


def test_config_updates_validate_and_keep_old_values():
    config = Config(Settings(), ServerOptions())
    new = config.updated({"bielik": {"debounceMs": 50, "k": 2, "languages": ["markdown"]}})
    assert new.server.debounce_ms == 50 and new.engine.k == 2
    assert new.server.serves("file:///a.md", "markdown") and not new.server.serves(
        "file:///a.py", "python"
    )
    for bad in (
        {"k": "4"},
        {"k": 99},
        {"debounceMs": -1},
        {"colour": "red"},
        {"drafter": "magic"},
        {"maxTokens": 8},  # nothing in the server reads the engine's default budget
        {"languages": "markdown"},  # a string is not a list of languageIds
        {"globs": "*.md"},
        {"prepareNext": "yes"},
        {"suggestionMs": True},
        [],
    ):
        with pytest.raises(ConfigError):
            config.updated(bad)
    assert config.updated(None) is config
    globbed = config.updated({"globs": ["*/notes/*.md"]}).server
    assert globbed.serves("file:///home/x/notes/a.md", None) and not globbed.serves(
        "file:///home/x/a.md", None
    )


def test_speculation_mapping():
    s = Settings(drafter="lookup")
    assert drafter_for(s, "off")[0] == "none"
    assert drafter_for(s, "on")[0] == "lookup"
    assert drafter_for(Settings(drafter="none"), "on")[0] == "auto"
    assert drafter_for(Settings(), "auto")[0] == "auto"
    assert drafter_for(Settings(drafter="none"), "auto")[0] == "none"


def test_null_resets_a_setting_to_its_default():
    config = Config(Settings(), ServerOptions()).updated({"seed": 7, "k": 3, "debounceMs": 5})
    reset = config.updated({"seed": None, "k": None, "debounceMs": None})
    assert (reset.engine.seed, reset.engine.k, reset.server.debounce_ms) == (
        None,
        Settings().k,
        ServerOptions().debounce_ms,
    )


def test_one_converter_between_client_and_server_names():
    assert [snake(k) for k in ("inlineMaxTokens", "drafter_model", "top-p")] == [
        "inline_max_tokens",
        "drafter_model",
        "top_p",
    ]
    described = Config(Settings(), ServerOptions()).describe()
    assert all(camel(snake(k)) == k for k in described)
    assert "maxTokens" not in described and "suggestionMs" in described


def test_command_arguments_are_typed():
    args = parse(ContinueArgs, ({"uri": "file:///a", "position": {"line": 1, "character": 2}},))
    assert args.position == types.Position(line=1, character=2) and args.max_tokens is None
    assert parse(ContinueArgs, ("file:///a", None, 5)).max_tokens == 5
    assert parse(ToggleArgs, ("file:///a",)).mode is None
    for cls, bad in (
        (ContinueArgs, ({"uri": "file:///a", "maxTokens": "5"},)),
        (ContinueArgs, ({"uri": "file:///a", "maxTokens": 0},)),
        (ContinueArgs, ({"uri": "file:///a", "position": {"line": -1, "character": 0}},)),
        (ContinueArgs, ({"uri": "file:///a", "colour": 1},)),
        (ContinueArgs, (5,)),
        (ContinueArgs, ()),
        (ToggleArgs, ("file:///a", "sometimes")),
        (ToggleArgs, ("file:///a", "on", "extra")),
    ):
        with pytest.raises(JsonRpcInvalidParams) as err:
            parse(cls, bad)
        assert "\n" not in str(err.value)


def test_pygls_private_names_are_where_compat_expects_them():
    version = importlib.metadata.version("pygls")
    assert version.startswith(compat.CHECKED + "."), (
        f"lsp_server/compat.py was checked against pygls {compat.CHECKED}.x, found {version}: "
        "check every override there, then update CHECKED"
    )
    for cls, names in compat.PRIVATE_NAMES.items():
        for name in names:
            assert callable(getattr(cls, name, None)), f"pygls {cls.__name__}.{name} is gone"
    client = JsonRPCClient()
    for owner, name in compat.PRIVATE_ATTRIBUTES:
        holder = client.protocol if owner == "client.protocol" else client
        assert hasattr(holder, name), f"pygls {type(holder).__name__}().{name} is gone"
    assert "tokens" in vars(Progress(None)), "pygls Progress.tokens is gone"


def test_ticket_budgets():
    ticket = Ticket(10.0, arrived=time.monotonic() - 11)
    assert ticket.should_stop()  # the budget counts from the arrival, not from the start
    waiting = [0]
    background = Ticket(yields_to=lambda: waiting[0] > 0)
    assert not background.should_stop()
    waiting[0] = 1
    assert background.should_stop() and not background.cancelled


def test_work_a_request_may_overtake_prefills_in_short_passes():
    """A request's own prompt goes in the widest passes.

    Prefill on open and continueDocument (they yield to requests) go in short ones, and the
    background work with one thread fewer.
    """
    from tests import tiny_backend

    model = tiny_backend.load("seed:3", Settings())
    backend, passes = model.backend, []
    feed = backend.prefill_chunk

    def timed(ids: list[int]) -> None:  # 0.5 ms an id, as a small model on a busy laptop
        passes.append((len(ids), threads.in_background()))
        feed(ids)
        time.sleep(5e-4 * len(ids))

    backend.prefill_chunk = timed
    worker = Worker()
    worker.pipe = Pipeline(Settings(drafter="none"), model)
    text = "Ala ma kota, a kot ma Alę. " * 40  # 522 ids
    tickets = {
        "request": Ticket(10.0),
        "continueDocument": Ticket(yields_to=lambda: False),
        "warm-up": Ticket(yields_to=lambda: False, background=True),
    }
    lanes = {}
    for name, ticket in tickets.items():
        passes.clear()
        worker.pipe.reset()
        worker.generate(text, max_tokens=3, drafter="none", ticket=ticket)
        lanes[name] = passes[:]
    assert lanes["request"] == [(512, False), (9, False)]
    for name in ("continueDocument", "warm-up"):
        cuts = [n for n, _ in lanes[name]]
        assert sum(cuts) == 521 and max(cuts) <= 130 and len(cuts) >= 5, cuts
        assert {background for _, background in lanes[name]} == {name == "warm-up"}
    assert not threads.yielding() and not threads.in_background()  # the lanes ended with them


def test_engine_thread_runs_urgent_calls_first_and_abandon_cancels_the_queue():
    engine = EngineThread()
    gate = threading.Event()
    ran: list[str] = []
    busy = engine.submit(gate.wait)  # holds the thread while the queue fills
    later = [engine.submit(ran.append, name) for name in ("prepare", "continue")]
    urgent = engine.submit(ran.append, "keystroke", urgent=True)
    gate.set()
    for future in (busy, urgent, *later):
        future.result(timeout=5)
    assert ran == ["keystroke", "prepare", "continue"]

    gate.clear()
    engine.submit(gate.wait)
    queued = engine.submit(ran.append, "late")
    engine.abandon()
    gate.set()
    with pytest.raises(concurrent.futures.CancelledError):
        queued.result(timeout=5)
    assert ran[-1] == "continue"


def test_checkers_model_work_waits_for_a_quiet_writer_and_yields_when_they_type():
    """Scoring starts `settle_s` after the last keystroke; a keystroke stops it between passes."""
    import asyncio

    from decoder.scoring import Cancelled
    from lsp_server.grammar import ScoringQueue

    worker = Worker()
    worker.pipe = object()  # the calls below do not read the engine
    queue = ScoringQueue(worker, settle_s=0.3)
    starts: list[float] = []

    def passes(engine, should_stop) -> str:  # ten passes of 50 ms, checked between them
        starts.append(time.monotonic())
        for _ in range(10):
            if should_stop():
                raise Cancelled()
            time.sleep(0.05)
        return "verdicts"

    async def writer() -> tuple[str, float]:
        queue.stir()
        work = asyncio.ensure_future(queue.run(passes))
        await asyncio.sleep(0.5)  # the call started at 0.3 s and is in its passes
        queue.stir()
        typed = time.monotonic()
        return await asyncio.wait_for(work, 5), typed

    began = time.monotonic()
    answer, typed = asyncio.run(writer())
    assert answer == "verdicts" and len(starts) == 2
    assert starts[0] - began >= 0.3  # not while the writer was typing
    assert starts[1] - typed >= 0.3  # the call stopped at a keystroke, again after a quiet spell


def test_a_new_suggestion_shows_at_its_time_once_it_holds_a_whole_word():
    from lsp_server.suggestions import enough

    prompt = build_prompt("Ustawa wchodzi w życie", 8000)
    past, future = time.monotonic() - 1, time.monotonic() + 60
    assert not enough(" po", prompt, show_at=past)  # a word still being written
    assert enough(" po upływie", prompt, show_at=past)  # "po" is whole: show it now
    assert not enough(" po upływie", prompt, show_at=future)  # still time for more
    assert not enough(" po upływie", prompt)  # a prepared suggestion runs to a unit end
    assert enough(" po upływie 14 dni.\n", prompt, show_at=future)  # a whole line
    # Twice as late, part of a word is enough: a long identifier shows its start.
    assert enough(" po", prompt, show_at=past, part_at=past)
    assert not enough(" po", prompt, show_at=past, part_at=future)
    assert not enough(" ", prompt, show_at=past, part_at=past)  # nothing to show yet
    # Where the text meets what follows the cursor, the run has written all it should.
    assert enough(" po upływie 14 dni od", prompt, after=" 14 dni od ogłoszenia")
    assert not enough(" po upływie 14 dni", prompt, after=" 14 dni od ogłoszenia")


def test_a_run_past_its_part_time_shows_all_it_wrote_and_a_prepared_one_gets_times_late():
    from decoder.stats import RunStats
    from lsp_server.suggestions import Deadlines, Job, from_result
    from lsp_server.worker import Generated

    prompt = build_prompt("config = self.", 8000)
    run = Generated(" load_user_setti", RunStats(), "unit")
    late = Job(prompt, "", "none", "auto", 24, times=Deadlines.after(time.monotonic() - 1, 0.08))
    assert [i.text for i in from_result(run, late, "model")] == [" load_user_setti"]
    prepared = Job(prompt, "", "none", "auto", 24)  # prepared ahead: no times, whole words only
    assert from_result(run, prepared, "model") == []
    prepared.times.show_at, prepared.times.part_at = late.times.show_at, late.times.part_at
    assert [i.text for i in from_result(run, prepared, "model")] == [" load_user_setti"]


def test_items_join_the_text_after_or_stop_before_repeating_it_and_rank_without_duplicates():
    from lsp_server.suggestions import item, ranked

    after = " kota. Kot ma Alę."
    assert item("ładnego kota. Kot", after, "model", finished=False) == Item(
        "ładnego", "model", joins=True
    )
    assert item(" kota. Kot", after, "model", finished=False) is None  # all of it is there
    assert item(" psa i kota. Kot ma", " kota. Kot ma", "lookup", finished=False).joins
    assert item(" psa, a potem", "", "model", finished=False) == Item(" psa, a", "model")
    # A text that repeats the start of what follows, then goes on elsewhere, does not "join".
    assert item(" kota.\n\nAla ma kota.", after, "model", finished=False) is None
    assert item(" kota.\n\nAla ma kota. Kot", after, "model", finished=False) is None
    items = [
        Item(" psa.", "model"),
        Item(" psa.", "lookup"),  # the same text twice
        Item(" ps", "sampled"),  # only the start of one before it
        Item(" rybki.", "sampled"),
        Item(" konia", "lookup", joins=True),
    ]
    assert [(i.text, i.kind) for i in ranked(items)] == [
        (" konia", "lookup"),
        (" psa.", "model"),
        (" rybki.", "sampled"),
    ]


def test_watched_input_knows_when_every_message_sent_is_read():
    """Idle: the reader waits for a next message, none is buffered, the pipe is empty.

    Reading: a message is on its way in (bytes in the pipe, or the reader is not waiting); a
    message cut off mid-way is not, so nothing waits on a client that stalls inside one.
    """
    import os
    import threading

    from lsp_server.compat import WatchedInput

    message = b"Content-Length: 2\r\n\r\n{}"
    r, w = os.pipe()
    watched = WatchedInput(os.fdopen(r, "rb"))
    got: list[bytes] = []
    go = threading.Semaphore(0)

    def reader() -> None:  # as pygls reads: header lines, then the body; then the next message
        while go.acquire() and (header := watched.readline()):
            assert watched.readline() == b"\r\n"
            got.append(header + b"\r\n" + watched.read(2))

    def wait_for(n: int) -> None:
        while len(got) < n:
            time.sleep(0.001)
        time.sleep(0.05)

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    go.release()
    time.sleep(0.05)
    assert watched.idle() is not None and not watched.reading()  # waiting on an empty pipe
    os.write(w, message + message)  # two messages in one write
    wait_for(1)
    assert got == [message] and watched.buffer == message
    assert watched.reading()  # handed over, the next call not begun
    watched.waiting = True  # as if the reader had begun its next call and lost the CPU there
    assert watched.idle() is None  # the second message is read but not handled: not idle
    go.release()
    wait_for(2)
    assert got == [message, message]
    go.release()
    time.sleep(0.05)
    assert watched.idle() is not None
    os.write(w, message[:10])  # part of a message: the reader holds it, waiting for the rest
    time.sleep(0.05)
    assert watched.waiting and watched.idle() is None and not watched.reading()
    os.write(w, message[10:])
    wait_for(3)
    os.close(w)
    go.release()
    thread.join(1)
    assert watched.idle() is None  # the reader ended: nothing waits for input
    r, w = os.pipe()
    pending = WatchedInput(os.fdopen(r, "rb"))
    pending.waiting = True  # as if its reader had not yet woken up for what arrived
    os.write(w, message)
    assert pending.idle() is None and pending.reading()
    os.close(w)


@pytest.mark.parametrize("encoding", ["utf-16", "utf-8", "utf-32"])
def test_positions_in_any_order_match_the_line_by_line_conversion(encoding):
    """Positions converts from the last offset asked; any order gives the plain conversion."""
    text = "aż😀b\ncd😀😀 é\n\n😀x" * 50
    starts = line_starts(text)
    rng = random.Random(7)
    offsets = sorted(rng.sample(range(len(text)), 200)) + rng.sample(range(len(text)), 50)
    positions = Positions(text, encoding)
    for offset in offsets:
        line = bisect.bisect_right(starts, offset) - 1
        start = starts[line]
        want = index_to_column(text[start:offset], offset - start, encoding)
        assert positions.at(offset) == types.Position(line=line, character=want), offset
