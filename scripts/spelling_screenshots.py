"""Spelling (or grammar) in both real editors, tried as a user would, with screenshots for docs/.

VS Code: code-server with the extension built and installed by editors/README.md's commands
(as tests/test_vscode_e2e.py does), driven by editors/vscode-e2e/spelling.mjs: the squiggle, the
hover, Ctrl+. and Enter. Neovim 0.12 under tmux, with bielik.nvim added the packpath way: the
underline (vim.diagnostic), then `vim.lsp.buf.code_action()` and `1` in its menu. Both check
that "zaczoł" became "zaczął" (`--check grammar`: that "byli" became "były", a grammar
diagnostic that the model confirms); the terminal's screen is rendered to PNG through ansi2html
and Chromium. Needs what editors/install-test-deps.sh installs, tmux, and `pip install ansi2html`.

    python scripts/spelling_screenshots.py --out docs     # a minute or two on 2 idle cores
    python scripts/spelling_screenshots.py --out docs --check grammar
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tests import test_vscode_e2e as e2e  # noqa: E402
from tests.test_editors import _nvim  # noqa: E402

CHECKS = {
    # document, the word, its fix, what the message says, the line once fixed
    "spelling": (
        "# Notatka\n\n"
        "Wczoraj wieczorem zaczoł padać deszcz, więc zostaliśmy w domu.\n\n"
        "Polecenie `grep --color` i adres https://example.com zostają bez uwag.\n",
        "zaczoł",
        "zaczął",
        "unknown word",
        "Wczoraj wieczorem zaczął padać",
    ),
    "grammar": (
        "# Notatka\n\n"
        "Dzieci byli niegrzeczne, więc zostały w domu.\n\n"
        "Polecenie `grep --color` i adres https://example.com zostają bez uwag.\n",
        "byli",
        "były",
        "does not agree with",
        "Dzieci były niegrzeczne",
    ),
}
CHECK = "spelling"


def vscode(out: Path, tmp: Path) -> dict:
    reason = e2e._missing()
    if reason:
        raise SystemExit(f"VS Code: {reason}")
    tag = uuid.uuid4().hex
    env = e2e._user_env(tag)
    clone = tmp / "clone"
    shutil.copytree(
        e2e.EDITORS / "vscode",
        clone / "editors/vscode",
        ignore=shutil.ignore_patterns("node_modules", "out", "dist", "*.vsix"),
    )
    script = (
        f'code() {{ "{e2e.CODE_SERVER}" --user-data-dir "{tmp}/user-data"'
        f' --extensions-dir "{tmp}/extensions" "$@"; }}\nset -e\n{e2e._readme_build()}'
    )
    subprocess.run(["bash", "-c", script], cwd=clone, env=env, check=True, timeout=900)
    settings = tmp / "user-data/User/settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text('{"workbench.colorTheme": "Default Light Modern"}\n')
    workspace = tmp / "workspace"
    workspace.mkdir()
    doc = workspace / "notatka.md"
    document, word, fix, _, _ = CHECKS[CHECK]
    doc.write_text(document, encoding="utf-8")
    proc, url = e2e._start_code_server(tmp, workspace, {**env, "HOME": str(e2e._uv_user_home(tmp))})
    try:
        results = tmp / "spelling.json"
        runner = e2e.RUNNER.parent / "spelling.mjs"
        printed = e2e._browse(
            ["node", str(runner), "--url", url, "--file", str(doc), "--word", word,
             "--fix", fix, "--out", str(results), "--screenshots", str(out),
             "--chromium", e2e.CHROMIUM, "--prefix", f"vscode-{CHECK}"],
            env,
            timeout=600,
        )  # fmt: skip
        print(printed)
        return json.loads(results.read_text())
    finally:
        e2e._kill_all(tag, proc)


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], check=True, capture_output=True, text=True).stdout


def shoot(session: str, html: Path, png: Path) -> None:
    """The terminal's screen, colours and underlines included, as a PNG."""
    from ansi2html import Ansi2HTMLConverter

    screen = tmux("capture-pane", "-e", "-p", "-t", session)
    page = Ansi2HTMLConverter(dark_bg=True, scheme="xterm").convert(screen)
    page = page.replace("</style>", "body{margin:0;font-size:15px;line-height:1.25}</style>")
    html.write_text(page, encoding="utf-8")
    chromium = e2e.CHROMIUM
    subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         f"--screenshot={png}", "--window-size=980,380", html.as_uri()],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip


