"""Write the spelling checker's frequency tables (polish/data/words-{pl,en,other}.tsv.gz).

From wordfreq's large Polish and English lists (wordfreq 3.1.1, data CC BY-SA 4.0): every
Polish form Morfeusz 2 knows as a word (not only as an abbreviation or a numeral), with its
Zipf frequency (x10, rounded); the English words from Zipf 2.5 up; and the words of the Polish
list Morfeusz does not know at all (names, foreign words, common misspellings). The checker
ranks candidates by how common they are (polish/lexicon.py), tells English words in Polish text
by the second table, and a name from a slip by the third. wordfreq folds case: which forms
must be capitalised the checker asks Morfeusz (its proper-name lemmas). One-off, two minutes:

    pip install wordfreq==3.1.1 && python scripts/build_spelling_data.py
"""

from __future__ import annotations

import gzip
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from polish.morphology import analyse, is_known  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "polish" / "data"
WORD = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)*")
ENGLISH = re.compile(r"[a-z]+")
ENGLISH_MIN_ZIPF = 2.5
NOT_WORDS = ("brev", "romandig", "dig")


def suggestible(word: str) -> bool:
    """A form Morfeusz knows that is a word to suggest: not only an abbreviation or a numeral."""
    return is_known(word) and any(i.pos not in NOT_WORDS for i in analyse(word))


def write(path: Path, rows: list[tuple[str, float]]) -> None:
    """One `word<TAB>zipf*10` line per word, most frequent first (gzip, no timestamp)."""
    rows.sort(key=lambda row: (-row[1], row[0]))
    text = "".join(f"{word}\t{round(zipf * 10)}\n" for word, zipf in rows)
    with gzip.GzipFile(path, "wb", mtime=0) as out:
        out.write(text.encode("utf-8"))
    print(f"{len(rows)} words in {path}")


def main() -> None:
    from tqdm import tqdm
    from wordfreq import get_frequency_dict, zipf_frequency

    polish = [w for w in get_frequency_dict("pl") if WORD.fullmatch(w)]
    known = [(w, zipf_frequency(w, "pl")) for w in tqdm(polish, "Morfeusz") if suggestible(w)]
    write(DATA / "words-pl.tsv.gz", known)
    other = [(w, zipf_frequency(w, "pl")) for w in polish if not is_known(w)]
    write(DATA / "words-other.tsv.gz", other)
    english = [
        (w, zipf_frequency(w, "en")) for w in get_frequency_dict("en") if ENGLISH.fullmatch(w)
    ]
    write(DATA / "words-en.tsv.gz", [row for row in english if row[1] >= ENGLISH_MIN_ZIPF])


if __name__ == "__main__":
    main()
