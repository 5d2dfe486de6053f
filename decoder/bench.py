"""`bielik-lsp bench`: every drafter against plain greedy decoding, in one run, on the same prompts.

Why one module and one run: speed claims only mean something when every condition meets the
same machine noise on the same excerpts, and is checked token for token against the baseline.
All conditions of an excerpt run back to back (interleaved), so a busy neighbour slows them all.

Pieces: the corpus (polish/data/bench.jsonl), the conditions (plain, lookup, model drafter per
translation mode, auto; k sweep on a subset), the runs, the analysis (bootstrap CIs, OLS
break-even, acceptance buckets, measured costs, content-type disparity, a cost-model prediction
for the Bielik deployment), and the outputs (raw JSON, a Markdown report, PNG plots).
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from .config import Settings
from .drafter import Context, Drafter
from .engine import PLAIN, FixedPolicy, Policy
from .sampling import GREEDY, Keys

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "polish" / "data" / "bench.jsonl"
LABELS = ("structured", "prose", "mixed")
TRANSLATIONS = ("none", "naive", "context", "anchored")
SWEEP_KS = (1, 2, 3, 4, 6)
PAPER_R, PAPER_BETA = 0.071, 0.19  # the paper's fit: Bielik-11B 8-bit + Qwen2.5-1.5B 4-bit, M2 Pro
BOOTSTRAP = 2000


@dataclass(frozen=True)
class BenchConfig:
    per_class: int = 30  # excerpts per content type in the main grid
    max_tokens: int = 32  # generated tokens per run
    k: int = 4  # draft length of the fixed conditions in the main grid
    sweep_ks: tuple[int, ...] = SWEEP_KS
    sweep_n: int = 6  # excerpts (spread over the types) that also get the k sweep
    out: Path = ROOT / "docs"
    command: str = "bielik-lsp bench"


QUICK = BenchConfig(per_class=1, max_tokens=6, k=2, sweep_ks=(1, 2), sweep_n=1,
                    out=ROOT / "build" / "bench-quick", command="bielik-lsp bench --quick")


# ---------------------------------------------------------------- corpus

@dataclass(frozen=True)
class Excerpt:
    id: str
    label: str
    text: str
    source: str
    license: str


def load_corpus(path: Path = CORPUS) -> list[Excerpt]:
    """The bench corpus; lines with `from` point to an item of another file in the same folder."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    refs: dict[str, dict] = {}
    for name in {r["from"] for r in rows if "from" in r}:
        for line in (path.parent / name).read_text(encoding="utf-8").splitlines():
            item = json.loads(line)
            refs[item["id"]] = item
    full = [refs[r["id"]] if "from" in r else r for r in rows]
    return [Excerpt(r["id"], r["label"], r["text"], r["source"], r["license"]) for r in full]


