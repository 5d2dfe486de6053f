"""The `continue` and `doctor` commands: thin edges over the pipeline that format results."""

from __future__ import annotations

import json
import platform
import sys
from pathlib import Path

from decoder.backends.blas import find_openblas, loaded_blas
from decoder.config import Settings


def read_prompt(path: str) -> str:
    """The file's text; a clear error for a missing, binary, non-UTF-8 or empty file."""
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise UserError(f"cannot read {path}: {e.strerror}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise UserError(
            f"{path} is not UTF-8 text (byte {e.start}: {data[e.start : e.start + 1]!r})"
        ) from None
    if not text.strip():
        raise UserError(f"{path} is empty: nothing to continue")
    if "\x00" in text:
        raise UserError(f"{path} looks binary (contains NUL bytes)")
    return text


class UserError(Exception):
    """An error the user can fix; printed as one line, never as a traceback."""


def run_continue(settings: Settings, path: str, *, as_json: bool, progress: bool) -> int:
    from decoder.pipeline import Pipeline

    text = read_prompt(path)
    pipe = Pipeline.load(settings, progress=progress)
    ids: list[int] = []
    pieces: list[str] = []
    stats = None
    for chunk in pipe.continue_text(text):
        ids += chunk.ids
        pieces.append(chunk.text)
        stats = chunk.stats
        if not as_json:
            sys.stdout.write(chunk.text)
            sys.stdout.flush()
    out = {
        "text": "".join(pieces),
        "token_ids": ids,
        "stats": stats.to_dict(),
        "settings": {
            "target": settings.target,
            "drafter": settings.drafter,
            "k": settings.k,
            "drafter_model": settings.drafter_model if settings.drafter == "model" else None,
            "backend": settings.target_backend,
        },
        "backends": pipe.describe(),
        "blas": loaded_blas(),
    }
    if as_json:
        json.dump(out, sys.stdout, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        sys.stdout.write("\n")
        print(format_stats(out["stats"]), file=sys.stderr)
    return 0


def format_stats(s: dict) -> str:
    split = ", ".join(f"{k} {v:.2f}s" for k, v in s["time_split"].items())
    return (
        f"-- {s['generated_tokens']} tokens; decode {s['tokens_per_second']:.1f} tok/s "
        f"({s['decode_tokens']} in {s['decode_seconds']:.2f}s); prefill {s['prompt_tokens']} tokens "
        f"in {s['prefill_seconds']:.2f}s\n"
        f"-- cycles {s['cycles']}, drafted {s['drafted']}, accepted {s['accepted']} "
        f"(acceptance {s['acceptance_rate']:.1%}, {s['accepted_per_cycle']:.2f}/cycle); {split}\n"
        f"-- policy: {'; '.join(s['reasons'])}; stopped: {s['stop_reason']}"
    )


def run_doctor(settings: Settings, *, load: bool, progress: bool) -> int:
    """Print the platform, backends, BLAS, device and models.

    Exit 1 if something makes us slow or broken.
    """
    problems = []
    blas = loaded_blas()
    print(f"platform   {platform.platform()} / Python {platform.python_version()}")
    print(
        f"backend    {settings.target_backend} (setting: {settings.backend}); "
        f"drafter on {settings.drafter_model_backend}"
    )
    print(f"mlx        {_mlx_line()}")
    print(f"llama.cpp  {_llamacpp_line(settings)}")
    print(f"blas       {blas}")
    uses_mlx = "mlx" in (settings.target_backend, settings.drafter_model_backend)
    if uses_mlx and blas.startswith("reference"):
        hint = (
            "OpenBLAS is installed but was not preloaded"
            if find_openblas()
            else "install it: sudo apt-get install libopenblas0-pthread"
        )
        problems.append(f"MLX runs on a reference BLAS: prefill ~20x slower ({hint})")
    print(f"target     {settings.target}")
    print(f"drafter    {settings.drafter} (model: {settings.drafter_model}), k={settings.k}")
    if load:
        from decoder.pipeline import Pipeline

        pipe = Pipeline.load(settings, progress=progress)
        for role, m in (("target", pipe.target), ("drafter", pipe.drafter_model)):
            if m is not None:
                print(f"{role:<10} loaded from {m.source}: {m.path}")
        for role, info in pipe.describe().items():
            shown = ", ".join(f"{k} {v}" for k, v in info.items() if v not in (None, ""))
            print(f"{role:<10} {shown}")
        print(f"drafters   {', '.join(sorted(pipe.drafters))}")
        print(f"costs      {pipe.costs.describe()}")
    for p in problems:
        print(f"WARNING    {p}")
    return 1 if problems else 0


def _mlx_line() -> str:
    try:
        import mlx.core as mx
    except ImportError:
        return "not installed"
    return f"{mx.__version__}; device {mx.default_device()}"


def _llamacpp_line(settings: Settings) -> str:
    try:
        from decoder.backends.llamacpp import gpu_offload, physical_cores
        from decoder.compat.llama_cpp import build
    except ImportError:
        return "not installed (./install.sh builds llama-cpp-python)"
    import llama_cpp

    threads = settings.threads or physical_cores()
    return (
        f"llama-cpp-python {llama_cpp.__version__}; build {build()}; threads {threads}; "
        f"GPU offload {'yes' if gpu_offload() else 'no'}"
    )


def run_bench(settings: Settings, args) -> int:
    """`bench`: the CLI flags over the default (or --quick) configuration; prints the report's path."""
    from dataclasses import replace

    from decoder.bench.runs import QUICK, BenchConfig, rereport
    from decoder.bench.runs import run_bench as bench

    cfg = QUICK if args.quick else BenchConfig()
    given = {
        "per_class": args.per_class,
        "max_tokens": args.tokens,
        "k": args.bench_k,
        "sweep_n": args.sweep_n,
        "out": args.out and Path(args.out),
    }
    cfg = replace(cfg, **{k: v for k, v in given.items() if v is not None})
    if args.from_json:
        print(rereport(Path(args.from_json), cfg.out))
        return 0
    cfg = replace(
        cfg,
        command=" ".join(["bielik-lsp", *sys.argv[1:]])
        if sys.argv[0].endswith("bielik-lsp")
        else cfg.command,
    )
    print(bench(settings, cfg, progress=not args.quiet, note=args.note))
    return 0
