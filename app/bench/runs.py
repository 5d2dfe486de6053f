"""`bielik-lsp bench`: every drafter against plain greedy decoding, in one run, on the same prompts.

Why one module and one run: speed claims only mean something when every condition meets the
same machine noise on the same excerpts, and is checked token for token against the baseline.
All conditions of an excerpt run back to back (interleaved), so a busy neighbour slows them all.

Here: the corpus (polish/data/bench.jsonl), the conditions (plain, lookup, model drafter per
translation mode, auto; k sweep on a subset), the peers (`peers.py`) and the runs, per backend.
`analysis.py` turns the runs into statistics, `report.py` into Markdown and plots.
"""

from __future__ import annotations

import datetime
import gc
import json
import os
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from app.bench import machine
from app.bench.analysis import analyse
from app.bench.corpus import LABELS, Excerpt, load_corpus, select, sweep_subset
from app.bench.peers import Peer, backend_peers, time_peer
from app.bench.report import plots, report
from decoder.config import Settings
from decoder.drafting.drafter import TRANSLATIONS, Context, Drafter
from decoder.engine import PLAIN, FixedPolicy, Policy
from decoder.generation import collect
from decoder.sampling import GREEDY, Keys

SWEEP_KS = (1, 2, 3, 4, 6)


@dataclass(frozen=True)
class BenchConfig:
    per_class: int = 30  # excerpts per content type in the main grid
    max_tokens: int = 32  # generated tokens per run
    k: int = 4  # draft length of the fixed conditions in the main grid
    sweep_ks: tuple[int, ...] = SWEEP_KS
    sweep_n: int = 6  # excerpts (spread over the types) that also get the k sweep
    translations: tuple[str, ...] = TRANSLATIONS  # one model-drafter condition per mode
    backends: tuple[str, ...] = ()  # run one after the other; empty: the settings' backend
    peers: bool = True  # time mlx-lm and llama-cpp-python beside ours, where installed
    out: Path = Path(".")
    command: str = "bielik-lsp bench"


QUICK = BenchConfig(
    per_class=1,
    max_tokens=6,
    k=2,
    sweep_ks=(1, 2),
    sweep_n=1,
    peers=False,
    command="bielik-lsp bench --quick",
)


# ---------------------------------------------------------------- conditions


@dataclass
class Condition:
    name: str  # e.g. "model/anchored k=4"
    family: str  # baseline | lookup | model/<translation> | auto
    k: int
    drafter: Drafter | None = None
    warm: list[Drafter] = field(default_factory=list)  # drafters whose prompt is prefilled untimed


def model_drafters(
    pipe, drafter_model, translations: tuple[str, ...]
) -> tuple[dict[str, Drafter], dict[str, str]]:
    """One model drafter per translation mode, built from settings as the pipeline builds it."""
    from decoder.pipeline import Pipeline

    drafters, missing = {}, {}
    for mode in translations:
        family = f"model/{mode}"
        if drafter_model is None:
            missing[family] = "the drafter model did not load"
            continue
        try:
            settings = replace(pipe.settings, drafter="model", translation=mode)
            drafters[family] = Pipeline(settings, pipe.target, drafter_model).drafters["model"]
        except Exception as e:  # noqa: BLE001 — any failure makes this one condition unavailable
            missing[family] = f"{type(e).__name__}: {e}"
    return drafters, missing


def build_conditions(
    pipe, drafter_model, ks: tuple[int, ...], translations: tuple[str, ...] = TRANSLATIONS
) -> tuple[list[Condition], dict[str, str]]:
    """Baseline first (every other condition is compared with it), fixed drafters per k, auto."""
    fixed, missing = model_drafters(pipe, drafter_model, translations)  # one drafter backend
    fixed = {"lookup": pipe.drafters["lookup"], **fixed}
    if "cascade" in pipe.drafters:  # lookup, else the model drafter (anchored)
        fixed["cascade"] = pipe.drafters["cascade"]
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
    """Per-run sums for the cost model.

    Verify seconds by tokens verified, and a model drafter's seconds and forward passes (cycles
    that ran no model, such as lookup's, count none).
    """
    verify: dict[int, list[float]] = {}
    for c in cycles:
        v = verify.setdefault(c["drafted"] + 1, [0.0, 0])
        v[0] += c["verify_s"]
        v[1] += 1
    model = [c for c in cycles if c["k"] > 0 and c["drafter"] != "lookup"]
    return {
        "verify_by_n": {str(n): v for n, v in sorted(verify.items())},
        "model_draft_s": sum(c["draft_s"] for c in model),
        # Passes as the drafter counted them, else k+1 for a k-token draft (the paper's count).
        "drafter_passes": sum(c.get("passes", c["k"] + 1) for c in model),
    }


