"""`bielik-lsp bench openvino`: our OpenVINO engine against OpenVINO GenAI's and our llama.cpp.

All on one GGUF (default: the embedded SmolLM2-135M Q4_1, which OpenVINO reads).

Each excerpt goes through every condition in turn, so load on a shared machine hits them alike:

- ours on OpenVINO: plain, `auto` as configured (`exact` on: plain where passes are not
  bit-identical, which is the case on OpenVINO's CPU plug-in), and `auto` with `exact` off;
- OpenVINO GenAI's own `LLMPipeline` on the same IR: plain, `prompt_lookup`, and with a draft
  model when the configured drafter model shares the target's tokenizer;
- ours on llama.cpp (the same GGUF, as shipped): plain and `auto`.

    bielik-lsp [--target SPEC] bench openvino [--per-class 6] [--tokens 64] [--out DIR]

Every figure is decode tokens/s after the first token, every comparison a per-excerpt ratio in
this run (its median per content type). Texts are compared with each family's own plain
output: ours with our plain, GenAI's speculation with GenAI's plain. A final check decodes one
long structured text (past 600 positions) plain and with GenAI's prompt lookup.
"""

from __future__ import annotations

import argparse
import json
import statistics
from dataclasses import replace
from pathlib import Path

from app.bench.corpus import load_corpus, select
from app.bench.engines import LABELS, Condition, measure, ours, peer_condition, ratio
from app.bench.peers import Peer
from app.bench.report import write_report
from decoder.config import Settings
from decoder.pipeline import Pipeline

DEFAULT_TARGET = "embedded:smollm2-135m"  # the embedded GGUF OpenVINO's reader takes
OV_PLAIN, OV_AUTO, OV_FAST = (
    "ours openvino plain",
    "ours openvino auto",
    "ours openvino auto, exact off",
)
GENAI_PLAIN, GENAI_LOOKUP, GENAI_DRAFT = (
    "openvino-genai plain",
    "openvino-genai prompt_lookup",
    "openvino-genai draft model",
)
LLAMA_PLAIN, LLAMA_AUTO = "ours llama.cpp plain", "ours llama.cpp auto"
FAMILY_PLAIN = {GENAI_LOOKUP: GENAI_PLAIN, GENAI_DRAFT: GENAI_PLAIN, LLAMA_AUTO: LLAMA_PLAIN}
RATIOS = (
    (OV_PLAIN, GENAI_PLAIN),
    (OV_AUTO, GENAI_LOOKUP),
    (OV_FAST, GENAI_LOOKUP),
    (OV_FAST, OV_PLAIN),
    (GENAI_LOOKUP, GENAI_PLAIN),
    (GENAI_DRAFT, GENAI_PLAIN),
    (OV_PLAIN, LLAMA_PLAIN),
    (LLAMA_AUTO, LLAMA_PLAIN),
    (OV_FAST, LLAMA_AUTO),
)
LONG = (
    "Art. 1. Rzeczpospolita Polska jest dobrem wspólnym wszystkich obywateli.\n"
    "Art. 2. Rzeczpospolita Polska jest demokratycznym państwem prawnym.\n"
) * 14 + "Lista:\n1. jeden\n2. dwa\n3."


def draft_peer(pipe: Pipeline, settings: Settings) -> Peer | None:
    """GenAI's draft-model pipeline, when the drafter model is another with the same tokenizer."""
    from decoder.backends import openvino as ovb

    if settings.drafter_model in (None, settings.target):
        return None
    drafter = ovb.load(settings.drafter_model, settings, progress=False).backend
    if drafter.table != pipe.engine.runner.table:
        return None
    return Peer(GENAI_DRAFT, ovb.genai_peer(pipe.engine.runner, Path(drafter.path)))


def conditions(
    exact: Pipeline, fast: Pipeline, llama: Pipeline, draft: Peer | None, tokens: int
) -> dict[str, Condition]:
    from decoder.backends import openvino as ovb

    conds: dict[str, Condition] = {
        OV_PLAIN: lambda text, ids: ours(exact, text, tokens, auto=False),
        OV_AUTO: lambda text, ids: ours(exact, text, tokens, auto=True),
        OV_FAST: lambda text, ids: ours(fast, text, tokens, auto=True),
    }
    for name, generate in ovb.peers(exact.engine.runner):
        conds[name] = peer_condition(Peer(name, generate), tokens)
    if draft is not None:
        conds[GENAI_DRAFT] = peer_condition(draft, tokens)
    conds[LLAMA_PLAIN] = lambda text, ids: ours(llama, text, tokens, auto=False)
    conds[LLAMA_AUTO] = lambda text, ids: ours(llama, text, tokens, auto=True)
    return conds


