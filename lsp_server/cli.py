"""`bielik-lsp`: the language server (default), plus `continue`, `doctor` and `bench`."""

from __future__ import annotations

import argparse
import sys

from decoder.backends.blas import ensure_fast_blas
from decoder.config import BACKENDS, DRAFTERS, TRANSLATIONS


def build_parser() -> argparse.ArgumentParser:
    # No abbreviations: `continue --drafter` must never be read as a prefix of --drafter-model.
    p = argparse.ArgumentParser(prog="bielik-lsp", description=__doc__, allow_abbrev=False)
    p.add_argument(
        "--config",
        help="TOML settings file (default: $BIELIK_LSP_CONFIG or ~/.config/bielik-lsp/config.toml)",
    )
    p.add_argument(
        "--preset",
        help="model preset: embedded (default), bielik, bielik-qwen, bielik-v2.3 or server",
    )
    p.add_argument(
        "--target",
        help="target model: HF repo id, MLX/HF directory, .gguf file, embedded:NAME, "
        "or an inference server's URL (http://HOST:PORT/v1)",
    )
    p.add_argument(
        "--api-key-file", help="file with the inference server's API key ($BIELIK_LSP_API_KEY)"
    )
    p.add_argument("--remote-model", help='the "model" an inference server should use')
    p.add_argument("--drafter-model", help="drafter model (same forms as --target)")
    p.add_argument("--dtype", help="cast weights, e.g. float32")
    p.add_argument(
        "--backend",
        choices=BACKENDS,
        help="inference engine (default auto: mlx on macOS and Linux, llamacpp on Windows)",
    )
    p.add_argument("--drafter-backend", choices=BACKENDS)
    p.add_argument("--threads", type=int, help="llama.cpp CPU threads (default: physical cores)")
    p.add_argument(
        "--gpu-layers", type=int, help="llama.cpp layers on the GPU (default: all if it has one)"
    )
    p.add_argument("--prefix-cache-mb", type=float, help="per-document prompt caches (MB)")
    sub = p.add_subparsers(dest="command")
    serve = sub.add_parser("serve", help="speak LSP over stdio (the default)")
    serve.add_argument(
        "--tcp", metavar="HOST:PORT", help="listen on TCP instead of stdio (debugging)"
    )
    cont = sub.add_parser(
        "continue", help="continue a text file and print the continuation and statistics"
    )
    cont.add_argument("file")
    cont.add_argument("--max-tokens", type=int)
    cont.add_argument(
        "--drafter",
        choices=DRAFTERS,
        help="auto (default): the policy picks drafter and k; the others are fixed "
        "(cascade: lookup, else the model drafter)",
    )
    cont.add_argument(
        "--k", type=int, help="draft length in target tokens (the upper bound for auto)"
    )
    cont.add_argument(
        "--translation",
        choices=TRANSLATIONS,
        help="how drafts cross tokenizers (default: anchored)",
    )
    cont.add_argument("--temperature", type=float)
    cont.add_argument("--top-p", type=float)
    cont.add_argument("--seed", type=int)
    cont.add_argument(
        "--json", action="store_true", help="print one JSON object (text, token_ids, stats)"
    )
    cont.add_argument("--quiet", action="store_true", help="no progress bars")
    sm = sub.add_parser(
        "serve-model",
        help="start an inference server on --target for a team: mlx_lm.server or llama-server",
    )
    sm.add_argument(
        "--server", choices=["mlx", "llama"], help="default: llama-server where installed, else mlx"
    )
    sm.add_argument("--host", default="127.0.0.1", help="0.0.0.0 to serve the network")
    sm.add_argument("--port", type=int, default=8080)
    sm.add_argument("--dry-run", action="store_true", help="print the command, start nothing")
    sm.add_argument("extra", nargs=argparse.REMAINDER, help="after --: passed to the server")
    doctor = sub.add_parser("doctor", help="show BLAS, device and models; exit 1 on problems")
    doctor.add_argument(
        "--load",
        action="store_true",
        help="also load (and convert) the models and measure speculation costs",
    )
    bench = sub.add_parser(
        "bench",
        help="every drafter against plain decoding on the bundled corpus; "
        "writes OUT/benchmarks.md, OUT/bench/*.png and OUT/bench/raw.json",
    )
    bench.add_argument("--quick", action="store_true", help="tiny subset (CI smoke)")
    bench.add_argument(
        "--out", help="output folder (default: docs, or build/bench-quick with --quick)"
    )
    bench.add_argument("--per-class", type=int, help="excerpts per content type (default 30)")
    bench.add_argument("--tokens", type=int, help="generated tokens per run (default 32)")
    bench.add_argument(
        "--k", dest="bench_k", type=int, help="draft length of the fixed conditions (default 4)"
    )
    bench.add_argument("--sweep-n", type=int, help="excerpts that also get the k sweep (default 6)")
    bench.add_argument("--sweep-ks", help="draft lengths of the k sweep (default 1,2,3,4,6)")
    bench.add_argument(
        "--translations",
        help="translation modes of the model drafter, comma-separated (default: all four)",
    )
    bench.add_argument(
        "--backend",
        dest="bench_backends",
        help="backends to run one after the other, comma-separated: mlx, llamacpp or mlx,llamacpp "
        "(default: the configured backend)",
    )
    bench.add_argument(
        "--peers",
        action=argparse.BooleanOptionalAction,
        help="time mlx-lm and llama-cpp-python too, where installed (default: on, off for --quick)",
    )
    bench.add_argument(
        "--note", default="", help="a remark printed under the machine line (e.g. shared CPU)"
    )
    bench.add_argument(
        "--from-json", help="rebuild the report and plots from a saved raw.json (no models)"
    )
    bench.add_argument("--quiet", action="store_true", help="no progress bars")
    typing = bench.add_argument_group(
        "typing", "the real server driven over stdio by a simulated typist (OUT/typing.md, .json)"
    )
    typing.add_argument(
        "--typing",
        action="store_true",
        help="measure pause -> suggestion latency while typing instead (default OUT: "
        "build/bench-typing)",
    )
    typing.add_argument(
        "--minutes",
        type=float,
        help="with --typing: type on through the corpus for this long (memory over time)",
    )
    typing.add_argument("--chars", type=int, help="characters typed per excerpt (default 160)")
    typing.add_argument("--cps", type=float, help="typing speed, characters/s (default 8)")
    return p


