"""The `continue` and `doctor` commands: thin edges over the pipeline that format results."""

from __future__ import annotations

import json
import platform
import sys
from pathlib import Path

from decoder.backends.blas import find_openblas, loaded_blas
from decoder.backends.remote import RemoteEngine, is_remote
from decoder.config import ENGINES, TRANSLATIONS, Settings
from decoder.engine import Chunk, collect


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
    from decoder.pipeline import load

    text = read_prompt(path)
    pipe = load(settings, progress=progress)

    def stream(chunk: Chunk) -> None:
        sys.stdout.write(chunk.text)
        sys.stdout.flush()

    result = collect(pipe.continue_text(text), None if as_json else stream)
    stats = result.stats
    out = {
        "text": result.text,
        "token_ids": result.ids,
        "stats": stats.to_dict(),
        "settings": {
            "target": settings.target,
            "drafter": settings.drafter,
            "k": settings.k,
            "translation": settings.translation,
            "drafter_model": settings.drafter_model if settings.drafter != "none" else None,
            "backend": settings.target_backend,
        },
        "backends": pipe.describe(),
        "blas": loaded_blas(),
    }
    if is_remote(settings.target):
        out["server"] = pipe.describe()
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
        f"({s['decode_tokens']} in {s['decode_seconds']:.2f}s); "
        f"prefill {s['prompt_tokens']} tokens in {s['prefill_seconds']:.2f}s\n"
        f"-- cycles {s['cycles']}, drafted {s['drafted']}, accepted {s['accepted']} "
        f"(acceptance {s['acceptance_rate']:.1%}, {s['accepted_per_cycle']:.2f}/cycle); {split}\n"
        f"-- policy: {'; '.join(s['reasons'])}; stopped: {s['stop_reason']}"
        + (f"\n-- server: {_server_line(s['server'])}" if s.get("server") else "")
    )


def _server_line(server: dict) -> str:
    """What the inference server reported, and the request's wall time seen from here."""
    return ", ".join(
        f"{k} {v:.1f}" if isinstance(v, float) else f"{k} {v}"
        for k, v in server.items()
        if v is not None
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
    if is_remote(settings.target):
        server = RemoteEngine.connect(settings).describe()
        for key, value in server.items():
            print(f"{key:<10} {value}")
        if not server["up"]:
            problems.append(server["status"])
        load = False
    else:
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
        exact = "yes" if pipe.exact else "no: batches differ from one-token passes; auto is plain"
        print(f"exact      {exact}")
        print(f"costs      {pipe.costs.describe()}")
    for p in problems:
        print(f"WARNING    {p}")
    return 1 if problems else 0


def run_serve_model(settings: Settings, args) -> int:
    """`serve-model`: become mlx_lm.server or llama-server on the target (or print the command)."""
    from decoder.serving import default_server, exec_server, server_command

    if is_remote(settings.target):
        raise UserError("serve-model needs a model as --target, not a server URL")
    extra = args.extra[1:] if args.extra[:1] == ["--"] else args.extra
    command = server_command(settings, args.server or default_server(), args.host, args.port, extra)
    if args.dry_run:
        print(" ".join(command.argv))
        return 0
    exec_server(command)
    return 0  # not reached: the server replaced this process


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
    """`bench`: the CLI flags over the default (or --quick) configuration; prints the report."""
    from dataclasses import replace

    from decoder.bench.runs import QUICK, BenchConfig, rereport, run

    cfg = QUICK if args.quick else BenchConfig()
    given = {
        "per_class": args.per_class,
        "max_tokens": args.tokens,
        "k": args.bench_k,
        "sweep_n": args.sweep_n,
        "sweep_ks": args.sweep_ks and draft_lengths(args.sweep_ks),
        "out": args.out and Path(args.out),
        "backends": args.bench_backends and names(args.bench_backends, ENGINES, "backend"),
        "translations": args.translations and names(args.translations, TRANSLATIONS, "mode"),
        "peers": args.peers,
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
    print(run(settings, cfg, progress=not args.quiet, note=args.note))
    return 0


def draft_lengths(text: str) -> tuple[int, ...]:
    """`--sweep-ks 2,4` as (2, 4); a clear error for anything but positive integers."""
    try:
        ks = tuple(int(k) for k in text.split(","))
    except ValueError:
        ks = ()
    if not ks or min(ks) < 1:
        raise UserError(f"--sweep-ks takes positive integers separated by commas, not {text!r}")
    return ks


def names(text: str, known: tuple[str, ...], what: str) -> tuple[str, ...]:
    """A comma-separated list of known names (`--backend`, `--translations`) as a tuple."""
    given = tuple(text.split(","))
    unknown = [n for n in given if n not in known]
    if unknown:
        raise UserError(f"unknown {what} {unknown[0]!r}: use {', '.join(known)}")
    return given
