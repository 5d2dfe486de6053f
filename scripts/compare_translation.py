"""Cross-tokenizer drafting on the embedded pair (Gemma-3-270M target, SmolLM2-135M drafter).

On real excerpts of `polish/data/bench.jsonl` (structured by default), greedy: plain decoding,
then per k the model drafter in each translation mode, lookup, and the cascade (lookup, then the
anchored model drafter). Per condition, pooled over the excerpts: the share of generated tokens
that came from accepted drafts, target tokens per target pass (plain = 1), acceptance, drafter
passes per proposed target token, drafter-context integrity (cycles whose drafter text equalled
the committed text), whether every output equals plain greedy, decode speed as a ratio
against plain in the same run, and the speedup these cycles predict for Bielik-11B with
Qwen2.5-1.5B on an M2 Pro under the paper's cost model (decoder/bench/analysis.py). Prints a
Markdown table; `--json` also writes the per-run records after every excerpt, and `--from-json`
prints the table of such a file again.

    python scripts/compare_translation.py [--excerpts 8] [--label structured] [--max-tokens 64]
        [--ks 2 4] [--modes naive context anchored] [--lookup] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from decoder.backends.blas import ensure_fast_blas  # noqa: E402

ensure_fast_blas()

from tqdm import tqdm  # noqa: E402

from decoder.backends.models import load_model  # noqa: E402
from decoder.bench.analysis import PAPER_BETA, PAPER_R, modelled_speedup  # noqa: E402
from decoder.bench.runs import cost_samples, load_corpus, select  # noqa: E402
from decoder.config import TRANSLATIONS  # noqa: E402
from decoder.drafting.cascade import CascadeDrafter  # noqa: E402
from decoder.drafting.cross import CrossDrafter  # noqa: E402
from decoder.drafting.drafter import Context  # noqa: E402
from decoder.drafting.lookup import LookupDrafter  # noqa: E402
from decoder.engine import PLAIN, Engine, FixedPolicy, collect  # noqa: E402
from decoder.sampling import GREEDY, Keys  # noqa: E402


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


def run(engine: Engine, text: str, policy, max_tokens: int):
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--excerpts", type=int, default=8)
    ap.add_argument("--label", default="structured", choices=["structured", "prose", "mixed"])
    ap.add_argument("--max-tokens", type=int, default=64)
    ap.add_argument("--ks", type=int, nargs="+", default=[2, 4])
    ap.add_argument(
        "--modes", nargs="+", default=["naive", "context", "anchored"], choices=TRANSLATIONS
    )
    ap.add_argument("--lookup", action="store_true", help="also lookup alone at each k")
    ap.add_argument("--json", help="write the per-run records here (after every excerpt)")
    ap.add_argument("--from-json", help="print the table of saved records (no models)")
    args = ap.parse_args()
    if args.from_json:
        saved = json.loads(Path(args.from_json).read_text(encoding="utf-8"))
        done = [r["excerpt"] for r in saved["records"]["plain"]]
        print(f"{saved['header']}\nexcerpts run: {len(done)} ({', '.join(done)})\n")
        print(table(saved["records"]))
        return
    excerpts = [e for e in select(load_corpus(), args.excerpts) if e.label == args.label]
    target = load_model("embedded:gemma-3-270m", dtype="float32", progress=False)
    drafter = load_model("embedded:smollm2-135m", dtype="float32", progress=False)
    engine = Engine(target.model, target.tokenizer)
    shared = CrossDrafter(drafter.model, drafter.tokenizer, target.tokenizer).runner
    conds = conditions(args.ks, args.modes, args.lookup)
    records: dict[str, list[dict]] = {name: [] for name, _, _ in conds}
    header = (
        f"{len(excerpts)} {args.label} excerpts of polish/data/bench.jsonl "
        f"({', '.join(e.id for e in excerpts)}); {args.max_tokens} tokens, greedy; "
        "Gemma-3-270M target, SmolLM2-135M drafter"
    )
    bar = tqdm(total=len(excerpts) * len(conds), desc="runs")
    for ex in excerpts:
        plain: list[int] = []
        for name, kind, k in conds:
            if kind == "plain":
                policy = PLAIN
            else:
                model = CrossDrafter(
                    drafter.model,
                    drafter.tokenizer,
                    target.tokenizer,
                    "anchored" if kind in ("lookup", "cascade") else kind,
                )
                model.runner = shared  # keyed by the ids it holds: the prompt is prefilled once
                model.propose(Context(engine.encode(ex.text), ex.text, b""), 1, GREEDY, Keys(None))
                lookup = LookupDrafter()
                chosen = {"lookup": lookup, "cascade": CascadeDrafter(lookup, model, engine.table)}
                policy = FixedPolicy(chosen.get(kind, model), k)
            run(engine, ex.text, PLAIN, 1)  # the target's prompt is cached: time decoding only
            ids, stats = run(engine, ex.text, policy, args.max_tokens)
            plain = ids if kind == "plain" else plain
            record = stats.to_dict()
            cycles = record.pop("per_cycle")
            records[name].append(
                {"excerpt": ex.id, "identical": ids == plain, **record, **cost_samples(cycles)}
            )
            bar.update()
        if args.json:
            Path(args.json).write_text(
                json.dumps({"header": header, "records": records}, ensure_ascii=False, indent=1)
            )
    bar.close()
    print(f"\n{header}\n\n{table(records)}")


if __name__ == "__main__":
    main()
