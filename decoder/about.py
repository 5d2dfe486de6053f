"""The installed bielik-lsp: its version, and which installer put it where it runs.

The language server sends the version to editors (serverInfo), which offer an upgrade when it is
older than they are; `doctor` names the upgrade command of the installer that was used.
"""

from __future__ import annotations

import sys
from importlib import metadata
from pathlib import Path

__version__ = "0.1.0"  # the one place: pyproject.toml and packaging/remote read it from here


def installer(prefix: str = sys.prefix) -> str:
    """Which installer made this environment ("uv tool", "pipx", "venv", "other"), by its path."""
    parents = [part.lower() for part in Path(prefix).parts[:-1]]
    pairs = set(zip(parents, parents[1:], strict=False))
    if ("uv", "tools") in pairs:  # uv tool dir: ~/.local/share/uv/tools, %APPDATA%\uv\tools
        return "uv tool"
    if any(a.startswith(("pipx", ".pipx")) for a, b in pairs if b == "venvs"):
        return "pipx"
    return "venv" if sys.prefix != sys.base_prefix else "other"


def distribution() -> str:
    """The package this code was installed as: bielik-lsp, or the lean bielik-lsp-remote."""
    try:
        metadata.distribution("bielik-lsp-remote")
    except metadata.PackageNotFoundError:
        return "bielik-lsp"
    return "bielik-lsp-remote"


def upgrade_command() -> str:
    """How to upgrade with the installer that was used."""
    name = distribution()
    return {
        "uv tool": f"uv tool upgrade {name}",
        "pipx": f"pipx upgrade {name}",
    }.get(installer(), f"pip install --upgrade {name}")
