"""How common a word is, and which known forms sound like it: the spelling checker's tables.

Three tables in polish/data (scripts/build_spelling_data.py writes them from wordfreq's large
lists, CC BY-SA 4.0): every Polish form Morfeusz 2 knows with its Zipf frequency (log10 of
occurrences per billion words); the words of Polish text Morfeusz does not know (names,
foreign words, and the commonest misspellings too: evidence that a capitalised word is a
name, never that a small-letter one is right); and English words from Zipf 2.5. From the
first: an index of the forms by `key` (what a word keeps when diacritics, rz/ż, ch/h and
ó/u/o are forgotten), which is where polish/typos.py finds candidates; the keys grouped by
first letter and length, for its wider search (two edits away); how many forms hold each
letter trigram (whether an unknown word looks Polish at all). wordfreq folds case, so which
forms must be capitalised is Morfeusz's to say (polish/spelling.py: `must_capitalise`).
A fourth (scripts/build_sjp_forms.py) holds the forms of hunspell-pl's word list (sjp.pl)
that Morfeusz lacks, cased: rare correct forms no other table has ("termidoriańskim").
Built once, then kept in the user's cache as a marshal file (a third of the time to read);
loaded lazily, on first use.
"""

from __future__ import annotations

import gzip
import hashlib
import marshal
import os
import threading
from dataclasses import dataclass
from functools import lru_cache
from importlib.resources import files
from pathlib import Path

import numpy as np

SOURCES = ("words-pl.tsv.gz", "words-en.tsv.gz", "words-other.tsv.gz", "words-sjp.txt.gz")
FORMAT = 6  # bump when `key` or the cached layout changes
_STRIP = str.maketrans("ąćęłńóśźżu", "acelnoszzo")


@dataclass(frozen=True)
class Tables:
    polish: dict[str, int]  # known form (lower-case) -> Zipf x 10
    english: dict[str, int]  # English word -> Zipf x 10
    other: dict[str, int]  # a word of Polish text Morfeusz does not know -> Zipf x 10
    by_key: dict[str, tuple[str, ...]]  # key -> the known forms with that key
    trigrams: dict[str, int]  # letter trigram ("^" and "$" at the ends) -> known forms with it
    keys_by_start: dict[str, list[str]]  # the keys of by_key, by first letter and length ("a7")
    sjp: np.ndarray  # hunspell-pl's forms Morfeusz lacks, as written: sorted 64-bit digests


_lock = threading.Lock()
_tables: Tables | None = None


def key(word: str) -> str:
    """What a lower-case word keeps when diacritics, rz/ż, ch/h and ó/u/o are forgotten."""
    return word.translate(_STRIP).replace("rz", "z").replace("ch", "h")


def _read(name: str) -> dict[str, int]:
    """Word -> Zipf x 10 (small ints, shared by Python: no object per entry)."""
    table: dict[str, int] = {}
    with gzip.open(str(files("polish") / "data" / name), "rt", encoding="utf-8") as lines:
        for line in lines:
            word, _, zipf = line.rstrip("\n").partition("\t")
            table[word] = int(zipf)
    return table


def _digest(form: str) -> int:
    return int.from_bytes(hashlib.blake2b(form.encode(), digest_size=8).digest(), "little")


def _read_digests(name: str) -> bytes:
    """A word list as its forms' sorted digests: 8 bytes a form, where a set of str takes 100."""
    with gzip.open(str(files("polish") / "data" / name), "rt", encoding="utf-8") as lines:
        forms = [f for f in lines.read().split("\n") if f]
    return np.array(sorted(map(_digest, forms)), dtype=np.uint64).tobytes()


def _trigrams(word: str) -> set[str]:
    padded = f"^{word}$"
    return {padded[i : i + 3] for i in range(len(padded) - 2)}


def _build() -> tuple:
    polish, english, other = (_read(name) for name in SOURCES[:3])
    grouped: dict[str, list[str]] = {}
    trigrams: dict[str, int] = {}
    for word in polish:
        grouped.setdefault(key(word), []).append(word)
        for tri in _trigrams(word):
            trigrams[tri] = trigrams.get(tri, 0) + 1
    by_start: dict[str, list[str]] = {}
    for k in grouped:
        by_start.setdefault(f"{k[0]}{len(k)}", []).append(k)
    by_key = {k: tuple(v) for k, v in grouped.items()}
    return polish, english, other, by_key, trigrams, by_start, _read_digests(SOURCES[3])


