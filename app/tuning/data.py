"""What the drafter learns from: the target's own greedy continuations of Polish prompts, by task.

Tasks are the content types of polish/content.py (structured, prose) over the project's corpus,
plus "your documents" when the writer gives files or folders. The bench corpus
(polish/data/bench.jsonl) is held out: its excerpts are what `bench drafter` measures on, so the
training prompts come from the other excerpts of the dev set. Of a writer's folder, every file
that `held_out` picks is kept for `bench drafter --data` in the same way.

Each prompt is an excerpt cut at a few whitespace boundaries (every cut is a prompt an editor
may hold). Continuations are generated once by the target on the configured engine (exact
speculation, so they equal plain greedy decoding) and appended to DIR/data.jsonl as they come,
so an interrupted or resumed run never generates one twice.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from tqdm import tqdm

from app.bench.corpus import corpus_path
from app.errors import UserError

YOURS = "your documents"
CUTS = (0.45, 0.7, 1.0)  # where in an excerpt the prompts end (share of its characters)
WINDOW_CHARS = 1200  # a writer's file is read in windows about this long, at paragraph ends
HELD_OUT_EVERY = 5  # one file in five of a writer's folder is held out for the benchmark
TEXT_SUFFIXES = {".txt", ".md", ".tex", ".rst", ".org", ".html", ".xml", ".csv", ".json", ".py"}
DATA_FILE = "data.jsonl"


@dataclass(frozen=True)
class Prompt:
    task: str
    source: str  # the excerpt's id or the file (and window) it comes from
    text: str


@dataclass(frozen=True)
class Example:
    """One prompt and the target's greedy continuation of it."""

    task: str
    source: str
    prompt: str
    continuation: str
    target_ids: list[int]


def held_out_ids() -> set[str]:
    """Ids of the bench corpus's excerpts: measured on, never trained on."""
    rows = corpus_path().read_text(encoding="utf-8").splitlines()
    return {json.loads(line)["id"] for line in rows if line.strip()}


def corpus_texts() -> list[tuple[str, str, str]]:
    """(task, id, text) of the dev set's excerpts outside the bench corpus.

    A `mixed` excerpt goes to the content type the classifier gives its end, as the editor's
    policy would see it.
    """
    from polish.content import classify

    held = held_out_ids()
    out = []
    path = corpus_path().parent / "devset.jsonl"
    for line in path.read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        if item["id"] in held:
            continue
        label = item["label"] if item["label"] != "mixed" else classify(item["text"]).label
        out.append((label, item["id"], item["text"]))
    return out


def held_out(path: Path) -> bool:
    """Whether a writer's file is kept for the benchmark (by its name's hash: stable, 1 in 5)."""
    digest = hashlib.sha1(path.name.encode("utf-8")).digest()
    return digest[0] % HELD_OUT_EVERY == 0


def writer_files(paths: Iterable[str]) -> list[Path]:
    """The text files among `paths` (folders are walked; hidden and non-text files skipped)."""
    files: list[Path] = []
    for given in paths:
        path = Path(given).expanduser()
        if path.is_file():
            files.append(path)
        elif path.is_dir():
            files += sorted(
                p
                for p in path.rglob("*")
                if p.is_file()
                and p.suffix.lower() in TEXT_SUFFIXES
                and not any(part.startswith(".") for part in p.relative_to(path).parts)
            )
        else:
            raise UserError(f"--data {given}: no such file or folder")
    return files


def split_files(files: list[Path]) -> tuple[list[Path], list[Path]]:
    """(training files, held-out files); a single file is trained on (nothing to hold out)."""
    if len(files) < 2:
        return files, []
    test = [f for f in files if held_out(f)]
    if not test:  # a small folder: hold out the last file rather than none
        test = files[-1:]
    return [f for f in files if f not in test], test


def windows(text: str, size: int = WINDOW_CHARS) -> list[str]:
    """`text` in pieces of about `size` characters, cut at blank lines (else line ends)."""
    out, start = [], 0
    while start < len(text):
        end = min(len(text), start + size)
        if end < len(text):
            cut = text.rfind("\n\n", start + size // 2, end)
            cut = cut if cut > 0 else text.rfind("\n", start + size // 2, end)
            end = cut + 1 if cut > 0 else end
        piece = text[start:end]
        if piece.strip():
            out.append(piece)
        start = end
    return out


def file_texts(files: list[Path]) -> list[tuple[str, str, str]]:
    """(task, source, text) windows of the writer's files; unreadable files are skipped."""
    from app.commands import read_prompt

    out = []
    for path in files:
        try:
            text = read_prompt(str(path))
        except UserError as error:
            tqdm.write(f"tune-drafter: skipped {error}")
            continue
        out += [(YOURS, f"{path}#{i}", w) for i, w in enumerate(windows(text))]
    return out


def cut(text: str, share: float) -> str:
    """`text` up to the first whitespace at or after `share` of it (a newline is kept)."""
    at = int(len(text) * share)
    if at >= len(text):
        return text
    while at < len(text) and not text[at].isspace():
        at += 1
    return text[: at + 1] if text[at : at + 1] == "\n" else text[:at]


def prompts(texts: list[tuple[str, str, str]]) -> list[Prompt]:
    """Every text cut at CUTS, the texts of each task interleaved so that any prefix is balanced.

    The cuts of one text stay together, shortest first: each extends the last, so the target's
    prefix cache prefills only what is new.
    """
    by_task: dict[str, list[list[Prompt]]] = {}
    for task, source, text in texts:
        cuts = dict.fromkeys(cut(text, share) for share in CUTS)
        group = [Prompt(task, f"{source}@{len(c)}", c) for c in cuts if c.strip()]
        by_task.setdefault(task, []).append(group)
    groups = list(by_task.values())
    out: list[Prompt] = []
    for i in range(max(map(len, groups), default=0)):
        for task_groups in groups:
            if i < len(task_groups):
                out += task_groups[i]
    return out


def load_examples(folder: Path) -> list[Example]:
    """The continuations generated into `folder` so far, one per prompt (torn lines skipped)."""
    path = folder / DATA_FILE
    if not path.is_file():
        return []
    out: dict[str, Example] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            example = Example(**json.loads(line))
        except (json.JSONDecodeError, TypeError):
            continue
        out.setdefault(example.source, example)
    return list(out.values())


def generate(
    engine, todo: list[Prompt], folder: Path, deadline: float, max_tokens: int, quiet: bool
) -> Iterator[Example]:
    """The target's greedy continuation of each prompt, appended to folder/data.jsonl.

    Stops at `deadline` (time.monotonic()); what was generated stays for the next run.
    """
    from decoder.generation import collect
    from decoder.sampling import GREEDY

    bar = tqdm(todo, desc="target continuations", unit="prompt", disable=quiet)
    with (folder / DATA_FILE).open("a", encoding="utf-8") as out, bar:
        for prompt in bar:
            if time.monotonic() >= deadline:
                bar.set_postfix_str("time's up: the rest next run")
                break
            policy = engine.policy(text=prompt.text)
            result = collect(
                engine.continue_text(
                    prompt.text, max_tokens=max_tokens, policy=policy, sampling=GREEDY
                )
            )
            if not result.text:
                continue
            example = Example(prompt.task, prompt.source, prompt.text, result.text, result.ids)
            out.write(json.dumps(asdict(example), ensure_ascii=False) + "\n")
            out.flush()
            yield example
