"""`bielik-lsp bench spelling`: our Polish spelling against hunspell-pl, in the same run.

Data: the project's clean corpus (polish/data/devset.jsonl, and the .txt files of --data DIR)
with errors injected at known positions, into Polish words (not the English ones a text
quotes), by the typing errors Polish writers make: diacritics
dropped (all or one) or wrong, sounds-alike spellings (rz/ż, ó/u, ch/h, ą/om, ę/en...), a
letter doubled, dropped, inserted or swapped, a neighbouring key, a space left out
("w ogóle" -> "wogóle"). Only errors that leave a non-word count: Morfeusz does not know the
result, or knows it only as an archaic or otherwise rare form ("sie"). Excerpts are split by
a hash of their id; the default reports the held-out split (the checker's constants were set
on the other).

Measured for both checkers, over the same texts: recall on the injected errors; top-1 and top-3
corrections; flags per 1,000 words of the clean text; how many of the original words (the
corrections) are flagged in the clean text; time per 10,000 words, cold (start-up, models and
dictionaries loaded, included) and incremental (one word edited in a 10,000-word document and
its diagnostics updated: ours re-checks the changed paragraph, and hunspell gets that paragraph
alone, its best case). hunspell runs as `hunspell -a -d pl_PL` (Debian's hunspell-pl), which
checks and suggests, as an editor plugin does.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import time
import zlib
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from importlib.resources import files
from pathlib import Path

from app.bench import spelling_real as real
from app.bench.machine import describe as describe_machine
from app.bench.machine import load_average
from app.bench.report import table, write_report
from decoder.config import ConfigError, Settings
from polish import lexicon, spelling
from polish.lexicon import english_zipf, polish_zipf
from polish.morphology import is_known
from polish.typos import NEIGHBOURS
from polish.words import words

ERROR_EVERY = 40  # one injected error per this many prose words
INCREMENTAL_EDITS = 20
DOCUMENT_WORDS = 10_000
STRIP = str.maketrans("ąćęłńóśźż", "acelnoszz")
ADD = {"a": "ą", "c": "ć", "e": "ę", "l": "ł", "n": "ń", "o": "ó", "s": "ś", "z": "ż"}
SOUNDS = (
    ("rz", "ż"), ("ż", "rz"), ("ó", "u"), ("u", "ó"), ("ch", "h"), ("h", "ch"), ("ą", "om"),
    ("ą", "on"), ("ę", "em"), ("ę", "en"), ("ął", "oł"), ("ę", "e"), ("ć", "ci"), ("ś", "si"),
    ("ń", "ni"), ("ż", "sz"), ("rz", "sz"), ("w", "f"), ("i", "j"),
)  # fmt: skip
MERGERS = ("w", "z", "na", "nie", "do", "po", "za", "o", "we", "ze")
LETTERS = "aąbcćdeęfghijklłmnńoóprsśtuwyzźż"


@dataclass
class Error:
    start: int  # in the erroneous text
    end: int
    typo: str
    correct: str  # what the clean text says there
    kind: str
    clean_start: int  # where `correct` is in the clean text
    clean_end: int


@dataclass
class Doc:
    id: str
    clean: str
    text: str  # with the errors
    errors: list[Error] = field(default_factory=list)


# -- the errors -------------------------------------------------------------------------------
def _positions(word: str, letters: str) -> list[int]:
    return [i for i, c in enumerate(word) if c in letters]


def _typo(word: str, kind: str, rng: random.Random) -> str | None:
    """`word` with one error of `kind`, or None where that kind does not apply."""
    low = word
    if kind == "diacritics-all":
        out = low.translate(STRIP)
        return out if out != low else None
    if kind == "diacritic-one":
        at = _positions(low, "ąćęłńóśźż")
        if not at:
            return None
        i = rng.choice(at)
        return low[:i] + low[i].translate(STRIP) + low[i + 1 :]
    if kind == "diacritic-wrong":
        at = _positions(low, "ACELNOSZacelnosz") + _positions(low, "żź")
        if not at:
            return None
        i = rng.choice(at)
        ch = low[i]
        other = {"ż": "ź", "ź": "ż"}.get(ch) or ADD.get(ch)
        return low[:i] + other + low[i + 1 :] if other else None
    if kind == "sounds-alike":
        options = [(a, b) for a, b in SOUNDS if a in low]
        if not options:
            return None
        a, b = rng.choice(options)
        at = [i for i in range(len(low)) if low.startswith(a, i)]
        i = rng.choice(at)
        return low[:i] + b + low[i + len(a) :]
    i = rng.randrange(len(low))
    if kind == "double":
        doubled = [j for j in range(len(low) - 1) if low[j] == low[j + 1]]
        if doubled:
            j = rng.choice(doubled)
            return low[:j] + low[j + 1 :]
        return low[: i + 1] + low[i] + low[i + 1 :]
    if kind == "swap":
        if len(low) < 3 or i + 1 >= len(low) or low[i] == low[i + 1]:
            return None
        return low[:i] + low[i + 1] + low[i] + low[i + 2 :]
    if kind == "neighbour":
        near = sorted(NEIGHBOURS.get(low[i].translate(STRIP), ()))
        return low[:i] + rng.choice(near) + low[i + 1 :] if near else None
    if kind == "drop":
        return low[:i] + low[i + 1 :] if len(low) > 3 and i else None
    if kind == "insert":
        return low[:i] + rng.choice(LETTERS) + low[i:]
    raise ValueError(kind)


KINDS = {  # how often each kind is drawn
    "diacritics-all": 25, "diacritic-one": 15, "diacritic-wrong": 3, "sounds-alike": 17,
    "double": 6, "swap": 8, "neighbour": 10, "drop": 7, "insert": 5, "merge": 4,
}  # fmt: skip


def non_word(typo: str) -> bool:
    """A non-word: Morfeusz does not know it, or only as a rare form ("sie")."""
    return not is_known(typo) or spelling.rare_form(typo)


def inject(doc_id: str, clean: str, rng: random.Random) -> Doc:
    """`clean` with about one non-word error per ERROR_EVERY prose words, at known positions."""
    tokens = [w for w in words(clean) if w.text.isalpha()]
    picks = sorted(rng.sample(range(len(tokens)), len(tokens) // ERROR_EVERY))
    errors, out, at, last = [], [], 0, -3
    for k in picks:
        if k - last < 3:
            continue
        word = tokens[k]
        if word.text[0].isupper() and not word.sentence_start or word.text.isupper():
            continue  # names and acronyms: a writer's misspelt names are another matter
        if not is_known(word.text) or english_zipf(word.text) > polish_zipf(word.text):
            continue  # Polish errors only: not in an English word of the text
        kind = rng.choices(list(KINDS), weights=list(KINDS.values()))[0]
        start, end, correct = word.start, word.end, word.text
        if kind == "merge":
            following = tokens[k + 1] if k + 1 < len(tokens) else None
            if word.text.lower() not in MERGERS or following is None:
                continue
            if clean[word.end : following.start] != " ":
                continue
            end, correct = following.end, clean[word.start : following.end]
            typo = word.text + following.text
        else:
            typo = _typo(word.text, kind, rng)
            if typo and word.text[0].isupper():
                typo = typo[0].upper() + typo[1:]
        if not typo or typo == correct or not non_word(typo):
            continue
        out.append(clean[at:start])
        begin = sum(map(len, out))
        out.append(typo)
        errors.append(Error(begin, begin + len(typo), typo, correct, kind, start, end))
        at, last = end, k
    out.append(clean[at:])
    return Doc(doc_id, clean, "".join(out), errors)


# -- hunspell, the peer -------------------------------------------------------------------------
@dataclass
class Flag:
    start: int
    end: int
    word: str
    suggestions: list[str]


class Hunspell:
    """`hunspell -a -d pl_PL`: ispell's pipe protocol, one line in, one result per word out."""

    def __init__(self, dictionary: str = "pl_PL"):
        binary = shutil.which("hunspell")
        if binary is None:
            raise ConfigError(
                "bench spelling compares with hunspell-pl: apt-get install hunspell hunspell-pl"
            )
        self.process = subprocess.Popen(
            [binary, "-a", "-d", dictionary],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,  # iconv's complaints about letters pl_PL cannot spell
            text=True,
            encoding="utf-8",
            bufsize=1,
        )
        banner = self.process.stdout.readline()
        if "Hunspell" not in banner:
            raise ConfigError(f"hunspell -d {dictionary} did not start: {banner.strip()!r}")
        self.version = banner.strip()

    def check(self, text: str) -> list[Flag]:
        """Misspelt words of `text` with hunspell's suggestions, at code point offsets."""
        flags, base = [], 0
        for line in text.split("\n"):
            self.process.stdin.write("^" + line + "\n")
            self.process.stdin.flush()
            while (answer := self.process.stdout.readline().rstrip("\n")) != "":
                if answer[:1] not in "&#":
                    continue
                head, _, tail = answer.partition(": ")
                parts = head.split()
                word, offset = parts[1], int(parts[-1]) - 1
                found = line.find(word, max(0, offset - 2))
                start = base + (found if found >= 0 else offset)
                suggestions = tail.split(", ") if answer[0] == "&" and tail else []
                flags.append(Flag(start, start + len(word), word, suggestions))
            base += len(line) + 1
        return flags

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait(timeout=10)


