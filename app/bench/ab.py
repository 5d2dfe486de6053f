"""`bielik-lsp bench ab [REF]`: this install against another one, on this machine, in one run.

Every speed check elsewhere compares us with a peer or with our own plain decoding in the same
build, so a cost that both sides pay stays invisible; and figures of two days, on machines that
change between sessions, do not compare. So a change to the decoder, a backend or the request
path is measured against the install it started from, side by side:

- REF is a git revision of this repository (checked out once as a worktree under the cache,
  ~/.cache/bielik-lsp/ab/SHA, and installed there by that revision's own install.sh), or the
  folder, Python or `bielik-lsp` of another install. `--ref-options` (and `--this-options`)
  give a side global options of its own, so with `--ref-options` alone REF is this very install
  with other settings (`--ref-options=--no-adapt-threads`). Without REF and those: this install
  alone, its own speculation against its own plain decoding (`--quick`: both backends, two
  minutes).
- Each side runs its own code in its own process (app/bench/ab_worker.py, loaded once per
  backend; `python -P`, so nothing of the folder it runs in is imported), with the same global
  options (`bielik-lsp --no-exact bench ab REF` compares both with exact off). Both stay loaded
  and take turns: every excerpt, every policy, every round, the side that goes first
  alternating, so drift and order hit both alike.
- Per backend and content type: prefill speed (from an empty cache, as `continue` starts);
  plain, `auto` and fixed `lookup` decoding speed (tokens/s after the first token, and
  characters/s); and the time from a document's opening to its first suggestion over LSP (each
  side's real server on stdio, a new document each time, after the server has gone quiet).
- Ratios: this side over REF per measure, and each side's own `auto`/plain and `lookup`/plain,
  each the median per-excerpt ratio with a 90% bootstrap interval (app/bench/spread.py). Rounds
  go on past `--repeats` until every asked interval is within ±`--target` of its ratio, or the
  time (`--max-minutes`, shared out between backends and stages) runs out; the report says which.

    bielik-lsp [global options] bench ab [REF] [--backend llamacpp,mlx] [--per-class 3]
        [--repeats 3] [--target 0.03] [--max-minutes 30] [--until MEASURES] [--tokens 64]
        [--excerpts FILE] [--lsp-repeats N] [--this-options OPTS] [--ref-options OPTS]
        [--quick] [--out DIR]

Writes OUT/ab.md, OUT/ab.json and OUT/ab.png (ab_report.py).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import shlex
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from tqdm import tqdm

from app.bench import ab_report, machine
from app.bench import typing as typing_bench
from app.bench.corpus import Excerpt, load_corpus, select
from app.bench.drafter import read_excerpts
from app.bench.report import write_report
from app.bench.spread import SEED
from app.errors import UserError
from decoder.backends.files import cache_root
from decoder.backends.registry import BACKENDS
from decoder.backends.threads import runnable_threads
from decoder.config import Settings

LABELS = ("structured", "prose")
SOURCE = Path(__file__).resolve().parents[2]  # this install's code
WORKER = Path(__file__).with_name("ab_worker.py")
MARK = "AB "  # ab_worker.MARK
POLICIES = ("plain", "auto", "lookup")  # how each engine run decodes; lookup: the fixed drafter
LSP = "first suggestion"
MEASURES = ("prefill", *POLICIES, LSP)  # between the sides: this one's speed over REF's
GAINS = ("auto/plain", "lookup/plain")  # within each side: speculative speed over plain
INSTALLED = ".bench-ab-installed"  # in a checkout whose install.sh finished
ANSWER_S = 60.0  # no suggestion for a document by then: none (counted apart)
QUIET_S = 0.5  # before a run, at most this long for every engine's threads to stop spinning


# ---------------------------------------------------------------- the two installs


@dataclass(frozen=True)
class Install:
    """An install of bielik-lsp: its Python, what it is, and global options of its own."""

    name: str
    python: Path
    source: Path  # the folder its `app` package is imported from
    options: tuple[str, ...] = ()  # after the options both sides get (--ref-options)

    def serve_argv(self, options: list[str]) -> list[str]:
        """Its language server with global `options` (then its own), as an editor starts it.

        -P: its own code, not a package of the folder this runs in.
        """
        return [str(self.python), "-P", "-m", "app.cli", *options, *self.options, "serve"]

    def with_options(self, options: tuple[str, ...]) -> Install:
        """The same install run with `options` of its own, named with them."""
        if not options:
            return self
        return replace(self, name=f"{self.name} {shlex.join(options)}", options=options)


def this_install() -> Install:
    return Install(f"this ({revision(SOURCE)})", Path(sys.executable), SOURCE)


def sides_of(ref: str | None, this_options: str, ref_options: str, progress: bool) -> dict:
    """This install, and REF's: REF's own, or this one's with `--ref-options`, or none."""
    this = this_install()
    sides = {"this": this.with_options(tuple(shlex.split(this_options)))}
    extra = tuple(shlex.split(ref_options))
    if ref is not None:
        sides["ref"] = resolve(ref, progress).with_options(extra)
    elif extra:
        sides["ref"] = Install(revision(SOURCE), this.python, this.source).with_options(extra)
    return sides


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
        self.missing: dict[str, str] = {}  # policies this version cannot make, and why
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

    def run(self, text: str, tokens: int, policy: str) -> dict | None:
        """One run's figures; None where this version has no such policy (`missing` says why)."""
        if policy in self.missing:
            return None
        job = {"text": text, "tokens": tokens, "policy": policy}
        self.proc.stdin.write(json.dumps(job, ensure_ascii=False) + "\n")
        self.proc.stdin.flush()
        answer = self._answer()
        if "missing" in answer:
            self.missing[policy] = answer["missing"]
            return None
        return answer

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
    """Both sides, the first one alternating by round and excerpt (ABBA...)."""
    return sides if (repeat + index) % 2 == 0 else sides[::-1]


