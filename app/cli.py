"""`bielik-lsp`: the language server (default) and its commands (continue, bench, tune-drafter)."""

from __future__ import annotations

import argparse
import importlib.util
import sys
from typing import Any

from decoder.about import __version__
from decoder.backends import threads
from decoder.backends.blas import ensure_fast_blas

# libllama before numpy: on an H200 (CUDA 13.0) a CUDA build of llama.cpp segfaulted loading a
# model once numpy's bundled OpenBLAS was mapped first, and numpy comes with decoder.config.
if importlib.util.find_spec("llama_cpp") is not None:
    import decoder.compat.llama_cpp  # noqa: F401

from decoder.config import SCHEMA, Settings  # noqa: E402


def build_parser() -> argparse.ArgumentParser:
    # No abbreviations: `continue --drafter` must never be read as a prefix of --drafter-model.
    p = argparse.ArgumentParser(prog="bielik-lsp", description=__doc__, allow_abbrev=False)
    p.add_argument(
        "--config",
        help="TOML settings file (default: $BIELIK_LSP_CONFIG or ~/.config/bielik-lsp/config.toml)",
    )
    p.add_argument("--version", action="version", version=f"bielik-lsp {__version__}")
    add_settings(p, "global")
    add_transport(p)  # `bielik-lsp --stdio` serves too, when a client's args leave out `serve`
    sub = p.add_subparsers(dest="command")
    serve = sub.add_parser("serve", allow_abbrev=False, help="speak LSP over stdio (the default)")
    add_transport(serve)
    serve.add_argument(
        "--tcp", metavar="HOST:PORT", help="listen on TCP instead of stdio (debugging)"
    )
    _add_continue(sub)
    _add_serve_model(sub)
    doctor = sub.add_parser(
        "doctor", allow_abbrev=False, help="show backends, device and models; exit 1 on problems"
    )
    doctor.add_argument(
        "--load", action="store_true", help="also load the models: exactness and measured costs"
    )
    doctor.add_argument(
        "--json", action="store_true", help="one JSON object (editors' health checks read it)"
    )
    doctor.add_argument(
        "--cpu-levels",
        action="store_true",
        help="load the models on each CPU level of llama.cpp this machine runs; check each exact",
    )
    add_settings(doctor, "global", given_only=True)  # `doctor --preset P` too
    from app.bench.cli import add_parser
    from app.checking import add_parser as add_check
    from app.setup import add_parser as add_setup
    from app.tuning.tune import add_parser as add_tune

    add_parser(sub)
    add_tune(sub)
    add_check(sub)
    add_setup(sub)
    return p


def add_transport(parser: argparse.ArgumentParser) -> None:
    """What language clients append to the server's command (vscode-languageclient, others).

    Defaults are left out of the namespace (SUPPRESS) so that `serve`'s own parser never
    overwrites what was given before the subcommand.
    """
    quiet = argparse.SUPPRESS
    parser.add_argument(
        "--stdio", action="store_true", default=quiet, help="LSP over stdio: the default"
    )
    parser.add_argument(
        "--clientProcessId",
        dest="client_process_id",
        type=int,
        metavar="PID",
        default=quiet,
        help="exit when this process (the editor) is gone",
    )
    # Other transports of vscode-languageclient: refused in _serve with one clear line.
    parser.add_argument(
        "--node-ipc",
        dest="other_transport",
        action="store_const",
        const="ipc",
        default=quiet,
        help=quiet,
    )
    parser.add_argument("--socket", "--pipe", dest="other_transport", default=quiet, help=quiet)


def _add_continue(sub: Any) -> None:
    cont = sub.add_parser(
        "continue",
        allow_abbrev=False,
        help="continue a text file and print the continuation and statistics",
    )
    cont.add_argument("file")
    add_settings(cont, "continue")
    add_settings(cont, "global", given_only=True)  # `continue FILE --drafter-model DIR` too
    cont.add_argument(
        "--json", action="store_true", help="print one JSON object (text, token_ids, stats)"
    )
    cont.add_argument("--quiet", action="store_true", help="no progress bars")


