"""`bielik-lsp bench costs`: what speculation would buy Bielik-11B on this machine.

Two measurements, one model:
- the cost curves of Bielik-shaped GGUFs (app/bench/shapes.py: Bielik-11B-v3's 50 layers of
  4096, and drafters of Bielik-1.5B-v3's and Qwen2.5-1.5B's shapes) on llama.cpp, with the
  exact and the fast kernels: t(n)/t(1) for a pass over n tokens, and r, a drafter token's cost
  over a target token's;
- the cycles of each drafter on the embedded pair (Gemma-3-270M verifying; SmolLM2-135M as the
  drafter model), on structured and prose excerpts: how many tokens each cycle drafted, how
  many the target accepted, how many drafter passes it took.
Each cycle is then priced with the Bielik curve: a cycle that drafted d tokens with p drafter
passes costs t(d+1)/t(1) + r·p target steps and commits what it committed, so the predicted
speedup is Σ committed / Σ cost. It assumes Bielik's drafters accept like the embedded pair's,
which nobody can measure here (no hub); the costs are this machine's.

MLX cannot hold Bielik-11B here: its GGUF import dequantizes to float32 (44 GB).
"""

from __future__ import annotations

import argparse
import datetime
import json
from dataclasses import asdict
from pathlib import Path

from app.bench import machine, shapes
from app.bench.corpus import load_corpus, select
from decoder.config import Settings
from decoder.engine import PLAIN, FixedPolicy
from decoder.generation import collect
from decoder.pricing import Costs

TARGET = "bielik-11b-v3"
DRAFTERS = {"bielik-1.5b-v3": "Bielik-1.5B-v3", "qwen2.5-1.5b": "Qwen2.5-1.5B"}
CONDITIONS = (("lookup", 16), ("model", 4), ("cascade", 4))


def run(settings: Settings, args: argparse.Namespace) -> str:
    """Write the shapes (once), measure them and the embedded pair's cycles; the report."""
    paths = {name: shapes.write(name, args.quant, Path(args.dir)) for name in shapes.SHAPES}
    curves = {
        (name, exact): measured(path, exact)
        for exact in (True, False)
        for name, path in paths.items()
    }
    cycles = pair_cycles(settings, args.per_class, args.tokens)
    data = {
        "date": datetime.date.today().isoformat(),
        "machine": machine.describe(),
        "load": machine.load_average(),
        "quant": args.quant,
        "curves": [{"model": n, "exact": e, **row} for (n, e), row in curves.items()],
        "predicted": predictions(curves, cycles),
    }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "costs.json").write_text(json.dumps(data, indent=1), encoding="utf-8")
    plot(data, out / "bench" / "costs.png")
    (out / "costs.md").write_text(report(data), encoding="utf-8")
    return str(out / "costs.md")


def measured(path: Path, exact: bool) -> dict:
    """One shape's curve, measured in a fresh process, with integer widths."""
    row = shapes.run_isolated(path, exact)
    return {**row, "ratios": {int(n): v for n, v in row["ratios"].items()}}


def pair_cycles(settings: Settings, per_class: int, tokens: int) -> dict[str, list[dict]]:
    """Each condition's cycles on the embedded pair, on llama.cpp with exact kernels."""
    from decoder.pipeline import Pipeline

    pair = {"preset": "embedded", "backend": "llamacpp", "drafter": "model", "exact": True}
    pipe = Pipeline.load(settings.updated(pair), progress=False)
    found: dict[str, list[dict]] = {name: [] for name, _ in CONDITIONS}
    for excerpt in select(load_corpus(), per_class):
        plain = collect(pipe.continue_text(excerpt.text, max_tokens=tokens, policy=PLAIN))
        for name, k in CONDITIONS:
            policy = FixedPolicy(pipe.drafters[name], k)
            result = collect(pipe.continue_text(excerpt.text, max_tokens=tokens, policy=policy))
            assert result.ids == plain.ids, f"{name} left plain greedy output on {excerpt.id}"
            found[name] += [asdict(c) for c in result.stats.cycles]
    return found


def predict(cycles: list[dict], costs: Costs, r: float) -> float:
    """Σ committed / Σ (t(d+1)/t(1) + r·passes), over measured cycles."""
    committed = sum(c["emitted"] for c in cycles)
    spent = sum(costs.verify_ratio(c["drafted"] + 1) + r * c["passes"] for c in cycles)
    return committed / spent if spent else float("nan")


def predictions(curves: dict, cycles: dict[str, list[dict]]) -> list[dict]:
    """Per kernel configuration, drafter model shape and drafter: the predicted speedup."""
    rows = []
    for exact in (True, False):
        target = curves[TARGET, exact]
        costs = Costs(target["ratios"], target["t1_ms"] / 1000)
        for shape, label in DRAFTERS.items():
            r = curves[shape, exact]["t1_ms"] / target["t1_ms"]
            for name, k in CONDITIONS:
                speedup = predict(cycles[name], costs, 0.0 if name == "lookup" else r)
                row = {"exact": exact, "drafter_model": label, "r": round(r, 3)}
                rows.append({**row, "drafter": name, "k": k, "speedup": round(speedup, 2)})
    return rows


def report(data: dict) -> str:
    lines = [
        "## Bielik-11B on this machine (PREDICTED from measured costs and cycles)",
        "",
        f"`bielik-lsp bench costs` on {data['date']}: {data['machine']}; load average "
        f"{data['load']}. Bielik-shaped GGUFs ({data['quant']}, random weights) on llama.cpp.",
        "",
        "| model | kernels | t(1) | " + " | ".join(f"t({n})/t(1)" for n in shapes.SIZES[1:]) + " |",
        "|---|---|---:|" + "---:|" * (len(shapes.SIZES) - 1),
    ]
    for c in data["curves"]:
        ratios = " | ".join(f"{c['ratios'][n]:.2f}" for n in shapes.SIZES[1:])
        kernels = "exact" if c["exact"] else "fast"
        lines.append(f"| {c['model']} | {kernels} | {c['t1_ms']:.0f} ms | {ratios} |")
    lines += [
        "",
        "Predicted Bielik-11B speedup over plain decoding, each drafter's cycles on the embedded "
        "pair priced with the curves above (r: the drafter model's token over Bielik-11B's):",
        "",
        "| kernels | drafter model (r) | lookup k=16 | model k=4 | cascade k=4 |",
        "|---|---|---:|---:|---:|",
    ]
    for exact in (True, False):
        for label in DRAFTERS.values():
            row = [
                p for p in data["predicted"] if p["exact"] == exact and p["drafter_model"] == label
            ]
            cells = " | ".join(f"{p['speedup']:.2f}x" for p in row)
            lines.append(f"| {'exact' if exact else 'fast'} | {label} ({row[0]['r']}) | {cells} |")
    return "\n".join(lines) + "\n\n![cost curves](bench/costs.png)\n"


def plot(data: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path.parent.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(6, 4))
    for c in data["curves"]:
        ns = sorted(int(n) for n in c["ratios"])
        style = "-" if c["exact"] else "--"
        label = f"{c['model']} ({'exact' if c['exact'] else 'fast'})"
        ax.plot(ns, [c["ratios"][n] for n in ns], style, marker="o", label=label)
    ax.plot([1, 33], [1, 33], ":", color="grey", label="n one-token passes")
    ax.set(xlabel="tokens in one pass (n)", ylabel="t(n) / t(1)", title="Cost of a pass")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
