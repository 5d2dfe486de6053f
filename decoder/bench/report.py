"""The bench report: Markdown tables and PNG plots from `analysis.analyse`'s results."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from decoder.bench.analysis import BOOTSTRAP, LABELS, PAPER_BETA, PAPER_R, drafting, main_grid, of


def fmt(x, spec: str = ".2f") -> str:
    return "–" if x is None or (isinstance(x, float) and np.isnan(x)) else format(x, spec)


def ci(pair, spec: str = ".2f") -> str:
    return f"[{fmt(pair[0], spec)}, {fmt(pair[1], spec)}]"


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows])


def headline(a: dict) -> str:
    rows = [
        [
            f,
            str(s["n"]),
            f"{s['identical']:.0%}",
            fmt(s["acceptance"], ".1%"),
            fmt(s["accepted_per_cycle"]),
            fmt(s["tps"], ".1f"),
            f"{fmt(s['speedup_mean'])} {ci(s['speedup_mean_ci'])}",
            f"{fmt(s['speedup_median'])} {ci(s['speedup_median_ci'])}",
            fmt(s["prefill_s"]),
            fmt(s["drafter_prefill_s"]),
        ]
        for f, s in a["summary"].items()
    ]
    return table(
        [
            "condition",
            "n",
            "identical",
            "acceptance",
            "accepted/cycle",
            "decode tok/s",
            "speedup mean [95% CI]",
            "speedup median [95% CI]",
            "prefill s",
            "drafter prefill s",
        ],
        rows,
    )


def split_table(a: dict) -> str:
    rows = [
        [f] + [f"{s['time_split'][p]:.1%}" for p in ("draft", "translate", "verify", "other")]
        for f, s in a["summary"].items()
    ]
    return table(["condition", "draft", "translate", "verify", "other"], rows)


def break_even_table(a: dict) -> str:
    rows = [
        [
            f,
            str(b["n"]),
            fmt(b["intercept"]),
            fmt(b["slope"]),
            fmt(b["break_even"], ".1%"),
            ci(b["ci"], ".1%"),
            fmt(b["no_slope"], ".0%"),
        ]
        for f, b in a["break_even"].items()
    ]
    return table(
        [
            "condition",
            "n",
            "intercept (tok/s)",
            "slope (tok/s per 1.0 acceptance)",
            "break-even acceptance",
            "95% CI",
            "resamples with slope ≤ 0",
        ],
        rows,
    )


def bucket_md(a: dict) -> str:
    fams = list(a["buckets"])
    rows = []
    for b in range(10):
        cells = [
            f"{a['buckets'][f][b][0]:.2f} ({a['buckets'][f][b][1]})" if b in a["buckets"][f] else ""
            for f in fams
        ]
        if any(cells):
            rows.append([f"{b * 10}–{b * 10 + 10}%"] + cells)
    return table(["acceptance"] + fams, rows)


def costs_md(a: dict, probe: str) -> str:
    c = a["costs"]
    rows = [[str(n), f"{r:.2f}", str(c["cycles"][n])] for n, r in c["verify_ratio"].items()]
    drafter = "; ".join(f"{f}: {r:.2f}" for f, r in c["drafter_ratio"].items()) or "–"
    return (
        table(["tokens verified n", "t(n)/t(1)", "cycles"], rows)
        + f"\n\nOne plain step t(1) = {c['step_s'] * 1000:.0f} ms; fitted β (t(n)/t(1) ≈ 1 + β(n−1)) = "
        f"{fmt(c['beta'], '.3f')}. Drafter cost per drafted token over t(1) (r): {drafter}.\n\n"
        f"Start-up probe (`pipe.costs`, idle cache, best of 2): {probe}"
    )


def disparity_md(a: dict) -> str:
    rows = [
        [f]
        + [fmt(d["speedup"].get(lab)) for lab in LABELS]
        + [fmt(d["acceptance"].get(lab), ".1%") for lab in LABELS]
        + [f"{fmt(d['spread'])} ({d['fastest']} − {d['slowest']})", fmt(d["unfairness"], ".4f")]
        for f, d in a["disparity"].items()
    ]
    return table(
        ["condition"]
        + [f"speedup {lab}" for lab in LABELS]
        + [f"acceptance {lab}" for lab in LABELS]
        + ["spread", "unfairness U"],
        rows,
    )


def sweep_md(a: dict) -> str:
    ks = sorted({k for v in a["sweep"].values() for k in v})
    rows = [
        [f]
        + [
            f"{v[k]['speedup_median']:.2f} / {fmt(v[k]['acceptance'], '.0%')}" if k in v else ""
            for k in ks
        ]
        for f, v in a["sweep"].items()
    ]
    n = max((x["n"] for v in a["sweep"].values() for x in v.values()), default=0)
    return (
        table(["condition"] + [f"k={k}" for k in ks], rows)
        + f"\n\nCells: median speedup / pooled acceptance over {n} excerpts."
    )


def prediction_md(a: dict) -> str:
    rows = [
        [f, fmt(p["acceptance"], ".1%"), fmt(p["break_even"], ".1%"), fmt(p["bielik"])]
        + [fmt(p["bielik_by_type"].get(lab)) for lab in LABELS]
        + [fmt(p["model_here"]), fmt(p["measured_here"])]
        for f, p in a["prediction"].items()
    ]
    return table(
        ["condition", "our acceptance", "model break-even", "PREDICTED Bielik speedup"]
        + [f"predicted {lab}" for lab in LABELS]
        + ["same model, our r and β", "measured here"],
        rows,
    )


def mismatch_md(a: dict, n_runs: int) -> str:
    if not a["mismatches"]:
        return f"All {n_runs} runs produced exactly the baseline's tokens (identical output: 100%)."
    rows = [[m["excerpt"], m["condition"], str(m["mismatch_at"])] for m in a["mismatches"]]
    return f"**{len(rows)} of {n_runs} runs differ from the baseline:**\n\n" + table(
        ["excerpt", "condition", "first differing token"], rows
    )


def report(meta: dict, a: dict, n_runs: int, default_grid: str) -> str:
    missing = "".join(f"\n- `{f}`: not available: {why}" for f, why in meta["unavailable"].items())
    return f"""# Benchmarks