def cache_file() -> Path:
    """Where the built tables are kept: named by the data files' digest and FORMAT."""
    digest = hashlib.sha256(str(FORMAT).encode())
    for name in SOURCES:
        digest.update((files("polish") / "data" / name).read_bytes())
    root = Path(os.environ.get("BIELIK_LSP_CACHE") or Path.home() / ".cache" / "bielik-lsp")
    return root / "spelling" / f"lexicon-{digest.hexdigest()[:16]}.marshal"


def _cached() -> tuple:
    """The built tables from the cache, or built now and written there (best effort)."""
    path = cache_file()
    try:
        return marshal.loads(path.read_bytes())
    except (OSError, EOFError, ValueError, TypeError):
        pass
    built = _build()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(f".{os.getpid()}.tmp")
        partial.write_bytes(marshal.dumps(built))
        partial.replace(path)
    except OSError:
        pass  # a read-only home: built again next time
    return built


def load() -> Tables:
    """The tables, read once per process; any thread may be first."""
    global _tables
    if _tables is None:
        with _lock:
            if _tables is None:
                *tables, sjp = _cached()  # marshal keeps the digests as bytes
                _tables = Tables(*tables, np.frombuffer(sjp, dtype=np.uint64))
    return _tables


def polish_zipf(word: str) -> float:
    """Zipf frequency of a Polish form Morfeusz knows (lower-cased); 0 for any other string."""
    return load().polish.get(word.lower(), 0) / 10


def english_zipf(word: str) -> float:
    """Zipf frequency of an English word (lower-cased); 0 when it is not a common one."""
    return load().english.get(word.lower(), 0) / 10


def other_zipf(word: str) -> float:
    """Zipf frequency of a word of Polish text that Morfeusz does not know; 0 for the rest."""
    return load().other.get(word.lower(), 0) / 10


def sjp_knows(word: str) -> bool:
    """hunspell-pl's word list (sjp.pl) has `word`, a form Morfeusz lacks, in this case.

    As hunspell reads case: a small-letter form may be capitalised or all capitals, a
    capitalised one all capitals ("Hopfer", "HOPFER"; not "hopfer").
    """
    table = load().sjp

    def has(form: str) -> bool:
        digest = np.uint64(_digest(form))
        at = int(np.searchsorted(table, digest))
        return at < len(table) and bool(table[at] == digest)

    if has(word):
        return True
    if word[:1].isupper() and (word[1:].islower() or word.isupper()) and has(word.lower()):
        return True
    return word.isupper() and has(word.capitalize())


def odd_trigrams(word: str, rare: int) -> tuple[int, int]:
    """How many of the word's letter trigrams `rare` known forms or fewer hold, of how many.

    "dpkg" 3 of 4, "passwd" 2 of 6, "uvicorn" 2 of 7: not Polish-looking; "wszysko": none;
    a slip makes one odd in a long word ("watwch" 1 of 6, "ekeprymentalny" 1 of 14).
    """
    table = load().trigrams
    found = _trigrams(word.lower())
    return sum(table.get(tri, 0) <= rare for tri in found), len(found)


def trigram_count(tri: str) -> int:
    """How many known forms hold the letter trigram `tri` ("^" and "$" mark the ends)."""
    return load().trigrams.get(tri, 0)


def forms_by_key(k: str) -> tuple[str, ...]:
    """The known forms whose key is `k`."""
    return load().by_key.get(k, ())


@lru_cache(maxsize=1)
def _names_by_start() -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for word in load().other:
        out.setdefault(f"{word[:1]}{len(word)}", []).append(word)
    return out


def names_like(first: str, n: int) -> list[str]:
    """Every word of n letters starting with `first` that Polish text writes and Morfeusz lacks.

    Names and foreign words, mostly ("liebknecht", "amiens"): polish/typos.py's `names_near`.
    """
    return _names_by_start().get(f"{first}{n}", [])


def keys_like(first: str, n: int) -> list[str]:
    """Every key of `n` letters starting with `first` (polish/typos.py's wider search)."""
    return load().keys_by_start.get(f"{first}{n}", [])
