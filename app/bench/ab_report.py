"""What `bench ab` found: ratios with their intervals, each side's speculation, report and plot.

Plain functions over the raw runs that ab.py collects (by side, excerpt, policy and round), so
the stopping rule during a run and the report after it compute the same figures. Ratios are
medians over excerpts of ratios of medians over rounds, with a 90% bootstrap interval
(spread.py):

- between the sides, per measure: this side's speed over REF's (for the first suggestion:
  REF's time over this side's), so above 1 is better everywhere;
- within each side: `auto` and fixed `lookup` speed over the same side's plain decoding, so a
  speculation that gains nothing shows whatever REF does.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from pathlib import Path

import numpy as np

from app.bench import machine, spread

LABELS = ("structured", "prose")
POLICIES = ("plain", "auto", "lookup")  # ab.POLICIES
LSP = "first suggestion"  # ab.LSP
MEASURES = ("prefill", *POLICIES, LSP)  # ab.MEASURES
GAINS = ("auto/plain", "lookup/plain")  # ab.GAINS


# ---------------------------------------------------------------- samples and ratios


def _grid(rows: list[list[float | None]]) -> np.ndarray:
    """Excerpts by rounds, NaN where a run gave no number (or a round is missing)."""
    width = max((len(r) for r in rows), default=0)
    return np.array(
        [[np.nan if v is None else v for v in r] + [np.nan] * (width - len(r)) for r in rows],
        dtype=float,
    ).reshape(len(rows), width)


def samples(raw: dict, side: str, ids: list[str], name: str, key: str = "tok_s") -> np.ndarray:
    """One side's numbers for measure `name`, excerpts by rounds.

    prefill: the median of the round's runs (every policy starts from an empty cache); first
    suggestion: ms.
    """
    if name == LSP:
        return _grid([[t["ms"] for t in raw["lsp"][side][i]] for i in ids])
    runs = raw["runs"][side]
    if name != "prefill":
        return _grid([[r[key] for r in runs[i][name]] for i in ids])
    rows = []
    for i in ids:
        rounds = zip(*(runs[i][p] for p in POLICIES if runs[i][p]), strict=False)
        rows.append([_median(r[f"prefill_{key}"] for r in runs_) for runs_ in rounds])
    return _grid(rows)


def _median(values) -> float | None:
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def _has(raw: dict, side: str, name: str) -> bool:
    """Whether `side` measured `name` (an old revision may have no `lookup`)."""
    policy = name.split("/")[0]
    return policy not in POLICIES or not raw.get("missing", {}).get(side, {}).get(policy)


def between(raw: dict, ids: list[str], name: str, seed: int) -> dict | None:
    """This side over REF for `name`, with its interval and per-excerpt ratios."""
    if not (_has(raw, "this", name) and _has(raw, "ref", name)):
        return None
    this, ref = samples(raw, "this", ids, name), samples(raw, "ref", ids, name)
    top, bottom = (ref, this) if name == LSP else (this, ref)  # a time: ref's over this one's
    return _cell(top, bottom, seed)


def gain(raw: dict, side: str, ids: list[str], name: str, seed: int) -> dict | None:
    """`side`'s speculative speed over its plain decoding (`name`: auto/plain, lookup/plain)."""
    if not _has(raw, side, name):
        return None
    top, bottom = name.split("/")
    return _cell(samples(raw, side, ids, top), samples(raw, side, ids, bottom), seed)


def _cell(top: np.ndarray, bottom: np.ndarray, seed: int) -> dict | None:
    found = spread.interval(top, bottom, seed) if top.size else None
    if found is None:
        return None
    per_excerpt = [
        spread.ratio(top[i : i + 1], bottom[i : i + 1]) for i in range(len(top))
    ]  # NaN where an excerpt has none
    return {
        "ratio": found.ratio,
        "low": found.low,
        "high": found.high,
        "half": found.half,
        "excerpts": found.excerpts,
        "rounds": found.rounds,
        "ratios": [None if np.isnan(r) else r for r in per_excerpt],
    }


