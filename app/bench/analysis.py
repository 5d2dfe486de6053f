"""Statistics of a bench run, per backend: CIs, break-even, costs, the paper's cost model, peers.

Bootstrap CIs, OLS break-even, acceptance buckets, measured costs, content-type disparity, the
yield per mode and k, ratios to the peers, and the cost-model prediction for the Bielik
deployment. Plain functions over the per-run records that `runs.py` writes; no models here, so
a saved raw.json can be analysed again.
"""

from __future__ import annotations

import numpy as np

from app.bench.corpus import LABELS

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
    """OLS of tokens/s on acceptance; the acceptance where the fit meets the baseline's tokens/s.

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
    """Runs that drafted anything: acceptance is undefined for the others (prose, no match)."""
    return [r for r in recs if r["stats"]["drafted"]]


def pooled_acceptance(recs: list[dict]) -> float:
    drafted = sum(r["stats"]["drafted"] for r in recs)
    return sum(r["stats"]["accepted"] for r in recs) / drafted if drafted else float("nan")


def chars_rate(recs: list[dict]) -> float:
    """Mean decode characters/s (Unicode characters of committed text); nan for older runs."""
    return float(np.mean([r["stats"].get("chars_per_second", np.nan) for r in recs]))


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
        "from_drafts": yield_row(recs)["from_drafts"],
        "per_pass": yield_row(recs)["per_pass"],
        "tps": float(np.mean([r["stats"]["tokens_per_second"] for r in recs])),
        "cps": chars_rate(recs),
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
    """t(n)/t(1) from the verify passes of every run, the paper's β fitted to it, and r per drafter.

    β: weighted least squares of t(n)/t(1) − 1 on (n−1)², the paper's verification term βk² for
    k = n−1 drafted tokens, each n weighted by its number of cycles. r: a model drafter's seconds
    per drafter pass over t(1), counting k+1 passes for a draft of k (the paper's count).
    """
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
            np.sum([(ratio[n] - 1) * (n - 1) ** 2 * counts[n] for n in ns])
            / np.sum([(n - 1) ** 4 * counts[n] for n in ns])
        )
        if ns
        else float("nan")
    )
    drafter = {}
    for fam in families(records):
        recs = of(records, fam)
        passes = sum(r["drafter_passes"] for r in recs)
        if passes:
            drafter[fam] = sum(r["model_draft_s"] for r in recs) / passes / step
    return {
        "step_s": step,
        "verify_ratio": ratio,
        "cycles": counts,
        "beta": beta,
        "drafter_ratio": drafter,
    }


def paper_speedup(alpha: float, k: int, r: float, beta: float) -> float:
    """The paper's speedup for cycles that all draft k tokens: (1 + αk) / ((k+1)·r + 1 + β·k²).

    α is the share of drafted tokens the target accepts (accepted / drafted), so that αk is the
    expected number of accepted tokens per cycle, as the numerator requires. It is not the
    per-token acceptance probability p of the i.i.d. model, under which a cycle accepts
    p(1 − p^k)/(1 − p) ≤ pk tokens: fed p, this formula would overstate the speedup.
    """
    return (1 + alpha * k) / ((k + 1) * r + 1 + beta * k * k)


def modelled_speedup(recs: list[dict], r: float, beta: float) -> float:
    """The paper's cost model summed over a condition's measured cycles, in target steps.

    A cycle that drafts d target tokens with a drafter asked for k costs 1 + β·d² to verify
    and r·(k+1) to draft (r = 0 for lookup: no model runs), and commits its tokens.
    S = Σ committed / Σ cost. When every cycle drafts k, with α = accepted / drafted, this is
    exactly `paper_speedup(α, k, r, β)`; lookup cycles without a match, auto's plain cycles and
    a translation that delivers fewer than k tokens are priced as they happened.
    """
    committed = sum(x["stats"]["decode_tokens"] for x in recs)
    verify = sum(
        c * (1 + beta * (int(n) - 1) ** 2) for x in recs for n, (_, c) in x["verify_by_n"].items()
    )
    cost = verify + r * sum(x["drafter_passes"] for x in recs)
    return committed / cost if cost else float("nan")


def disparity(recs: list[dict], fam: str) -> dict:
    """Content-type spread of mean speedup, and unfairness U = mean over types of (α_best − α)².

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


def analyse(records: list[dict], peers: list[dict], k: int) -> dict:
    """Everything the report shows for one backend, from the raw records alone.

    So a saved raw.json can be reported again without models.
    """
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
        "n_runs": len(records),
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
        "mode_k": mode_k_table(records),
        "prediction": prediction(grid, costs),
        "peers": peer_table(grid, peers),
    }