def summarize(runs: dict, excerpts: list) -> dict:
    out = {}
    for label in LABELS:
        ids = [e.id for e in excerpts if e.label == label]
        same = {}
        for name, results in runs.items():
            plain = runs[FAMILY_PLAIN.get(name, OV_PLAIN)]
            same[name] = sum(results[i]["ids"] == plain[i]["ids"] for i in ids)
        out[label] = {
            "excerpts": len(ids),
            "tok_s": {n: statistics.median(r[i]["tok_s"] for i in ids) for n, r in runs.items()},
            "same_as_family_plain": same,
            "ratios": {
                f"{top} / {bottom}": ratio(runs, top, bottom, ids)
                for top, bottom in RATIOS
                if top in runs and bottom in runs
            },
        }
    return out


def long_check(exact: Pipeline, fast: Pipeline, peers: dict[str, Condition], tokens: int) -> dict:
    """One structured text past 600 positions: does each speculation give its plain's text?"""
    ids = exact.engine.encode(LONG)
    plain = {name: peers[name](LONG, ids)["ids"] for name in (GENAI_PLAIN, GENAI_LOOKUP)}
    ours_plain = ours(exact, LONG, tokens, auto=False)["ids"]
    ours_fast = ours(fast, LONG, tokens, auto=True)["ids"]
    return {
        "prompt_tokens": len(ids),
        "genai prompt_lookup == genai plain": plain[GENAI_LOOKUP] == plain[GENAI_PLAIN],
        "ours auto (exact off) == ours plain": ours_fast == ours_plain,
    }


def report(summary: dict, long: dict, head: str) -> str:
    lines = [head]
    for label, row in summary.items():
        lines.append(f"\n## {label} ({row['excerpts']} excerpts)\n")
        lines += ["| condition | median tok/s | text equal to its plain |", "|---|---|---|"]
        for name, tok_s in row["tok_s"].items():
            lines.append(f"| {name} | {tok_s:.1f} | {row['same_as_family_plain'][name]} |")
        lines += ["", "| median per-excerpt ratio | |", "|---|---|"]
        lines += [f"| {name} | {value:.2f}x |" for name, value in row["ratios"].items()]
    lines.append(f"\n## past 600 positions ({long['prompt_tokens']}-token structured prompt)\n")
    lines += [
        f"- {name}: {'yes' if value else 'NO'}" for name, value in long.items() if "==" in name
    ]
    return "\n".join(lines)


def run(settings: Settings, args: argparse.Namespace) -> str:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    # The default target (Gemma-3-270M) is a GGUF OpenVINO cannot read: SmolLM2 instead.
    target = settings.target if settings.target != Settings().target else DEFAULT_TARGET
    base = replace(settings, backend="openvino", target=target, max_tokens=args.tokens)
    exact = Pipeline.load(replace(base, exact=True), progress=not args.quiet)
    fast = Pipeline.load(replace(base, exact=False, drafter="auto"), progress=not args.quiet)
    llama = Pipeline.load(replace(base, backend="llamacpp"), progress=False)
    draft = draft_peer(exact, base)
    conds = conditions(exact, fast, llama, draft, args.tokens)
    excerpts = [e for e in select(load_corpus(), args.per_class) if e.label in LABELS]
    runs = measure(exact, conds, excerpts, args.quiet)
    summary = summarize(runs, excerpts)
    long = long_check(exact, fast, conds, args.tokens)
    head = (
        f"# bench openvino: {args.tokens} greedy tokens per excerpt, {target}\n\n"
        f"openvino: {json.dumps(exact.engine.runner.describe())}\n\n"
        f"exact: {exact.exactness.describe()}\n\n"
        f"costs (openvino, exact off): {fast.costs.describe()}\n\n"
        f"llama.cpp exact: {llama.exactness.describe()}\n\n"
        f"draft-model peer: {'yes' if draft else 'none (no other drafter with this tokenizer)'}"
    )
    text = report(summary, long, head)
    write_report(out, "openvino", text, {"summary": summary, "long": long, "runs": runs})
    return text
