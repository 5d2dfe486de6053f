"""`bielik-lsp bench`: every drafter against plain greedy decoding, in one run, on the same prompts.

Why one module and one run: speed claims only mean something when every condition meets the
same machine noise on the same excerpts, and is checked token for token against the baseline.
All conditions of an excerpt run back to back (interleaved), so a busy neighbour slows them all.

Here: the corpus (polish/data/bench.jsonl), the conditions (plain, lookup, model drafter per
translation mode, auto; k sweep on a subset) and the runs. `analysis.py` turns the runs into
statistics, `report.py` into Markdown and plots.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from decoder.bench.analysis import LABELS, analyse
from decoder.bench.report import plots, report
from decoder.config import TRANSLATIONS, Settings
from decoder.drafting.drafter import Context, Drafter
from decoder.engine import PLAIN, FixedPolicy, Policy
from decoder.sampling import GREEDY, Keys

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "polish" / "data" / "bench.jsonl"
SWEEP_KS = (1, 2, 3, 4, 6)


@dataclass(frozen=True)
class BenchConfig:
    per_class: int = 30  # excerpts per content type in the main grid
    max_tokens: int = 32  # generated tokens per run
    k: int = 4  # draft length of the fixed conditions in the main grid
    sweep_ks: tuple[int, ...] = SWEEP_KS
    sweep_n: int = 6  # excerpts (spread over the types) that also get the k sweep
    out: Path = ROOT / "docs"
    command: str = "bielik-lsp bench"


QUICK = BenchConfig(
    per_class=1,
    max_tokens=6,
    k=2,
    sweep_ks=(1, 2),
    sweep_n=1,
    out=ROOT / "build" / "bench-quick",
    command="bielik-lsp bench --quick",
)


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
    rows = [
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]
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
    order = [
        ids[i] for i in range(max(map(len, by_type), default=0)) for ids in by_type if i < len(ids)
    ]
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
    from decoder.pipeline import Pipeline

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


def build_conditions(
    pipe, drafter_model, ks: tuple[int, ...]
) -> tuple[list[Condition], dict[str, str]]:
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
    return {
        "verify_by_n": {str(n): v for n, v in sorted(verify.items())},
        "draft_s": sum(c["draft_s"] for c in drafting),
        "draft_steps": sum(c["k"] for c in drafting),
    }


def run_one(pipe, cond: Condition, ex: Excerpt, max_tokens: int) -> dict:
    """One generation; the record keeps the ids (to compare) and the statistics (no per-cycle list)."""
    warm_s = warm(cond.warm, pipe.engine.encode(ex.text), ex.text)
    ids, stats, pieces = [], None, []
    for chunk in pipe.continue_text(
        ex.text, max_tokens=max_tokens, policy=policy_for(pipe, cond, ex.text)
    ):
        ids += chunk.ids
        pieces.append(chunk.text)
        stats = chunk.stats
    full = stats.to_dict(per_cycle=True)
    cycles = full.pop("per_cycle")
    return {
        "excerpt": ex.id,
        "label": ex.label,
        "condition": cond.name,
        "family": cond.family,
        "k": cond.k,
        "ids": ids,
        "text": "".join(pieces),
        "drafter_prefill_s": warm_s,
        **cost_samples(cycles),
        "stats": full,
    }


def compare(rec: dict, base: dict) -> None:
    """Mark the record identical or not to the baseline, and its speedup over it."""
    a, b = rec["ids"], base["ids"]
    rec["identical"] = a == b
    rec["mismatch_at"] = (
        None
        if a == b
        else next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    )
    base_tps = base["stats"]["tokens_per_second"]
    rec["speedup"] = rec["stats"]["tokens_per_second"] / base_tps if base_tps else float("nan")


def plan(
    conds: list[Condition], excerpts: list[Excerpt], cfg: BenchConfig
) -> list[tuple[Excerpt, Condition]]:
    """Main grid (baseline, auto, fixed at cfg.k) on every excerpt; the other k only on the sweep subset."""
    sweep = sweep_subset(excerpts, cfg.sweep_n)
    return [
        (ex, c)
        for ex in excerpts
        for c in conds
        if c.family in ("baseline", "auto") or c.k == cfg.k or ex.id in sweep
    ]


def run_all(
    pipe, conds: list[Condition], excerpts: list[Excerpt], cfg: BenchConfig, progress: bool
) -> list[dict]:
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


# ---------------------------------------------------------------- entry point


def default_grid() -> str:
    d = BenchConfig()
    return (
        f"{d.per_class} excerpts per type, {d.max_tokens} tokens, k={d.k}, k sweep on {d.sweep_n} "
        f"(sized for about 45 minutes on an idle 2-core machine)"
    )


def machine() -> str:
    import mlx.core as mx

    from decoder.backends.blas import loaded_blas

    cpu = (
        next(
            (
                line.split(":", 1)[1].strip()
                for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")
            ),
            platform.processor(),
        )
        if Path("/proc/cpuinfo").exists()
        else platform.processor()
    )
    return f"{platform.system()} {platform.machine()}, {cpu}, {os.cpu_count()} CPUs, MLX {mx.__version__} ({mx.default_device()}), BLAS {loaded_blas()}"


def write_outputs(data: dict, out: Path) -> Path:
    """Raw JSON, plots and the Markdown report from one saved run (`data` = meta + records)."""
    meta, records = data["meta"], data["records"]
    a = analyse(records, meta["k"])
    (out / "bench").mkdir(parents=True, exist_ok=True)
    (out / "bench" / "raw.json").write_text(
        json.dumps(data, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    plots(records, a, meta["k"], out / "bench")
    path = out / "benchmarks.md"
    path.write_text(report(meta, a, len(records), default_grid()), encoding="utf-8")
    return path


def run_bench(
    settings: Settings, cfg: BenchConfig, *, progress: bool = True, note: str = ""
) -> Path:
    """Load the models once, run every condition on every excerpt, write the report; its path."""
    from decoder.backends.models import ModelLoadError, load_model
    from decoder.pipeline import Pipeline

    start, load0 = time.perf_counter(), os.getloadavg()[0]
    pipe = Pipeline.load(
        replace(settings, drafter="auto", translation="anchored"), progress=progress
    )
    drafter_model, why = pipe.drafter_model, ""
    if drafter_model is None:
        try:
            drafter_model = load_model(
                settings.drafter_model, dtype=settings.dtype, progress=progress
            )
        except ModelLoadError as e:
            why = str(e)
    conds, missing = build_conditions(pipe, drafter_model, tuple(sorted({*cfg.sweep_ks, cfg.k})))
    missing = {f: why or m for f, m in missing.items()}
    excerpts = select(load_corpus(), cfg.per_class)
    probe = pipe.costs.describe()
    records = run_all(pipe, conds, excerpts, cfg, progress)
    counts = {lab: sum(e.label == lab for e in excerpts) for lab in LABELS}
    meta = {
        "command": cfg.command,
        "date": datetime.date.today().isoformat(),
        "machine": machine(),
        "cpus": os.cpu_count(),
        "load": (load0, os.getloadavg()[0]),
        "wall_s": time.perf_counter() - start,
        "note": note and f"; {note}",
        "target": settings.target,
        "drafter_model": settings.drafter_model,
        "max_tokens": cfg.max_tokens,
        "k": cfg.k,
        "sweep_ks": list(cfg.sweep_ks),
        "sweep_n": cfg.sweep_n,
        "auto_k": pipe.settings.k,
        "n_excerpts": len(excerpts),
        "per_type": ", ".join(f"{n} {lab}" for lab, n in counts.items()),
        "unavailable": missing,
        "probe": probe,
    }
    return write_outputs({"meta": meta, "records": records}, cfg.out)


def rereport(path: Path, out: Path) -> Path:
    """Rebuild the report and plots from a saved raw.json (no models needed)."""
    return write_outputs(json.loads(Path(path).read_text(encoding="utf-8")), out)