def prediction(grid: list[dict], costs: dict) -> dict:
    """Bielik-11B + Qwen2.5-1.5B on an M2 Pro under the paper's cost model, fed our cycles.

    The paper's r and β for every condition (lookup cycles run no model, so r never applies to
    them); the same model with this machine's fitted r and β sits next to our measured speedup
    as a check of the model itself.
    """
    out = {}
    for fam in families(grid):
        if fam == "baseline":
            continue
        recs = of(grid, fam)
        out[fam] = {
            "acceptance": pooled_acceptance(recs),
            "bielik": modelled_speedup(recs, PAPER_R, PAPER_BETA),
            "bielik_by_type": {
                lab: modelled_speedup(of(recs, fam, lab), PAPER_R, PAPER_BETA)
                for lab in LABELS
                if of(recs, fam, lab)
            },
            "model_here": modelled_speedup(
                recs, costs["drafter_ratio"].get(fam, 0.0), costs["beta"]
            ),
            "measured_here": float(np.mean([r["speedup"] for r in recs])),
        }
    return out


def yield_row(recs: list[dict]) -> dict:
    """What transfers to another machine: where tokens came from, how many each target pass gave."""
    st = [r["stats"] for r in recs]
    checks = [s["drafter_integrity"] for s in st if s.get("drafter_integrity")]
    checked = sum(c["checked"] for c in checks)
    return {
        "n": len(recs),
        "identical": sum(r["identical"] for r in recs) / len(recs),
        "from_drafts": sum(s["accepted"] for s in st)
        / max(sum(s["generated_tokens"] for s in st), 1),
        "per_pass": sum(s["decode_tokens"] for s in st) / max(sum(s["cycles"] for s in st), 1),
        "acceptance": pooled_acceptance(recs),
        "integrity": sum(c["exact"] for c in checks) / checked if checked else None,
        "speedup_median": float(np.median([r["speedup"] for r in recs])),
    }


def mode_k_table(records: list[dict]) -> dict[str, dict[int, dict]]:
    """Per speculative condition and k, on the excerpts that ran every k (comparable across k).

    Adds the Bielik prediction twice: summed over the measured cycles, and the paper's closed
    form at (α, k), which assumes every cycle drafts k tokens.
    """
    out: dict[str, dict[int, dict]] = {}
    for fam in families(records):
        if fam in ("baseline", "auto"):
            continue
        rows = [r for r in of(records, fam) if r["sweep"]]
        out[fam] = {}
        for k in sorted({r["k"] for r in rows}):
            v = [r for r in rows if r["k"] == k]
            row = yield_row(v)
            r_paper = PAPER_R if any(r["drafter_passes"] for r in v) else 0.0
            row["bielik"] = modelled_speedup(v, PAPER_R, PAPER_BETA)
            row["bielik_closed"] = (
                paper_speedup(row["acceptance"], k, r_paper, PAPER_BETA)
                if not np.isnan(row["acceptance"])
                else float("nan")
            )
            out[fam][k] = row
    return out


def peer_table(grid: list[dict], peers: list[dict]) -> dict[str, dict]:
    """Decode tokens/s of our plain, auto and lookup runs and of each peer, as ratios to our plain.

    Ratios are taken per excerpt against our plain run on the same excerpt in the same run,
    then averaged (with a bootstrap CI), overall and per content type.
    """
    base = {r["excerpt"]: r for r in of(grid, "baseline")}
    lookup = of(grid, "lookup")
    rows = [("ours: plain", of(grid, "baseline")), ("ours: auto", of(grid, "auto"))]
    rows += [(f"ours: {lookup[0]['condition']}", lookup)] if lookup else []
    names = list(dict.fromkeys(p["peer"] for p in peers))
    rows += [(f"peer: {n}", [p for p in peers if p["peer"] == n]) for n in names]
    out = {}
    for name, recs in rows:
        recs = [r for r in recs if r["excerpt"] in base]
        if not recs:
            continue
        tps = [r["stats"]["tokens_per_second"] for r in recs]
        ratio = [
            t / base[r["excerpt"]]["stats"]["tokens_per_second"]
            for t, r in zip(tps, recs, strict=True)
        ]
        cps = [r["stats"].get("chars_per_second", np.nan) for r in recs]
        base_cps = [base[r["excerpt"]]["stats"].get("chars_per_second", np.nan) for r in recs]
        out[name] = {
            "n": len(recs),
            "tps": float(np.mean(tps)),
            "cps": chars_rate(recs),
            "ratio_chars": float(np.mean(np.divide(cps, base_cps))),
            "ratio": float(np.mean(ratio)),
            "ratio_ci": bootstrap_ci(ratio),
            "by_type": {
                lab: float(
                    np.mean([x for x, r in zip(ratio, recs, strict=True) if r["label"] == lab])
                )
                for lab in LABELS
                if any(r["label"] == lab for r in recs)
            },
            "identical": sum(r["ids"] == base[r["excerpt"]]["ids"] for r in recs) / len(recs),
        }
    return out
