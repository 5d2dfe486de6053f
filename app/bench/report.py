"""The bench report: Markdown tables and PNG plots from `analysis.analyse`'s results."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from app.bench.analysis import BOOTSTRAP, PAPER_BETA, PAPER_R, drafting, main_grid, of
from app.bench.corpus import LABELS


def write_report(out: Path, stem: str, text: str, raw: dict) -> None:
    """OUT/STEM.md (the report) and OUT/STEM.json (what it was made from)."""
    (out / f"{stem}.md").write_text(text + "\n", encoding="utf-8")
    (out / f"{stem}.json").write_text(json.dumps(raw, indent=1, default=str), encoding="utf-8")


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
            fmt(s.get("cps", float("nan")), ".1f"),
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
            "decode chars/s",
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
    beta = c["beta"]
    rows = [
        [str(n), f"{r:.2f}", fmt(1 + beta * (n - 1) ** 2), str(c["cycles"][n])]
        for n, r in c["verify_ratio"].items()
    ]
    drafter = "; ".join(f"{f}: {r:.2f}" for f, r in c["drafter_ratio"].items()) or "–"
    return (
        table(["tokens verified n", "t(n)/t(1)", "fitted 1 + β(n−1)²", "cycles"], rows)
        + f"\n\nOne plain step t(1) = {c['step_s'] * 1000:.0f} ms. The paper's verification term "
        "fitted to these passes (least squares of t(n)/t(1) − 1 on (n−1)², weighted by cycles): "
        f"β = {fmt(beta, '.3f')} (paper, M2 Pro: {PAPER_BETA}). Drafter seconds per drafter "
        f"forward pass over t(1), r (paper: {PAPER_R}): {drafter}.\n\n"
        f"Start-up probe (idle cache, best of 2): {probe}"
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


def mode_k_md(a: dict) -> str:
    rows = [
        [
            f,
            str(k),
            str(v["n"]),
            f"{v['identical']:.0%}",
            fmt(v["from_drafts"], ".1%"),
            fmt(v["per_pass"]),
            fmt(v["acceptance"], ".1%"),
            fmt(v["integrity"], ".1%"),
            fmt(v["speedup_median"]),
            fmt(v["bielik"]),
            fmt(v["bielik_closed"]),
        ]
        for f, by_k in a["mode_k"].items()
        for k, v in by_k.items()
    ]
    n = max((v["n"] for by_k in a["mode_k"].values() for v in by_k.values()), default=0)
    return (
        table(
            [
                "condition",
                "k",
                "n",
                "identical",
                "share of tokens from drafts",
                "target tokens per target pass",
                "α = accepted / drafted",
                "drafter-context integrity",
                "median speedup here",
                "PREDICTED Bielik (cycles)",
                "PREDICTED Bielik (closed form)",
            ],
            rows,
        )
        + f"\n\nOn the {n} excerpts that ran every k. Integrity: share of cycles after which the "
        "drafter's text equalled the committed text (– where the drafter does not report it)."
    )


def peers_md(a: dict, unavailable: dict) -> str:
    rows = [
        [
            name,
            str(p["n"]),
            fmt(p.get("cps", float("nan")), ".1f"),
            fmt(p["tps"], ".1f"),
            f"{fmt(p['ratio'])} {ci(p['ratio_ci'])}",
        ]
        + [fmt(p["by_type"].get(lab)) for lab in LABELS]
        + [f"{p['identical']:.0%}"]
        for name, p in a["peers"].items()
    ]
    missing = "".join(f"\n- {n}: not run: {why}" for n, why in unavailable.items())
    return table(
        ["run", "n", "decode chars/s", "decode tok/s", "vs our plain, mean [95% CI]"]
        + [f"vs our plain, {lab}" for lab in LABELS]
        + ["same tokens as our plain"],
        rows,
    ) + (f"\n{missing}" if missing else "")


def prediction_md(a: dict) -> str:
    rows = [
        [f, fmt(p["acceptance"], ".1%"), fmt(p["bielik"])]
        + [fmt(p["bielik_by_type"].get(lab)) for lab in LABELS]
        + [fmt(p["model_here"]), fmt(p["measured_here"])]
        for f, p in a["prediction"].items()
    ]
    return table(
        ["condition", "α = accepted / drafted", "PREDICTED Bielik speedup"]
        + [f"predicted {lab}" for lab in LABELS]
        + ["same model, this machine's r and β", "measured here"],
        rows,
    )


def break_even_alpha(ks: list[int]) -> str:
    """α above which the paper's model predicts a gain, per k, for a model drafter and lookup."""
    return ", ".join(
        f"k={k}: {((k + 1) * PAPER_R + PAPER_BETA * k * k) / k:.0%} (lookup {PAPER_BETA * k:.0%})"
        for k in ks
    )


