"""`bielik-lsp bench ab REF`: this install against another one, on this machine, in one run.

Every speed check elsewhere compares us with a peer or with our own plain decoding in the same
build, so a cost that both sides pay stays invisible; and figures of two days, on machines that
change between sessions, do not compare. So a change to the decoder, a backend or the request
path is measured against the install it started from, side by side:

- REF is a git revision of this repository (checked out once as a worktree under the cache,
  ~/.cache/bielik-lsp/ab/SHA, and installed there by that revision's own install.sh), or the
  folder, Python or `bielik-lsp` of another install.
- Each side runs its own code in its own process (app/bench/ab_worker.py, loaded once per
  backend; `python -P`, so nothing of the folder it runs in is imported), with the same global
  options (`bielik-lsp --no-exact bench ab REF` compares both with exact off). Both stay loaded
  and take turns: every excerpt, every repeat, the side that goes first alternating, so drift
  and order hit both alike.
- Per backend and content type: prefill speed (from an empty cache, as `continue` starts),
  plain decoding and `auto` decoding speed (tokens/s after the first token, and characters/s),
  and the time from a document's opening to its first suggestion over LSP (each side's real
  server on stdio, a new document each time, after the server has gone quiet).
- Medians over the repeats per excerpt, then the median per-excerpt ratio per content type;
  whether both sides' plain decoding wrote the same tokens.

    bielik-lsp [global options] bench ab REF [--backend llamacpp,mlx] [--per-class 3]
        [--repeats 3] [--tokens 64] [--excerpts FILE] [--lsp-repeats N] [--out DIR]

Writes OUT/ab.md, OUT/ab.json and OUT/ab.png.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

from app.bench import machine
from app.bench import typing as typing_bench
from app.bench.corpus import Excerpt, load_corpus, select
from app.bench.drafter import read_excerpts
from app.bench.report import write_report
from app.errors import UserError
from decoder.backends.files import cache_root
from decoder.backends.registry import BACKENDS
from decoder.config import Settings

LABELS = ("structured", "prose")
SOURCE = Path(__file__).resolve().parents[2]  # this install's code
WORKER = Path(__file__).with_name("ab_worker.py")
MARK = "AB "  # ab_worker.MARK
MEASURES = ("prefill", "plain", "auto", "first suggestion")
INSTALLED = ".bench-ab-installed"  # in a checkout whose install.sh finished
ANSWER_S = 60.0  # no suggestion for a document by then: none (counted apart)


# ---------------------------------------------------------------- the two installs


@dataclass(frozen=True)
class Install:
    """An install of bielik-lsp: its Python, and what it is (a revision, with or without edits)."""

    name: str
    python: Path
    source: Path  # the folder its `app` package is imported from

    def serve_argv(self, options: list[str]) -> list[str]:
        """Its language server with global `options`, as an editor starts it.

        -P: its own code, not a package of the folder this runs in.
        """
        return [str(self.python), "-P", "-m", "app.cli", *options, "serve"]


def this_install() -> Install:
    return Install(f"this ({revision(SOURCE)})", Path(sys.executable), SOURCE)


def resolve(ref: str, progress: bool) -> Install:
    """REF: another install's folder, Python or `bielik-lsp`, else a git revision of this repo."""
    path = Path(ref).expanduser()
    python = python_of(path) if path.exists() else checkout(commit_of(ref), progress)
    source = source_of(python, ref)
    return Install(revision(source), python, source)


def python_of(path: Path) -> Path:
    """The Python of the install at `path` (its folder, its Python or its `bielik-lsp`)."""
    if path.is_file():
        return path if path.name.startswith("python") else path.with_name("python")
    for venv in (".venv", "venv", "."):
        for python in ("bin/python", "Scripts/python.exe"):
            if (path / venv / python).is_file():
                return path / venv / python
    raise UserError(f"bench ab: {path} holds no install of bielik-lsp (no .venv/bin/python)")


def source_of(python: Path, ref: str) -> Path:
    """Where that Python imports bielik-lsp's `app` from (it must import it)."""
    found = subprocess.run(
        [str(python), "-P", "-c", "import app.cli, os; print(os.path.dirname(app.__path__[0]))"],
        env=_without_pythonpath(),
        capture_output=True,
        text=True,
    )
    if found.returncode != 0:
        raise UserError(f"bench ab: {ref} ({python}) cannot import bielik-lsp's app.cli")
    return Path(found.stdout.strip())


