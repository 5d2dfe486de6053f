"""Excerpts from sources tune-drafter never sees: `bench drafter --excerpts FILE` measures on them.

The bench corpus and the tuning prompts come from the same repositories, so `bench drafter` on
the bench corpus measures a drafter tuned to those sources. Debian's fortunes-pl (prose: jokes,
stories, quotations) and manpages-pl (structured: manual pages, as `man` lays them out) are kept
out of tuning, so excerpts from them show what the tuning gives on text of other sources.

    python scripts/debian_excerpts.py --out /tmp/debian.jsonl      # needs apt-get, dpkg-deb, man
    bielik-lsp bench drafter --adapter DIR --excerpts /tmp/debian.jsonl --per-class 8 --out OUT

With `--folder DIR` it also writes, one text file per page, the Polish manual pages that other
Debian packages ship (dpkg, apt, man-db, procps, shadow, vim and more; none from manpages-pl):
a writer's folder of the same genre for `tune-drafter --data DIR` and `bench drafter --data DIR`.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import tempfile
from pathlib import Path

PACKAGES = ("fortunes-pl", "manpages-pl")
OTHER_PAGES = (  # packages that ship Polish manual pages of their own (bookworm)
    "apt", "base-passwd", "debianutils", "dpkg", "dpkg-dev", "locales", "login", "man-db",
    "passwd", "procps", "vim-common", "vim-runtime", "xxd",
)  # fmt: skip
POLISH = "ąćęłńóśźż"


def unpack(folder: Path, packages: tuple[str, ...] = PACKAGES) -> Path:
    """`packages` downloaded (apt-get download) and unpacked into `folder`; its usr/share."""
    subprocess.run(["apt-get", "download", *packages], cwd=folder, check=True)
    for deb in folder.glob("*.deb"):
        subprocess.run(["dpkg-deb", "-x", str(deb), str(folder)], check=True)
    return folder / "usr/share"


def fortunes(share: Path, rng: random.Random, count: int) -> list[dict]:
    """Prose: fortunes of 400 characters or more, in a seeded shuffle, at most 1500 each."""
    entries = []
    for path in sorted((share / "games/fortunes/pl").iterdir()):
        if path.suffix:  # .dat indexes and empty .u8 links
            continue
        text = path.read_text("utf-8", errors="replace")
        entries += [(path.name, e.strip("\n")) for e in text.split("\n%\n") if len(e.strip()) > 400]
    rng.shuffle(entries)
    return [
        {"id": f"fortune-{name}-{i}", "label": "prose", "text": text[:1500]}
        for i, (name, text) in enumerate(entries[:count])
    ]


def show(page: Path) -> str:
    """The page as `man` lays it out at 80 columns, in plain text ("" where it cannot)."""
    env = {**os.environ, "MANWIDTH": "80"}
    shown = subprocess.run(["man", "-l", str(page)], capture_output=True, text=True, env=env)
    return subprocess.run(["col", "-bx"], input=shown.stdout, capture_output=True, text=True).stdout


def manual_pages(share: Path, rng: random.Random, count: int) -> list[dict]:
    """Structured: 1200 characters from a quarter into each Polish page of section 1."""
    pages = sorted((share / "man/pl/man1").iterdir())
    rng.shuffle(pages)
    out: list[dict] = []
    for page in pages:
        shown = show(page)
        start = shown.find("\n", len(shown) // 4) + 1
        text = shown[start : start + 1200]
        polish = sum(text.count(c) for c in POLISH)
        if len(shown) < 2500 or polish < 15 or any(o["text"][:200] == text[:200] for o in out):
            continue  # short, untranslated, or the same page under another name
        out.append({"id": f"man-{page.name}", "label": "structured", "text": text})
        if len(out) == count:
            break
    return out


def write_folder(share: Path, out: Path) -> int:
    """Every page under share/man/pl as out/NAME.txt; a page shown under two names is kept once.

    Links that point outside the package (the alternatives system's) show nothing and are left.
    """
    out.mkdir(parents=True, exist_ok=True)
    seen: set[str] = set()
    for page in sorted(share.glob("man/pl/man*/*.gz"), key=lambda p: p.name):
        text = show(page)
        if text.strip() and text not in seen:
            seen.add(text)
            (out / f"{page.name.removesuffix('.gz')}.txt").write_text(text, encoding="utf-8")
    return len(seen)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="the JSON lines file to write")
    parser.add_argument("--per-class", type=int, default=12, help="excerpts per type")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--folder", help="also write other packages' Polish manual pages here")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as folder:
        share = unpack(Path(folder))
        items = fortunes(share, rng, args.per_class) + manual_pages(share, rng, args.per_class)
    lines = [json.dumps(item, ensure_ascii=False) for item in items]
    Path(args.out).write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{len(items)} excerpts in {args.out}")
    if args.folder:
        with tempfile.TemporaryDirectory() as folder:
            count = write_folder(unpack(Path(folder), OTHER_PAGES), Path(args.folder))
        print(f"{count} manual pages of other packages in {args.folder}")


if __name__ == "__main__":
    main()