def mismatch_md(a: dict, n_runs: int) -> str:
    if not a["mismatches"]:
        return f"All {n_runs} runs produced exactly the baseline's tokens (identical output: 100%)."
    rows = [[m["excerpt"], m["condition"], str(m["mismatch_at"])] for m in a["mismatches"]]
    return f"**{len(rows)} of {n_runs} runs differ from the baseline:**\n\n" + table(
        ["excerpt", "condition", "first differing token"], rows
    )


def describe(info: dict) -> str:
    d = ", ".join(f"{k} {v}" for k, v in info["describe"].items())
    return d or info["probe"]


def backend_md(name: str, meta: dict, a: dict) -> str:
    info = meta["backends"][name]
    missing = "".join(f"\n- `{f}`: not available: {why}" for f, why in info["unavailable"].items())
    return f"""## Backend `{name}`: details

{describe(info)}.{missing and chr(10) + chr(10) + "Conditions not run:" + missing}

### Headline (main grid, k={meta["k"]})

{headline(a)}

### Identical output

{mismatch_md(a, a["n_runs"])}

### Time split (share of decode time)

{split_table(a)}

### Break-even acceptance (OLS of decode tokens/s on acceptance, per excerpt)

Break-even: the acceptance at which the fitted tokens/s equals the baseline's mean tokens/s (on
the same excerpts). Runs that drafted nothing (auto on prose, lookup with no match) have no
acceptance and are left out of the fit and of the plot. A break-even outside 0–100% is an
extrapolation: the fitted line beats the baseline even at zero acceptance (below 0%), or stays
under it at any reachable acceptance (above 100%).

{break_even_table(a)}

![speedup vs acceptance, {name}](bench/speedup_vs_acceptance-{name}.png)

### Speedup by acceptance bucket (mean speedup (runs))

{bucket_md(a)}

### Measured costs

{costs_md(a, info["probe"])}

### Content types

Spread: mean speedup of the fastest type minus the slowest. Unfairness U: mean over the types
where it drafted of (α_best − α_type)², α = pooled acceptance: the mean squared excess
divergence (1 − α) over the best type.

{disparity_md(a)}

![speedup by content type, {name}](bench/speedup_by_type-{name}.png)
"""


def intro(meta: dict, names: list[str], default_grid: str) -> str:
    """The report's title and how the run was made."""
    return f"""# Benchmarks

Generated by `{meta["command"]}` on {meta["date"]}: {meta["machine"]}. Wall time
{meta["wall_s"] / 60:.1f} min, {meta["n_runs"]} runs. Load average (1 min) at start
{meta["load"][0]:.2f}, at end {meta["load"][1]:.2f} on {meta["cpus"]} CPUs{meta["note"]}.

Target `{meta["target"]}`, drafter model `{meta["drafter_model"]}`, backends
{", ".join(f"`{b}`" for b in names)} (one after the other, each with its own baseline); greedy
decoding; {meta["max_tokens"]} generated tokens per run; fixed conditions at k={meta["k"]} on all
{meta["n_excerpts"]} excerpts ({meta["per_type"]}); k sweep {meta["sweep_ks"]} on {meta["sweep_n"]}
of them (round-robin over the types); `auto` with k ≤ {meta["auto_k"]}. All conditions of an
excerpt run back to back, baseline first, then the peers; the target's cache is reset per
excerpt, so its prefill is measured once (baseline), and drafters prefill the prompt untimed
before each run (the translation modes share one drafter cache). Acceptance α = accepted /
drafted target tokens. Decode tokens/s excludes prefill (for a peer: from its first token to
its last); speedup is a run's decode tokens/s over our plain run's on the same excerpt, same
backend, same run. CIs: {BOOTSTRAP} bootstrap resamples of excerpts. `bielik-lsp bench` with no
options runs {default_grid}. Corpus: `polish/data/bench.jsonl` (provenance in
`polish/data/SOURCES.md`). Raw per-run records: [`bench/raw.json`](bench/raw.json)."""