def select(corpus: list[Excerpt], per_class: int) -> list[Excerpt]:
    """`per_class` excerpts of each type, evenly spaced through the corpus (so through the sources)."""
    out = []
    for label in LABELS:
        items = [e for e in corpus if e.label == label]
        n = min(per_class, len(items))
        out += [items[i * len(items) // n] for i in range(n)]
    return out


def sweep_subset(excerpts: list[Excerpt], n: int) -> set[str]:
    """Ids of `n` excerpts taken round-robin over the content types."""
    by_type = [[e.id for e in excerpts if e.label == label] for label in LABELS]
    order = [ids[i] for i in range(max(map(len, by_type), default=0)) for ids in by_type if i < len(ids)]
    return set(order[:n])


# ---------------------------------------------------------------- conditions

@dataclass
class Condition:
    name: str  # e.g. "model/anchored k=4"
    family: str  # baseline | lookup | model/<translation> | auto
    k: int
    drafter: Drafter | None = None
    warm: list[Drafter] = field(default_factory=list)  # drafters whose prompt is prefilled untimed


def model_drafters(pipe, drafter_model) -> tuple[dict[str, Drafter], dict[str, str]]:
    """One model drafter per translation mode, built from settings as the pipeline builds it."""
    from .pipeline import Pipeline

    drafters, missing = {}, {}
    for mode in TRANSLATIONS:
        family = f"model/{mode}"
        if drafter_model is None:
            missing[family] = "the drafter model did not load"
            continue
        try:
            settings = replace(pipe.settings, drafter="model", translation=mode)
            sub = Pipeline(settings, pipe.target, pipe.engine)
            sub.attach_drafter_model(drafter_model)
            drafters[family] = sub.drafters["model"]
        except Exception as e:  # noqa: BLE001 — any failure makes this one condition unavailable
            missing[family] = f"{type(e).__name__}: {e}"
    return drafters, missing


def share_runner(drafters: list[Drafter]) -> None:
    """One drafter-model cache for all translation modes (and auto's), so the prompt is prefilled once.

    Safe because a runner is keyed by the exact ids it holds and every drafter resyncs it on
    each call; runs are sequential, so no two drafters use it at the same time.
    """
    runners = [d for d in drafters if hasattr(d, "runner")]
    for d in runners[1:]:
        d.runner = runners[0].runner


def build_conditions(pipe, drafter_model, ks: tuple[int, ...]) -> tuple[list[Condition], dict[str, str]]:
    """Baseline first (every other condition is compared with it), then fixed drafters per k, then auto."""
    fixed, missing = model_drafters(pipe, drafter_model)
    share_runner([*fixed.values(), *[d for name, d in pipe.drafters.items() if name == "model"]])
    fixed = {"lookup": pipe.drafters["lookup"], **fixed}
    conds = [Condition("baseline", "baseline", 0)]
    for family, drafter in fixed.items():
        conds += [Condition(f"{family} k={k}", family, k, drafter, [drafter]) for k in ks]
    conds.append(Condition("auto", "auto", pipe.settings.k, None, list(pipe.drafters.values())))
    return conds, missing


def policy_for(pipe, cond: Condition, text: str) -> Policy:
    if cond.family == "baseline":
        return PLAIN
    if cond.family == "auto":
        return pipe.policy("auto", pipe.settings.k, text=text)  # stateful: a new one per run
    return FixedPolicy(cond.drafter, cond.k)


# ---------------------------------------------------------------- runs

def warm(drafters: list[Drafter], prompt: list[int], text: str) -> float:
    """Prefill each drafter's own cache with the prompt (timed apart, like the target's prefill)."""
    start = time.perf_counter()
    for d in drafters:
        d.propose(Context(prompt, text, b""), 1, GREEDY, Keys(None))
    return time.perf_counter() - start


def cost_samples(cycles: list[dict]) -> dict:
    """Per-run sums for the cost estimates: verify seconds by tokens verified, draft seconds per k."""
    verify: dict[int, list[float]] = {}
    for c in cycles:
        v = verify.setdefault(c["drafted"] + 1, [0.0, 0])
        v[0] += c["verify_s"]
        v[1] += 1
    drafting = [c for c in cycles if c["k"] > 0]
    return {"verify_by_n": {str(n): v for n, v in sorted(verify.items())},
            "draft_s": sum(c["draft_s"] for c in drafting), "draft_steps": sum(c["k"] for c in drafting)}


def run_one(pipe, cond: Condition, ex: Excerpt, max_tokens: int) -> dict:
    """One generation; the record keeps the ids (to compare) and the statistics (no per-cycle list)."""
    warm_s = warm(cond.warm, pipe.engine.encode(ex.text), ex.text)
    ids, stats, pieces = [], None, []
    for chunk in pipe.continue_text(ex.text, max_tokens=max_tokens, policy=policy_for(pipe, cond, ex.text)):
        ids += chunk.ids
        pieces.append(chunk.text)
        stats = chunk.stats
    full = stats.to_dict(per_cycle=True)
    cycles = full.pop("per_cycle")
    return {"excerpt": ex.id, "label": ex.label, "condition": cond.name, "family": cond.family,
            "k": cond.k, "ids": ids, "text": "".join(pieces), "drafter_prefill_s": warm_s,
            **cost_samples(cycles), "stats": full}


def compare(rec: dict, base: dict) -> None:
    """Mark the record identical or not to the baseline, and its speedup over it."""
    a, b = rec["ids"], base["ids"]
    rec["identical"] = a == b
    rec["mismatch_at"] = None if a == b else next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    base_tps = base["stats"]["tokens_per_second"]
    rec["speedup"] = rec["stats"]["tokens_per_second"] / base_tps if base_tps else float("nan")


def plan(conds: list[Condition], excerpts: list[Excerpt], cfg: BenchConfig) -> list[tuple[Excerpt, Condition]]:
    """Main grid (baseline, auto, fixed at cfg.k) on every excerpt; the other k only on the sweep subset."""
    sweep = sweep_subset(excerpts, cfg.sweep_n)
    return [(ex, c) for ex in excerpts for c in conds
            if c.family in ("baseline", "auto") or c.k == cfg.k or ex.id in sweep]


def run_all(pipe, conds: list[Condition], excerpts: list[Excerpt], cfg: BenchConfig, progress: bool) -> list[dict]:
    """Every planned run, excerpt by excerpt; the target's cache is reset per excerpt (prefill counts once)."""
    from tqdm import tqdm

    todo, sweep = plan(conds, excerpts, cfg), sweep_subset(excerpts, cfg.sweep_n)
    records, base = [], None
    with tqdm(total=len(todo), desc="bench", unit="run", disable=not progress) as bar:
        for ex, cond in todo:
            if cond.family == "baseline":
                pipe.engine.runner.reset()
            rec = run_one(pipe, cond, ex, cfg.max_tokens)
            base = rec if cond.family == "baseline" else base
            compare(rec, base)
            rec["sweep"] = ex.id in sweep
            records.append(rec)
            bar.set_postfix_str(f"{ex.id} {cond.name}")
            bar.update()
    return records


# ---------------------------------------------------------------- statistics

def bootstrap_ci(values: list[float], stat=np.mean, seed: int = 0) -> tuple[float, float]:
    """95% percentile bootstrap interval of `stat`."""
    x = np.asarray(values, dtype=float)
    if len(x) < 2:
        return (float("nan"), float("nan"))
    rng = np.random.default_rng(seed)
    draws = [stat(x[rng.integers(0, len(x), len(x))]) for _ in range(BOOTSTRAP)]
    return float(np.percentile(draws, 2.5)), float(np.percentile(draws, 97.5))


def ols(x, y) -> tuple[float, float]:
    """(intercept, slope) of y on x."""
    slope, intercept = np.polyfit(np.asarray(x, float), np.asarray(y, float), 1)
    return float(intercept), float(slope)


def break_even(acc: list[float], tps: list[float], base_tps: list[float], seed: int = 0) -> dict:
    """OLS of tokens/s on acceptance; the acceptance where the fit meets the baseline's mean tokens/s.

    CI by resampling excerpts (acceptance, tokens/s and the excerpt's baseline together);
    resamples with a non-positive slope have no break-even and are counted, not hidden.
    """
    a, t, b = (np.asarray(v, float) for v in (acc, tps, base_tps))
    if len(a) < 3 or np.ptp(a) == 0:
        return {"n": len(a), "intercept": None, "slope": None, "break_even": None, "ci": (None, None), "no_slope": None}
    intercept, slope = ols(a, t)
    rng = np.random.default_rng(seed)
    draws, flat = [], 0
    for _ in range(BOOTSTRAP):
        i = rng.integers(0, len(a), len(a))
        if np.ptp(a[i]) == 0:
            flat += 1
            continue
        c, s = ols(a[i], t[i])
        if s <= 0:
            flat += 1
            continue
        draws.append((b[i].mean() - c) / s)
    point = (b.mean() - intercept) / slope if slope > 0 else None
    ci = (float(np.percentile(draws, 2.5)), float(np.percentile(draws, 97.5))) if draws else (None, None)
    return {"n": len(a), "intercept": intercept, "slope": slope, "break_even": point, "ci": ci,
            "no_slope": flat / BOOTSTRAP, "base_tps": float(b.mean())}


def main_grid(records: list[dict], k: int) -> list[dict]:
    return [r for r in records if r["family"] in ("baseline", "auto") or r["k"] == k]


def families(records: list[dict]) -> list[str]:
    seen: list[str] = []
    for r in records:
        if r["family"] not in seen:
            seen.append(r["family"])
    return seen


def of(records: list[dict], family: str, label: str | None = None) -> list[dict]:
    return [r for r in records if r["family"] == family and (label is None or r["label"] == label)]


def drafting(recs: list[dict]) -> list[dict]:
    """Runs that drafted anything: acceptance is undefined for the others (auto on prose, no lookup match)."""
    return [r for r in recs if r["stats"]["drafted"]]


def pooled_acceptance(recs: list[dict]) -> float:
    drafted = sum(r["stats"]["drafted"] for r in recs)
    return sum(r["stats"]["accepted"] for r in recs) / drafted if drafted else float("nan")


def summary_row(recs: list[dict]) -> dict:
    """One condition aggregated over its excerpts."""
    s = [r["speedup"] for r in recs]
    split = {p: sum(r["stats"]["time_split"][p] for r in recs) for p in ("draft", "translate", "verify", "other")}
    total = sum(split.values()) or 1.0
    return {
        "n": len(recs),
        "identical": sum(r["identical"] for r in recs) / len(recs),
        "acceptance": float(np.mean([r["stats"]["acceptance_rate"] for r in drafting(recs)] or [np.nan])),
        "acceptance_pooled": pooled_acceptance(recs),
        "accepted_per_cycle": float(np.mean([r["stats"]["accepted_per_cycle"] for r in recs])),
        "tps": float(np.mean([r["stats"]["tokens_per_second"] for r in recs])),
        "speedup_mean": float(np.mean(s)), "speedup_mean_ci": bootstrap_ci(s),
        "speedup_median": float(np.median(s)), "speedup_median_ci": bootstrap_ci(s, np.median),
        "time_split": {p: v / total for p, v in split.items()},
        "prefill_s": float(np.mean([r["stats"]["prefill_seconds"] for r in recs])),
        "drafter_prefill_s": float(np.mean([r["drafter_prefill_s"] for r in recs])),
    }


def bucket_table(recs: list[dict]) -> dict[str, dict[int, tuple[float, int]]]:
    """Mean speedup and count by 10-point acceptance bucket, per speculative condition."""
    out: dict[str, dict[int, tuple[float, int]]] = {}
    for fam in families(recs):
        if fam == "baseline":
            continue
        groups: dict[int, list[float]] = {}
        for r in drafting(of(recs, fam)):
            groups.setdefault(min(int(r["stats"]["acceptance_rate"] * 10), 9), []).append(r["speedup"])
        out[fam] = {b: (float(np.mean(v)), len(v)) for b, v in sorted(groups.items())}
    return out


def measured_costs(records: list[dict]) -> dict:
    """t(n)/t(1) from the verify passes of every run, drafter seconds per step over t(1), and β."""
    sums: dict[int, list[float]] = {}
    for r in records:
        for n, (s, c) in r["verify_by_n"].items():
            acc = sums.setdefault(int(n), [0.0, 0])
            acc[0] += s
            acc[1] += c
    step = sums[1][0] / sums[1][1] if sums.get(1, [0, 0])[1] else float("nan")
    ratio = {n: (s / c) / step for n, (s, c) in sorted(sums.items()) if c}
    counts = {n: c for n, (s, c) in sorted(sums.items())}
    ns = [n for n in ratio if n > 1]
    beta = float(np.sum([(ratio[n] - 1) * (n - 1) * counts[n] for n in ns]) /
                 np.sum([(n - 1) ** 2 * counts[n] for n in ns])) if ns else float("nan")
    drafter = {}
    for fam in families(records):
        recs = of(records, fam)
        steps = sum(r["draft_steps"] for r in recs)
        if fam.startswith("model/") and steps:
            drafter[fam] = sum(r["draft_s"] for r in recs) / steps / step
    return {"step_s": step, "verify_ratio": ratio, "cycles": counts, "beta": beta, "drafter_ratio": drafter}


def cost_model_speedup(recs: list[dict], r: float, beta: float) -> float:
    """Speedup under the linear cost model, in target steps, summed over a condition's cycles.

    C cycles, D drafted target tokens, A accepted, K drafter steps: verifying costs C + β·D,
    drafting r·K, and the cycles commit C + A tokens. S = (C + A) / (C + β·D + r·K); when every
    drafter step yields one target token (K = D) it pays exactly when A/D exceeds r + β.
    """
    c, a, d = (sum(x["stats"][f] for x in recs) for f in ("cycles", "accepted", "drafted"))
    k = sum(x["draft_steps"] for x in recs)
    return (c + a) / (c + beta * d + r * k) if c else float("nan")


def disparity(recs: list[dict], fam: str) -> dict:
    """Content-type spread of mean speedup, and unfairness U = mean over types of (α_best − α_type)².

    U is our acceptance-based stand-in for "mean squared excess divergence over the best type":
    divergence = 1 − acceptance, so the excess over the best type is α_best − α_type.
    """
    by_type = {lab: of(recs, fam, lab) for lab in LABELS if of(recs, fam, lab)}
    speed = {lab: float(np.mean([r["speedup"] for r in v])) for lab, v in by_type.items()}
    acc = {lab: a for lab, v in by_type.items() if not np.isnan(a := pooled_acceptance(v))}
    best = max(acc.values(), default=0.0)
    return {"speedup": speed, "acceptance": acc,
            "spread": max(speed.values()) - min(speed.values()) if speed else float("nan"),
            "fastest": max(speed, key=speed.get) if speed else "", "slowest": min(speed, key=speed.get) if speed else "",
            "unfairness": float(np.mean([(best - a) ** 2 for a in acc.values()])) if acc else float("nan")}


def analyse(records: list[dict], k: int) -> dict:
    """Everything the report shows, from the raw records alone (so a saved JSON can be re-reported)."""
    grid = main_grid(records, k)
    base_tps = {r["excerpt"]: r["stats"]["tokens_per_second"] for r in of(records, "baseline")}
    costs = measured_costs(records)
    spec = [f for f in families(grid) if f != "baseline"]
    return {
        "summary": {f: summary_row(of(grid, f)) for f in families(grid)},
        "by_type": {f: {lab: summary_row(of(grid, f, lab)) for lab in LABELS if of(grid, f, lab)} for f in families(grid)},
        "mismatches": [{k: r[k] for k in ("excerpt", "condition", "mismatch_at")} for r in records if not r["identical"]],
        "break_even": {f: break_even([r["stats"]["acceptance_rate"] for r in drafting(of(grid, f))],
                                     [r["stats"]["tokens_per_second"] for r in drafting(of(grid, f))],
                                     [base_tps[r["excerpt"]] for r in drafting(of(grid, f))]) for f in spec},
        "buckets": bucket_table(grid),
        "costs": costs,
        "disparity": {f: disparity(grid, f) for f in spec},
        "sweep": sweep_table(records),
        "prediction": prediction(grid, costs),
    }


def sweep_table(records: list[dict]) -> dict[str, dict[int, dict]]:
    """Per fixed condition and k, on the sweep excerpts only (those that ran every k)."""
    out: dict[str, dict[int, dict]] = {}
    for fam in families(records):
        if fam in ("baseline", "auto"):
            continue
        rows = [r for r in of(records, fam) if r["sweep"]]
        out[fam] = {k: {"n": len(v), "acceptance": pooled_acceptance(v),
                        "speedup_median": float(np.median([r["speedup"] for r in v])),
                        "speedup_mean": float(np.mean([r["speedup"] for r in v]))}
                    for k in sorted({r["k"] for r in rows}) if (v := [r for r in rows if r["k"] == k])}
    return out


def prediction(grid: list[dict], costs: dict) -> dict:
    """Bielik-11B + Qwen2.5-1.5B on an M2 Pro under the paper's cost model, fed our acceptance.

    r is the paper's drafter cost for model drafters and 0 for lookup (no model runs); the same
    formula with our own measured r and β is given next to our measured speedup as a check.
    """
    out = {}
    for fam in families(grid):
        if fam in ("baseline", "auto"):
            continue
        recs = of(grid, fam)
        r_paper = PAPER_R if fam.startswith("model/") else 0.0
        r_here = costs["drafter_ratio"].get(fam, 0.0)
        out[fam] = {"acceptance": pooled_acceptance(recs),
                    "bielik": cost_model_speedup(recs, r_paper, PAPER_BETA),
                    "bielik_by_type": {lab: cost_model_speedup(of(recs, fam, lab), r_paper, PAPER_BETA)
                                       for lab in LABELS if of(recs, fam, lab)},
                    "break_even": r_paper + PAPER_BETA,
                    "model_here": cost_model_speedup(recs, r_here, costs["beta"]),
                    "measured_here": float(np.mean([r["speedup"] for r in recs]))}
    return out


# ---------------------------------------------------------------- report

def fmt(x, spec: str = ".2f") -> str:
    return "–" if x is None or (isinstance(x, float) and np.isnan(x)) else format(x, spec)


def ci(pair, spec: str = ".2f") -> str:
    return f"[{fmt(pair[0], spec)}, {fmt(pair[1], spec)}]"


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows])


