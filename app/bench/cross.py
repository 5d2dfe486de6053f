"""Cross-tokenizer drafting on the embedded pair (Gemma-3-270M target, SmolLM2-135M drafter).

On real excerpts of `polish/data/bench.jsonl` (structured by default), greedy: plain decoding,
then per k the model drafter in each translation mode, lookup, and the cascade (lookup, then the
anchored model drafter). Per condition, pooled over the excerpts: the share of generated tokens
that came from accepted drafts, target tokens per target pass (plain = 1), acceptance, drafter
passes per proposed target token, drafter-context integrity (cycles whose drafter text equalled
the committed text), whether every output equals plain greedy, decode speed as a ratio
against plain in the same run, and the speedup these cycles predict for Bielik-11B with
Qwen2.5-1.5B on an M2 Pro under the paper's cost model (app/bench/analysis.py). Prints a
Markdown table and writes the per-run records to OUT/cross.json after every excerpt;
`--from-json` prints the table of such a file again.

    bielik-lsp bench cross-tokenizer [--excerpts 8] [--label structured] [--max-tokens 64]
        [--ks 2 4] [--modes naive context anchored] [--lookup] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass, field, replace
from pathlib import Path

from tqdm import tqdm

from app.bench.analysis import PAPER_BETA, PAPER_R, modelled_speedup
from app.bench.corpus import load_corpus, select
from app.bench.runs import cost_samples
from decoder.backends.models import load_model
from decoder.config import Settings
from decoder.drafting.cascade import CascadeDrafter
from decoder.drafting.cross import CrossDrafter
from decoder.drafting.drafter import Context
from decoder.drafting.lookup import LookupDrafter
from decoder.engine import PLAIN, Engine, FixedPolicy
from decoder.generation import collect
from decoder.sampling import GREEDY, Keys


@dataclass
class Totals:
    """One condition's runs, pooled over the excerpts (from the per-run records)."""

    runs: list[dict] = field(default_factory=list)

    def sum(self, key: str) -> float:
        return sum(r[key] for r in self.runs)

    def row(self, name: str, plain: Totals) -> str:
        generated, drafted, accepted = (
            self.sum(k) for k in ("generated_tokens", "drafted", "accepted")
        )
        passes = generated / (self.sum("cycles") + len(self.runs))  # prefill is a target pass too
        speed = self.sum("decode_tokens") / self.sum("decode_seconds")
        base = plain.sum("decode_tokens") / plain.sum("decode_seconds")
        exact = sum(r["drafter_integrity"]["exact"] for r in self.runs)
        checked = sum(r["drafter_integrity"]["checked"] for r in self.runs)
        acc = f"{accepted / drafted:.0%}" if drafted else "–"
        per = f"{self.sum('drafter_passes') / drafted:.2f}" if drafted else "–"
        integrity = f"{exact / checked:.0%} ({checked})" if checked else "–"
        same = sum(r["identical"] for r in self.runs)
        # The bench's record shape: run statistics under "stats", cost samples beside them.
        bielik = modelled_speedup([{**r, "stats": r} for r in self.runs], PAPER_R, PAPER_BETA)
        return (
            f"| {name} | {accepted / generated:.1%} | {passes:.2f} | {acc} | {per} | {integrity} "
            f"| {same}/{len(self.runs)} | {speed / base:.2f}x | {bielik:.2f}x |"
        )


def table(records: dict[str, list[dict]]) -> str:
    totals = {name: Totals(runs) for name, runs in records.items() if runs}
    head = (
        "| condition | from drafts | tokens/target pass | acceptance | drafter passes/drafted "
        "| integrity | identical | speed vs plain | PREDICTED Bielik-11B (paper's r, β) |\n"
        "|---|---:|---:|---:|---:|---:|---|---:|---:|"
    )
    return "\n".join([head, *(t.row(n, totals["plain"]) for n, t in totals.items())])


def generate(engine: Engine, text: str, policy, max_tokens: int):
    result = collect(
        engine.generate(engine.encode(text), max_tokens=max_tokens, policy=policy, prompt_text=text)
    )
    return result.ids, result.stats


def conditions(ks: list[int], modes: list[str], lookup: bool) -> list[tuple[str, str, int]]:
    """(name, kind, k): plain first, then per k each mode, (lookup) and the cascade."""
    out = [("plain", "plain", 0)]
    for k in ks:
        out += [(f"{mode} k={k}", mode, k) for mode in modes]
        out += [(f"lookup k={k}", "lookup", k)] if lookup else []
        out += [(f"cascade k={k}", "cascade", k)]
    return out


def run(settings: Settings, args: argparse.Namespace) -> str:
    """Every condition on every excerpt; the Markdown table."""
    if args.from_json:
        saved = json.loads(Path(args.from_json).read_text(encoding="utf-8"))
        done = [r["excerpt"] for r in saved["records"]["plain"]]
        return f"{saved['header']}\nexcerpts run: {len(done)} ({', '.join(done)})\n\n" + table(
            saved["records"]
        )
    excerpts = [e for e in select(load_corpus(), args.excerpts) if e.label == args.label]
    mlx = replace(settings, dtype="float32")
    target = load_model("embedded:gemma-3-270m", mlx, "mlx", progress=False)
    drafter = load_model("embedded:smollm2-135m", mlx, "mlx", progress=False)
    engine = Engine(target.backend)
    conds = conditions(args.ks, args.modes, args.lookup)
    records: dict[str, list[dict]] = {name: [] for name, _, _ in conds}
    header = (
        f"{len(excerpts)} {args.label} excerpts of polish/data/bench.jsonl "
        f"({', '.join(e.id for e in excerpts)}); {args.max_tokens} tokens, greedy; "
        "Gemma-3-270M target, SmolLM2-135M drafter"
    )
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    bar = tqdm(total=len(excerpts) * len(conds), desc="runs")
    for ex in excerpts:
        run_excerpt(engine, drafter.backend, ex, conds, args.max_tokens, records)
        bar.update(len(conds))
        (out / "cross.json").write_text(
            json.dumps({"header": header, "records": records}, ensure_ascii=False, indent=1)
        )
    bar.close()
    return f"\n{header}\n\n{table(records)}"


def policy_for(engine: Engine, drafter, ex, kind: str, k: int):
    """The fixed policy of one condition; the drafter's prompt is prefilled first, untimed."""
    if kind == "plain":
        return PLAIN
    # One drafter backend for every mode: keyed by the ids it holds, the prompt is prefilled once.
    model = CrossDrafter(
        drafter, engine.tokenizer, "anchored" if kind in ("lookup", "cascade") else kind
    )
    model.propose(Context(engine.encode(ex.text), ex.text, b""), 1, GREEDY, Keys(None))
    lookup = LookupDrafter()
    chosen = {"lookup": lookup, "cascade": CascadeDrafter(lookup, model, engine.table)}
    return FixedPolicy(chosen.get(kind, model), k)


def run_excerpt(engine, drafter, ex, conds, max_tokens: int, records: dict) -> None:
    plain: list[int] = []
    for name, kind, k in conds:
        policy = policy_for(engine, drafter, ex, kind, k)
        generate(engine, ex.text, PLAIN, 1)  # the target's prompt is cached: time decoding only
        ids, stats = generate(engine, ex.text, policy, max_tokens)
        plain = ids if kind == "plain" else plain
        record = stats.to_dict()
        cycles = record.pop("per_cycle")
        records[name].append(
            {"excerpt": ex.id, "identical": ids == plain, **record, **cost_samples(cycles)}
        )