def wait_screen(session: str, text: str, timeout_s: float) -> str:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        screen = tmux("capture-pane", "-p", "-t", session)
        if text in screen:
            return screen
        time.sleep(0.3)
    raise SystemExit(f"Neovim: {text!r} never showed:\n{screen}")


def nudge_until(session: str, text: str, timeout_s: float) -> str:
    """Wait for `text`, typing a space and taking it back every 15 s meanwhile.

    Neovim 0.12 pulls diagnostics only after an edit and cannot be asked to pull again, so
    the model's verdicts (once it has loaded) come with the next edit, as they do for a writer.
    """
    end = time.monotonic() + timeout_s
    while True:
        try:
            return wait_screen(session, text, min(15, max(1, end - time.monotonic())))
        except SystemExit:
            if time.monotonic() >= end:
                raise
            tmux("send-keys", "-t", session, "A", " ", "Escape", "x")


def neovim(out: Path, tmp: Path) -> dict:
    nvim = _nvim()
    if nvim is None or shutil.which("tmux") is None:
        raise SystemExit("Neovim: needs nvim 0.12 (editors/install-test-deps.sh) and tmux")
    doc = tmp / "notatka.md"
    document, word, fix, says, fixed = CHECKS[CHECK]
    doc.write_text(document, encoding="utf-8")
    init = tmp / "init.lua"
    init.write_text(
        f"""
local pack = '{tmp}/pack'
vim.fn.mkdir(pack .. '/pack/bielik/opt', 'p')
vim.uv.fs_symlink('{ROOT}/editors/nvim', pack .. '/pack/bielik/opt/bielik.nvim')
vim.opt.packpath:prepend(pack)
vim.cmd('filetype on | syntax on | packadd bielik.nvim')
vim.o.termguicolors = true
vim.diagnostic.config({{ virtual_text = true, underline = true }})
require('bielik').setup({{ cmd = {{ '{sys.executable}', '-m', 'app.cli', 'serve' }} }})
""",
        encoding="utf-8",
    )
    session = f"{CHECK}-{uuid.uuid4().hex[:8]}"
    env = f"PYTHONPATH={ROOT}"
    tmux("new-session", "-d", "-s", session, "-x", "100", "-y", "14",
         f"env {env} {nvim} -u {init} -i NONE -n {doc}")  # fmt: skip
    steps = []
    try:
        nudge_until(session, says, 300)
        steps.append("underlined, with the message beside it")
        tmux("send-keys", "-t", session, f"/{word}", "Enter")
        shoot(session, tmp / "nvim.html", out / f"nvim-{CHECK}.png")
        tmux("send-keys", "-t", session, ":lua vim.lsp.buf.code_action()", "Enter")
        wait_screen(session, f"“{fix}”", 30)
        shoot(session, tmp / "menu.html", out / f"nvim-{CHECK}-fixes.png")
        steps.append("code actions listed")
        tmux("send-keys", "-t", session, "1", "Enter")
        screen = wait_screen(session, fixed, 30)
        steps.append(screen.splitlines()[2].strip())
        time.sleep(2)  # the diagnostic of the fixed word goes away
        shoot(session, tmp / "fixed.html", out / f"nvim-{CHECK}-fixed.png")
    finally:
        tmux("kill-session", "-t", session)
    return {"ok": True, "steps": steps}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="docs", help="where the PNGs go")
    parser.add_argument("--editor", choices=("vscode", "nvim", "both"), default="both")
    parser.add_argument("--keep", help="work in this folder and keep it (logs, settings)")
    parser.add_argument("--check", choices=tuple(CHECKS), default="spelling")
    args = parser.parse_args()
    global CHECK
    CHECK = args.check
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(args.keep or folder)
        for name, run in (("nvim", neovim), ("vscode", vscode)):
            if args.editor in (name, "both"):
                (tmp / name).mkdir(parents=True)
                print(f"{name}:", json.dumps(run(out, tmp / name), ensure_ascii=False))


if __name__ == "__main__":
    main()