def headline(a: dict) -> str:
    rows = [[f, str(s["n"]), f"{s['identical']:.0%}", fmt(s["acceptance"], ".1%"), fmt(s["accepted_per_cycle"]),
             fmt(s["tps"], ".1f"), f"{fmt(s['speedup_mean'])} {ci(s['speedup_mean_ci'])}",
             f"{fmt(s['speedup_median'])} {ci(s['speedup_median_ci'])}", fmt(s["prefill_s"]),
             fmt(s["drafter_prefill_s"])]
            for f, s in a["summary"].items()]
    return table(["condition", "n", "identical", "acceptance", "accepted/cycle", "decode tok/s",
                  "speedup mean [95% CI]", "speedup median [95% CI]", "prefill s", "drafter prefill s"], rows)


def split_table(a: dict) -> str:
    rows = [[f] + [f"{s['time_split'][p]:.1%}" for p in ("draft", "translate", "verify", "other")]
            for f, s in a["summary"].items()]
    return table(["condition", "draft", "translate", "verify", "other"], rows)


def break_even_table(a: dict) -> str:
    rows = [[f, str(b["n"]), fmt(b["intercept"]), fmt(b["slope"]), fmt(b["break_even"], ".1%"),
             ci(b["ci"], ".1%"), fmt(b["no_slope"], ".0%")] for f, b in a["break_even"].items()]
    return table(["condition", "n", "intercept (tok/s)", "slope (tok/s per 1.0 acceptance)", "break-even acceptance",
                  "95% CI", "resamples with slope ≤ 0"], rows)


