"""Statistics of a bench run: bootstrap CIs, OLS break-even, acceptance buckets, measured costs,
content-type disparity and the cost-model prediction for the Bielik deployment.

Plain functions over the per-run records that `bench.py` writes; no models here, so a saved
raw.json can be analysed again.
"""

from __future__ import annotations

import numpy as np

LABELS = ("structured", "prose", "mixed")
PAPER_R, PAPER_BETA = 0.071, 0.19  # the paper's fit: Bielik-11B 8-bit + Qwen2.5-1.5B 4-bit, M2 Pro
BOOTSTRAP = 2000


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
        return {
            "n": len(a),
            "intercept": None,
            "slope": None,
            "break_even": None,
            "ci": (None, None),
            "no_slope": None,
        }
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
    ci = (
        (float(np.percentile(draws, 2.5)), float(np.percentile(draws, 97.5)))
        if draws
        else (None, None)
    )
    return {
        "n": len(a),
        "intercept": intercept,
        "slope": slope,
        "break_even": point,
        "ci": ci,
        "no_slope": flat / BOOTSTRAP,
        "base_tps": float(b.mean()),
    }


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
    split = {
        p: sum(r["stats"]["time_split"][p] for r in recs)
        for p in ("draft", "translate", "verify", "other")
    }
    total = sum(split.values()) or 1.0
    return {
        "n": len(recs),
        "identical": sum(r["identical"] for r in recs) / len(recs),
        "acceptance": float(
            np.mean([r["stats"]["acceptance_rate"] for r in drafting(recs)] or [np.nan])
        ),
        "acceptance_pooled": pooled_acceptance(recs),
        "accepted_per_cycle": float(np.mean([r["stats"]["accepted_per_cycle"] for r in recs])),
        "tps": float(np.mean([r["stats"]["tokens_per_second"] for r in recs])),
        "speedup_mean": float(np.mean(s)),
        "speedup_mean_ci": bootstrap_ci(s),
        "speedup_median": float(np.median(s)),
        "speedup_median_ci": bootstrap_ci(s, np.median),
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
            groups.setdefault(min(int(r["stats"]["acceptance_rate"] * 10), 9), []).append(
                r["speedup"]
            )
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
    beta = (
        float(
            np.sum([(ratio[n] - 1) * (n - 1) * counts[n] for n in ns])
            / np.sum([(n - 1) ** 2 * counts[n] for n in ns])
        )
        if ns
        else float("nan")
    )
    drafter = {}
    for fam in families(records):
        recs = of(records, fam)
        steps = sum(r["draft_steps"] for r in recs)
        if fam.startswith("model/") and steps:
            drafter[fam] = sum(r["draft_s"] for r in recs) / steps / step
    return {
        "step_s": step,
        "verify_ratio": ratio,
        "cycles": counts,
        "beta": beta,
        "drafter_ratio": drafter,
    }


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
    return {
        "speedup": speed,
        "acceptance": acc,
        "spread": max(speed.values()) - min(speed.values()) if speed else float("nan"),
        "fastest": max(speed, key=speed.get) if speed else "",
        "slowest": min(speed, key=speed.get) if speed else "",
        "unfairness": float(np.mean([(best - a) ** 2 for a in acc.values()]))
        if acc
        else float("nan"),
    }


def analyse(records: list[dict], k: int) -> dict:
    """Everything the report shows, from the raw records alone (so a saved JSON can be re-reported)."""
    grid = main_grid(records, k)
    base_tps = {r["excerpt"]: r["stats"]["tokens_per_second"] for r in of(records, "baseline")}
    costs = measured_costs(records)
    spec = [f for f in families(grid) if f != "baseline"]
    return {
        "summary": {f: summary_row(of(grid, f)) for f in families(grid)},
        "by_type": {
            f: {lab: summary_row(of(grid, f, lab)) for lab in LABELS if of(grid, f, lab)}
            for f in families(grid)
        },
        "mismatches": [
            {k: r[k] for k in ("excerpt", "condition", "mismatch_at")}
            for r in records
            if not r["identical"]
        ],
        "break_even": {
            f: break_even(
                [r["stats"]["acceptance_rate"] for r in drafting(of(grid, f))],
                [r["stats"]["tokens_per_second"] for r in drafting(of(grid, f))],
                [base_tps[r["excerpt"]] for r in drafting(of(grid, f))],
            )
            for f in spec
        },
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
        out[fam] = {
            k: {
                "n": len(v),
                "acceptance": pooled_acceptance(v),
                "speedup_median": float(np.median([r["speedup"] for r in v])),
                "speedup_mean": float(np.mean([r["speedup"] for r in v])),
            }
            for k in sorted({r["k"] for r in rows})
            if (v := [r for r in rows if r["k"] == k])
        }
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
        out[fam] = {
            "acceptance": pooled_acceptance(recs),
            "bielik": cost_model_speedup(recs, r_paper, PAPER_BETA),
            "bielik_by_type": {
                lab: cost_model_speedup(of(recs, fam, lab), r_paper, PAPER_BETA)
                for lab in LABELS
                if of(recs, fam, lab)
            },
            "break_even": r_paper + PAPER_BETA,
            "model_here": cost_model_speedup(recs, r_here, costs["beta"]),
            "measured_here": float(np.mean([r["speedup"] for r in recs])),
        }
    return out