def _add_serve_model(sub: Any) -> None:
    from app.serving import SERVERS

    sm = sub.add_parser(
        "serve-model",
        allow_abbrev=False,
        help="start an inference server on --target for a team: mlx_lm.server or llama-server",
    )
    sm.add_argument(
        "--server", choices=SERVERS, help="default: llama-server where installed, else mlx"
    )
    sm.add_argument("--host", default="127.0.0.1", help="0.0.0.0 to serve the network")
    sm.add_argument("--port", type=int, default=8080)
    sm.add_argument("--dry-run", action="store_true", help="print the command, start nothing")
    sm.add_argument("extra", nargs=argparse.REMAINDER, help="after --: passed to the server")


def add_settings(
    parser: argparse.ArgumentParser, where: str, schema=SCHEMA, given_only: bool = False
) -> None:
    """A flag for each setting whose place on the command line is `where` (decoder.config).

    `given_only`: a flag not given leaves the value alone (a global flag repeated after a
    subcommand must not reset what was given before it).
    """
    for entry in schema:
        if entry.meta.cli != where:
            continue
        kind: dict = {"help": entry.meta.doc, "dest": entry.name}
        if given_only:
            kind["default"] = argparse.SUPPRESS
        if entry.kind == "bool":
            kind["action"] = argparse.BooleanOptionalAction
        else:
            kind["type"] = {"int": int, "float": float, "str": str}[entry.kind]
        if entry.choices:
            kind["choices"] = entry.choices
        parser.add_argument(entry.flag, **kind)


def overrides(args: argparse.Namespace) -> dict:
    """The settings given as flags (None: not given)."""
    return {e.name: getattr(args, e.name) for e in SCHEMA if e.meta.cli and hasattr(args, e.name)}


def _serve(settings: Settings, args: argparse.Namespace, argv: list[str]) -> int:
    from app.errors import UserError
    from lsp_server.server import serve

    if hasattr(args, "other_transport"):
        raise UserError(
            "bielik-lsp speaks LSP over stdio only, not --node-ipc, --socket or --pipe:"
            " use the client's stdio transport (vscode-languageclient: TransportKind.stdio)"
        )
    client = getattr(args, "client_process_id", None)
    return serve(settings, tcp=getattr(args, "tcp", None), client_process_id=client)


def _run(name: str):
    """`app.commands.<name>`, imported when it runs (the language server starts without it)."""

    def run(settings: Settings, args: argparse.Namespace, argv: list[str]) -> int:
        from app import commands

        return getattr(commands, name)(settings, args)

    return run


def _doctor(settings: Settings, args: argparse.Namespace, argv: list[str]) -> int:
    if args.cpu_levels:
        from app.levels import run

        return run(settings, args, argv)
    return _run("run_doctor")(settings, args, argv)


def _bench(settings: Settings, args: argparse.Namespace, argv: list[str]) -> int:
    from app.bench.cli import run

    return run(settings, args, argv)


def _tune(settings: Settings, args: argparse.Namespace, argv: list[str]) -> int:
    from app.tuning.tune import run

    return run(settings, args)


def _setup(settings: Settings, args: argparse.Namespace, argv: list[str]) -> int:
    from app.setup import run

    return run(settings, args)


def _check(settings: Settings, args: argparse.Namespace, argv: list[str]) -> int:
    from app.checking import run_check

    return run_check(settings, args)


COMMANDS = {
    None: _serve,
    "serve": _serve,
    "continue": _run("run_continue"),
    "doctor": _doctor,
    "serve-model": _run("run_serve_model"),
    "bench": _bench,
    "tune-drafter": _tune,
    "check": _check,
    "setup": _setup,
}


def main(argv: list[str] | None = None) -> int:
    ensure_fast_blas()
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser().parse_args(argv)
    from app.errors import UserError
    from decoder.backends.files import ModelLoadError
    from decoder.config import ConfigError, load_settings
    from decoder.engine import PromptTooLong
    from decoder.remote import ServerError

    errors = (UserError, ConfigError, ModelLoadError, PromptTooLong, ServerError)
    try:
        settings = load_settings(args.config, overrides(args))
        if args.command in (None, "serve", "continue"):
            threads.own_group()  # a fair share of the CPU against other programs' groups
        return COMMANDS[args.command](settings, args, argv)
    except errors as e:
        print(f"bielik-lsp: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