# -- the corpus ---------------------------------------------------------------------------------
def corpus(split: str, data: str | None) -> list[tuple[str, str]]:
    """(id, text) of the clean excerpts: devset.jsonl's, and a folder's .txt files."""
    path = Path(str(files("polish") / "data" / "devset.jsonl"))
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    items = [(r["id"], r["text"]) for r in rows]
    if data:
        folder = Path(data)
        if not folder.is_dir():
            raise ConfigError(f"--data {data}: not a folder")
        items += [(p.name, p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.txt"))]
    if split == "all":
        return items
    held_out = split == "test"
    return [(i, t) for i, t in items if (zlib.crc32(i.encode()) % 5 >= 3) == held_out]


def count_words(text: str) -> int:
    return sum(1 for w in words(text) if any(c.isalpha() for c in w.text))


# -- the runs -----------------------------------------------------------------------------------
def _hit(start: int, end: int, spans) -> object | None:
    return next((s for s in spans if s.start < end and start < s.end), None)


def _score(docs: list[Doc], flagged: dict[str, list], clean_flagged: dict[str, list]) -> dict:
    errors = [(d, e) for d in docs for e in d.errors]
    found = top1 = top3 = corrections = 0
    by_kind: dict[str, list[int]] = {}
    for doc, e in errors:
        hit = _hit(e.start, e.end, flagged[doc.id])
        tally = by_kind.setdefault(e.kind, [0, 0])
        tally[1] += 1
        if hit is not None:
            found += 1
            tally[0] += 1
            top1 += bool(hit.suggestions) and hit.suggestions[0] == e.correct
            top3 += e.correct in hit.suggestions[:3]
        corrections += _hit(e.clean_start, e.clean_end, clean_flagged[doc.id]) is not None
    clean_words = sum(count_words(d.clean) for d in docs)
    flags = sum(len(v) for v in clean_flagged.values())
    n = max(1, len(errors))
    return {
        "errors": len(errors),
        "recall": found / n,
        "top1": top1 / n,
        "top3": top3 / n,
        "clean_words": clean_words,
        "clean_flags": flags,
        "flags_per_1000": 1000 * flags / max(1, clean_words),
        "corrections_flagged": corrections / n,
        "recall_by_kind": {k: v[0] / v[1] for k, v in sorted(by_kind.items())},
    }


def run_hunspell(docs: list[Doc], document: str, edits: list[tuple[str, str]]) -> dict:
    began = time.perf_counter()
    peer = Hunspell()
    flagged = {d.id: peer.check(d.text) for d in docs}
    clean = {d.id: peer.check(d.clean) for d in docs}
    cold = time.perf_counter() - began
    began = time.perf_counter()
    peer.check(document)
    whole = time.perf_counter() - began
    began = time.perf_counter()
    for _, paragraph in edits:
        peer.check(paragraph)
    incremental = (time.perf_counter() - began) / len(edits)
    peer.close()
    out = _score(docs, flagged, clean)
    out.update(version=peer.version, seconds=cold, document_s=whole, incremental_s=incremental)
    return out, flagged, clean


def run_ours(
    docs: list[Doc], document: str, edits: list[tuple[str, str]], scorer, note: str
) -> dict:
    began = time.perf_counter()
    lexicon.load()
    startup = time.perf_counter() - began
    score = None
    if scorer is not None:
        began = time.perf_counter()
        engine = scorer()
        startup += time.perf_counter() - began
        score = engine.score
    dictionary = model = 0.0

    def one(text: str) -> list:
        nonlocal dictionary, model
        began = time.perf_counter()
        found = spelling.check(text)
        dictionary += time.perf_counter() - began
        began = time.perf_counter()
        found = spelling.rank(text, found, score) if score else spelling.questioned(found)
        model += time.perf_counter() - began
        return found

    flagged = {d.id: one(d.text) for d in docs}
    clean = {d.id: one(d.clean) for d in docs}
    paragraphs = spelling.Paragraphs()
    began = time.perf_counter()
    _document(paragraphs, document, score)
    whole = time.perf_counter() - began
    began = time.perf_counter()
    for edited, _ in edits:
        _document(paragraphs, edited, score)
    incremental = (time.perf_counter() - began) / len(edits)
    out = _score(docs, flagged, clean)
    out.update(
        seconds=startup + dictionary + model,
        startup_s=startup,
        dictionary_s=dictionary,
        model_s=model,
        document_s=whole,
        incremental_s=incremental,
        ranking=note,
    )
    return out, flagged, clean


def _document(paragraphs: spelling.Paragraphs, text: str, score) -> list:
    """Diagnostics of a whole document, as the server computes them.

    The model reads only the paragraphs checked anew.
    """
    found, fresh = paragraphs.check(text)
    if score is None:
        return spelling.questioned(found)
    new = [f for f in found if any(a <= f.start < b for a, b in fresh)]
    return spelling.rank(text, new, score) + [f for f in found if f not in new]


def long_document(docs: list[Doc], rng: random.Random) -> tuple[str, list[tuple[str, str]]]:
    """A DOCUMENT_WORDS-word document of the clean excerpts, and edits of it.

    Each edit: (the document with one word misspelt, the paragraph that word is in).
    """
    parts, total = [], 0
    while total < DOCUMENT_WORDS:
        for d in docs:
            parts.append(d.clean)
            total += count_words(d.clean)
            if total >= DOCUMENT_WORDS:
                break
    document = "\n\n".join(parts)
    edits = []
    while len(edits) < INCREMENTAL_EDITS:
        i = rng.randrange(len(parts))
        edited = inject(f"edit-{len(edits)}", parts[i], rng)
        if not edited.errors:
            continue
        text = "\n\n".join([*parts[:i], edited.text, *parts[i + 1 :]])
        edits.append((text, edited.text))
    return document, edits


# -- the report ---------------------------------------------------------------------------------
def report(results: dict, header: str) -> str:
    rows = []
    for name, r in results.items():
        per_10k = 10_000 / max(1, r["words"])
        rows.append(
            [
                name,
                f"{r['recall']:.1%}",
                f"{r['top1']:.1%}",
                f"{r['top3']:.1%}",
                f"{r['flags_per_1000']:.1f}",
                f"{r['corrections_flagged']:.1%}",
                f"{r['seconds'] * per_10k:.1f}",
                f"{r['document_s']:.2f}",
                f"{r['incremental_s'] * 1000:.0f}",
            ]
        )
    main = table(
        [
            "checker",
            "errors flagged",
            "top-1",
            "top-3",
            "flags / 1,000 clean words",
            "corrections flagged",
            "cold s / 10k words",
            "10k-word document, s",
            "after an edit, ms",
        ],
        rows,
    )
    kinds = sorted({k for r in results.values() for k in r["recall_by_kind"]})
    by_kind = table(
        ["error kind", *results],
        [[k, *(f"{r['recall_by_kind'].get(k, 0):.0%}" for r in results.values())] for k in kinds],
    )
    return f"{header}\n\n{main}\n\nErrors flagged by kind:\n\n{by_kind}\n"


def plot(results: dict, path: Path) -> None:
    """Accuracy, false alarms and speed, one colour per checker in every panel."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(results)
    colours = [f"C{i}" for i in range(len(names))]
    fig, axes = plt.subplots(1, 3, figsize=(14, 4.6))
    metrics = (("recall", "errors flagged"), ("top1", "top-1"), ("top3", "top-3"))
    width = 0.8 / len(names)
    for i, name in enumerate(names):
        values = [100 * results[name][m] for m, _ in metrics]
        axes[0].bar([j + i * width for j in range(3)], values, width, color=colours[i], label=name)
    axes[0].set_xticks([j + width * (len(names) - 1) / 2 for j in range(3)])
    axes[0].set_xticklabels([label for _, label in metrics])
    axes[0].set_ylabel("% of injected errors")
    axes[0].set_ylim(0, 100)
    panels = (
        (axes[1], [results[n]["flags_per_1000"] for n in names], "flags per 1,000 clean words"),
        (
            axes[2],
            [results[n]["seconds"] * 10_000 / max(1, results[n]["words"]) for n in names],
            "seconds per 10,000 words, cold",
        ),
    )
    for ax, values, label in panels:
        ax.bar(range(len(names)), values, color=colours)
        ax.set_xticks([])
        ax.set_ylabel(label)
    fig.legend(*axes[0].get_legend_handles_labels(), loc="lower center", ncol=len(names))
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _checkers(settings: Settings, model: bool) -> dict[str, Callable[[], Callable]]:
    """Each checker's start-up, returning its `check(text) -> flags`: hunspell-pl, then ours."""

    def hunspell():
        return Hunspell().check

    def dictionary():
        lexicon.load()
        return lambda text: spelling.questioned(spelling.check(text))

    def ranked():
        from decoder.pipeline import load_scorer

        lexicon.load()
        score = load_scorer(settings, progress=False).score
        return lambda text: spelling.rank(text, spelling.check(text), score)

    out = {"hunspell-pl": hunspell, "bielik-lsp (dictionary)": dictionary}
    if model:
        out[f"bielik-lsp ({settings.target})"] = ranked
    return out


def run_real(settings: Settings, args: argparse.Namespace) -> str:
    """Real writers' errors from a PlEWi-format file (app/bench/spelling_real.py)."""
    split = args.split or "all"
    sentences = real.load(args.data, split)
    results, by_half = {}, {}
    for name, start in _checkers(settings, args.model).items():
        began = time.perf_counter()
        check = start()
        startup = time.perf_counter() - began
        written, corrected, seconds = real.run_checker(sentences, check)
        results[name] = real.score(sentences, written, corrected, count_words)
        results[name]["seconds"] = startup + seconds
        if split == "all":
            by_half[name] = real.halves(sentences, written, corrected, count_words)
    lines = {"train": "even lines", "test": "odd lines", "all": "every line"}[split]
    header = (
        f"# Polish spelling on real writers' errors: bielik-lsp against hunspell-pl\n\n"
        f"{args.data} ({split}: {lines}), {len(sentences)} sentences, "
        f"{sum(len(s.errors) for s in sentences)} errors located, "
        f"{results['hunspell-pl']['nonword']} of them non-words; each sentence checked as "
        f"written and as corrected. {_machine()}\n\nCommand: `{args.command_line}`"
    )
    text = real_report(results, by_half, header)
    raw = _figures({"results": results, "halves": by_half})
    return _publish(args, "spelling-real", text, raw, lambda path: real_plot(results, path))


def _machine() -> str:
    return f"Machine: {describe_machine()}; load average {load_average()} at the end."


def _publish(args: argparse.Namespace, stem: str, text: str, raw: dict, draw) -> str:
    """OUT/STEM.md, .json and .png; the report's text."""
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write_report(out, stem, text, raw)
    draw(out / f"{stem}.png")
    return text


REAL_COLUMNS = [
    "non-words flagged",
    "case non-words flagged",
    "first suggestion right",
    "top-3",
    "flags / 1,000 clean words",
    "corrected words flagged",
]


def _real_row(r: dict) -> list[str]:
    return [
        f"{r['recall']:.1%} of {r['nonword']}",
        f"{r['capitals_recall']:.0%} of {r['capitals']}",
        f"{r['top1']:.1%}",
        f"{r['top3']:.1%}",
        f"{r['flags_per_1000']:.1f}",
        f"{r['corrections_flagged']:.1%}",
    ]


def _figures(raw: dict) -> dict:
    """`raw` without the words themselves (what was missed, what was flagged): the data's own."""
    if not isinstance(raw, dict):
        return raw
    words = ("misses", "corrections_flagged_words")
    return {k: _figures(v) for k, v in raw.items() if k not in words}


def real_report(results: dict, by_half: dict, header: str) -> str:
    rows = [[name, *_real_row(r), f"{r['seconds']:.1f}"] for name, r in results.items()]
    parts = [header, table(["checker", *REAL_COLUMNS, "time, s"], rows)]
    if by_half:
        parts.append(
            "By half: the checker's constants were set on the even lines (train); the odd "
            "lines (test) are held out:"
        )
        rows = [
            [name, half, *_real_row(r)]
            for name, halves in by_half.items()
            for half, r in halves.items()
        ]
        parts.append(table(["checker", "half", *REAL_COLUMNS], rows))
    for axis in ("type", "category"):
        counts = next(iter(results.values()))["counts_by"][axis]
        labels = sorted(counts, key=lambda k: -counts[k])
        parts.append(f"Errors flagged by {axis} (n: errors of that {axis}):")
        parts.append(
            table(
                [axis, "n", *results],
                [
                    [
                        k,
                        str(counts[k]),
                        *(f"{r['recall_by'][axis][k]:.0%}" for r in results.values()),
                    ]
                    for k in labels
                ],
            )
        )
    return "\n\n".join(parts) + "\n"


def real_plot(results: dict, path: Path) -> None:
    """Non-words flagged, first suggestion right, and false alarms: one colour per checker."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(results)
    colours = [f"C{i}" for i in range(len(names))]
    panels = (
        ("recall", "non-word errors flagged, %", 100),
        ("top1", "first suggestion right, %", 100),
        ("flags_per_1000", "flags per 1,000 clean words", 1),
        ("seconds", "time, s", 1),
    )
    fig, axes = plt.subplots(1, len(panels), figsize=(14, 4.2))
    for ax, (key, label, scale) in zip(axes, panels, strict=True):
        ax.bar(range(len(names)), [results[n][key] * scale for n in names], color=colours)
        ax.set_xticks([])
        ax.set_title(label, fontsize=10)
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in colours]
    fig.legend(handles, names, loc="lower center", ncol=len(names))
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def run(settings: Settings, args: argparse.Namespace) -> str:
    if args.data and Path(args.data).is_file():
        return run_real(settings, args)
    args.split = args.split or "test"
    rng = random.Random(args.seed)
    items = corpus(args.split, args.data)
    if not items:
        raise ConfigError("bench spelling: no excerpts in that split")
    docs = [inject(i, t, rng) for i, t in items]
    document, edits = long_document(docs, rng)
    words_checked = sum(count_words(d.text) + count_words(d.clean) for d in docs)
    results = {}
    hun, *_ = run_hunspell(docs, document, edits)
    results["hunspell-pl"] = {**hun, "words": words_checked}
    dictionary, *_ = run_ours(docs, document, edits, None, "dictionary only")
    results["bielik-lsp (dictionary)"] = {**dictionary, "words": words_checked}
    if args.model:
        from decoder.pipeline import load_scorer

        ours, *_ = run_ours(
            docs,
            document,
            edits,
            lambda: load_scorer(settings, progress=False),
            f"model: {settings.target}",
        )
        results[f"bielik-lsp ({settings.target})"] = {**ours, "words": words_checked}
    errors = sum(len(d.errors) for d in docs)
    header = (
        f"# Polish spelling: bielik-lsp against hunspell-pl\n\n"
        f"{len(docs)} excerpts ({args.split} split{', + ' + args.data if args.data else ''}), "
        f"{errors} injected non-word errors, {words_checked} words checked (each excerpt with "
        f"its errors and clean), seed {args.seed}. {_machine()} hunspell: {hun['version']}.\n\n"
        f"Command: `{args.command_line}`"
    )
    raw = {"results": results, "docs": [asdict(d) for d in docs[:5]]}
    return _publish(args, "spelling", report(results, header), raw, lambda p: plot(results, p))
