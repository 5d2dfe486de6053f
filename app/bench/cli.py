"""`bielik-lsp bench`: its flags and which benchmark they run.

`bench` alone runs the grid (runs.py); `bench --typing` the typing benchmark; `bench engines`,
`bench load`, `bench cross-tokenizer`, `bench costs` and `bench priors` their own measurements;
`bench ab REF` this install against another one (ab.py). Each writes into --out (default: here).
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path
from typing import Any

from decoder.backends.registry import BACKENDS
from decoder.config import Settings
from decoder.drafting.drafter import TRANSLATIONS
from decoder.schema import ConfigError

SUITES = ("engines", "openvino", "cross-tokenizer", "costs", "priors", "drafter")


def add_parser(sub: Any) -> None:
    """The `bench` command on `sub` (the subcommands of the main parser)."""
    bench = sub.add_parser(
        "bench",
        allow_abbrev=False,
        help="every drafter against plain decoding on the bundled corpus; "
        "writes OUT/benchmarks.md, OUT/bench/*.png and OUT/bench/raw.json",
    )
    _add_grid(bench)
    _add_typing(bench)
    suites = bench.add_subparsers(
        dest="suite",
        metavar="{engines,load,openvino,cross-tokenizer,costs,priors,drafter,ab,spelling,grammar}",
    )
    _add_engines(suites)
    _add_load(suites)
    _add_openvino(suites)
    _add_cross(suites)
    _add_costs(suites)
    _add_priors(suites)
    _add_drafter(suites)
    _add_ab(suites)
    _add_spelling(suites)
    _add_grammar(suites)


def _add_grid(bench: argparse.ArgumentParser) -> None:
    add = bench.add_argument
    add("--quick", action="store_true", help="tiny subset (CI smoke)")
    add("--out", help="output folder (default: the current folder)")
    add("--per-class", type=int, help="excerpts per content type (default 30)")
    add("--tokens", type=int, help="generated tokens per run (default 32)")
    add("--k", dest="bench_k", type=int, help="draft length of the fixed conditions (default 4)")
    add("--sweep-n", type=int, help="excerpts that also get the k sweep (default 6)")
    add("--sweep-ks", help="draft lengths of the k sweep (default 1,2,3,4,6)")
    add("--translations", help="translation modes of the model drafter, comma-separated")
    add(
        "--backend",
        dest="bench_backends",
        help="backends to run one after the other, comma-separated: mlx, llamacpp or mlx,llamacpp "
        "(default: the configured backend)",
    )
    add(
        "--peers",
        action=argparse.BooleanOptionalAction,
        help="time mlx-lm and llama-cpp-python too, where installed (default: on, off for --quick)",
    )
    add("--note", default="", help="a remark printed under the machine line (e.g. shared CPU)")
    add("--from-json", help="rebuild the report and plots from a saved raw.json (no models)")
    add("--quiet", action="store_true", help="no progress bars")


def _corpus_suite(suites: Any, name: str, about: str, tokens: int) -> argparse.ArgumentParser:
    """A suite over the corpus's excerpts: greedy tokens per excerpt, writing NAME.md/.json."""
    p = suites.add_parser(name, allow_abbrev=False, help=about)
    p.add_argument("--tokens", type=int, default=tokens, help="greedy tokens per excerpt")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--out", default=".", help=f"folder for {name}.md/.json (default: here)")
    return p


def _add_engines(suites: Any) -> None:
    about = "our llama.cpp decoding and auto against llama-cpp-python's and llama-server's"
    p = _corpus_suite(suites, "engines", about, tokens=64)
    p.add_argument("--per-class", type=int, default=6, help="structured and prose excerpts each")
    p.add_argument("--llama-server", metavar="BIN", help="a llama-server binary to compare with")