def halves(excerpts, asked: tuple[str, ...], seed: int, lsp: bool) -> Callable[[dict], list]:
    """For the stopping rule: the asked intervals' relative half-widths (None: no interval yet).

    `lsp`: the first-suggestion stage (the argument is then the times), else the engine
    stage (the runs). A measure a side cannot run (missing) is not waited for.
    """
    labels = {label: [e.id for e in excerpts if e.label == label] for label in LABELS}

    def measured(found: dict) -> list[float | None]:
        raw = {"lsp": found} if lsp else {"runs": found, "missing": _missing(found)}
        sides = list(found)
        out = []
        for ids in (ids for ids in labels.values() if ids):
            for name in asked:
                if (name == LSP) != lsp:
                    continue
                if name in GAINS:
                    cells = [gain(raw, s, ids, name, seed) for s in sides if _has(raw, s, name)]
                elif _has(raw, "this", name) and _has(raw, "ref", name):
                    cells = [between(raw, ids, name, seed)]
                else:
                    cells = []
                out += [c["half"] if c and c["rounds"] >= 2 else None for c in cells]
        return out

    return measured


def _missing(runs: dict) -> dict:
    """Policies a side has no run of (it cannot make them) while the rounds go on."""
    return {
        side: {p: "none yet" for p in POLICIES if not any(r[p] for r in by_id.values())}
        for side, by_id in runs.items()
    }


# ---------------------------------------------------------------- the summary


def summarize(raw: dict, excerpts, cfg) -> dict:
    """Per content type: each ratio with its interval, whether it was asked and settled."""
    asked = cfg.until or (MEASURES if "ref" in raw["runs"] else GAINS)
    labels = {}
    for label in LABELS:
        ids = [e.id for e in excerpts if e.label == label]
        if ids:
            labels[label] = _row(raw, ids, asked, cfg)
    return {"stages": raw["stages"], "missing": raw["missing"], "labels": labels}


def _row(raw: dict, ids: list[str], asked, cfg) -> dict:
    runs = raw["runs"]
    row: dict = {"excerpts": len(ids), "gains": {s: _gains(raw, s, ids, asked, cfg) for s in runs}}
    if "ref" not in runs:
        return row
    row["between"] = {}
    for name in MEASURES:
        cell = between(raw, ids, name, cfg.seed)
        if cell is not None:
            cell.update(_mark(cell, name in asked, cfg.target))
            cell.update({s: _speeds(raw, s, ids, name) for s in ("this", "ref")})
        row["between"][name] = cell
    row["same plain tokens"] = sum(
        runs["this"][i]["plain"][0]["ids"] == runs["ref"][i]["plain"][0]["ids"] for i in ids
    )
    lsp = raw["lsp"]
    row["answered"] = {s: sum(t["ms"] is not None for i in ids for t in lsp[s][i]) for s in lsp}
    row["asks"] = {s: sum(t["asks"] for i in ids for t in lsp[s][i]) for s in lsp}
    row["asked"] = sum(len(lsp["this"][i]) for i in ids)
    return row


def _gains(raw: dict, side: str, ids: list[str], asked, cfg) -> dict:
    """A side's speeds, its speculation over its plain decoding, and whether output matched."""
    runs = raw["runs"][side]
    out: dict = {p: _speeds(raw, side, ids, p) for p in POLICIES if _has(raw, side, p)}
    for name in GAINS:
        cell = gain(raw, side, ids, name, cfg.seed)
        if cell is not None:
            cell.update(_mark(cell, name in asked, cfg.target))
        out[name] = cell
    out["same tokens"], out["acceptance"] = {}, {}
    for policy in POLICIES[1:]:
        if not _has(raw, side, policy):
            continue
        plain = {i: runs[i]["plain"][0]["ids"] for i in ids}
        out["same tokens"][policy] = sum(
            all(r["ids"] == plain[i] for r in runs[i][policy]) for i in ids
        )
        drafted = sum(r["drafted"] for i in ids for r in runs[i][policy])
        accepted = sum(r["accepted"] for i in ids for r in runs[i][policy])
        out["acceptance"][policy] = accepted / drafted if drafted else None
    return out


def _speeds(raw: dict, side: str, ids: list[str], name: str) -> dict:
    """A side's median over excerpts of its medians over rounds (tok/s and chars/s, or ms)."""
    keys = ("ms",) if name == LSP else ("tok_s", "chars_s")
    out = {}
    for key in keys:
        grid = samples(raw, side, ids, name, "tok_s" if key == "ms" else key)
        medians = [_median(v for v in row if not np.isnan(v)) for row in grid]
        out[key] = _median(medians)
    return out


def _mark(cell: dict, asked: bool, target: float) -> dict:
    """Whether the stopping rule asked for this interval, and whether it settled (2+ rounds)."""
    return {"asked": asked, "within": cell["rounds"] >= 2 and cell["half"] <= target}