def main(argv: list[str] | None = None) -> int:
    ensure_fast_blas()
    args = build_parser().parse_args(argv)
    from decoder.backends.models import ModelLoadError
    from decoder.backends.remote import ServerError
    from decoder.cli import UserError, run_bench, run_continue, run_doctor, run_serve_model
    from decoder.config import ConfigError, load_settings
    from decoder.engine import PromptTooLong
    from lsp_server.typing_bench import TypingBenchError

    overrides = {
        k: v
        for k, v in vars(args).items()
        if k
        in (
            "preset",
            "target",
            "drafter_model",
            "dtype",
            "api_key_file",
            "remote_model",
            "backend",
            "drafter_backend",
            "threads",
            "gpu_layers",
            "prefix_cache_mb",
            "max_tokens",
            "drafter",
            "k",
            "translation",
            "temperature",
            "top_p",
            "seed",
        )
    }
    try:
        settings = load_settings(args.config, overrides)
        if args.command == "continue":
            return run_continue(settings, args.file, as_json=args.json, progress=not args.quiet)
        if args.command == "doctor":
            return run_doctor(settings, load=args.load, progress=True)
        if args.command == "bench" and (args.typing or args.minutes):
            return run_typing_bench(args, argv)
        if args.command == "bench":
            return run_bench(settings, args)
        if args.command == "serve-model":
            return run_serve_model(settings, args)
        from lsp_server.server import serve

        return serve(settings, tcp=getattr(args, "tcp", None))
    except (
        UserError,
        ConfigError,
        ModelLoadError,
        PromptTooLong,
        ServerError,
        TypingBenchError,
    ) as e:
        print(f"bielik-lsp: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


def run_typing_bench(args: argparse.Namespace, argv: list[str] | None) -> int:
    """`bench --typing`: the server gets the same global options (config, preset, models)."""
    from dataclasses import replace
    from pathlib import Path

    from lsp_server.typing_bench import QUICK, TypingConfig, run_typing, server_command

    argv = sys.argv[1:] if argv is None else argv
    cfg = QUICK if args.quick else TypingConfig()
    if args.minutes and not args.quick:
        cfg = replace(cfg, per_class=30)  # a storm goes through the whole corpus
    given = {
        "per_class": args.per_class,
        "chars": args.chars,
        "cps": args.cps,
        "minutes": args.minutes,
        "out": args.out and Path(args.out),
        "command": " ".join(["bielik-lsp", *argv]),
    }
    cfg = replace(cfg, **{k: v for k, v in given.items() if v is not None})
    print(run_typing(server_command(argv[: argv.index("bench")]), cfg, progress=not args.quiet))
    return 0


if __name__ == "__main__":
    sys.exit(main())
