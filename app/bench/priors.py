"""`bielik-lsp bench priors`: how often a copy goes on, by how long the text has repeated so far.

`auto` prices a lookup draft token by token (decoder/drafting/lookup.py): the share of an
n-gram's earlier continuations that the draft follows, smoothed towards a prior by match
length (decoder/pricing.py LOOKUP_PRIOR). This measures that prior for the target in use: over
the plain greedy continuations of the corpus's structured and prose excerpts, at every
position where the context repeats earlier text, did the target's next token equal the one
lookup would draft? Grouped by the match length's bucket, beside the table in use.
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

from tqdm import tqdm

from app.bench.corpus import load_corpus
from app.bench.report import write_report
from decoder.config import Settings
from decoder.drafting.lookup import LookupDrafter
from decoder.engine import PLAIN
from decoder.generation import collect
from decoder.pipeline import Pipeline
from decoder.pricing import LOOKUP_PRIOR, bucket

LABELS = ("structured", "prose")


def continued(prompt: list[int], generated: list[int]) -> list[tuple[int, bool]]:
    """Per generated token after the first: (match bucket, whether lookup's draft was it)."""
    lookup, out = LookupDrafter(), []
    for pos in range(1, len(generated)):
        ids = prompt + generated[:pos]
        draft = lookup.copy(ids, 1)
        if draft:
            out.append((bucket(lookup.match(ids)[0]), draft[0] == generated[pos]))
    return out


def tally(settings: Settings, tokens: int, quiet: bool) -> dict[str, dict[int, list[int]]]:
    """[went on, positions] per content type and bucket, from plain continuations."""
    pipe = Pipeline.load(replace(settings, max_tokens=tokens), progress=not quiet)
    excerpts = [e for e in load_corpus() if e.label in LABELS]
    counts: dict[str, dict[int, list[int]]] = {t: defaultdict(lambda: [0, 0]) for t in LABELS}
    for excerpt in tqdm(excerpts, desc="priors", unit="excerpt", disable=quiet):
        pipe.reset()
        result = collect(pipe.continue_text(excerpt.text, max_tokens=tokens, policy=PLAIN))
        for b, hit in continued(pipe.engine.encode(excerpt.text), result.ids):
            counts[excerpt.label][b][0] += hit
            counts[excerpt.label][b][1] += 1
    return counts


def report(counts: dict[str, dict[int, list[int]]], target: str, tokens: int) -> str:
    lines = [
        f"# bench priors: {target}, plain greedy continuations of {tokens} tokens\n",
        "| match (tokens) | in use | " + " | ".join(LABELS) + " |",
        "|---|---|" + "---|" * len(LABELS),
    ]
    for b, prior in sorted(LOOKUP_PRIOR.items()):
        cells = []
        for label in LABELS:
            hits, seen = counts[label].get(b, [0, 0])
            cells.append(f"{hits / seen:.2f} ({seen})" if seen else "–")
        lines.append(f"| ≥{b} | {prior:.2f} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def run(settings: Settings, args: argparse.Namespace) -> str:
    counts = tally(settings, args.tokens, args.quiet)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    text = report(counts, settings.target, args.tokens)
    raw = {label: {str(b): c for b, c in sorted(rows.items())} for label, rows in counts.items()}
    write_report(out, "priors", text, raw)
    return text