def revision(source: Path) -> str:
    """The git revision of a source folder, marked `+edits` where it differs from it."""
    head = _git(source, "rev-parse", "--short", "HEAD")
    if head is None:
        return str(source)
    edits = _git(source, "status", "--porcelain", "--untracked-files=no")
    return head + ("+edits" if edits else "")


def commit_of(ref: str) -> str:
    sha = _git(SOURCE, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    if not sha:
        raise UserError(
            f"bench ab: {ref!r} is neither an install (a folder, its Python or bielik-lsp) "
            f"nor a revision of the repository at {SOURCE}"
        )
    return sha


def checkout(sha: str, progress: bool) -> Path:
    """`sha` as a worktree under the cache, installed by its own install.sh once; its Python."""
    root = cache_root() / "ab" / sha[:12]
    python = root / ".venv" / "bin" / "python"
    if (root / INSTALLED).exists():
        return python
    if not (root / "install.sh").exists():
        _git(SOURCE, "worktree", "prune")
        if _git(SOURCE, "worktree", "add", "--force", "--detach", str(root), sha) is None:
            raise UserError(f"bench ab: git cannot check {sha[:12]} out into {root}")
    log = root / "install.log"
    desc = f"installing {sha[:12]} with its own install.sh (once; log: {log})"
    with log.open("w") as out, tqdm(desc=desc, unit=" lines", disable=not progress) as bar:
        proc = subprocess.Popen(
            ["./install.sh"],
            cwd=root,
            env=_without_pythonpath("VIRTUAL_ENV", "BIELIK_LSP_VENV"),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for line in proc.stdout:
            out.write(line)
            bar.set_postfix_str(line.strip()[-60:], refresh=False)
            bar.update()
        if proc.wait() != 0 or not python.is_file():
            raise UserError(f"bench ab: {sha[:12]}'s install.sh failed (see {log})")
    (root / INSTALLED).touch()
    return python


def _git(folder: Path, *args: str) -> str | None:
    try:
        run = subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True)
    except OSError:
        return None
    return run.stdout.strip() if run.returncode == 0 else None


def _without_pythonpath(*more: str) -> dict:
    """This environment, without what would make another install import this one's code."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", *more)}


# ---------------------------------------------------------------- engine runs


class Worker:
    """One install's engine in a process of its own (ab_worker.py), asked one run at a time."""

    def __init__(self, install: Install, options: list[str], log: Path):
        env = _without_pythonpath()
        env["PYTHONPATH"] = str(install.source)
        self.log = log
        self.proc = subprocess.Popen(
            [str(install.python), "-P", "-c", WORKER.read_text(encoding="utf-8"), *options],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log.open("w"),
            text=True,
            start_new_session=True,  # its own scheduling group, as `continue` takes
        )
        self.describe = self._answer()["ready"]

    def run(self, text: str, tokens: int, policy: str) -> dict:
        job = {"text": text, "tokens": tokens, "policy": policy}
        self.proc.stdin.write(json.dumps(job, ensure_ascii=False) + "\n")
        self.proc.stdin.flush()
        return self._answer()

    def _answer(self) -> dict:
        for line in self.proc.stdout:
            if line.startswith(MARK):
                answer = json.loads(line[len(MARK) :])
                if "error" in answer:
                    raise UserError(f"bench ab: {answer['error']} (see {self.log})")
                return answer
        raise UserError(f"bench ab: an engine exited with code {self.proc.wait()} (see {self.log})")

    def close(self) -> None:
        self.proc.stdin.close()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def speeds(run: dict, text: str) -> dict:
    """A run's prefill and decode speeds, in tokens and in characters per second."""
    prefill, decode = run["prefill_s"], run["decode_s"]
    return {
        "prefill_tok_s": run["prefilled_tokens"] / prefill if prefill else None,
        "prefill_chars_s": len(text) / prefill if prefill else None,
        "tok_s": run["decode_tokens"] / decode if decode else None,
        "chars_s": run["decode_chars"] / decode if decode else None,
        "accepted": run["accepted"],
        "drafted": run["drafted"],
        "ids": run["ids"],
    }


def turns(sides: list, repeat: int, index: int) -> list:
    """Both sides, the first one alternating by repeat and excerpt (ABBA...)."""
    return sides if (repeat + index) % 2 == 0 else sides[::-1]


def engine_runs(workers: dict, excerpts: list[Excerpt], cfg: AbConfig, bar) -> dict:
    """Plain and auto runs of every excerpt, every repeat, the sides taking turns."""
    runs = {side: {e.id: {"plain": [], "auto": []} for e in excerpts} for side in workers}
    for worker in workers.values():
        worker.run(excerpts[0].text, 8, "plain")  # first pass of each process: not timed
    for repeat in range(cfg.repeats):
        for index, excerpt in enumerate(excerpts):
            for policy in ("plain", "auto"):
                for side in turns(list(workers), repeat, index):
                    run = workers[side].run(excerpt.text, cfg.tokens, policy)
                    runs[side][excerpt.id][policy].append(speeds(run, excerpt.text))
                    bar.update()
    return runs


# ---------------------------------------------------------------- first suggestion over LSP


async def first_suggestions(
    installs: dict[str, Install], backend: str, options: list[str], excerpts, cfg, out, bar
) -> dict:
    """Per side and excerpt: ms from opening a document to its first suggestion, and the asks.

    Each side's own server, as an editor starts it; a new document each time, asked at its end
    as soon as it is open, once every server has gone quiet.
    """
    editors, procs = {}, {}
    try:
        for side, install in installs.items():
            editors[side] = typing_bench.Editor()
            log = out / f"server-{backend}-{side}.log"
            argv = install.serve_argv(options)
            procs[side] = await editors[side].launch(argv, log, source=install.source)
            await editors[side].initialise(typing_bench.TypingConfig.ready_timeout_s)
        times = {side: {e.id: [] for e in excerpts} for side in installs}
        for repeat in range(cfg.lsp_repeats):
            for index, excerpt in enumerate(excerpts):
                context = typing_bench.script_for(excerpt, cfg.chars).context
                for side in turns(list(installs), repeat, index):
                    for proc in procs.values():
                        await typing_bench.settle(proc)
                    uri = f"file:///bench-ab/{repeat}/{excerpt.id}.md"
                    times[side][excerpt.id].append(await _first(editors[side], uri, context))
                    bar.update()
        return times
    finally:
        for editor in editors.values():
            await editor.stop()


async def _first(editor: typing_bench.Editor, uri: str, text: str) -> dict:
    """Open `uri`, ask at its end until a suggestion comes (or ANSWER_S pass): ms and asks.

    An empty answer is asked again at once, as an editor asks again when the writer moves on.
    """
    editor.open(uri, text)
    began, asks, ms = time.perf_counter(), 0, None
    while ms is None and time.perf_counter() - began < ANSWER_S:
        try:
            items, _, _ = await asyncio.wait_for(editor.request(), ANSWER_S)
        except TimeoutError:
            raise UserError(f"bench ab: a server did not answer in {ANSWER_S:g} s") from None
        asks += 1
        if items:
            ms = round((time.perf_counter() - began) * 1000, 1)
    editor.close(uri)
    return {"ms": ms, "asks": asks}


# ---------------------------------------------------------------- the run


@dataclass(frozen=True)
class AbConfig:
    backends: tuple[str, ...]
    per_class: int = 3
    repeats: int = 3
    lsp_repeats: int = 3
    tokens: int = 64
    chars: int = 160  # typed after the opened part in the typing bench: the part opened here
    excerpts: str | None = None


def excerpts_of(cfg: AbConfig) -> list[Excerpt]:
    """Structured and prose excerpts: the bench corpus's, or those of --excerpts FILE."""
    if cfg.excerpts is None:
        return [e for e in select(load_corpus(), cfg.per_class) if e.label in LABELS]
    rows = read_excerpts(cfg.excerpts)
    chosen = [
        r for label in LABELS for r in [r for r in rows if r["label"] == label][: cfg.per_class]
    ]
    if not chosen:
        raise UserError(f"--excerpts {cfg.excerpts}: no excerpt labelled structured or prose")
    return [Excerpt(r["id"], r["label"], r["text"], cfg.excerpts, "") for r in chosen]


def measure(installs: dict[str, Install], options: list[str], cfg: AbConfig, out, progress):
    """Every backend: engine runs, then first suggestions; raw results by backend."""
    excerpts = excerpts_of(cfg)
    per_backend = len(excerpts) * (2 * cfg.repeats + cfg.lsp_repeats) * len(installs)
    raw = {}
    with tqdm(total=per_backend * len(cfg.backends), desc="bench ab", disable=not progress) as bar:
        for backend in cfg.backends:
            args = [*options, "--backend", backend]
            workers = {}
            try:
                for side, install in installs.items():
                    workers[side] = Worker(install, args, out / f"engine-{backend}-{side}.log")
                runs = engine_runs(workers, excerpts, cfg, bar)
                described = {side: w.describe for side, w in workers.items()}
            finally:
                for worker in workers.values():
                    worker.close()
            lsp = {side: {e.id: [] for e in excerpts} for side in installs}
            if cfg.lsp_repeats:
                lsp = asyncio.run(
                    first_suggestions(installs, backend, args, excerpts, cfg, out, bar)
                )
            raw[backend] = {"engines": described, "runs": runs, "lsp": lsp}
    return excerpts, raw


def run(settings: Settings, args: argparse.Namespace, argv: list[str]) -> str:
    options = argv[: argv.index("bench")]
    backends = (
        tuple(args.ab_backends.split(",")) if args.ab_backends else (settings.target_backend,)
    )
    unknown = [b for b in backends if b not in BACKENDS]
    if unknown:
        raise UserError(f"bench ab: unknown backend {unknown[0]!r}: use {', '.join(BACKENDS)}")
    cfg = AbConfig(
        backends=backends,
        per_class=args.per_class,
        repeats=args.repeats,
        lsp_repeats=args.repeats if args.lsp_repeats is None else args.lsp_repeats,
        tokens=args.tokens,
        excerpts=args.excerpts,
    )
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    installs = {"this": this_install(), "ref": resolve(args.ref, not args.quiet)}
    started = machine.load_average()
    excerpts, raw = measure(installs, options, cfg, out, not args.quiet)
    summary = {b: summarize(r, excerpts) for b, r in raw.items()}
    head = header(installs, cfg, options, argv, started, len(excerpts))
    text = report(summary, head, installs)
    record = {
        "installs": {k: vars(v) for k, v in installs.items()},
        "config": vars(cfg),
        "excerpts": [e.id for e in excerpts],
        "summary": summary,
        "raw": raw,
        "command": ["bielik-lsp", *argv],
        "machine": machine.describe(),
    }
    write_report(out, "ab", text, record)
    plot(summary, installs, out / "ab.png")
    return text


# ---------------------------------------------------------------- summary, report, plot


def _median(values) -> float | None:
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def _per_excerpt(runs: dict, lsp: dict, side: str, excerpt: str) -> dict[str, dict]:
    """One side's medians over the repeats of one excerpt, per measure."""
    engine = runs[side][excerpt]
    both = engine["plain"] + engine["auto"]  # every run starts with a prefill from empty
    return {
        "prefill": {
            "tok_s": _median(r["prefill_tok_s"] for r in both),
            "chars_s": _median(r["prefill_chars_s"] for r in both),
        },
        "plain": {k: _median(r[k] for r in engine["plain"]) for k in ("tok_s", "chars_s")},
        "auto": {k: _median(r[k] for r in engine["auto"]) for k in ("tok_s", "chars_s")},
        "first suggestion": {"ms": _median(t["ms"] for t in lsp[side][excerpt])},
    }


def _ratio(this: dict, ref: dict, measure: str) -> float | None:
    """This side's speed over REF's (for a time: REF's time over this side's)."""
    key = "ms" if measure == "first suggestion" else "tok_s"
    a, b = this.get(key), ref.get(key)
    if a is None or b is None or a == 0 or b == 0:
        return None
    return b / a if key == "ms" else a / b


def summarize(raw: dict, excerpts: list[Excerpt]) -> dict:
    """Per content type and measure: each side's medians and the median per-excerpt ratio."""
    runs, lsp = raw["runs"], raw["lsp"]
    out = {}
    for label in LABELS:
        ids = [e.id for e in excerpts if e.label == label]
        if not ids:
            continue
        per = {i: {s: _per_excerpt(runs, lsp, s, i) for s in runs} for i in ids}
        row = {}
        for name in MEASURES:
            ratios = [_ratio(per[i]["this"][name], per[i]["ref"][name], name) for i in ids]
            row[name] = {
                side: {
                    k: _median(per[i][side][name][k] for i in ids) for k in per[ids[0]][side][name]
                }
                for side in runs
            }
            row[name]["ratios"] = ratios
            row[name]["ratio"] = _median(ratios)
        row["same plain tokens"] = sum(
            runs["this"][i]["plain"][0]["ids"] == runs["ref"][i]["plain"][0]["ids"] for i in ids
        )
        row["excerpts"] = len(ids)
        row["answered"] = {s: sum(t["ms"] is not None for i in ids for t in lsp[s][i]) for s in lsp}
        row["asks"] = {s: sum(t["asks"] for i in ids for t in lsp[s][i]) for s in lsp}
        row["asked"] = sum(len(lsp["this"][i]) for i in ids)
        out[label] = row
    return out


def header(installs, cfg: AbConfig, options, argv, started, n: int) -> str:
    names = " against ".join(f"**{i.name}** ({i.python})" for i in installs.values())
    source = cfg.excerpts or "the bench corpus (polish/data/bench.jsonl)"
    return (
        f"# bench ab: {names}\n\n"
        f"`bielik-lsp {' '.join(argv)}`: {n} excerpts of {source}, {cfg.repeats} repeats "
        f"({cfg.lsp_repeats} over LSP), {cfg.tokens} tokens per run; global options of both "
        f"sides: {' '.join(options) or 'none'}.\n\n{machine.describe()}; load average "
        f"{started} before, {machine.load_average()} after."
    )


def report(summary: dict, head: str, installs: dict[str, Install]) -> str:
    this, ref = installs["this"].name, installs["ref"].name
    lines = [head]
    for backend, rows in summary.items():
        lines += [
            f"\n## {backend}\n",
            f"| type | measure | {this} | {ref} | this / ref (speed) | per excerpt |",
            "|---|---|---|---|---|---|",
        ]
        for label, row in rows.items():
            for name in MEASURES:
                cell = row[name]
                ratios = ", ".join(_fmt(r, "{:.2f}") for r in cell["ratios"])
                lines.append(
                    f"| {label} | {name} | {_value(cell['this'])} | {_value(cell['ref'])} | "
                    f"**{_fmt(cell['ratio'], '{:.2f}x')}** | {ratios} |"
                )
        lines += [_counts(label, row) for label, row in rows.items()]
    lines.append(
        "\nSpeeds are medians over the repeats of each excerpt, then over the excerpts; the "
        "ratio is the median per-excerpt ratio (for the first suggestion: ref's time over "
        "this one's). Prefill: from an empty cache, the runs of both policies. First suggestion: "
        "from a document's opening; an empty answer is asked again at once."
    )
    return "\n".join(lines)


def _counts(label: str, row: dict) -> str:
    same = f"{row['same plain tokens']}/{row['excerpts']}"
    line = f"\n{label}: plain decoding wrote the same tokens on both sides for {same} excerpts"
    if not row["asked"]:
        return line + "."
    return (
        f"{line}; a suggestion came within {ANSWER_S:g} s for "
        f"{row['answered']['this']}/{row['asked']} (this) and "
        f"{row['answered']['ref']}/{row['asked']} (ref) documents, after "
        f"{row['asks']['this']} and {row['asks']['ref']} requests in all."
    )


def _value(cell: dict) -> str:
    if "ms" in cell:
        return _fmt(cell["ms"], "{:.0f} ms")
    return f"{_fmt(cell['tok_s'], '{:.1f}')} tok/s, {_fmt(cell['chars_s'], '{:.0f}')} chars/s"


def _fmt(value, spec: str) -> str:
    return "–" if value is None else spec.format(value)


def plot(summary: dict, installs: dict[str, Install], path: Path) -> None:
    """Per backend: this side's speed over REF's (log scale) by measure and type; dots: excerpts."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(summary), figsize=(6 * len(summary), 4), squeeze=False)
    width = 0.8 / len(LABELS)
    for ax, (backend, rows) in zip(axes[0], summary.items(), strict=True):
        for n, label in enumerate(rows):
            xs = [m + n * width for m in range(len(MEASURES))]
            medians = [rows[label][m]["ratio"] or float("nan") for m in MEASURES]
            bars = ax.bar(xs, [m - 1 for m in medians], width, bottom=1, label=label)  # from 1
            ax.bar_label(bars, [_fmt(r, "{:.2f}") for r in medians], fontsize=7)
            for x, m in zip(xs, MEASURES, strict=True):
                dots = [r for r in rows[label][m]["ratios"] if r is not None]
                ax.plot([x] * len(dots), dots, "k.", ms=4)
        ax.axhline(1.0, color="grey", lw=1)
        ax.set_yscale("log")  # 2x faster and 2x slower as far from 1
        ax.set_xticks([m + width * (len(rows) - 1) / 2 for m in range(len(MEASURES))])
        ax.set_xticklabels(MEASURES)
        ax.set(title=backend, ylabel=f"{installs['this'].name} / {installs['ref'].name}, speed")
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
