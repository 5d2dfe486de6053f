"""`bielik-lsp bench load`: decoding and ghost text while other programs keep cores busy.

A writer's machine compiles, browses and indexes while they type. For 0, 1 and every core kept
busy by other programs, in one run:

- our decoding as installed (`auto`), tokens/s and characters/s per excerpt;
- with `--llama-server BIN`, llama-server's plain decoding of the same ids under the same load
  (its own `timings`; paused while it is not measured);
- ghost-text latency from the real server over stdio, typed as `bench --typing` types (into
  Markdown documents: spelling and grammar diagnostics run as in an editor); with `--ref REF`
  (another install or revision, as `bench ab` takes it) its server is typed into too, and with
  `--grammar-off` this install's server with grammar off, under the same load, turn about (the
  order reversed at every level), so a change's latency is seen against the code it started
  from, or grammar's cost on typing, in one run;
- once, on the quiet machine: the CPU seconds a loaded server with an open document uses in
  `--idle-seconds` when nobody types.

The other programs are one process group in a session of its own (`Hogs`), as a build started
in a terminal is: N processes, each a busy loop, ended at the level's end, at the latest after
`HOG_LIMIT_S`, or as soon as this benchmark is gone. Every ratio is a level against the quiet
level of the same engine in this run.

    bielik-lsp bench load [--per-class 3] [--tokens 64] [--busy 0,1,2] [--llama-server BIN]
                          [--ref REF] [--grammar-off]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

from tqdm import tqdm

from app.bench import ab, llama_server, machine
from app.bench import typing as typing_bench
from app.bench.corpus import Excerpt, load_corpus, select
from app.bench.engines import chars_per_second, ours
from app.bench.report import write_report
from app.errors import UserError
from decoder.backends.llamacpp import LlamaCppBackend
from decoder.config import Settings
from decoder.pipeline import Pipeline

LABELS = ("structured", "prose")
HOG_LIMIT_S = 1800.0  # a busy loop never outlives this, whatever happens to the benchmark
SETTLE_S = 1.0  # after the other programs start, before anything is timed
OURS = "ours auto"
SERVER = "llama-server plain"
COMMAND = "bielik-lsp bench load"

# One process group: the leader forks the others; each spins until the deadline or until the
# benchmark (argv[3]) is gone.
HOG = """
import os, sys, time
n, deadline, boss = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
for _ in range(n - 1):
    if os.fork() == 0:
        break
while time.time() < deadline:
    for _ in range(200_000):
        pass
    try:
        os.kill(boss, 0)
    except OSError:
        break
