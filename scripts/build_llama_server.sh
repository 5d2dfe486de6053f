#!/usr/bin/env bash
# Build llama-server, the peer `bench engines` and `bench load` compare with, from the llama.cpp
# that llama-cpp-python vendors (the same version our engine runs), as its own release build
# does: default kernels (tinyBLAS on), no curl, one static binary. Needs cmake and a C++ compiler; ~10 min on 2
# cores, once. Result: ~/.cache/bielik-lsp/llama-server/bin/llama-server (bench finds it there).
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION="$(.venv/bin/python -c 'import llama_cpp; print(llama_cpp.__version__)')"
DEST="${XDG_CACHE_HOME:-$HOME/.cache}/bielik-lsp/llama-server"
if [[ -x "$DEST/bin/llama-server" && "$(cat "$DEST/version" 2>/dev/null)" == "$VERSION" ]]; then
    echo "build_llama_server: $DEST/bin/llama-server (llama-cpp-python $VERSION) is built"
    exit 0
fi
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
.venv/bin/python -m pip download -q --no-deps --no-binary :all: -d "$WORK" \
    "llama-cpp-python==$VERSION"
tar -xzf "$WORK"/llama_cpp_python-*.tar.gz -C "$WORK"
SRC="$(echo "$WORK"/llama_cpp_python-*/vendor/llama.cpp)"
cmake -S "$SRC" -B "$WORK/build" -DCMAKE_BUILD_TYPE=Release -DLLAMA_CURL=OFF -DBUILD_SHARED_LIBS=OFF \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF >"$WORK/cmake.log"
cmake --build "$WORK/build" --target llama-server -j"$(nproc)" 2>&1 \
    | awk '/^\[ *[0-9]+%\]/ { p = $2; if (p != last) { printf "\rbuild_llama_server: %s ", p; fflush(); last = p } }
           END { print "" }'
mkdir -p "$DEST/bin"
cp "$WORK/build/bin/llama-server" "$DEST/bin/"
echo "$VERSION" >"$DEST/version"
echo "build_llama_server: $DEST/bin/llama-server"
