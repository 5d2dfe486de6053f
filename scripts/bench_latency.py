"""Latency of inline suggestions while typing, with and without the prefix cache.

A ~2,000-token Polish document built from real texts (polish/data/devset.jsonl); the cursor sits
at the end of a paragraph mid-document and the next paragraph's words are typed one by one,
a suggestion requested after each word, the way the language server asks for one (same prompt
window, same engine thread code, same stop at a sentence end). "Without" resets the target's
KV cache before each request, so every request prefills the whole prompt.

    python scripts/bench_latency.py [--words 15] [--tokens 2000] [--max-tokens 16]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from decoder.backends.blas import ensure_fast_blas  # noqa: E402

ensure_fast_blas()

from tqdm import tqdm  # noqa: E402

from decoder.config import load_settings  # noqa: E402
from lsp_server.completion import build_prompt, unit_end  # noqa: E402
from lsp_server.settings import ServerOptions  # noqa: E402
from lsp_server.worker import Ticket, Worker  # noqa: E402


def polish_document(tokenizer, tokens: int) -> tuple[str, str, list[str]]:
    """(text before the cursor, text after it, words to type): real prose, ~`tokens` long."""
    rows = [
        json.loads(line)
        for line in (ROOT / "polish/data/devset.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    paragraphs = [
        p.strip()
        for r in rows
        if r.get("label") == "prose"
        for p in r["text"].split("\n\n")
        if len(p.split()) > 25
    ]
    doc: list[str] = []
    while len(tokenizer.encode("\n\n".join(doc))) < tokens:
        doc.append(paragraphs[len(doc)])
    middle = len(doc) // 2
    before = "\n\n".join(doc[:middle]) + "\n\n"
    typed = doc[middle].split()
    after = "\n\n" + "\n\n".join(doc[middle + 1 :])
    return before, after, typed


def run(
    engine: Worker,
    before: str,
    words: list[str],
    options: ServerOptions,
    max_tokens: int,
    prefix_cache: bool,
    label: str,
) -> tuple[list[float], list[int]]:
    latencies, prefilled = [], []
    text = before
    for word in tqdm(words, desc=label, unit="request"):
        text += word + " "
        if not prefix_cache:
            engine.reset_prefix_cache()
        prompt = build_prompt(text, options.max_prompt_chars)
        start = time.perf_counter()
        result = engine.generate(
            prompt.text,
            max_tokens=max_tokens,
            drafter=engine.pipe.settings.drafter,
            ticket=Ticket(options.time_budget_ms / 1000),
            enough=lambda t: unit_end(t) is not None,
        )
        latencies.append(time.perf_counter() - start)
        prefilled.append(result.stats.prefilled_tokens)
    return latencies, prefilled


def p(values: list[float], q: float) -> float:
    return (
        statistics.quantiles(values, n=100, method="inclusive")[q - 1]
        if len(values) > 1
        else values[0]
    )


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--words", type=int, default=15, help="words typed (one request each)")
    ap.add_argument("--tokens", type=int, default=2000, help="document length in target tokens")
    ap.add_argument("--max-tokens", type=int, default=ServerOptions.inline_max_tokens)
    ap.add_argument("--config", help="settings TOML (default: the embedded models)")
    args = ap.parse_args()

    engine = Worker()
    asyncio.run(engine.load(load_settings(args.config), ServerOptions.load_timeout_s))
    if engine.state != "ready":
        print(f"cannot load the model: {engine.error}", file=sys.stderr)
        return 2
    options = ServerOptions(time_budget_ms=60_000)  # measure generation, not the budget
    before, _after, typed = polish_document(engine.pipe.target.tokenizer, args.tokens)
    words = typed[: args.words]
    doc_tokens = len(engine.pipe.target.tokenizer.encode(before + " ".join(typed) + _after))
    run(
        engine, before, [typed[0]], options, args.max_tokens, True, "warm-up"
    )  # the document is open
    before += typed[0] + " "
    words = typed[1 : args.words + 1]
    rows = []
    for cache in (True, False):
        lat, pre = run(
            engine,
            before,
            words,
            options,
            args.max_tokens,
            cache,
            "with cache" if cache else "without cache",
        )
        rows.append((cache, lat, pre))
    s = engine.pipe.settings
    print(
        f"\nDocument: {doc_tokens} target tokens of Polish prose (polish/data/devset.jsonl); cursor at the "
        f"end of a paragraph after {len(engine.pipe.target.tokenizer.encode(before))} tokens; "
        f"{len(words)} typed words, one request each; target {s.target}, drafter {s.drafter}, "
        f"max {args.max_tokens} tokens per suggestion.\n"
    )
    print(
        "| prefix cache | p50 time to suggestion | p95 time to suggestion | prefilled tokens / request (median) | prefilled tokens / request (mean) |"
    )
    print("|---|---|---|---|---|")
    for cache, lat, pre in rows:
        print(
            f"| {'with' if cache else 'without'} | {p(lat, 50) * 1000:.0f} ms | {p(lat, 95) * 1000:.0f} ms "
            f"| {statistics.median(pre):.0f} | {statistics.mean(pre):.1f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