def bucket_md(a: dict) -> str:
    fams = list(a["buckets"])
    rows = []
    for b in range(10):
        cells = [f"{a['buckets'][f][b][0]:.2f} ({a['buckets'][f][b][1]})" if b in a["buckets"][f] else "" for f in fams]
        if any(cells):
            rows.append([f"{b * 10}–{b * 10 + 10}%"] + cells)
    return table(["acceptance"] + fams, rows)


def costs_md(a: dict, probe: str) -> str:
    c = a["costs"]
    rows = [[str(n), f"{r:.2f}", str(c["cycles"][n])] for n, r in c["verify_ratio"].items()]
    drafter = "; ".join(f"{f}: {r:.2f}" for f, r in c["drafter_ratio"].items()) or "–"
    return (table(["tokens verified n", "t(n)/t(1)", "cycles"], rows) +
            f"\n\nOne plain step t(1) = {c['step_s'] * 1000:.0f} ms; fitted β (t(n)/t(1) ≈ 1 + β(n−1)) = "
            f"{fmt(c['beta'], '.3f')}. Drafter cost per drafted token over t(1) (r): {drafter}.\n\n"
            f"Start-up probe (`pipe.costs`, idle cache, best of 2): {probe}")


def disparity_md(a: dict) -> str:
    rows = [[f] + [fmt(d["speedup"].get(lab)) for lab in LABELS] + [fmt(d["acceptance"].get(lab), ".1%") for lab in LABELS]
            + [f"{fmt(d['spread'])} ({d['fastest']} − {d['slowest']})", fmt(d["unfairness"], ".4f")]
            for f, d in a["disparity"].items()]
    return table(["condition"] + [f"speedup {lab}" for lab in LABELS] + [f"acceptance {lab}" for lab in LABELS]
                 + ["spread", "unfairness U"], rows)


