"""Put bielik-lsp's packages into bielik-lsp-remote: from the repository, or from the sdist."""

from pathlib import Path

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

PACKAGES = ("app", "decoder", "lsp_server", "polish")


def source(root: Path) -> Path:
    """Where the packages are: beside pyproject.toml in an sdist, two folders up in a checkout."""
    return root if (root / "decoder").is_dir() else root.parents[1]


class CustomBuildHook(BuildHookInterface):
    def initialize(self, version: str, build_data: dict) -> None:
        where = source(Path(self.root))
        for name in PACKAGES:
            build_data["force_include"][str(where / name)] = name
