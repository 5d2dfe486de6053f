"""The VS Code extension where no server is installed: it offers to install one, in a real VS Code.

code-server (as in tests/test_vscode_e2e.py) runs in a fresh HOME that has uv in ~/.local/bin
(where astral's installer puts it) and no bielik-lsp anywhere. editors/vscode-e2e/install.mjs
drives it through Chromium as a new user would: the one notification offering the install, the
quick pick of builds (each with its command), the install of the CPU build in a terminal by the
real uv, the server started when that ends, ghost text. What uv installs
(`bielik.server.installSource`) is a stand-in wheel whose `bielik-lsp` runs this environment's
server: the real package needs wheels that are not on PyPI yet (bielik-llama-cpp), and
tests/test_install.py installs it as a uv tool already, from scripts/build_wheels.sh's folder.

`BIELIK_E2E_SCREENSHOTS=DIR` keeps the offer, the quick pick and the terminal there.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import sys
import uuid
import zipfile
from pathlib import Path

import pytest

from tests.test_vscode_e2e import (
    CHROMIUM,
    CODE_SERVER,
    DOCUMENT,
    EDITORS,
    SERVER,
    _browse,
    _kill_all,
    _logs,
    _missing,
    _read,
    _start_code_server,
    _user_env,
)

RUNNER = EDITORS / "vscode-e2e" / "install.mjs"
UV = Path(sys.executable).parent / "uv"
READY_TIMEOUT_S = 300


def _stand_in_wheel(folder: Path) -> Path:
    """A wheel named bielik-lsp whose `bielik-lsp` program execs this environment's server."""
    name = "bielik_lsp-0.1.0"
    files = {
        "bielik_stand_in.py": (
            "import os\nimport sys\n\n\ndef main():\n"
            f"    os.execv({str(SERVER)!r}, [{str(SERVER)!r}, *sys.argv[1:]])\n"
        ),
        f"{name}.dist-info/METADATA": "Metadata-Version: 2.1\nName: bielik-lsp\nVersion: 0.1.0\n",
        f"{name}.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\n"
        "Tag: py3-none-any\n",
        f"{name}.dist-info/entry_points.txt": "[console_scripts]\n"
        "bielik-lsp = bielik_stand_in:main\n",
    }
    wheel = folder / f"{name}-py3-none-any.whl"
    record = []
    with zipfile.ZipFile(wheel, "w") as z:
        for path, text in files.items():
            data = text.encode()
            z.writestr(path, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            record.append(f"{path},sha256={digest},{len(data)}")
        record.append(f"{name}.dist-info/RECORD,,")
        z.writestr(f"{name}.dist-info/RECORD", "\n".join(record) + "\n")
    return wheel


class Run:
    def __init__(self, tmp: Path, results: dict, output: str):
        self.tmp, self.results, self.output = tmp, results, output

    def check(self, name: str) -> str:
        entry = self.results.get("checks", {}).get(name)
        if entry is None or not entry["ok"]:
            why = entry["detail"] if entry else "never ran"
            pytest.fail(f"{name}: {why}\n\nrun:\n{self.output[-4000:]}\n{_logs(self.tmp)}")
        return entry["detail"]


@pytest.fixture(scope="module")
def install_run(tmp_path_factory):
    reason = _missing() or (None if UV.exists() else f"no {UV}: uv is a test dependency")
    if reason:
        pytest.skip(reason)
    tmp = tmp_path_factory.mktemp("vscode-install")
    tag = uuid.uuid4().hex
    env = _user_env(tag)
    vsix = tmp / "bielik-lsp.vsix"
    build = subprocess.run(
        ["npx", "--no-install", "vsce", "package", "--skip-license", "--out", str(vsix)],
        cwd=EDITORS / "vscode", env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    dirs = ["--user-data-dir", str(tmp / "user-data"), "--extensions-dir", str(tmp / "extensions")]
    subprocess.run(
        [str(CODE_SERVER), *dirs, "--install-extension", str(vsix)],
        env=env, check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    home = tmp / "home"  # uv where astral's installer puts it; no bielik-lsp
    (home / ".local/bin").mkdir(parents=True)
    (home / ".local/bin/uv").symlink_to(UV)
    settings = tmp / "user-data/User/settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    wheel = _stand_in_wheel(tmp)
    # The terminal drawn in the DOM (not WebGL), so that the run can read what the install said.
    user = {"bielik.server.installSource": str(wheel), "terminal.integrated.gpuAcceleration": "off"}
    settings.write_text(json.dumps(user, indent=2))
    workspace = tmp / "workspace"
    workspace.mkdir()
    doc = workspace / "umowa.md"
    doc.write_text(DOCUMENT.read_text(encoding="utf-8"), encoding="utf-8")

    proc, url = _start_code_server(tmp, workspace, {**env, "HOME": str(home)})
    try:
        out = tmp / "results.json"
        cmd = ["node", str(RUNNER), "--url", url, "--file", str(doc), "--out", str(out),
               "--chromium", CHROMIUM, "--ready-timeout-s", str(READY_TIMEOUT_S)]  # fmt: skip
        if os.environ.get("BIELIK_E2E_SCREENSHOTS"):
            cmd += ["--screenshots", str(Path(os.environ["BIELIK_E2E_SCREENSHOTS"]).resolve())]
        output = _browse(cmd, env, timeout=3 * READY_TIMEOUT_S)
        yield Run(tmp, json.loads(_read(out) or "{}"), output)
    finally:
        _kill_all(tag, proc)


def test_one_offer_to_install(install_run):
    """No server anywhere: one notification offers the install; the status bar says so."""
    install_run.check("offer_to_install")


def test_quick_pick_of_builds(install_run):
    rows = json.loads(install_run.check("quick_pick_of_builds"))
    assert [r["label"] for r in rows] == [
        "CPU",
        "NVIDIA GPU (CUDA)",
        "GPU through Vulkan (AMD, Intel, NVIDIA)",
        "Remote only",
    ], rows
    wheel = install_run.tmp / "bielik_lsp-0.1.0-py3-none-any.whl"
    assert rows[0]["detail"] == f"uv tool install {wheel}", rows
    assert rows[1]["detail"].startswith("CMAKE_ARGS='-DGGML_CUDA=on -DGGML_BACKEND_DL=OFF"), rows
    assert rows[3]["detail"] == "uv tool install bielik-lsp-remote", rows


def test_install_runs_in_a_terminal(install_run):
    detail = install_run.check("install_runs_in_a_terminal")
    assert "Installed 1 executable: bielik-lsp" in detail, detail


def test_server_starts_after_the_install(install_run):
    install_run.check("server_starts_after_it")
    home = install_run.tmp / "home"
    assert (home / ".local/share/uv/tools/bielik-lsp").is_dir(), "installed as a uv tool"
    logs = "".join(_read(f) for f in (install_run.tmp / "user-data/logs").glob("*/**/Bielik.log"))
    assert f"server: {home}/.local/bin/bielik-lsp serve" in logs, logs[-3000:]


def test_ghost_text_after_the_install(install_run):
    install_run.check("ghost_text_after_the_install")
