"""Where models live on disk (the cache), how files are identified, and how loading fails.

Every loader (embedded packages, GGUF import, model directories, the hub) shares these, so a
model that cannot load always ends in the same one-line `ModelLoadError`.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

DTYPES = ("float32", "float16", "bfloat16")


class ModelLoadError(Exception):
    """A model cannot be loaded; the message is one line meant for the user."""


def cache_root() -> Path:
    """Where converted models and assembled files live: $BIELIK_LSP_CACHE or ~/.cache/bielik-lsp."""
    return Path(os.environ.get("BIELIK_LSP_CACHE") or Path.home() / ".cache" / "bielik-lsp")


def file_sha256(path: Path) -> str:
    """sha256 of a file, remembered by (path, size, mtime) so big files are hashed once."""
    path = Path(path).resolve()
    stat = path.stat()
    index_path = cache_root() / "sha256.json"
    try:
        index = json.loads(index_path.read_text())
    except (OSError, ValueError):
        index = {}
    entry = index.get(str(path))
    if entry and entry["size"] == stat.st_size and entry["mtime_ns"] == stat.st_mtime_ns:
        return entry["sha256"]
    digest = hashlib.sha256()
    with path.open("rb") as file:
        while block := file.read(1 << 20):
            digest.update(block)
    index[str(path)] = {
        "size": stat.st_size,
        "mtime_ns": stat.st_mtime_ns,
        "sha256": digest.hexdigest(),
    }
    write_atomically(index_path, json.dumps(index, indent=1))
    return digest.hexdigest()


def write_atomically(path: Path, text: str) -> None:
    """Readers see the old file or the new one, never half of it (several processes share it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temp.write_text(text)
    os.replace(temp, path)
