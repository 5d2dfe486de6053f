"""`bielik-lsp bench engines`: our llama.cpp decoding against its peers, excerpt by excerpt.

On structured and prose excerpts of the bench corpus, each excerpt goes through every
condition in turn (so load on a shared machine hits them alike): our plain decoding and `auto`
with exact numerics (the default), `auto` with the fastest kernels (`exact` off),
llama-cpp-python's own generation, plain and with its prompt lookup (app/bench/peers.py), and
with `--llama-server BIN` that llama-server's plain decoding and its n-gram speculation
(`--spec-type`), all on the target's GGUF and the same token ids.

    bielik-lsp [--threads N] bench engines [--per-class 6] [--tokens 64] [--llama-server BIN]

Every figure is decode tokens/s after the first token (llama-server: its own `timings`), and
every comparison a per-excerpt ratio within this run, its median per content type.
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from tqdm import tqdm

from app.bench import llama_server
from app.bench.corpus import Excerpt, load_corpus, select
from app.bench.peers import Peer, backend_peers, time_peer
from app.bench.report import write_report
from decoder.config import Settings
from decoder.engine import PLAIN
from decoder.generation import collect
from decoder.pipeline import Pipeline
from decoder.stats import count_chars

LABELS = ("structured", "prose")
PLAIN_RUN = "ours plain"
AUTO = "ours auto"
AUTO_FAST = "ours auto, exact off"
GENERATE = "llama-cpp-python generate"
SERVER_PLAIN = "llama-server plain"

Condition = Callable[[str, list[int]], dict]  # (the excerpt's text, its token ids) -> result


def ours(pipe: Pipeline, text: str, tokens: int, auto: bool) -> dict:
    policy = pipe.policy(text=text) if auto else PLAIN
    pipe.reset()
    result = collect(pipe.continue_text(text, max_tokens=tokens, policy=policy))
    stats = result.stats
    return {
        "tok_s": stats.tokens_per_second,
        "ids": result.ids,
        "drafted": stats.drafted,
        "accepted": stats.accepted,
        "reasons": stats.reasons,
    }


def peer_condition(peer: Peer, tokens: int) -> Condition:
    """A library's own generation (app/bench/peers.py), timed from its first token to its last."""

    def run(text: str, ids: list[int]) -> dict:
        timed = time_peer(peer, ids, tokens)
        return {"tok_s": timed["stats"]["tokens_per_second"], "ids": timed["ids"]}

    return run


def conditions(exact: Pipeline, fast: Pipeline, servers: list, tokens: int) -> dict[str, Condition]:
    """Every condition of the run by name."""
    conds: dict[str, Condition] = {
        PLAIN_RUN: lambda text, ids: ours(exact, text, tokens, auto=False),
        AUTO: lambda text, ids: ours(exact, text, tokens, auto=True),
        AUTO_FAST: lambda text, ids: ours(fast, text, tokens, auto=True),
    }
    for peer in backend_peers("llamacpp", exact.engine.runner):
        conds[peer.name] = peer_condition(peer, tokens)
    for server in servers:
        conds[server.name] = lambda text, ids, s=server: s.complete(ids, tokens)
    return conds


def chars_per_second(result: dict, table: tuple[bytes, ...]) -> float:
    """Decode speed in Unicode characters: tokens/s times the characters per decoded token.

    Every condition runs the same model, so the decoded tokens (all but the first, which the
    prefill gives) spell what the writer gets in that time.
    """
    decoded = result["ids"][1:]
    chars = count_chars(b"".join(table[t] for t in decoded if t < len(table)))
    return result["tok_s"] * chars / len(decoded) if decoded else 0.0


def measure(pipe: Pipeline, conds: dict[str, Condition], excerpts: list[Excerpt], quiet: bool):
    """Results by condition and excerpt id, every condition on one excerpt before the next.

    The peers get the ids our engine decodes from (`pipe`'s tokenizer).
    """
    runs: dict[str, dict[str, dict]] = {name: {} for name in conds}
    with tqdm(total=len(conds) * len(excerpts), desc="engines", unit="run", disable=quiet) as bar:
        for excerpt in excerpts:
            ids = pipe.engine.encode(excerpt.text)
            for name, cond in conds.items():
                result = cond(excerpt.text, ids)
                result["chars_s"] = chars_per_second(result, pipe.engine.table)
                runs[name][excerpt.id] = result
                bar.update()
    return runs