# ---------------------------------------------------------------- the report


def header(installs, cfg, options, argv, started, n: int, minutes: float) -> str:
    names = " against ".join(f"**{i.name}** ({i.python})" for i in installs.values())
    source = cfg.excerpts or "the bench corpus (polish/data/bench.jsonl)"
    asked = ", ".join(cfg.until) or (
        "every measure between the sides" if "ref" in installs else "each side's speculation"
    )
    return (
        f"# bench ab: {names}\n\n"
        f"`bielik-lsp {' '.join(argv)}`: {n} excerpts of {source}, {cfg.tokens} tokens per run; "
        f"at least {cfg.repeats} rounds of engine runs ({cfg.lsp_repeats} over LSP), more until "
        f"the asked intervals ({asked}) are within ±{cfg.target:.0%} or {cfg.max_minutes:g} "
        f"minutes are spent; this run took {minutes:.1f} minutes. Global options of both sides: "
        f"{' '.join(options) or 'none'}.\n\n{machine.describe()}; load average {started} "
        f"before, {machine.load_average()} after."
    )


def report(summary: dict, head: str, installs: dict, cfg) -> str:
    lines = [head]
    for backend, found in summary.items():
        lines += [f"\n## {backend}\n", _stages(found, installs)]
        if "ref" in installs:
            lines += _between_table(found, installs, cfg)
        lines += _gains_table(found, installs)
    lines.append(
        f"\nRatios are the median per-excerpt ratio of medians over rounds, with a 90% bootstrap "
        f"interval over excerpts and rounds ({spread.RESAMPLES} resamples, seed {cfg.seed}); ±: "
        f"its half-width (none from one round: it shows excerpts, not noise), ✓ an asked interval "
        f"within ±{cfg.target:.0%}, ✗ one still wider when the time ran out. Prefill: from an "
        "empty cache, every policy's runs. First suggestion: from a document's opening; an "
        "empty answer is asked again at once."
    )
    return "\n".join(lines)


def _stages(found: dict, installs: dict) -> str:
    said = {
        "settled": "every asked interval settled",
        "time limit": "stopped by the time limit",
        "nothing asked": "nothing asked of it",
    }
    parts = [
        f"{'engine runs' if name == 'engine' else 'first suggestions'}: {s['rounds']} "
        f"round{'s' * (s['rounds'] != 1)} ({said.get(s['stopped'], s['stopped'])})"
        for name, s in found["stages"].items()
    ]
    text = "; ".join(parts) + "."
    for side, missing in found["missing"].items():
        for policy, why in missing.items():
            text += f" {installs[side].name} cannot run `{policy}` (missing: {why})."
    return text


