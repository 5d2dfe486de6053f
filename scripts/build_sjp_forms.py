"""Write polish/data/words-sjp.txt.gz: the forms of hunspell-pl's dictionary Morfeusz 2 lacks.

hunspell-pl's word list (sjp.pl, as LibreOffice 7.5 ships it: Debian's hunspell-pl
1:7.5.0-1; licensed GPL, LGPL, MPL, Apache-2.0 or CC-SA-1.0, taken here under Apache-2.0)
knows rare correct forms that neither Morfeusz nor wordfreq has ("termidoriańskim",
"krotek"). The spelling checker (polish/spelling.py) leaves a word it knows alone, and
questions a small-letter word that none of the three knows. Its stems are expanded with
hunspell's own `unmunch`; only the forms Morfeusz does not know are kept (one in seven).
One-off, about five minutes:

    apt-get install hunspell-pl hunspell-tools && python scripts/build_sjp_forms.py
"""

from __future__ import annotations

import gzip
import hashlib
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from polish.morphology import is_known  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "polish" / "data"
DICTIONARY = Path("/usr/share/hunspell/pl_PL")
SHA256 = {  # Debian's hunspell-pl 1:7.5.0-1
    ".dic": "215fd73aa47b11e7fdd2e4d655e9fe37be4acdae16ff833badcfdfce79110aad",
    ".aff": "7c37b9bde78054e43365b488a13859094c88bc66664b5b7a7bb073626454b38e",
}


def checked(suffix: str) -> Path:
    """The dictionary's file, refused if it is not the version this table was built from."""
    path = DICTIONARY.with_suffix(suffix)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != SHA256[suffix]:
        sys.exit(f"{path}: sha256 {digest}, not hunspell-pl 1:7.5.0-1's; update SHA256 knowingly")
    return path


def encoding(aff: Path) -> str:
    """The dictionary's character set, as its affix file's SET line names it (ISO8859-2)."""
    for line in aff.read_bytes().splitlines():
        if line.startswith(b"SET "):
            return line.split()[1].decode("ascii")
    return "utf-8"


def main() -> None:
    from tqdm import tqdm

    dic, aff = checked(".dic"), checked(".aff")
    expanded = subprocess.run(
        ["unmunch", str(dic), str(aff)], capture_output=True, check=True
    ).stdout.decode(encoding(aff))
    forms = sorted({f for f in expanded.split("\n") if f.strip() == f and f})
    kept = [f for f in tqdm(forms, "Morfeusz") if not is_known(f)]
    path = DATA / "words-sjp.txt.gz"
    with gzip.GzipFile(path, "wb", mtime=0) as out:
        out.write("".join(f"{f}\n" for f in kept).encode("utf-8"))
    print(f"{len(kept)} of {len(forms)} forms in {path}")


if __name__ == "__main__":
    main()