def run_one(pipe, cond: Condition, ex: Excerpt, max_tokens: int) -> dict:
    """One generation; the record keeps the ids (to compare) and the statistics (no cycle list)."""
    warm_s = warm(cond.warm, pipe.engine.encode(ex.text), ex.text)
    result = collect(
        pipe.continue_text(ex.text, max_tokens=max_tokens, policy=policy_for(pipe, cond, ex.text))
    )
    full = result.stats.to_dict(per_cycle=True)
    cycles = full.pop("per_cycle")
    return {
        "excerpt": ex.id,
        "label": ex.label,
        "condition": cond.name,
        "family": cond.family,
        "k": cond.k,
        "ids": result.ids,
        "text": result.text,
        "drafter_prefill_s": warm_s,
        **cost_samples(cycles),
        "stats": full,
    }


def run_peer(pipe, peer: Peer, ex: Excerpt, max_tokens: int) -> dict:
    """A peer on the same prompt ids as ours (our encoding, with the model's own BOS)."""
    return {
        "excerpt": ex.id,
        "label": ex.label,
        "peer": peer.name,
        **time_peer(peer, pipe.engine.encode(ex.text), max_tokens, pipe.engine.table),
    }


def compare(rec: dict, base: dict) -> None:
    """Mark the record identical or not to the baseline, and its speedup over it."""
    a, b = rec["ids"], base["ids"]
    rec["identical"] = a == b
    rec["mismatch_at"] = (
        None
        if a == b
        else next(
            (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
        )
    )
    base_tps = base["stats"]["tokens_per_second"]
    rec["speedup"] = rec["stats"]["tokens_per_second"] / base_tps if base_tps else float("nan")


def plan(
    conds: list[Condition], excerpts: list[Excerpt], cfg: BenchConfig
) -> list[tuple[Excerpt, Condition]]:
    """Main grid (baseline, auto, fixed at cfg.k) on every excerpt; other k on the sweep subset."""
    sweep = sweep_subset(excerpts, cfg.sweep_n)
    return [
        (ex, c)
        for ex in excerpts
        for c in conds
        if c.family in ("baseline", "auto") or c.k == cfg.k or ex.id in sweep
    ]


def run_all(
    pipe,
    conds: list[Condition],
    peers: list[Peer],
    excerpts: list[Excerpt],
    cfg: BenchConfig,
    progress: bool,
) -> tuple[list[dict], list[dict]]:
    """Every planned run, excerpt by excerpt, the peers last; (our records, the peers' records).

    The target's cache is reset per excerpt, so its prefill counts once (in the baseline).
    """
    from tqdm import tqdm

    todo, sweep = plan(conds, excerpts, cfg), sweep_subset(excerpts, cfg.sweep_n)
    records, peer_records, base = [], [], None
    total = len(todo) + len(peers) * len(excerpts)
    with tqdm(total=total, desc="bench", unit="run", disable=not progress) as bar:
        for i, (ex, cond) in enumerate(todo):
            if cond.family == "baseline":
                pipe.engine.runner.reset()
            rec = run_one(pipe, cond, ex, cfg.max_tokens)
            base = rec if cond.family == "baseline" else base
            compare(rec, base)
            rec["sweep"] = ex.id in sweep
            records.append(rec)
            bar.set_postfix_str(f"{ex.id} {cond.name}")
            bar.update()
            if i + 1 == len(todo) or todo[i + 1][0] is not ex:
                for peer in peers:
                    peer_records.append(run_peer(pipe, peer, ex, cfg.max_tokens))
                    compare(peer_records[-1], base)
                    bar.set_postfix_str(f"{ex.id} {peer.name}")
                    bar.update()
    return records, peer_records


def load_peers(pipe, backend: str, cfg: BenchConfig) -> tuple[list[Peer], dict[str, str]]:
    """The peers that run beside `backend`, and why each missing one is missing."""
    if not cfg.peers:
        return [], {}
    try:
        return backend_peers(backend, pipe.engine.runner), {}
    except ImportError as e:
        return [], {backend: f"its library's own generation is not installed ({e})"}


# ---------------------------------------------------------------- entry point


def default_grid() -> str:
    d = BenchConfig()
    return (
        f"{d.per_class} excerpts per type, {d.max_tokens} tokens, k={d.k}, k sweep on {d.sweep_n} "
        f"(sized for about 45 minutes on an idle 2-core machine)"
    )


def write_outputs(data: dict, out: Path) -> Path:
    """Raw JSON, plots and the Markdown report from one saved run (meta, records, peers)."""
    meta = data["meta"]
    (out / "bench").mkdir(parents=True, exist_ok=True)
    (out / "bench" / "raw.json").write_text(  # first: a report can always be rebuilt from it
        json.dumps(data, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    analyses = {
        b: analyse(
            [r for r in data["records"] if r["backend"] == b],
            [p for p in data["peers"] if p["backend"] == b],
            meta["k"],
        )
        for b in meta["backends"]
    }
    plots(data["records"], analyses, meta["k"], out / "bench")
    path = out / "benchmarks.md"
    path.write_text(report(meta, analyses, default_grid()), encoding="utf-8")
    return path


def run(settings: Settings, cfg: BenchConfig, *, progress: bool = True, note: str = "") -> Path:
    """Every condition and peer on every excerpt, backend after backend; the report's path."""
    start, load0 = time.perf_counter(), machine.load_average()
    excerpts = select(load_corpus(), cfg.per_class)
    records, peers, backends = [], [], {}
    for backend in cfg.backends or (settings.target_backend,):
        recs, peer_recs, info = run_backend(settings, backend, excerpts, cfg, progress)
        records += recs
        peers += peer_recs
        backends[info.pop("name")] = info
    counts = {lab: sum(e.label == lab for e in excerpts) for lab in LABELS}
    meta = {
        "command": cfg.command,
        "date": datetime.date.today().isoformat(),
        "machine": machine.describe(),
        "cpus": os.cpu_count(),
        "load": (load0, machine.load_average()),
        "wall_s": time.perf_counter() - start,
        "note": note and f"; {note}",
        "target": settings.target,
        "drafter_model": settings.drafter_model,
        "max_tokens": cfg.max_tokens,
        "k": cfg.k,
        "sweep_ks": list(cfg.sweep_ks),
        "sweep_n": cfg.sweep_n,
        "auto_k": settings.k,
        "n_excerpts": len(excerpts),
        "per_type": ", ".join(f"{n} {lab}" for lab, n in counts.items()),
        "backends": backends,
        "n_runs": len(records) + len(peers),
    }
    return write_outputs({"meta": meta, "records": records, "peers": peers}, cfg.out)


def run_backend(
    settings: Settings, backend: str, excerpts: list[Excerpt], cfg: BenchConfig, progress: bool
) -> tuple[list[dict], list[dict], dict]:
    """Load the models on one backend, run its grid and peers, then free them for the next."""
    from decoder.backends.models import ModelLoadError, load_model
    from decoder.pipeline import Pipeline

    settings = replace(
        settings, backend=backend, drafter_backend=None, drafter="auto", translation="anchored"
    )
    pipe = Pipeline.load(settings, progress=progress)
    drafter_model, why = pipe.drafter_model, ""
    if drafter_model is None:
        try:
            drafter_model = load_model(settings.drafter_model, settings, backend, progress=progress)
        except ModelLoadError as e:
            why = str(e)
    ks = tuple(sorted({*cfg.sweep_ks, cfg.k}))
    conds, missing = build_conditions(pipe, drafter_model, ks, cfg.translations)
    peers, peers_missing = load_peers(pipe, backend, cfg)
    runner = pipe.engine.runner
    info = {
        "name": getattr(runner, "name", backend),
        # Paths and the like as text, so the record stays plain JSON.
        "describe": json.loads(json.dumps(getattr(runner, "describe", dict)(), default=str)),
        "probe": pipe.costs.describe(),
        "unavailable": {f: why or m for f, m in missing.items()},
        "peers_unavailable": peers_missing,
    }
    records, peer_records = run_all(pipe, conds, peers, excerpts, cfg, progress)
    for r in records + peer_records:
        r["backend"] = info["name"]
    del pipe, drafter_model, conds, peers
    gc.collect()
    return records, peer_records, info


def rereport(path: Path, out: Path) -> Path:
    """Rebuild the report and plots from a saved raw.json (no models needed)."""
    return write_outputs(json.loads(Path(path).read_text(encoding="utf-8")), out)
