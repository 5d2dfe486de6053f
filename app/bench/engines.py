"""`bielik-lsp bench engines`: our llama.cpp backend against its peers, in one run.

Our llama.cpp plain decoding against llama-cpp-python's own generation on the same GGUF (the
target's, by default the embedded Gemma-3-270M), our auto policy against our plain decoding,
and MLX against llama.cpp.

    bielik-lsp [--threads N] bench engines [--tokens 64] [--reps 3] [--no-mlx]

Every figure is decode tokens/s (prefill excluded, first token excluded on both sides), median
of `--reps` interleaved repetitions, and every comparison is a ratio within this run.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from dataclasses import replace
from pathlib import Path

from decoder.config import Settings
from decoder.engine import PLAIN
from decoder.generation import collect
from decoder.pipeline import Pipeline

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
PROMPT = "konstytucja.txt"


def ours(pipe: Pipeline, text: str, tokens: int, auto: bool) -> dict:
    policy = pipe.policy(text=text) if auto else PLAIN
    pipe.reset()
    result = collect(pipe.continue_text(text, max_tokens=tokens, policy=policy))
    stats = result.stats
    return {"tok_s": stats.tokens_per_second, "ids": result.ids, "reasons": stats.reasons}


def peer(llm, prompt_ids: list[int], tokens: int) -> dict:
    """llama-cpp-python's own greedy generation: time from the first token to the last."""
    llm.reset()
    out, start = [], None
    for token in llm.generate(prompt_ids, top_k=1, temp=0.0, reset=True):
        if start is None:
            start = time.perf_counter()
        out.append(token)
        if len(out) == tokens:
            break
    return {"tok_s": (len(out) - 1) / (time.perf_counter() - start), "ids": out}


def run(settings: Settings, args: argparse.Namespace) -> str:
    from llama_cpp import Llama

    base = replace(settings, backend="llamacpp", max_tokens=args.tokens)
    pipe = Pipeline.load(base, progress=False)
    runner = pipe.engine.runner
    llm = Llama(
        str(pipe.target.path),
        n_threads=runner.threads,
        n_threads_batch=runner.threads,
        n_ctx=runner.context_length,
        n_batch=512,
        n_gpu_layers=runner.gpu_layers,
        verbose=False,
    )
    mlx = None
    if not args.no_mlx:
        mlx = Pipeline.load(replace(base, backend="mlx", drafter="none"), progress=False)
    texts = {
        name: (SAMPLES / name).read_text(encoding="utf-8")
        for name in ("konstytucja.txt", "lalka.txt")
    }
    runs: dict[str, list[float]] = {}
    same: dict[str, bool] = {}
    reasons: dict[str, list[str]] = {}

    def record(name: str, result: dict, plain_ids: list[int] | None = None) -> None:
        runs.setdefault(name, []).append(result["tok_s"])
        if plain_ids is not None:
            same[name] = same.get(name, True) and result["ids"] == plain_ids
        reasons.setdefault(name, result.get("reasons", []))

    prompt = texts[PROMPT]
    for _ in range(args.reps):
        plain = ours(pipe, prompt, args.tokens, auto=False)
        record("ours llama.cpp plain", plain)
        record(
            "llama-cpp-python generate",
            peer(llm, pipe.engine.encode(prompt), args.tokens),
            plain["ids"],
        )
        for name, text in texts.items():
            base_run = ours(pipe, text, args.tokens, auto=False)
            record(f"plain {name}", base_run)
            record(f"auto {name}", ours(pipe, text, args.tokens, auto=True), base_run["ids"])
        if mlx is not None:
            record("ours MLX plain", ours(mlx, prompt, args.tokens, auto=False))
    med = {k: statistics.median(v) for k, v in runs.items()}
    ratios = {
        "ours llama.cpp plain / llama-cpp-python generate (target >= 0.95)": med[
            "ours llama.cpp plain"
        ]
        / med["llama-cpp-python generate"],
        "auto / plain, konstytucja (structured; target >= 1.5)": med["auto konstytucja.txt"]
        / med["plain konstytucja.txt"],
        "auto / plain, lalka (prose; target >= 1.0)": med["auto lalka.txt"]
        / med["plain lalka.txt"],
    }
    if mlx is not None:
        ratios["MLX plain / llama.cpp plain"] = med["ours MLX plain"] / med["ours llama.cpp plain"]
    lines = [
        f"# {args.tokens} greedy tokens, median of {args.reps}; {json.dumps(runner.describe())}"
    ]
    lines.append(f"# costs on llama.cpp: {pipe.costs.describe()}")
    for k, v in med.items():
        extra = "" if k not in same else f"  (same ids as plain: {same[k]})"
        lines.append(f"{k:<34} {v:7.1f} tok/s{extra}")
    lines += [f"{k:<68} {v:5.2f}x" for k, v in ratios.items()]
    for k in ("auto konstytucja.txt", "auto lalka.txt"):
        lines.append(f"policy {k}: {'; '.join(reasons.get(k, []))}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    raw = {"runs": runs, "median": med, "ratios": ratios, "same": same}
    (out / "engines.json").write_text(json.dumps(raw, indent=1), encoding="utf-8")
    return "\n".join(lines)