"""


class Hogs:
    """`n` processes each keeping a core busy, in a session of their own, for one `with` block."""

    def __init__(self, n: int, limit_s: float = HOG_LIMIT_S):
        self.n, self.limit_s = n, limit_s
        self.proc: subprocess.Popen | None = None

    def __enter__(self) -> Hogs:
        if self.n > 0:
            deadline = str(time.time() + self.limit_s)
            argv = [sys.executable, "-c", HOG, str(self.n), deadline, str(os.getpid())]
            self.proc = subprocess.Popen(argv, start_new_session=True)
            time.sleep(SETTLE_S)
        return self

    def __exit__(self, *exc) -> None:
        if self.proc is not None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait()


def busy_levels(text: str | None) -> tuple[int, ...]:
    """`--busy 0,1,2` as (0, 1, 2); default: none, one, and every core."""
    if text is None:
        return tuple(sorted({0, 1, os.cpu_count() or 1}))
    try:
        levels = tuple(int(n) for n in text.split(","))
    except ValueError:
        levels = ()
    if not levels or min(levels) < 0 or 0 not in levels:
        raise UserError(f"--busy takes core counts with 0 among them (e.g. 0,1,2), not {text!r}")
    return levels


def decode_level(pipe: Pipeline, excerpts: list[Excerpt], server, tokens: int, bar) -> dict:
    """Every excerpt through our `auto`, then llama-server plain, under the current load."""
    runs: dict[str, dict] = {OURS: {}, SERVER: {}} if server else {OURS: {}}
    threads: list[int] = []
    for excerpt in excerpts:
        result = ours(pipe, excerpt.text, tokens, auto=True)
        threads.append(pipe.engine.runner.plan.last)
        runs[OURS][excerpt.id] = result
        if server:
            runs[SERVER][excerpt.id] = server.complete(pipe.engine.encode(excerpt.text), tokens)
        for result in (r[excerpt.id] for r in runs.values()):
            result["chars_s"] = chars_per_second(result, pipe.engine.table)
        bar.update()
    return {"runs": runs, "threads": threads}


def type_level(sides: dict[str, ab.Install], options: list[str], out: Path, args, level: int):
    """Ghost-text latency while typing into each side's server, `bench --typing`'s own run.

    Its share of first pauses in a newly opened document (a whole prefill under the load) is
    the typing bench's, so its p95 means the same as there. Sides take turns: the first at
    one level goes second at the next.
    """
    names = list(sides) if level % 2 == 0 else list(sides)[::-1]
    typed = {}
    for name in names:
        folder = out / (f"typing-busy{level}" + ("" if name == "this" else f"-{name}"))
        cfg = typing_bench.TypingConfig(
            per_class=args.per_class, chars=args.typing_chars, out=folder, command=COMMAND
        )
        install, settings = sides[name]
        argv = install.serve_argv(options)
        record = asyncio.run(
            typing_bench.run(argv, cfg, False, source=install.source, options=settings)
        )
        typing_bench.write(record, folder)  # every pause, as bench --typing keeps them
        typed[name] = record.summary["all"]
    return typed


async def idle_cpu(argv: list[str], text: str, seconds: float, out: Path) -> float:
    """CPU seconds (server and children) a loaded server with an open document uses untouched."""
    editor = typing_bench.Editor()
    proc = await editor.launch(argv, out / "server-idle.log")
    try:
        await editor.initialise(typing_bench.TypingConfig.ready_timeout_s)
        editor.open("file:///idle.md", text)
        await typing_bench.settle(proc)  # its background prefill and prepared suggestion end
        before = typing_bench.cpu_seconds(proc)
        await asyncio.sleep(seconds)
        return typing_bench.cpu_seconds(proc) - before
    finally:
        await editor.stop()


def summarize(levels: dict[int, dict], excerpts: list[Excerpt]) -> dict:
    """Per level: medians per engine, each engine against its quiet level, ours against llama."""
    ids = [e.id for e in excerpts]
    quiet = levels[0]["runs"]
    out = {}
    for busy, level in levels.items():
        runs = level["runs"]
        row: dict = {"threads": statistics.median(level["threads"])}
        for name, by_id in runs.items():
            row[name] = {
                "tok_s": statistics.median(by_id[i]["tok_s"] for i in ids),
                "chars_s": statistics.median(by_id[i]["chars_s"] for i in ids),
                "to_quiet": statistics.median(
                    by_id[i]["tok_s"] / quiet[name][i]["tok_s"] for i in ids
                ),
            }
        if SERVER in runs:
            row["ours / llama-server"] = statistics.median(
                runs[OURS][i]["tok_s"] / runs[SERVER][i]["tok_s"] for i in ids
            )
        for side, typed in level.get("typing", {}).items():
            keys = ("p50_ms", "p95_ms", "pauses", "with_suggestion")
            row["typing" if side == "this" else f"typing {side}"] = {k: typed[k] for k in keys}
        out[busy] = row
    return out


def _num(value, fmt: str = "{:.1f}") -> str:
    return "–" if value is None else fmt.format(value)


def report(summary: dict, head: str, idle: dict | None) -> str:
    lines = [head, ""]
    lines += [
        "| busy cores | threads | ours auto tok/s | chars/s | to quiet | llama-server plain tok/s "
        "| to quiet | ours / llama-server | ghost text p50 ms | p95 ms | pauses answered |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for busy, row in summary.items():
        server = row.get(SERVER, {})
        typed = row.get("typing", {})
        answered = f"{typed['with_suggestion']}/{typed['pauses']}" if typed else "–"
        lines.append(
            f"| {busy} | {row['threads']:g} | {row[OURS]['tok_s']:.1f} | "
            f"{row[OURS]['chars_s']:.1f} | {row[OURS]['to_quiet']:.2f}x | "
            f"{_num(server.get('tok_s'))} | {_num(server.get('to_quiet'), '{:.2f}x')} | "
            f"{_num(row.get('ours / llama-server'), '{:.2f}x')} | "
            f"{_num(typed.get('p50_ms'), '{:.0f}')} | {_num(typed.get('p95_ms'), '{:.0f}')} | "
            f"{answered} |"
        )
    lines += ["", "Medians over the excerpts; `to quiet` is the median per-excerpt ratio."]
    lines += ref_table(summary)
    if idle:
        lines.append(
            f"\nA loaded server with an open document, left alone: {idle['cpu_s']:.3f} CPU s "
            f"in {idle['seconds']:g} s."
        )
    return "\n".join(lines)


def ref_table(summary: dict) -> list[str]:
    """Ghost-text latency, this install beside `--ref`'s or grammar off, level by level."""
    others = sorted(
        {k[len("typing ") :] for row in summary.values() for k in row if k.startswith("typing ")}
    )
    if not others:
        return []
    head = " | ".join(f"{o} p50 ms | p95 ms | answered" for o in others)
    lines = [
        "",
        f"Ghost text, this install and {', '.join(others)}, typed in turn under the same load:",
        "",
        f"| busy cores | this p50 ms | p95 ms | answered | {head} |",
        "|---|---|---|---|" + "---|---|---|" * len(others),
    ]
    for busy, row in summary.items():
        cells = []
        for typed in (row.get("typing", {}), *(row.get(f"typing {o}", {}) for o in others)):
            answered = f"{typed['with_suggestion']}/{typed['pauses']}" if typed else "–"
            cells += [_num(typed.get(q), "{:.0f}") for q in ("p50_ms", "p95_ms")] + [answered]
        lines.append(f"| {busy} | " + " | ".join(cells) + " |")
    return lines