def _between_table(found: dict, installs: dict, cfg) -> list[str]:
    this, ref = installs["this"].name, installs["ref"].name
    lines = [
        "",
        f"| type | measure | {this} | {ref} | this / ref | 90% interval | ± | per excerpt |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for label, row in found["labels"].items():
        for name, cell in row["between"].items():
            if cell is None:
                lines.append(f"| {label} | {name} | – | – | missing | | | |")
                continue
            ratios = ", ".join(_fmt(r, "{:.2f}") for r in cell["ratios"])
            lines.append(
                f"| {label} | {name} | {_value(cell['this'])} | {_value(cell['ref'])} | "
                f"**{cell['ratio']:.2f}x** | {_interval(cell)} | {_half(cell)} | {ratios} |"
            )
    lines += [_counts(label, row) for label, row in found["labels"].items()]
    return lines


def _gains_table(found: dict, installs: dict) -> list[str]:
    lines = [
        "",
        "Each side's speculation against its own plain decoding (same excerpts and rounds):",
        "",
        "| type | side | plain | auto | auto / plain | lookup | lookup / plain "
        "| wrote plain's tokens (auto, lookup) | acceptance (auto, lookup) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for label, row in found["labels"].items():
        for side, g in row["gains"].items():
            cells = [_value(g["plain"])]
            for policy in POLICIES[1:]:
                cell = g[f"{policy}/plain"]
                if cell is None:
                    cells += ["–", "missing"]
                    continue
                ratio = f"**{cell['ratio']:.2f}x** {_interval(cell)} {_half(cell)}"
                cells += [_value(g[policy]), ratio]
            same = ", ".join(f"{g['same tokens'][p]}/{row['excerpts']}" for p in g["same tokens"])
            rates = ", ".join(_fmt(a, "{:.0%}") for a in g["acceptance"].values())
            lines.append(
                f"| {label} | {installs[side].name} | " + " | ".join([*cells, same, rates]) + " |"
            )
    return lines


def _counts(label: str, row: dict) -> str:
    same = f"{row['same plain tokens']}/{row['excerpts']}"
    line = f"\n{label}: plain decoding wrote the same tokens on both sides for {same} excerpts"
    if not row["asked"]:
        return line + "."
    return (
        f"{line}; a suggestion came for {row['answered']['this']}/{row['asked']} (this) and "
        f"{row['answered']['ref']}/{row['asked']} (ref) documents, after "
        f"{row['asks']['this']} and {row['asks']['ref']} requests in all."
    )


def _interval(cell: dict) -> str:
    return f"[{cell['low']:.2f}, {cell['high']:.2f}]"


def _half(cell: dict) -> str:
    """The half-width, marked where asked; one round has none (its noise is not seen)."""
    mark = (" ✓" if cell["within"] else " ✗") if cell["asked"] else ""
    if cell["rounds"] < 2:
        return f"1 round{mark}"
    return f"±{cell['half']:.1%}{mark}"


def _value(cell: dict) -> str:
    if "ms" in cell:
        return _fmt(cell["ms"], "{:.0f} ms")
    return f"{_fmt(cell['tok_s'], '{:.1f}')} tok/s, {_fmt(cell['chars_s'], '{:.0f}')} chars/s"


def _fmt(value, spec: str) -> str:
    return "–" if value is None else spec.format(value)


# ---------------------------------------------------------------- the plot


def plot(summary: dict, installs: dict, path: Path) -> None:
    """Per backend: this side over REF by measure (top), each side's speculation (bottom).

    Bars: the median per-excerpt ratio on a log scale from 1; whiskers: its 90% interval;
    dots: the excerpts.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = (["between"] if "ref" in installs else []) + ["gains"]
    fig, axes = plt.subplots(
        len(rows), len(summary), figsize=(6 * len(summary), 4 * len(rows)), squeeze=False
    )
    for col, (backend, found) in enumerate(summary.items()):
        for ax, kind in zip(axes[:, col], rows, strict=True):
            if kind == "between":
                groups = {
                    m: {lab: r["between"][m] for lab, r in found["labels"].items()}
                    for m in MEASURES
                }
                ylabel = f"{installs['this'].name} / {installs['ref'].name}, speed"
            else:
                groups = {
                    f"{installs[s].name}\n{g}": {
                        lab: r["gains"][s][g] for lab, r in found["labels"].items()
                    }
                    for s in installs
                    for g in GAINS
                }
                ylabel = "speculative / plain, same side"
            _bars(ax, groups)
            ax.set(title=backend, ylabel=ylabel)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _bars(ax, groups: dict[str, dict[str, dict | None]]) -> None:
    """Grouped bars (a group per measure, a bar per content type) with intervals and dots."""
    from matplotlib.ticker import FuncFormatter

    width = 0.8 / len(LABELS)
    for n, label in enumerate(LABELS):
        xs = [g + n * width for g in range(len(groups))]
        cells = [groups[name].get(label) for name in groups]
        ratios = [c["ratio"] if c else float("nan") for c in cells]
        errors = [
            [c["ratio"] - c["low"] if c else 0 for c in cells],
            [c["high"] - c["ratio"] if c else 0 for c in cells],
        ]
        bars = ax.bar(
            xs, [r - 1 for r in ratios], width, bottom=1, label=label, yerr=errors, capsize=3
        )
        ax.bar_label(bars, [_fmt(c and c["ratio"], "{:.2f}") for c in cells], fontsize=7)
        for x, cell in zip(xs, cells, strict=True):
            dots = [r for r in (cell or {}).get("ratios", []) if r is not None]
            ax.plot([x + width / 4] * len(dots), dots, "o", mfc="none", mec="black", ms=4)
    ax.axhline(1.0, color="grey", lw=1)
    ax.set_yscale("log")  # 2x faster and 2x slower as far from 1
    plain = FuncFormatter(lambda v, _: f"{v:g}")
    ax.yaxis.set_major_formatter(plain)
    ax.yaxis.set_minor_formatter(plain)
    ax.tick_params(axis="y", which="minor", labelsize=7)
    ax.set_xticks([g + width * (len(LABELS) - 1) / 2 for g in range(len(groups))])
    ax.set_xticklabels(list(groups), fontsize=7)
    ax.legend()