Generated by `{meta["command"]}` on {meta["date"]}: {meta["machine"]}. Wall time {meta["wall_s"] / 60:.1f} min,
{n_runs} runs. Load average (1 min) at start {meta["load"][0]:.2f}, at end {meta["load"][1]:.2f}
on {meta["cpus"]} CPUs{meta["note"]}.

Target `{meta["target"]}`, drafter model `{meta["drafter_model"]}`; greedy decoding; {meta["max_tokens"]}
generated tokens per run; fixed conditions at k={meta["k"]} on all {meta["n_excerpts"]} excerpts
({meta["per_type"]}); k sweep {meta["sweep_ks"]} on {meta["sweep_n"]} of them (round-robin over the types);
`auto` with k ≤ {meta["auto_k"]}. All conditions of an excerpt run back to back, baseline first; the
target's cache is reset per excerpt, so its prefill is measured once (baseline), and drafters prefill
the prompt untimed before each run (column "drafter prefill s"; the translation modes share one drafter
cache, so the first model condition of an excerpt pays it, the others resync). Acceptance = accepted /
drafted target tokens, averaged over runs that drafted. Decode tokens/s excludes prefill; speedup
is a run's decode tokens/s over the baseline's on the same excerpt. CIs: {BOOTSTRAP} bootstrap resamples
of excerpts. `bielik-lsp bench` with no options runs {default_grid}.
Corpus: `polish/data/bench.jsonl` (provenance in `polish/data/SOURCES.md`). Raw per-run
records: [`bench/raw.json`](bench/raw.json).{missing and chr(10) + chr(10) + "Conditions not run:" + missing}

## Headline (main grid, k={meta["k"]})

{headline(a)}

## Identical output

{mismatch_md(a, n_runs)}

## Time split (share of decode time)

{split_table(a)}

## Break-even acceptance (OLS of decode tokens/s on acceptance, per excerpt)

Break-even: the acceptance at which the fitted tokens/s equals the baseline's mean tokens/s (on the
same excerpts). Runs that drafted nothing (auto on prose, lookup with no match) have no acceptance
and are left out of the fit and of the plot. A break-even outside 0–100% is an extrapolation: the
fitted line beats the baseline even at zero acceptance (below 0%), or stays under it at any
reachable acceptance (above 100%), because the drafter's cost outweighs what it saves.

{break_even_table(a)}

![speedup vs acceptance](bench/speedup_vs_acceptance.png)

## Speedup by acceptance bucket (mean speedup (runs))

{bucket_md(a)}

## Measured costs on this machine

{costs_md(a, meta["probe"])}

## Content types

Spread: mean speedup of the fastest type minus the slowest. Unfairness U: mean over types of
(α_best − α_type)² over the types where it drafted, α = pooled acceptance (divergence 1 − α; its excess over the best type, squared,
averaged) — our acceptance-based equivalent of the mean squared excess divergence over the best type.

{disparity_md(a)}

![speedup by content type](bench/speedup_by_type.png)

## k sweep

{sweep_md(a)}

![k sweep](bench/k_sweep.png)

## PREDICTION (a model, not a measurement): Bielik-11B 8-bit + Qwen2.5-1.5B 4-bit on an M2 Pro

Cost model, in target steps: a cycle that drafts d target tokens costs 1 + β·d to verify (d+1 tokens
in one pass) plus r per drafter step, and commits 1 + (accepted) tokens. Summed over a condition's
cycles (C cycles, D drafted target tokens, A accepted, K drafter steps):
**S = (C + A) / (C + β·D + r·K)**. When every drafter step yields one target token (K = D), speculation
pays exactly when the acceptance A/D exceeds **r + β**, for every k; a translation that holds tokens
back (K > D) pays r for them without a chance of acceptance. With the paper's fit for that deployment,
r = {PAPER_R} (Qwen2.5-1.5B 4-bit per token over Bielik-11B 8-bit per token) and β = {PAPER_BETA}, the
break-even is {PAPER_R + PAPER_BETA:.1%} for a model drafter and {PAPER_BETA:.0%} for lookup (r = 0).
We feed it our measured C, A, D, K. This assumes Qwen2.5-1.5B accepts like SmolLM2-135M does here (it is
a larger, Polish-capable model, so its real acceptance is likely higher) and the paper's costs; it is
not a measurement of Bielik. The "same model, our r and β" column applies the formula with this
machine's measured costs, next to the speedup measured here, as a check of the model itself.