def sweep_md(a: dict) -> str:
    ks = sorted({k for v in a["sweep"].values() for k in v})
    rows = [[f] + [f"{v[k]['speedup_median']:.2f} / {fmt(v[k]['acceptance'], '.0%')}" if k in v else "" for k in ks]
            for f, v in a["sweep"].items()]
    n = max((x["n"] for v in a["sweep"].values() for x in v.values()), default=0)
    return table(["condition"] + [f"k={k}" for k in ks], rows) + f"\n\nCells: median speedup / pooled acceptance over {n} excerpts."


def prediction_md(a: dict) -> str:
    rows = [[f, fmt(p["acceptance"], ".1%"), fmt(p["break_even"], ".1%"), fmt(p["bielik"])]
            + [fmt(p["bielik_by_type"].get(lab)) for lab in LABELS] + [fmt(p["model_here"]), fmt(p["measured_here"])]
            for f, p in a["prediction"].items()]
    return table(["condition", "our acceptance", "model break-even", "PREDICTED Bielik speedup"]
                 + [f"predicted {lab}" for lab in LABELS] + ["same model, our r and β", "measured here"], rows)


def mismatch_md(a: dict, n_runs: int) -> str:
    if not a["mismatches"]:
        return f"All {n_runs} runs produced exactly the baseline's tokens (identical output: 100%)."
    rows = [[m["excerpt"], m["condition"], str(m["mismatch_at"])] for m in a["mismatches"]]
    return f"**{len(rows)} of {n_runs} runs differ from the baseline:**\n\n" + table(["excerpt", "condition", "first differing token"], rows)


