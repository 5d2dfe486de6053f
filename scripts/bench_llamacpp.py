"""Our llama.cpp backend against its peers, in one run on the embedded Gemma-3-270M.

Our llama.cpp plain decoding against llama-cpp-python's own generation, our auto policy against
our plain decoding, and MLX against llama.cpp.

    PYTHONPATH=. python scripts/bench_llamacpp.py [--tokens 64] [--reps 3] [--json out.json]

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

from decoder.backends.blas import ensure_fast_blas

ensure_fast_blas()  # MLX's comparison on OpenBLAS, as bielik-lsp runs it

from decoder.backends.embedded import embedded_gguf  # noqa: E402
from decoder.config import Settings  # noqa: E402
from decoder.engine import PLAIN, collect  # noqa: E402
from decoder.pipeline import Pipeline  # noqa: E402

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
PROMPT = "konstytucja.txt"


def ours(pipe: Pipeline, text: str, tokens: int, auto: bool) -> dict:
    policy = pipe.policy(text=text) if auto else PLAIN
    pipe.engine.runner.reset()
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tokens", type=int, default=64)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--threads", type=int)
    ap.add_argument("--no-mlx", action="store_true", help="skip the MLX comparison")
    ap.add_argument("--json", help="also write the raw figures here")
    args = ap.parse_args()
    from llama_cpp import Llama

    base = Settings(backend="llamacpp", threads=args.threads, max_tokens=args.tokens)
    pipe = Pipeline.load(base, progress=False)
    runner = pipe.engine.runner
    llm = Llama(
        str(embedded_gguf("gemma-3-270m")),
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
    print(f"# {args.tokens} greedy tokens, median of {args.reps}; {json.dumps(runner.describe())}")
    print(f"# costs on llama.cpp: {pipe.costs.describe()}")
    for k, v in med.items():
        extra = "" if k not in same else f"  (same ids as plain: {same[k]})"
        print(f"{k:<34} {v:7.1f} tok/s{extra}")
    for k, v in ratios.items():
        print(f"{k:<68} {v:5.2f}x")
    for k in ("auto konstytucja.txt", "auto lalka.txt"):
        print(f"policy {k}: {'; '.join(reasons.get(k, []))}")
    if args.json:
        Path(args.json).write_text(
            json.dumps({"runs": runs, "median": med, "ratios": ratios, "same": same}, indent=1)
        )


if __name__ == "__main__":
    main()
