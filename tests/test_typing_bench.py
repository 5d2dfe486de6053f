"""`bielik-lsp bench --typing`: the typist's arithmetic, and a tiny run against the real server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.bench.corpus import Excerpt, load_corpus
from app.bench.typing import (
    Pause,
    TypingConfig,
    covered,
    neighbours,
    repeats,
    script_for,
    scripts,
    summarise,
    typed_as_suggested,
    word_end,
)

ROOT = Path(__file__).resolve().parent.parent


def test_script_starts_at_a_word_and_keeps_the_real_text():
    text = "Art. 1. Rzeczpospolita Polska jest dobrem wspólnym wszystkich obywateli. " * 6
    s = script_for(Excerpt("x", "structured", text, "", ""), 40)
    assert s.context + s.intended == text
    assert s.intended.startswith(s.typed) and len(s.typed) == 40
    assert s.context[-1].isspace() and not s.typed[0].isspace()


def test_inside_a_document_the_rest_is_after_the_cursor():
    text = "Art. 1. Rzeczpospolita Polska jest dobrem wspólnym wszystkich obywateli. " * 6
    s = script_for(Excerpt("x", "structured", text, "", ""), 40, "mid")
    assert s.place == "mid" and s.context + s.typed + s.after == text
    assert s.intended == s.typed and 30 < len(s.typed) <= 40
    assert not s.typed[-1].isspace() and s.after[0].isspace()  # the typed part ends a word


def test_scripts_take_each_content_type_from_the_corpus_at_both_places():
    got = scripts(TypingConfig(per_class=2, chars=30))
    assert [s.label for s in got] == ["structured"] * 4 + ["prose"] * 4
    assert [s.place for s in got] == ["end", "mid"] * 4
    assert len({(s.id, s.place) for s in got}) == 8
    assert all(s.neighbours for s in got)


def test_neighbours_come_from_the_same_source_and_never_hold_the_excerpt():
    corpus = load_corpus()
    for excerpt in corpus[:: len(corpus) // 8]:
        for text in neighbours(excerpt, corpus):
            assert text != excerpt.text
            assert not any(excerpt.text[i : i + 40] in text for i in range(len(excerpt.text) - 40))


def test_a_suggestion_repeats_the_text_after_the_cursor():
    after = " kota. Kot ma Alę."
    assert repeats(" psa i kota. Kot", after)  # spells its first words
    assert repeats(" ma kota", after)  # ends with a whole word it begins with
    assert not repeats(" psa", after) and not repeats(" ma kot", after)
    assert not repeats(" ładnego", after)  # joins it: nothing twice
    assert not repeats(" kota.", "") and not repeats("", after)


def test_pauses_come_at_word_ends():
    text = "Ala ma  kota.\nI psa"
    assert [i for i in range(len(text)) if word_end(text, i)] == [2, 5, 12, 14, 18]


def test_typed_as_suggested_is_the_common_prefix():
    assert typed_as_suggested(" kota i psa", " kota, psa") == 5
    assert typed_as_suggested("", "abc") == 0
    assert typed_as_suggested("abc", "ab") == 2


def test_overlapping_suggestions_count_each_typed_character_once():
    pauses = [
        Pause("a", "prose", 3, 100.0, "suggestion", " ma kota", 8),
        Pause("a", "prose", 6, 90.0, "suggestion", " kota.", 5),
        Pause("a", "prose", 11, None, "timeout"),
    ]
    assert covered(pauses, 20) == 8
    s = summarise(pauses, 20)
    assert (s["pauses"], s["with_suggestion"], s["timeouts"]) == (3, 2, 1)
    assert s["p50_ms"] == 95.0 and s["typed_as_suggested"] == 8


def _bench(out: Path, *options: str) -> dict:
    cmd = [sys.executable, "-m", "app.cli", "bench", "--typing", "--quick", "--quiet"]
    cmd += ["--chars", "12", "--out", str(out), *options]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert proc.stdout.strip().endswith("typing.md")
    return json.loads((out / "typing.json").read_text(encoding="utf-8"))


@pytest.mark.slow
def test_tiny_typing_run_against_the_real_server(tmp_path):
    """The CLI end to end, a few words per excerpt: shapes and counts, no timings."""
    record = _bench(tmp_path)
    c = record["counts"]
    typed = record["summary"]["all"]["typed_chars"]
    assert c["keystrokes"] == c["requests"] == typed and 40 <= typed <= 48  # 2 excerpts x 2 places
    assert c["documents"] >= 4 and record["summary"]["mid"]["pauses"] > 0
    assert c["cancelled"] + c["errors"] <= c["requests"] and c["errors"] == 0
    assert record["summary"]["all"]["pauses"] == len(record["pauses"]) > 0
    for p in record["pauses"]:
        assert p["outcome"] in ("suggestion", "empty", "timeout")
        assert (p["latency_ms"] is not None) == (p["outcome"] == "suggestion")
        assert 0 <= p["matched"] <= len(p["suggestion"])
    assert record["settings"]["target"]  # the server's own echo of its configuration
    assert record["memory"]["peak_mb"] > 100 and record["memory"]["series"]
    md = (tmp_path / "typing.md").read_text(encoding="utf-8")
    assert "pause → suggestion p50" in md and "stale" in md
    assert c["stale"] == 0  # the server sends nothing for a version the editor has left
    assert record["summary"]["mid"]["repeats"] == 0  # nor a repeat of the text after the cursor
    log = (tmp_path / "server.log").read_text(encoding="utf-8")
    assert "WARNING" not in log, log[-2000:]  # late cancels are routine, not warnings
    assert "answer sent: file://" in log  # what tells a stale answer from one that crossed an edit
    assert c["stale"] + c["crossed"] == len(c["outdated"])


@pytest.mark.slow
def test_tiny_storm_against_the_real_server(tmp_path):
    """--minutes: no pauses, every excerpt a new open document, memory over time."""
    record = _bench(tmp_path, "--minutes", "0.2")
    c = record["counts"]
    assert record["pauses"] == [] and c["errors"] == 0
    assert c["keystrokes"] == c["requests"] > 48 and c["documents"] > 4  # went round again
    assert len(record["memory"]["series"]) >= 10  # a point a second
    assert "server RSS" in (tmp_path / "typing.md").read_text(encoding="utf-8")
