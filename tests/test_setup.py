"""`bielik-lsp setup` and the libllama it selects, with the real llama-cpp-python of this venv.

The full build (download, compile, about 5 minutes) is what a user runs once; here the parts
around it run for real: the package index answers with the source package, a build folder made
of this venv's own (exact) libllama is selected per environment and loaded in a new process,
and MLX multiplies through the OpenBLAS stand-in compiled over scipy-openblas32.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from app import setup
from app.cli import build_parser
from decoder.backends import llama_lib
from decoder.config import Settings

ROOT = Path(__file__).resolve().parents[1]


def python(code: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True, check=False
    )


@pytest.fixture
def cache(tmp_path, monkeypatch) -> dict[str, str]:
    """A cache of its own, for this process and the ones it starts."""
    monkeypatch.setenv("BIELIK_LSP_CACHE", str(tmp_path))
    for name in (llama_lib.LIB_ENV, llama_lib.CHOICE_ENV):
        monkeypatch.delenv(name, raising=False)
    return dict(os.environ, PYTHONPATH=str(ROOT))


def own_library_folder() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("llama_cpp")
    return Path(spec.origin).parent / "lib"


def test_a_setup_build_is_what_this_environment_loads(cache):
    version = llama_lib.installed_version()
    folder = llama_lib.builds_root() / f"{version}-cpu-test"
    shutil.copytree(own_library_folder(), folder, symlinks=True)
    manifest = {"version": version, "flags": setup.FLAGS, "gpu": "cpu"}
    (folder / "build.json").write_text(json.dumps(manifest))
    assert setup.probe_library(folder) == ("cpu", True)
    setup.select(version, folder)
    assert llama_lib.current_build() == llama_lib.read_build(folder)
    loaded = "from decoder.compat import llama_cpp as c; print(c.LIBRARY)"
    assert str(folder) in python(loaded, cache).stdout
    bundled = python(loaded, {**cache, llama_lib.CHOICE_ENV: "bundled"}).stdout
    assert "installed with" in bundled
    other_env = python(loaded, {**cache, llama_lib.LIB_ENV: str(own_library_folder())}).stdout
    assert str(own_library_folder()) in other_env  # the user's own choice wins


def test_a_build_for_another_version_is_never_loaded(cache):
    version = llama_lib.installed_version()
    folder = llama_lib.builds_root() / "0.0.1-cpu-test"
    shutil.copytree(own_library_folder(), folder, symlinks=True)
    (folder / "build.json").write_text(json.dumps({"version": "0.0.1", "flags": [], "gpu": "cpu"}))
    llama_lib.current_file(version).parent.mkdir(parents=True, exist_ok=True)
    llama_lib.current_file(version).write_text(folder.name)
    assert llama_lib.current_build() is None


def test_setup_with_an_exact_library_builds_nothing(cache, capsys):
    args = build_parser().parse_args(["setup", "--no-check"])
    assert setup.run(Settings(), args) == 0
    assert "nothing to build" in capsys.readouterr().out
    assert not list(llama_lib.builds_root().glob("*-cpu-*"))


def test_the_index_has_the_source_package_of_the_installed_release():
    version = llama_lib.installed_version()
    url, sha256 = setup.find_file(setup.INDEX, f"llama_cpp_python-{version}.tar.gz")
    assert url.startswith("https://") and url.endswith(".tar.gz")
    assert sha256 and len(sha256) == 64


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="MLX's BLAS is a Linux matter")
def test_mlx_multiplies_through_the_scipy_openblas_stand_in(cache, monkeypatch):
    monkeypatch.setattr(setup, "CANDIDATES", [])  # as on a machine without a system OpenBLAS
    assert "built now" in setup.fast_blas()
    shim = str(llama_lib.builds_root().parent / "blas" / "libcblas-scipy-openblas.so")
    code = (
        "import numpy as np, mlx.core as mx\n"
        "from decoder.backends.blas import loaded_blas\n"
        "rng = np.random.default_rng(0)\n"
        "a = rng.standard_normal((300, 200), 'float32')\n"
        "b = rng.standard_normal((200, 100), 'float32')\n"
        "out = np.array(mx.array(a) @ mx.array(b))\n"
        "assert np.allclose(out, a @ b, atol=1e-3), abs(out - a @ b).max()\n"
        "print(loaded_blas())\n"
    )
    env = {**cache, "LD_PRELOAD": shim, "BIELIK_LSP_BLAS": "off"}
    done = python(code, env)
    assert done.returncode == 0, done.stderr
    assert "libcblas-scipy-openblas" in done.stdout