def ratio(runs: dict, top: str, bottom: str, ids: list[str]) -> float:
    """The median over `ids` of top's tokens/s over bottom's."""
    return statistics.median(runs[top][i]["tok_s"] / runs[bottom][i]["tok_s"] for i in ids)


def best_ngram(runs: dict, ids: list[str]) -> str | None:
    """The llama-server n-gram speculation fastest against its plain decoding on `ids`."""
    specs = [n for n in runs if n.startswith("llama-server ") and n != SERVER_PLAIN]
    return max(specs, key=lambda n: ratio(runs, n, SERVER_PLAIN, ids), default=None)


def summarize(runs: dict, excerpts: list[Excerpt]) -> dict:
    """Per content type: medians, ratios against the peers, and which texts equal plain's."""
    out = {}
    for label in LABELS:
        ids = [e.id for e in excerpts if e.label == label]
        plain_ids = {i: runs[PLAIN_RUN][i]["ids"] for i in ids}
        row = {
            "excerpts": len(ids),
            "tok_s": {n: statistics.median(r[i]["tok_s"] for i in ids) for n, r in runs.items()},
            "chars_s": {
                n: statistics.median(r[i].get("chars_s", float("nan")) for i in ids)
                for n, r in runs.items()
            },
            "same_as_plain": {
                n: sum(r[i]["ids"] == plain_ids[i] for i in ids) for n, r in runs.items()
            },
            "ratios": {
                "ours auto / ours plain": ratio(runs, AUTO, PLAIN_RUN, ids),
                "ours auto, exact off / ours plain": ratio(runs, AUTO_FAST, PLAIN_RUN, ids),
                "ours plain / llama-cpp-python generate": ratio(runs, PLAIN_RUN, GENERATE, ids),
            },
        }
        if SERVER_PLAIN in runs:
            best = best_ngram(runs, ids)
            row["best_ngram"] = best
            row["ratios"].update(
                {
                    "ours plain / llama-server plain": ratio(runs, PLAIN_RUN, SERVER_PLAIN, ids),
                    f"{best} / llama-server plain": ratio(runs, best, SERVER_PLAIN, ids),
                    f"ours auto / {best}": ratio(runs, AUTO, best, ids),
                    f"ours auto, exact off / {best}": ratio(runs, AUTO_FAST, best, ids),
                }
            )
        out[label] = row
    return out


def report(summary: dict, head: str) -> str:
    lines = [head]
    for label, row in summary.items():
        lines.append(f"\n## {label} ({row['excerpts']} excerpts)\n")
        lines += [
            "| condition | median chars/s | median tok/s | text equal to our plain |",
            "|---|---|---|---|",
        ]
        for name, tok_s in row["tok_s"].items():
            chars_s = row.get("chars_s", {}).get(name, float("nan"))
            lines.append(f"| {name} | {chars_s:.1f} | {tok_s:.1f} | {row['same_as_plain'][name]} |")
        lines += ["", "| median per-excerpt ratio | |", "|---|---|"]
        lines += [f"| {name} | {value:.2f}x |" for name, value in row["ratios"].items()]
    return "\n".join(lines)


def run(settings: Settings, args: argparse.Namespace) -> str:
    if args.llama_server:
        llama_server.require(args.llama_server)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    base = replace(settings, backend="llamacpp", max_tokens=args.tokens)
    exact = Pipeline.load(replace(base, exact=True), progress=False)
    fast = Pipeline.load(replace(base, exact=False), progress=False)
    excerpts = [e for e in select(load_corpus(), args.per_class) if e.label in LABELS]
    servers = []
    if args.llama_server:
        runner = exact.engine.runner
        servers = llama_server.start_all(args.llama_server, exact.target.path, runner.threads, out)
    try:
        runs = measure(exact, conditions(exact, fast, servers, args.tokens), excerpts, args.quiet)
    finally:
        for server in servers:
            server.close()
    summary = summarize(runs, excerpts)
    head = (
        f"# bench engines: {args.tokens} greedy tokens per excerpt, {exact.target.spec}\n\n"
        f"exact: {exact.exactness.describe()}\n\n"
        f"costs (exact kernels): {exact.costs.describe()}\n\n"
        f"costs (exact off): {fast.costs.describe()}\n\n"
        f"llama.cpp: {json.dumps(exact.engine.runner.describe())}"
    )
    text = report(summary, head)
    write_report(out, "engines", text, {"summary": summary, "runs": runs})
    return text