def report(meta: dict, analyses: dict[str, dict], default_grid: str) -> str:
    names = list(analyses)
    per = lambda f: "\n\n".join(f"### `{b}`\n\n{f(b, analyses[b])}" for b in names)  # noqa: E731
    ks = sorted({*meta["sweep_ks"], meta["k"]})
    peers = per(lambda b, a: peers_md(a, meta["backends"][b]["peers_unavailable"]))
    return f"""{intro(meta, names, default_grid)}

## Against the peers

Each backend's plain and `auto` decoding and its lookup drafter at k={meta["k"]}, beside the
peers a user would run instead: mlx-lm's own `stream_generate` on the same MLX model, and
llama-cpp-python's own generation on the same GGUF file, plain and with its prompt-lookup
speculation (`LlamaPromptLookupDecoding` with the library's defaults: n-grams up to 3, 10
tokens drafted), all on the same prompt ids, with the same thread count as our backend.

{peers}

![decode speed against the peers](bench/speedup_vs_peers.png)

## Tokens from drafts, per mode and k

What transfers to another machine is how many target tokens each target forward pass yields:
the share of generated tokens that came from accepted drafts, and target tokens per target
pass (1.00 for plain decoding). The two PREDICTED columns apply the paper's cost model (next
section) with the paper's r and β to these runs.

{per(lambda b, a: mode_k_md(a))}

![share of tokens from drafts per mode and k](bench/share_from_drafts.png)

## PREDICTION (a model, not a measurement): Bielik-11B 8-bit + Qwen2.5-1.5B 4-bit on an M2 Pro

The paper's cost model, in target steps, for cycles that each draft k tokens:
**S = (1 + αk) / ((k+1)·r + 1 + β·k²)**, with r the drafter's cost per forward pass (k+1
passes per cycle) and β·k² the extra cost of verifying k drafted tokens in the target's pass.
α is the share of drafted tokens the target accepts (accepted / drafted, pooled over a
condition's cycles), so αk is the mean number accepted per cycle, which is what the numerator
counts. It is not the per-token acceptance probability p of the i.i.d. model: there a cycle
accepts p(1 − p^k)/(1 − p) ≤ pk tokens, so feeding p to this formula would overstate the
speedup. The paper's fit for that deployment: r = {PAPER_R} (Qwen2.5-1.5B 4-bit per token
over Bielik-11B 8-bit per token), β = {PAPER_BETA}. Speculation pays when α exceeds
((k+1)·r + β·k²) / k: {break_even_alpha(ks)}.

"Summed cycles" applies the same model cycle by cycle, Σ committed tokens / Σ (1 + β·d² +
r·passes) for a cycle that drafted d target tokens with that many drafter passes: equal to the
closed form when every cycle drafts k, and it prices lookup misses, `auto`'s plain cycles and
translations that deliver fewer than k tokens as they happened (r = 0 for lookup: no model
runs). The input is our measured cycles: this assumes Qwen2.5-1.5B accepts like the drafter
here does and the paper's costs; it is not a measurement of Bielik. The column "same model,
this machine's r and β" uses the r and β fitted on this machine (see the backend details),
next to the speedup measured here, as a check of the model itself.

{per(lambda b, a: prediction_md(a))}

{chr(10).join(backend_md(b, meta, analyses[b]) for b in names)}"""


# ---------------------------------------------------------------- plots