def _add_load(suites: Any) -> None:
    about = "decoding and ghost text while other programs keep 0, 1 and every core busy"
    p = _corpus_suite(suites, "load", about, tokens=64)
    p.add_argument("--per-class", type=int, default=3, help="structured and prose excerpts each")
    p.add_argument("--busy", help="cores kept busy, comma-separated (default: 0,1,every core)")
    p.add_argument(
        "--llama-server",
        metavar="BIN",
        help="llama-server to compare with (default: on PATH, or scripts/build_llama_server.sh's)",
    )
    p.add_argument(
        "--typing-chars",
        type=int,
        default=160,
        help="typed per excerpt at each level, as bench --typing types (default 160; 0: none)",
    )
    p.add_argument(
        "--idle-seconds", type=float, default=20.0, help="a loaded server left alone (0: skip)"
    )
    p.add_argument(
        "--ref",
        metavar="REF",
        help="also type into another install's server (a revision or install, as bench ab takes)",
    )
    p.add_argument(
        "--grammar-off",
        action="store_true",
        help="also type into this install's server with grammar off, in turn under the same "
        "load: typing latency with grammar on against off in one run",
    )


def _add_openvino(suites: Any) -> None:
    about = (
        "our OpenVINO engine (plain, auto) against OpenVINO GenAI's pipelines (plain, prompt "
        "lookup, draft model) and our llama.cpp engine, on one GGUF"
    )
    p = _corpus_suite(suites, "openvino", about, tokens=64)
    p.add_argument("--per-class", type=int, default=6, help="structured and prose excerpts each")


def _add_cross(suites: Any) -> None:
    p = suites.add_parser(
        "cross-tokenizer",
        allow_abbrev=False,
        help="the cross-tokenizer drafter's translation modes on the embedded pair",
    )
    p.add_argument("--excerpts", type=int, default=8, help="excerpts per content type")
    p.add_argument("--label", default="structured", choices=["structured", "prose", "mixed"])
    p.add_argument("--max-tokens", type=int, default=64)
    p.add_argument("--ks", type=int, nargs="+", default=[2, 4])
    p.add_argument(
        "--modes", nargs="+", default=["naive", "context", "anchored"], choices=TRANSLATIONS
    )
    p.add_argument("--lookup", action="store_true", help="also lookup alone at each k")
    p.add_argument("--out", default=".", help="folder for cross.json (default: here)")
    p.add_argument("--from-json", help="print the table of saved records (no models)")


def _add_costs(suites: Any) -> None:
    from decoder.backends.files import cache_root

    cache = cache_root() / "bench"  # app.bench.shapes.CACHE, without importing gguf here
    p = suites.add_parser(
        "costs",
        allow_abbrev=False,
        help="Bielik-11B-shaped GGUFs (several GB): cost curves here, predicted speedups",
    )
    p.add_argument("--quant", choices=("q4_k_m", "q4_0"), default="q4_k_m")
    p.add_argument("--dir", default=str(cache), help=f"where the GGUFs go (default: {cache})")
    p.add_argument("--per-class", type=int, default=2, help="excerpts per type for the cycles")
    p.add_argument("--tokens", type=int, default=48, help="tokens per run for the cycles")
    p.add_argument("--out", default=".", help="folder for costs.md and costs.json (default: here)")


def _add_priors(suites: Any) -> None:
    about = "how often the target goes on copying, by match length (auto's lookup prior)"
    _corpus_suite(suites, "priors", about, tokens=128)


def _add_drafter(suites: Any) -> None:
    from app.bench.drafter import add_parser

    add_parser(suites)


