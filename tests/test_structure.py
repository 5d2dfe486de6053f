"""The code base's own rules, run with the tests so that CI and the README's command enforce them.

ruff lint and format, layers, no import cycles, private names only in the compat modules, and
the settings tables generated from the schema.
"""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run(*command: str) -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_ruff_lint_passes():
    result = run(sys.executable, "-m", "ruff", "check", "--no-cache", ".")
    assert result.returncode == 0, result.stdout[-4000:]


def test_ruff_format_is_applied():
    result = run(sys.executable, "-m", "ruff", "format", "--check", "--no-cache", ".")
    assert result.returncode == 0, result.stdout[-4000:]


def test_layers_cycles_and_private_names():
    result = run(sys.executable, "scripts/check_structure.py")
    assert result.returncode == 0, result.stdout[-4000:]


def test_generated_settings_tables_are_current():
    """The editors' and docs/language-server.md's settings tables come from the one schema."""
    result = run(sys.executable, "scripts/gen_settings.py", "--check")
    assert result.returncode == 0, f"run python scripts/gen_settings.py:\n{result.stdout}"