def plots(records: list[dict], analyses: dict[str, dict], k: int, out: Path) -> list[Path]:
    """The report's figures.

    Per backend: speedup vs acceptance, speedup by content type. Across backends: speed against
    the peers, and the share of tokens from drafts per mode and k.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, a in analyses.items():
        grid = main_grid([r for r in records if r["backend"] == name], k)
        paths.append(plot_scatter(plt, grid, a, out / f"speedup_vs_acceptance-{name}.png"))
        paths.append(plot_types(plt, a, out / f"speedup_by_type-{name}.png"))
    paths.append(plot_peers(plt, analyses, out / "speedup_vs_peers.png"))
    paths.append(plot_share(plt, analyses, out / "share_from_drafts.png"))
    return paths


def plot_scatter(plt, grid: list[dict], a: dict, path: Path) -> Path:
    fams = list(a["break_even"])
    cols = 3
    rows = max(1, -(-len(fams) // cols))
    fig, axes = plt.subplots(rows, cols, figsize=(4 * cols, 3.3 * rows), squeeze=False, sharey=True)
    for ax, fam in zip(axes.flat, fams, strict=False):
        recs = drafting(of(grid, fam))
        for lab, colour in zip(LABELS, ("tab:blue", "tab:orange", "tab:green"), strict=True):
            pts = [(r["stats"]["acceptance_rate"], r["speedup"]) for r in recs if r["label"] == lab]
            if pts:
                ax.scatter(*zip(*pts, strict=True), s=12, color=colour, label=lab, alpha=0.7)
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
        if ax.get_legend_handles_labels()[0]:
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


def plot_peers(plt, analyses: dict[str, dict], path: Path) -> Path:
    """Decode speed of our runs and the peers over our plain, per backend and content type."""
    fig, axes = plt.subplots(
        1, len(analyses), figsize=(6 * len(analyses), 4), squeeze=False, sharey=True
    )
    for ax, (name, a) in zip(axes[0], analyses.items(), strict=True):
        runs = list(a["peers"])
        width = 0.8 / (len(LABELS) + 1)
        for i, lab in enumerate(("all", *LABELS)):
            ys = [
                _all_ratio(a["peers"][r]) if lab == "all" else a["peers"][r]["by_type"].get(lab, 0)
                for r in runs
            ]
            ax.bar([j + (i - 1.5) * width for j in range(len(runs))], ys, width, label=lab)
        ax.axhline(1.0, color="grey", lw=0.8)
        ax.set_xticks(
            range(len(runs)),
            [r.split(": ", 1)[1] for r in runs],
            rotation=25,
            ha="right",
            fontsize=7,
        )
        ax.set_title(f"backend {name}", fontsize=9)
        ax.legend(fontsize=7)
    axes[0][0].set_ylabel("decode speed over our plain (same backend)")
    fig.suptitle(
        "all: characters/s (Unicode characters of committed text) over our plain's; "
        "per content type: tokens/s (the same model and tokenizer, so the same ratio)",
        fontsize=8,
    )
    return save(fig, path)


def _all_ratio(peer: dict) -> float:
    """A run's mean speed over our plain in characters/s; tokens/s for runs saved before."""
    chars = peer.get("ratio_chars", float("nan"))
    return peer["ratio"] if np.isnan(chars) else chars


def plot_share(plt, analyses: dict[str, dict], path: Path) -> Path:
    """Share of tokens from accepted drafts and median speedup against k, per mode and backend."""
    fig, axes = plt.subplots(len(analyses), 2, figsize=(10, 3.6 * len(analyses)), squeeze=False)
    for (left, right), (name, a) in zip(axes, analyses.items(), strict=True):
        for fam, by_k in a["mode_k"].items():
            ks = sorted(by_k)
            left.plot(ks, [by_k[k]["from_drafts"] for k in ks], marker="o", label=fam)
            right.plot(ks, [by_k[k]["speedup_median"] for k in ks], marker="o", label=fam)
        right.axhline(1.0, color="grey", lw=0.8)
        ks = sorted({k for by_k in a["mode_k"].values() for k in by_k})
        for ax in (left, right):
            ax.set_xticks(ks)
        left.set(xlabel="k", ylabel="share of tokens from drafts", title=f"backend {name}")
        right.set(xlabel="k", ylabel="median speedup vs plain", title=f"backend {name}")
        left.legend(fontsize=7)
    return save(fig, path)


def save(fig, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    import matplotlib.pyplot as plt

    plt.close(fig)
    return path