def plot(summary: dict, path: Path) -> None:
    """Speed against the quiet machine, and ghost-text latency, by busy cores."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    busy = list(summary)
    fig, (speed, latency) = plt.subplots(1, 2, figsize=(10, 4))
    for name in (OURS, SERVER):
        if name in summary[0]:
            speed.plot(busy, [summary[b][name]["to_quiet"] for b in busy], "o-", label=name)
    speed.set(xlabel="cores kept busy by other programs", ylabel="tokens/s, to the quiet machine")
    speed.set_xticks(busy)
    speed.set_ylim(0, 1.1)
    speed.legend()
    sides = ("typing", "typing ref", "typing grammar-off")
    for side, style in zip(sides, ("o-", "s--", "^:"), strict=True):
        typed = [b for b in busy if summary[b].get(side, {}).get("p50_ms") is not None]
        for q in ("p50_ms", "p95_ms") if typed else ():
            name = q[:3] if side == "typing" else f"{side[len('typing ') :]} {q[:3]}"
            latency.plot(typed, [summary[b][side][q] for b in typed], style, label=name)
    latency.set(xlabel="cores kept busy by other programs", ylabel="pause -> ghost text, ms")
    latency.set_xticks(busy)
    if latency.lines:  # no typing: no latency to show
        latency.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def run(settings: Settings, args: argparse.Namespace, argv: list[str]) -> str:
    levels = busy_levels(args.busy)
    binary = args.llama_server or default_llama_server()
    if binary:
        llama_server.require(binary)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    pipe = Pipeline.load(replace(settings, max_tokens=args.tokens), progress=not args.quiet)
    if not isinstance(pipe.engine.runner, LlamaCppBackend):
        raise UserError("bench load measures the llama.cpp engine: add --backend llamacpp")
    excerpts = [e for e in select(load_corpus(), args.per_class) if e.label in LABELS]
    options = argv[: argv.index("bench")]
    sides = typing_sides(args.ref, not args.quiet, args.grammar_off)
    server = None
    if binary:
        threads = pipe.engine.runner.threads
        log = out / "llama-server-plain.log"
        server = llama_server.LlamaServer(binary, pipe.target.path, threads, None, log)
    started = machine.load_average()
    results: dict[int, dict] = {}
    idle = None
    try:
        with tqdm(total=len(levels) * len(excerpts), desc="load", disable=args.quiet) as bar:
            for busy in levels:
                with Hogs(busy):
                    results[busy] = decode_level(pipe, excerpts, server, args.tokens, bar)
                    if args.typing_chars:
                        results[busy]["typing"] = type_level(sides, options, out, args, busy)
        if args.idle_seconds:
            server_argv = typing_bench.server_command(options)
            cpu = asyncio.run(idle_cpu(server_argv, excerpts[0].text, args.idle_seconds, out))
            idle = {"cpu_s": cpu, "seconds": args.idle_seconds}
    finally:
        if server is not None:
            server.close()
    summary = summarize(results, excerpts)
    head = (
        f"# bench load: {args.tokens} greedy tokens per excerpt, {pipe.target.spec}, "
        f"{len(excerpts)} excerpts\n\n{machine.describe()}; load average {started} before, "
        f"{machine.load_average()} after.\n\nllama.cpp: {json.dumps(pipe.engine.runner.describe())}"
        f"\n\nllama-server: {binary or 'not compared (--llama-server BIN)'}"
        f"\n\nGhost text typed into: "
        + ", ".join(
            f"{name}: {ab.revision(i.source)} ({i.source}){' ' + str(o) if o else ''}"
            for name, (i, o) in sides.items()
        )
    )
    text = report(summary, head, idle)
    raw = {"summary": summary, "levels": results, "idle": idle, "command": argv}
    write_report(out, "load", text, raw)
    plot(summary, out / "load.png")
    return text


def typing_sides(
    ref: str | None, progress: bool, grammar_off: bool = False
) -> dict[str, tuple[ab.Install, dict]]:
    """The servers typed into, with their settings.

    This install, `--ref`'s (as `bench ab` resolves it), and this install with grammar off.
    """
    this = ab.this_install()
    sides = {"this": (this, {})}
    if ref:
        sides["ref"] = (ab.resolve(ref, progress), {})
    if grammar_off:
        sides["grammar-off"] = (this, {"grammar": False})
    return sides


def default_llama_server() -> str | None:
    """llama-server on PATH, or the one scripts/build_llama_server.sh built."""
    built = Path.home() / ".cache" / "bielik-lsp" / "llama-server" / "bin" / "llama-server"
    found = shutil.which("llama-server")
    return found or (str(built) if built.exists() else None)