def quiet(workers: dict) -> None:
    """Wait (at most QUIET_S) until no engine has a runnable thread.

    After a run, llama.cpp's OpenMP threads (and OpenBLAS's) spin for milliseconds: the next
    side's thread plan would count them as another program's load and start on fewer threads,
    a cost of taking turns that no writer's machine has.
    """
    end = time.monotonic() + QUIET_S
    pids = [worker.proc.pid for worker in workers.values()]
    while time.monotonic() < end:
        try:
            if not any(runnable_threads(pid) for pid in pids):
                return
        except OSError:  # no /proc (or an engine gone): nothing to wait for
            return
        time.sleep(0.002)


def engine_round(workers: dict, excerpts: list[Excerpt], cfg: AbConfig, r: int, runs, bar):
    """Round `r`: every excerpt under every policy, the sides taking turns; into `runs`."""
    for index, excerpt in enumerate(excerpts):
        for policy in POLICIES:
            for side in turns(list(workers), r, index):
                quiet(workers)
                run = workers[side].run(excerpt.text, cfg.tokens, policy)
                if run is not None:
                    runs[side][excerpt.id][policy].append(speeds(run, excerpt.text))
                elif policy == "plain":
                    raise UserError(
                        f"bench ab: {side} cannot decode plain: {workers[side].missing}"
                    )
                bar.update()


# ---------------------------------------------------------------- rounds until settled


@dataclass
class Stage:
    """One backend's engine runs, or its first suggestions: rounds, until settled or late.

    At least `minimum` rounds; then another only while some asked interval is wider than the
    target and the next round, as long as the last one, would end by `deadline`.
    """

    deadline: float
    minimum: int
    clock: Callable[[], float] = time.monotonic
    rounds: int = 0
    last_s: float = 0.0
    stopped: str = ""  # settled, time limit, or nothing asked

    def more(self, halves: Callable[[], list[float | None]], target: float) -> bool:
        """Whether to run another round; `halves`: the asked intervals' relative half-widths."""
        if self.rounds < self.minimum:
            return True
        asked = halves()
        if not asked:
            self.stopped = "nothing asked"
        elif all(h is not None and h <= target for h in asked):
            self.stopped = "settled"
        elif self.clock() + self.last_s > self.deadline:
            self.stopped = "time limit"
        return not self.stopped

    def done(self, began: float) -> None:
        """A round that began at `began` (the stage's clock) has ended."""
        self.last_s, self.rounds = self.clock() - began, self.rounds + 1

    def describe(self) -> dict:
        return {"rounds": self.rounds, "stopped": self.stopped, "round_s": round(self.last_s, 1)}


class Budget:
    """`--max-minutes` shared out: each stage gets an equal part of what the earlier ones left."""

    def __init__(self, minutes: float, stages: int):
        self.end = time.monotonic() + minutes * 60
        self.left = stages

    def stage(self, minimum: int) -> Stage:
        share = max(0.0, self.end - time.monotonic()) / max(1, self.left)
        self.left -= 1
        return Stage(time.monotonic() + share, minimum)