def _add_ab(suites: Any) -> None:
    about = (
        "this install against another (a git revision or an install), or against itself with "
        "other options: speed with intervals, side by side; --quick: speculation in 2 minutes"
    )
    p = suites.add_parser("ab", allow_abbrev=False, help=about)
    add = p.add_argument
    add("ref", nargs="?", help="a git revision of this repository, or another install's folder")
    add("--backend", dest="ab_backends", help="backends, comma-separated (default: the configured)")
    add("--per-class", type=int, help="structured and prose excerpts each (default 3)")
    add("--repeats", type=int, help="rounds of runs at least (default 3)")
    add("--lsp-repeats", type=int, help="rounds of first suggestions at least (default: repeats)")
    add("--tokens", type=int, help="greedy tokens per run (default 64)")
    add("--excerpts", help="JSON lines (id, label, text) instead of the bench corpus")
    add(
        "--target",
        type=float,
        help="more rounds until each asked interval is within ± this "
        "share of its ratio (default 0.03)",
    )
    add("--max-minutes", type=float, help="or until this much time is spent (default 30)")
    add(
        "--until",
        help="the intervals asked to settle, comma-separated: prefill, plain, auto, "
        "lookup, first-suggestion, auto/plain, lookup/plain (default: every measure between the "
        "sides; without REF, each side's speculation)",
    )
    add(
        "--this-options",
        default="",
        metavar="OPTS",
        help="global options of this side only, e.g. --this-options=--no-adapt-threads",
    )
    add(
        "--ref-options",
        default="",
        metavar="OPTS",
        help="global options of REF only; without REF, REF is this very install with them",
    )
    add(
        "--quick",
        action="store_true",
        help="every local backend, 1 excerpt per type, plain, "
        "auto and lookup, about 2 minutes (with REF or --ref-options: both sides)",
    )
    add("--quiet", action="store_true", help="no progress bar")
    add("--out", default=".", help="folder for ab.md/.json/.png (default: here)")


def _add_spelling(suites: Any) -> None:
    about = "Polish spelling against hunspell-pl on injected errors (app/bench/spelling.py)"
    p = suites.add_parser("spelling", allow_abbrev=False, help=about)
    p.add_argument(
        "--split",
        choices=("test", "train", "all"),
        help="the held-out or the tuning half (injected errors: by id, default test; a file "
        "of real errors: odd or even lines, default all)",
    )
    p.add_argument(
        "--data",
        help="a folder of clean .txt files (errors injected there too), or a file of real "
        "errors, one PlEWi sentence a line (text, new_text, errors): measured as they are",
    )
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--model", action=argparse.BooleanOptionalAction, default=True)
    p.add_argument("--out", default=".", help="folder for spelling.md/.json/.png (default: here)")


def _add_grammar(suites: Any) -> None:
    about = "Polish grammar on real-word errors and clean text (app/bench/grammar.py)"
    p = suites.add_parser("grammar", allow_abbrev=False, help=about)
    p.add_argument("--data", help="real-word errors in the dev set's format (JSON lines)")
    p.add_argument("--half", choices=("A", "B", "all"), default="B", help="rows by hash (A tunes)")
    p.add_argument("--languagetool", metavar="GRAMMAR_XML", help="LanguageTool's examples too")
    p.add_argument("--split", choices=("test", "train", "all"), default="test", help="clean text")
    p.add_argument("--no-clean", action="store_true", help="skip the clean-text false alarms")
    p.add_argument("--model", action=argparse.BooleanOptionalAction, default=True)
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--out", default=".", help="folder for grammar.md/.json (default: here)")


def _add_typing(bench: argparse.ArgumentParser) -> None:
    typing = bench.add_argument_group(
        "typing", "the real server driven over stdio by a simulated typist (OUT/typing.md, .json)"
    )
    typing.add_argument(
        "--typing", action="store_true", help="measure pause -> suggestion latency while typing"
    )
    typing.add_argument(
        "--minutes",
        type=float,
        help="with --typing: type on through the corpus for this long (memory over time)",
    )
    typing.add_argument("--chars", type=int, help="characters typed per excerpt (default 160)")
    typing.add_argument("--cps", type=float, help="typing speed, characters/s (default 8)")
    typing.add_argument(
        "--ring",
        choices=("on", "off", "both"),
        help="context from the other open documents: on (default), off, or both runs compared",
    )