def default_grid() -> str:
    d = BenchConfig()
    return (f"{d.per_class} excerpts per type, {d.max_tokens} tokens, k={d.k}, k sweep on {d.sweep_n} "
            f"(sized for about 45 minutes on an idle 2-core machine)")


def report(meta: dict, a: dict, n_runs: int) -> str:
    missing = "".join(f"\n- `{f}`: not available: {why}" for f, why in meta["unavailable"].items())
    return f"""# Benchmarks

Generated by `{meta['command']}` on {meta['date']}: {meta['machine']}. Wall time {meta['wall_s'] / 60:.1f} min,
{n_runs} runs. Load average (1 min) at start {meta['load'][0]:.2f}, at end {meta['load'][1]:.2f}
on {meta['cpus']} CPUs{meta['note']}.

Target `{meta['target']}`, drafter model `{meta['drafter_model']}`; greedy decoding; {meta['max_tokens']}
generated tokens per run; fixed conditions at k={meta['k']} on all {meta['n_excerpts']} excerpts
({meta['per_type']}); k sweep {meta['sweep_ks']} on {meta['sweep_n']} of them (round-robin over the types);
`auto` with k ≤ {meta['auto_k']}. All conditions of an excerpt run back to back, baseline first; the
target's cache is reset per excerpt, so its prefill is measured once (baseline), and drafters prefill
the prompt untimed before each run (column "drafter prefill s"; the translation modes share one drafter
cache, so the first model condition of an excerpt pays it, the others resync). Acceptance = accepted /
drafted target tokens, averaged over runs that drafted. Decode tokens/s excludes prefill; speedup
is a run's decode tokens/s over the baseline's on the same excerpt. CIs: {BOOTSTRAP} bootstrap resamples
of excerpts. `bielik-lsp bench` with no options runs {default_grid()}.
Corpus: `polish/data/bench.jsonl` (provenance in `polish/data/SOURCES.md`). Raw per-run
records: [`bench/raw.json`](bench/raw.json).{missing and chr(10) + chr(10) + 'Conditions not run:' + missing}

## Headline (main grid, k={meta['k']})

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

{costs_md(a, meta['probe'])}

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
    return [plot_scatter(plt, grid, a, out / "speedup_vs_acceptance.png"),
            plot_types(plt, a, out / "speedup_by_type.png"),
            plot_sweep(plt, a, out / "k_sweep.png")]


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
            ax.plot(xs, (fit["intercept"] + fit["slope"] * xs) / fit["base_tps"], color="black", lw=0.8, label="OLS fit")
        be = fit["break_even"]
        if be is not None and 0 <= be <= 1:
            ax.axvline(be, color="red", ls="--", lw=1, label=f"break-even {be:.0%}")
        ax.set_title(fam, fontsize=9)
        ax.set_xlim(-0.02, 1.02)
        ax.set_xlabel("acceptance")
        ax.legend(fontsize=6)
    for ax in axes.flat[len(fams):]:
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
                lo.append(s["speedup_mean"] - np.nan_to_num(s["speedup_mean_ci"][0], nan=s["speedup_mean"]))
                hi.append(np.nan_to_num(s["speedup_mean_ci"][1], nan=s["speedup_mean"]) - s["speedup_mean"])
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


# ---------------------------------------------------------------- entry point

def machine() -> str:
    import mlx.core as mx

    from .blas import loaded_blas

    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor()) if Path("/proc/cpuinfo").exists() else platform.processor()
    return f"{platform.system()} {platform.machine()}, {cpu}, {os.cpu_count()} CPUs, MLX {mx.__version__} ({mx.default_device()}), BLAS {loaded_blas()}"


def write_outputs(data: dict, out: Path) -> Path:
    """Raw JSON, plots and the Markdown report from one saved run (`data` = meta + records)."""
    meta, records = data["meta"], data["records"]
    a = analyse(records, meta["k"])
    (out / "bench").mkdir(parents=True, exist_ok=True)
    (out / "bench" / "raw.json").write_text(json.dumps(data, ensure_ascii=False) + "\n", encoding="utf-8")
    plots(records, a, meta["k"], out / "bench")
    path = out / "benchmarks.md"
    path.write_text(report(meta, a, len(records)), encoding="utf-8")
    return path


def run_bench(settings: Settings, cfg: BenchConfig, *, progress: bool = True, note: str = "") -> Path:
    """Load the models once, run every condition on every excerpt, write the report; its path."""
    from .models import ModelLoadError, load_model
    from .pipeline import Pipeline

    start, load0 = time.perf_counter(), os.getloadavg()[0]
    pipe = Pipeline.load(replace(settings, drafter="auto", translation="anchored"), progress=progress)
    drafter_model, why = pipe.drafter_model, ""
    if drafter_model is None:
        try:
            drafter_model = load_model(settings.drafter_model, dtype=settings.dtype, progress=progress)
        except ModelLoadError as e:
            why = str(e)
    conds, missing = build_conditions(pipe, drafter_model, tuple(sorted({*cfg.sweep_ks, cfg.k})))
    missing = {f: why or m for f, m in missing.items()}
    excerpts = select(load_corpus(), cfg.per_class)
    probe = pipe.costs.describe()
    records = run_all(pipe, conds, excerpts, cfg, progress)
    counts = {lab: sum(e.label == lab for e in excerpts) for lab in LABELS}
    meta = {"command": cfg.command, "date": datetime.date.today().isoformat(), "machine": machine(),
            "cpus": os.cpu_count(), "load": (load0, os.getloadavg()[0]), "wall_s": time.perf_counter() - start,
            "note": note and f"; {note}", "target": settings.target, "drafter_model": settings.drafter_model,
            "max_tokens": cfg.max_tokens, "k": cfg.k, "sweep_ks": list(cfg.sweep_ks), "sweep_n": cfg.sweep_n,
            "auto_k": pipe.settings.k, "n_excerpts": len(excerpts),
            "per_type": ", ".join(f"{n} {lab}" for lab, n in counts.items()),
            "unavailable": missing, "probe": probe}
    return write_outputs({"meta": meta, "records": records}, cfg.out)


def rereport(path: Path, out: Path) -> Path:
    """Rebuild the report and plots from a saved raw.json (no models needed)."""
    return write_outputs(json.loads(Path(path).read_text(encoding="utf-8")), out)
