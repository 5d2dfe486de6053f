"""The `continue`, `doctor` and `serve-model` commands: thin edges that format results."""

from __future__ import annotations

import argparse
import json
import platform
import sys
from pathlib import Path

from app.errors import UserError
from decoder.about import __version__, installer, upgrade_command
from decoder.backends.blas import loaded_blas
from decoder.backends.exactness import UNKNOWN, Outlook, outlook_of
from decoder.backends.registry import BACKENDS, describe_family
from decoder.config import Settings, is_remote
from decoder.generation import Chunk, collect
from decoder.pipeline import load as load_engine


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


def run_continue(settings: Settings, args: argparse.Namespace) -> int:
    """Stream a continuation of the file to stdout; statistics to stderr (or all as JSON)."""
    text = read_prompt(args.file)
    engine = load_engine(settings, progress=not args.quiet)

    def stream(chunk: Chunk) -> None:
        sys.stdout.write(chunk.text)
        sys.stdout.flush()

    result = collect(engine.continue_text(text), None if args.json else stream)
    out = {
        "text": result.text,
        "token_ids": result.ids,
        "stats": result.stats.to_dict(),
        "settings": {
            "target": settings.target,
            "drafter": settings.drafter,
            "k": settings.k,
            "translation": settings.translation,
            "drafter_model": settings.drafter_model if settings.drafter != "none" else None,
            "backend": settings.target_backend,
        },
        "engine": engine.describe(),
        "blas": loaded_blas(),
    }
    if args.json:
        json.dump(out, sys.stdout, ensure_ascii=False, default=str)
        sys.stdout.write("\n")
    else:
        sys.stdout.write("\n")
        print(format_stats(out["stats"]), file=sys.stderr)
        if out["engine"].get("exact", "not measured") != "not measured":
            print(f"-- exact: {out['engine']['exact']}", file=sys.stderr)
    return 0


def format_stats(s: dict) -> str:
    split = ", ".join(f"{k} {v:.2f}s" for k, v in s["time_split"].items())
    return (
        f"-- {s['generated_tokens']} tokens, {s['generated_chars']} characters; "
        f"decode {s['tokens_per_second']:.1f} tok/s, {s['chars_per_second']:.1f} chars/s "
        f"({s['decode_tokens']} tokens, {s['decode_chars']} characters in "
        f"{s['decode_seconds']:.2f}s); "
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


def run_doctor(settings: Settings, args: argparse.Namespace) -> int:
    """Print the platform, each backend's library, the engine, its models and exactness.

    Exit 1 if something makes us slow or broken (a WARNING line says what). `--json` prints the
    same as one object, for editors' health checks.
    """
    report = doctor_report(settings, load=args.load or is_remote(settings.target))
    if args.json:
        json.dump(report, sys.stdout, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        print("\n".join(report["lines"]))
    return 1 if report["warnings"] else 0


def doctor_report(settings: Settings, load: bool) -> dict:
    """What `doctor` says, as data: the lines it prints and the facts an editor reads."""
    lines = [
        f"bielik-lsp {__version__} ({installer()}: {sys.executable})",
        f"platform   {platform.platform()} / Python {platform.python_version()}",
        f"backend    {settings.target_backend} (setting: {settings.backend}); "
        f"drafter on {settings.drafter_model_backend}",
        *(f"{name:<10} {line}" for name in BACKENDS for line in _backend_lines(name, settings)),
        f"target     {settings.target}",
        f"drafter    {settings.drafter} (model: {settings.drafter_model}), k={settings.k}",
        f"adapter    {_adapter_line(settings.drafter_adapter)}",
    ]
    if settings.preset:
        lines.append(f"preset     {settings.preset} on {settings.target_backend}:")
        lines += [f"  {line}" for line in describe_family(settings.preset, settings.target_backend)]
    exact = _outlook(settings)
    if load:
        engine = load_engine(settings, progress=True)
        info = engine.describe()
        lines += _describe({k: v for k, v in info.items() if k != "exact"})  # said below
        measured = getattr(engine, "exactness", None)
        exact = outlook_of(measured) if measured is not None else exact
    lines.append(f"exact      speculation {exact.describe()}")
    return {
        "version": __version__,
        "executable": sys.executable,
        "install": installer(),
        "upgrade": upgrade_command(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "backend": settings.target_backend,
        "target": settings.target,
        "drafter": settings.drafter,
        "drafter_model": settings.drafter_model if settings.drafter != "none" else None,
        "exact": {"status": exact.status, "detail": exact.detail, "fix": exact.fix},
        "warnings": [line for line in lines if "WARNING" in line],
        "lines": lines,
    }


def _outlook(settings: Settings) -> Outlook:
    """Whether speculation will be exact, as the target's backend judges from its build."""
    if is_remote(settings.target):
        return Outlook("unknown", "an inference server decodes: its own speculation decides")
    try:
        judge = getattr(BACKENDS[settings.target_backend].implementation(), "outlook", None)
    except ImportError:
        return UNKNOWN
    return judge(settings) if judge else UNKNOWN


def _adapter_line(folder: str | None) -> str:
    """The tuned drafter adapter in use, or why it cannot be (a WARNING line exits 1)."""
    from decoder.backends.adapters import read_adapter
    from decoder.backends.files import ModelLoadError

    if not folder:
        return "none (the drafter as published; bielik-lsp tune-drafter makes one)"
    try:
        return read_adapter(folder).describe()
    except ModelLoadError as error:
        return f"WARNING {error}"


def _backend_lines(name: str, settings: Settings) -> list[str]:
    """A backend's own doctor lines; a warning only when this configuration uses it."""
    kind = BACKENDS[name]
    used = name in (settings.target_backend, settings.drafter_model_backend)
    try:
        lines = kind.implementation().doctor(settings)
    except ImportError:
        return [f"not installed ({kind.install})"]
    return lines if used else [line for line in lines if "WARNING" not in line]


def _describe(info: dict, indent: str = "") -> list[str]:
    """An engine's description as aligned lines (nested dicts one line each)."""
    out = []
    for key, value in info.items():
        if isinstance(value, dict):
            value = ", ".join(f"{k} {v}" for k, v in value.items() if v not in (None, ""))
        out.append(f"{indent}{key:<10} {value}")
    return out


def run_serve_model(settings: Settings, args: argparse.Namespace) -> int:
    """`serve-model`: become mlx_lm.server or llama-server on the target (or print the command)."""
    from app.serving import default_server, exec_server, server_command

    if is_remote(settings.target):
        raise UserError("serve-model needs a model as --target, not a server URL")
    extra = args.extra[1:] if args.extra[:1] == ["--"] else args.extra
    command = server_command(settings, args.server or default_server(), args.host, args.port, extra)
    if args.dry_run:
        print(" ".join(command.argv))
        return 0
    exec_server(command)
    return 0  # not reached: the server replaced this process