def run(settings: Settings, args: argparse.Namespace, argv: list[str]) -> int:
    """The benchmark the flags ask for; prints its report (or the report's path)."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise ConfigError(
            "bench needs the bench extra: ./install.sh, or pip install -e '.[bench]'"
        ) from None
    if args.suite == "engines":
        from app.bench import engines

        print(engines.run(settings, args))
    elif args.suite == "load":
        from app.bench import load

        print(load.run(settings, args, argv))
    elif args.suite == "openvino":
        from app.bench import openvino

        print(openvino.run(settings, args))
    elif args.suite == "cross-tokenizer":
        from app.bench import cross

        print(cross.run(settings, args))
    elif args.suite == "costs":
        from app.bench import costs

        print(costs.run(settings, args))
    elif args.suite == "priors":
        from app.bench import priors

        print(priors.run(settings, args))
    elif args.suite == "drafter":
        from app.bench import drafter

        print(drafter.run(settings, args))
    elif args.suite == "spelling":
        from app.bench import spelling

        args.command_line = " ".join(["bielik-lsp", *argv])
        print(spelling.run(settings, args))
    elif args.suite == "grammar":
        from app.bench import grammar

        args.command_line = " ".join(["bielik-lsp", *argv])
        print(grammar.run(settings, args))
    elif args.suite == "ab":
        from app.bench import ab

        print(ab.run(settings, args, argv))
    elif args.typing or args.minutes:
        print(run_typing(args, argv))
    else:
        print(run_grid(settings, args, argv))
    return 0


def run_grid(settings: Settings, args: argparse.Namespace, argv: list[str]) -> Path:
    from app.bench.runs import QUICK, BenchConfig, rereport
    from app.bench.runs import run as run_all

    cfg = QUICK if args.quick else BenchConfig()
    given = {
        "per_class": args.per_class,
        "max_tokens": args.tokens,
        "k": args.bench_k,
        "sweep_n": args.sweep_n,
        "sweep_ks": args.sweep_ks and draft_lengths(args.sweep_ks),
        "out": args.out and Path(args.out),
        "backends": args.bench_backends and names(args.bench_backends, tuple(BACKENDS), "backend"),
        "translations": args.translations and names(args.translations, TRANSLATIONS, "mode"),
        "peers": args.peers,
        "command": " ".join(["bielik-lsp", *argv]),
    }
    cfg = replace(cfg, **{k: v for k, v in given.items() if v is not None})
    if args.from_json:
        return rereport(Path(args.from_json), cfg.out)
    return run_all(settings, cfg, progress=not args.quiet, note=args.note)


def run_typing(args: argparse.Namespace, argv: list[str]) -> Path:
    """The server gets the same global options (config, preset, models) as this command."""
    from app.bench.typing import QUICK, TypingConfig, run_typing, server_command

    cfg = QUICK if args.quick else TypingConfig()
    if args.minutes and not args.quick:
        cfg = replace(cfg, per_class=30)  # a storm goes through the whole corpus
    given = {
        "per_class": args.per_class,
        "chars": args.chars,
        "cps": args.cps,
        "minutes": args.minutes,
        "ring": args.ring,
        "out": args.out and Path(args.out),
        "command": " ".join(["bielik-lsp", *argv]),
    }
    cfg = replace(cfg, **{k: v for k, v in given.items() if v is not None})
    return run_typing(server_command(argv[: argv.index("bench")]), cfg, progress=not args.quiet)


def draft_lengths(text: str) -> tuple[int, ...]:
    """`--sweep-ks 2,4` as (2, 4); a clear error for anything but positive integers."""
    try:
        ks = tuple(int(k) for k in text.split(","))
    except ValueError:
        ks = ()
    if not ks or min(ks) < 1:
        raise ConfigError(f"--sweep-ks takes positive integers separated by commas, not {text!r}")
    return ks


def names(text: str, known, what: str) -> tuple[str, ...]:
    """A comma-separated list of known names (`--backend`, `--translations`) as a tuple."""
    given = tuple(text.split(","))
    unknown = [n for n in given if n not in known]
    if unknown:
        raise ConfigError(f"unknown {what} {unknown[0]!r}: use {', '.join(known)}")
    return given
