"""polish.content: clear dev-set cases, cursor handling, edge cases, and a metrics guard."""

from __future__ import annotations

import importlib.util
import json
import time
from pathlib import Path

import pytest

from polish.content import ContentType, classify

ROOT = Path(__file__).resolve().parents[1]
DEVSET = [
    json.loads(line)
    for line in (ROOT / "polish/data/devset.jsonl").read_text(encoding="utf-8").splitlines()
]


def first(label: str, source_part: str) -> str:
    return next(it["text"] for it in DEVSET if it["label"] == label and source_part in it["source"])


LALKA = first("prose", "lalka.txt")
JUDGMENT = first("prose", "judgments")
KONSTYTUCJA = first("structured", "konstytucja.txt")
EXAM = first("structured", "/exams/")
CHANGELOG = first("structured", "HISTORY.md")
TABLE = next(
    it["text"] for it in DEVSET if it["label"] == "structured" and it["text"].count("|") > 20
)


@pytest.mark.parametrize("text", [KONSTYTUCJA, EXAM, CHANGELOG, TABLE])
def test_structured_excerpts(text: str) -> None:
    assert classify(text).label == "structured"


@pytest.mark.parametrize("text", [LALKA, JUDGMENT])
def test_prose_excerpts(text: str) -> None:
    assert classify(text).label == "prose"


def test_result_shape() -> None:
    r = classify(EXAM)
    assert isinstance(r, ContentType)
    assert 0.5 <= r.confidence <= 1.0
    assert r.reason.startswith("structured (") and r.reason.endswith(f"{r.confidence:.2f})")
    assert {"markers", "finite_verbs", "unknown"} <= set(r.signals)


def test_list_after_prose_is_structured_inside_the_list() -> None:
    text = LALKA + "\n\n" + EXAM
    cursor = len(LALKA) + 2 + len(EXAM) // 2
    assert classify(text, cursor).label == "structured"
    assert classify(text, len(LALKA) // 2).label == "prose"


def test_prose_after_a_list_is_prose() -> None:
    text = KONSTYTUCJA + "\n\n" + LALKA
    assert classify(text).label == "prose"
    assert classify(text, len(KONSTYTUCJA) - 5).label == "structured"


@pytest.mark.parametrize("text", ["", "   \n\n\t  "])
def test_empty_and_whitespace(text: str) -> None:
    r = classify(text)
    assert r.label == "prose" and r.confidence == 0.5


@pytest.mark.parametrize("cursor", [-10, 10**9])
def test_cursor_out_of_range_is_clamped(cursor: int) -> None:
    assert classify(LALKA, cursor).label in ("prose", "structured")


def test_emoji_and_non_polish_do_not_crash() -> None:
    for text in [
        "😀🎉🚀 " * 200,
        "The quick brown fox jumps over the lazy dog. " * 30,
        "日本語のテキスト。" * 50,
    ]:
        r = classify(text)
        assert r.label in ("prose", "structured") and 0.5 <= r.confidence <= 1.0


def test_very_long_text_is_fast() -> None:
    text = "\n\n".join(it["text"] for it in DEVSET)  # ~250 KB
    classify(text)  # warm the Morfeusz cache
    t = time.perf_counter()
    for i in range(20):
        classify(text, len(text) * i // 20)
    assert (time.perf_counter() - t) / 20 < 0.05


def test_devset_metrics_stay_above_090() -> None:
    spec = importlib.util.spec_from_file_location("eval_content", ROOT / "scripts/eval_content.py")
    ev = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ev)
    res = ev.evaluate(ev.load())
    for split in ("test", "all"):
        for c in ("structured", "prose"):
            assert res[split][c]["precision"] >= 0.9, (split, c)
            assert res[split][c]["recall"] >= 0.9, (split, c)
