"""bielik-lsp's version for hatchling: decoder/about.py, in an sdist beside this file."""

from pathlib import Path

here = Path(__file__).resolve().parent
about = (
    next(p for p in (here, here.parents[1]) if (p / "decoder").is_dir()) / "decoder" / "about.py"
)
__version__ = about.read_text().split('__version__ = "', 1)[1].split('"', 1)[0]