{prediction_md(a)}

## Not done

- HF transformers' cross-tokenizer assisted generation as a peer in the same run (optional in the
  issue): torch is not a project dependency and a CPU torch peer would add a second copy of both
  models and roughly double the run time; not run. `/work/shared/NOTES.md` has one earlier
  measurement (0.60x prose, 1.13x numbered list) for orientation only.
"""


# ---------------------------------------------------------------- plots


def plots(records: list[dict], a: dict, k: int, out: Path) -> list[Path]:
    """speedup vs acceptance (break-even per condition), speedup by content type, k sweep."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out.mkdir(parents=True, exist_ok=True)
    grid = main_grid(records, k)
    return [
        plot_scatter(plt, grid, a, out / "speedup_vs_acceptance.png"),
        plot_types(plt, a, out / "speedup_by_type.png"),
        plot_sweep(plt, a, out / "k_sweep.png"),
    ]


def plot_scatter(plt, grid: list[dict], a: dict, path: Path) -> Path:
    fams = list(a["break_even"])
    cols = 3
    rows = max(1, -(-len(fams) // cols))
    fig, axes = plt.subplots(rows, cols, figsize=(4 * cols, 3.3 * rows), squeeze=False, sharey=True)
    for ax, fam in zip(axes.flat, fams):
        recs = drafting(of(grid, fam))
        for lab, colour in zip(LABELS, ("tab:blue", "tab:orange", "tab:green")):
            pts = [(r["stats"]["acceptance_rate"], r["speedup"]) for r in recs if r["label"] == lab]
            if pts:
                ax.scatter(*zip(*pts), s=12, color=colour, label=lab, alpha=0.7)
        ax.axhline(1.0, color="grey", lw=0.8)
        fit = a["break_even"][fam]
        if fit["slope"] is not None:
            xs = np.linspace(0, 1, 11)
            ax.plot(
                xs,
                (fit["intercept"] + fit["slope"] * xs) / fit["base_tps"],
                color="black",
                lw=0.8,
                label="OLS fit",
            )
        be = fit["break_even"]
        if be is not None and 0 <= be <= 1:
            ax.axvline(be, color="red", ls="--", lw=1, label=f"break-even {be:.0%}")
        ax.set_title(fam, fontsize=9)
        ax.set_xlim(-0.02, 1.02)
        ax.set_xlabel("acceptance")
        ax.legend(fontsize=6)
    for ax in axes.flat[len(fams) :]:
        ax.axis("off")
    axes[0][0].set_ylabel("speedup vs plain")
    return save(fig, path)


def plot_types(plt, a: dict, path: Path) -> Path:
    fams = [f for f in a["by_type"] if f != "baseline"]
    fig, ax = plt.subplots(figsize=(max(6, 1.3 * len(fams)), 3.8))
    width = 0.8 / len(LABELS)
    for i, lab in enumerate(LABELS):
        xs, ys, lo, hi = [], [], [], []
        for j, fam in enumerate(fams):
            s = a["by_type"][fam].get(lab)
            if s:
                xs.append(j + (i - 1) * width)
                ys.append(s["speedup_mean"])
                lo.append(
                    s["speedup_mean"]
                    - np.nan_to_num(s["speedup_mean_ci"][0], nan=s["speedup_mean"])
                )
                hi.append(
                    np.nan_to_num(s["speedup_mean_ci"][1], nan=s["speedup_mean"])
                    - s["speedup_mean"]
                )
        ax.bar(xs, ys, width, yerr=[lo, hi], capsize=2, label=lab)
    ax.axhline(1.0, color="grey", lw=0.8)
    ax.set_xticks(range(len(fams)), fams, rotation=20, fontsize=8)
    ax.set_ylabel("mean speedup vs plain (95% CI)")
    ax.legend(fontsize=8)
    return save(fig, path)


def plot_sweep(plt, a: dict, path: Path) -> Path:
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8))
    for fam, v in a["sweep"].items():
        ks = sorted(v)
        left.plot(ks, [v[k]["speedup_median"] for k in ks], marker="o", label=fam)
        right.plot(ks, [v[k]["acceptance"] for k in ks], marker="o", label=fam)
    left.axhline(1.0, color="grey", lw=0.8)
    left.set(xlabel="k (draft length)", ylabel="median speedup vs plain")
    right.set(xlabel="k (draft length)", ylabel="pooled acceptance")
    left.legend(fontsize=7)
    return save(fig, path)


def save(fig, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    import matplotlib.pyplot as plt

    plt.close(fig)
    return path