def grow(bar, n: int) -> None:
    """Another round of `n` steps on the progress bar."""
    bar.total += n
    bar.refresh()


def engine_runs(workers: dict, excerpts, cfg: AbConfig, stage: Stage, halves, bar) -> dict:
    """Rounds of engine runs until `stage` stops them; every run by side, excerpt and policy."""
    runs = {side: {e.id: {p: [] for p in POLICIES} for e in excerpts} for side in workers}
    for worker in workers.values():
        worker.run(excerpts[0].text, 8, "plain")  # first pass of each process: not timed
    while stage.more(lambda: halves(runs), cfg.target):
        if stage.rounds >= cfg.repeats:
            grow(bar, len(excerpts) * len(POLICIES) * len(workers))
        began = stage.clock()
        engine_round(workers, excerpts, cfg, stage.rounds, runs, bar)
        stage.done(began)
    return runs


# ---------------------------------------------------------------- first suggestion over LSP


async def first_suggestions(
    installs: dict[str, Install],
    backend: str,
    options: list[str],
    excerpts,
    cfg,
    out,
    stage,
    halves,
    bar,
) -> dict:
    """Per side and excerpt, per round: ms from opening a document to its first suggestion.

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
        while stage.more(lambda: halves(times), cfg.target):
            if stage.rounds >= cfg.lsp_repeats:
                grow(bar, len(excerpts) * len(installs))
            began = stage.clock()
            await lsp_round(editors, procs, excerpts, cfg, stage.rounds, times, bar)
            stage.done(began)
        return times
    finally:
        for editor in editors.values():
            await editor.stop()


async def lsp_round(editors, procs, excerpts, cfg, r: int, times: dict, bar) -> None:
    """Round `r`: every excerpt opened in each side's server in turn; into `times`."""
    for index, excerpt in enumerate(excerpts):
        context = typing_bench.script_for(excerpt, cfg.chars).context
        for side in turns(list(editors), r, index):
            for proc in procs.values():
                await typing_bench.settle(proc)
            uri = f"file:///bench-ab/{r}/{excerpt.id}.md"
            times[side][excerpt.id].append(await _first(editors[side], uri, context))
            bar.update()


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
    repeats: int = 3  # rounds of engine runs at least
    lsp_repeats: int = 3  # rounds of first suggestions at least
    tokens: int = 64
    chars: int = 160  # typed after the opened part in the typing bench: the part opened here
    excerpts: str | None = None
    target: float = 0.03  # stop once every asked interval is within ±target of its ratio
    max_minutes: float = 30.0  # or once this is spent (the minimum rounds always run)
    until: tuple[str, ...] = ()  # the asked intervals (empty: MEASURES with a REF, else GAINS)
    seed: int = SEED


# `--quick`: every backend here, this install's speculation against its plain decoding
QUICK = AbConfig(backends=(), per_class=1, repeats=1, lsp_repeats=0, max_minutes=2.0)


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


def measure_backend(installs, backend: str, options, excerpts, cfg, out, budget, bar) -> dict:
    """One backend: rounds of engine runs, then of first suggestions; raw results and stages."""
    args = [*options, "--backend", backend]
    asked = cfg.until or (MEASURES if "ref" in installs else GAINS)
    engine = budget.stage(cfg.repeats)
    workers = {}
    try:
        for side, install in installs.items():
            argv = [*args, *install.options]
            workers[side] = Worker(install, argv, out / f"engine-{backend}-{side}.log")
        halves = ab_report.halves(excerpts, asked, cfg.seed, lsp=False)
        runs = engine_runs(workers, excerpts, cfg, engine, halves, bar)
        described = {side: w.describe for side, w in workers.items()}
        missing = {side: w.missing for side, w in workers.items()}
    finally:
        for worker in workers.values():
            worker.close()
    stages = {"engine": engine.describe()}
    times = {side: {e.id: [] for e in excerpts} for side in installs}
    if cfg.lsp_repeats:
        lsp = budget.stage(cfg.lsp_repeats)
        halves = ab_report.halves(excerpts, asked, cfg.seed, lsp=True)
        times = asyncio.run(
            first_suggestions(installs, backend, args, excerpts, cfg, out, lsp, halves, bar)
        )
        stages["lsp"] = lsp.describe()
    return {"engines": described, "missing": missing, "runs": runs, "lsp": times, "stages": stages}


