"""The Polish bench corpus (polish/data/bench.jsonl): excerpts by content type, and subsets."""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

LABELS = ("structured", "prose", "mixed")


@dataclass(frozen=True)
class Excerpt:
    id: str
    label: str
    text: str
    source: str
    license: str


def corpus_path() -> Path:
    """The corpus as installed with the `polish` package."""
    return Path(str(files("polish") / "data" / "bench.jsonl"))


def load_corpus(path: Path | None = None) -> list[Excerpt]:
    """The bench corpus; lines with `from` point to an item of another file in the same folder."""
    path = path or corpus_path()
    rows = [
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]
    refs: dict[str, dict] = {}
    for name in {r["from"] for r in rows if "from" in r}:
        for line in (path.parent / name).read_text(encoding="utf-8").splitlines():
            item = json.loads(line)
            refs[item["id"]] = item
    full = [refs[r["id"]] if "from" in r else r for r in rows]
    return [Excerpt(r["id"], r["label"], r["text"], r["source"], r["license"]) for r in full]


def select(corpus: list[Excerpt], per_class: int) -> list[Excerpt]:
    """`per_class` excerpts of each type, evenly spaced through the corpus (and its sources)."""
    out = []
    for label in LABELS:
        items = [e for e in corpus if e.label == label]
        n = min(per_class, len(items))
        out += [items[i * len(items) // n] for i in range(n)]
    return out


def sweep_subset(excerpts: list[Excerpt], n: int) -> set[str]:
    """Ids of `n` excerpts taken round-robin over the content types."""
    by_type = [[e.id for e in excerpts if e.label == label] for label in LABELS]
    order = [
        ids[i] for i in range(max(map(len, by_type), default=0)) for ids in by_type if i < len(ids)
    ]
    return set(order[:n])