def measure(installs: dict[str, Install], options: list[str], cfg: AbConfig, out, progress):
    """Every backend in turn; raw results by backend."""
    excerpts = excerpts_of(cfg)
    per_backend = len(excerpts) * (len(POLICIES) * cfg.repeats + cfg.lsp_repeats) * len(installs)
    budget = Budget(cfg.max_minutes, len(cfg.backends) * (2 if cfg.lsp_repeats else 1))
    raw = {}
    with tqdm(total=per_backend * len(cfg.backends), desc="bench ab", disable=not progress) as bar:
        for backend in cfg.backends:
            raw[backend] = measure_backend(
                installs, backend, options, excerpts, cfg, out, budget, bar
            )
    return excerpts, raw


def config_of(settings: Settings, args: argparse.Namespace, sides: dict) -> AbConfig:
    """The flags given over the defaults (`--quick`'s where asked)."""
    base = QUICK if args.quick else AbConfig(backends=())
    given = {
        "backends": args.ab_backends and tuple(args.ab_backends.split(",")),
        "per_class": args.per_class,
        "repeats": args.repeats,
        "lsp_repeats": args.lsp_repeats,
        "tokens": args.tokens,
        "excerpts": args.excerpts,
        "target": args.target,
        "max_minutes": args.max_minutes,
        "until": args.until and tuple(m.strip().replace("-", " ") for m in args.until.split(",")),
    }
    cfg = replace(base, **{k: v for k, v in given.items() if v is not None})
    if "ref" not in sides:  # no other server to time a first suggestion against
        cfg = replace(cfg, lsp_repeats=0)
    elif args.lsp_repeats is None and not args.quick:
        cfg = replace(cfg, lsp_repeats=cfg.repeats)
    if not cfg.backends:
        local = installed_backends() if args.quick else (settings.target_backend,)
        cfg = replace(cfg, backends=local)
    check(cfg, sides)
    return cfg


def check(cfg: AbConfig, sides: dict) -> None:
    """A clear error for a backend, count or `--until` measure that cannot be run."""
    unknown = [b for b in cfg.backends if b not in BACKENDS]
    if unknown:
        raise UserError(f"bench ab: unknown backend {unknown[0]!r}: use {', '.join(BACKENDS)}")
    if cfg.repeats < 1 or cfg.lsp_repeats < 0 or cfg.per_class < 1 or cfg.tokens < 2:
        raise UserError("bench ab: --repeats, --per-class at least 1, --tokens at least 2")
    if not 0 < cfg.target < 1 or cfg.max_minutes < 0:
        raise UserError("bench ab: --target is a share between 0 and 1 (0.03: ±3%)")
    known = (MEASURES if "ref" in sides else ()) + GAINS
    wrong = [m for m in cfg.until if m not in known]
    if wrong:
        names = ", ".join(known).replace(LSP, "first-suggestion")
        raise UserError(f"bench ab: --until {wrong[0]!r} is not measured here: use {names}")


def installed_backends() -> tuple[str, ...]:
    """The local engines this install can load: llama.cpp, and MLX where it is installed."""
    found = ("llamacpp", "mlx")
    return tuple(b for b in found if b != "mlx" or importlib.util.find_spec("mlx") is not None)


def run(settings: Settings, args: argparse.Namespace, argv: list[str]) -> str:
    options = argv[: argv.index("bench")]
    installs = sides_of(args.ref, args.this_options, args.ref_options, not args.quiet)
    cfg = config_of(settings, args, installs)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    started, began = machine.load_average(), time.monotonic()
    excerpts, raw = measure(installs, options, cfg, out, not args.quiet)
    minutes = (time.monotonic() - began) / 60
    summary = {b: ab_report.summarize(r, excerpts, cfg) for b, r in raw.items()}
    head = ab_report.header(installs, cfg, options, argv, started, len(excerpts), minutes)
    text = ab_report.report(summary, head, installs, cfg)
    record = {
        "installs": {k: vars(v) for k, v in installs.items()},
        "config": vars(cfg),
        "excerpts": [e.id for e in excerpts],
        "minutes": round(minutes, 2),
        "summary": summary,
        "raw": raw,
        "command": ["bielik-lsp", *argv],
        "machine": machine.describe(),
    }
    write_report(out, "ab", text, record)
    ab_report.plot(summary, installs, out / "ab.png")
    return text
