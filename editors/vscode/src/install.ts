/**
 * Installing and upgrading the server: the one table of install commands (per build and
 * installer), and how a command runs in a terminal the user can see. Pure Node (no `vscode`
 * import) so that tests check the commands and run the terminal's script for real.
 *
 * The install runs as the terminal's own process (no shell of the user's in between, so nothing
 * is quoted for bash, zsh, cmd or PowerShell): a small POSIX sh script on Linux and macOS, a
 * PowerShell script passed as -EncodedCommand on Windows. It runs the installer, writes its exit
 * code to $BIELIK_STATUS_FILE (the extension watches that file), and keeps the output on screen
 * until Enter.
 */
import * as crypto from 'crypto';
import * as os from 'os';
import { pathFor } from './launch';

export type Build = 'cpu' | 'cuda' | 'metal' | 'vulkan' | 'remote';
export type Installer = 'uv' | 'pipx';

export interface BuildEntry {
  label: string;
  description: string;
  /** The OSes it is offered on (all when absent). */
  platforms?: NodeJS.Platform[];
  /** Environment of the install: bielik-llama-cpp's CMake flags for a GPU build. */
  env: Record<string, string>;
  /** The installer's arguments; SOURCE stands for the package to install. */
  uv: string[];
  pipx: string[];
  /** The lean package that talks to an inference server (installSourceRemote). */
  remote?: boolean;
}

const SOURCE = 'SOURCE';
// llama.cpp comes exact and prebuilt in bielik-llama-cpp's wheels (CPU on every platform, Metal
// on macOS). A GPU build compiles its source package instead, with the GPU's flag and this
// machine's one CPU level (no backend modules), and must not reuse a cached wheel: hence
// --no-binary and --reinstall-package (uv), --no-binary and --no-cache-dir (pip, under pipx).
const LLAMA = 'bielik-llama-cpp';
const ONE_CPU_LEVEL = '-DGGML_BACKEND_DL=OFF -DGGML_CPU_ALL_VARIANTS=OFF -DGGML_NATIVE=ON';
const rebuild = {
  uv: ['tool', 'install', '--no-binary-package', LLAMA, '--reinstall-package', LLAMA, SOURCE],
  pipx: ['install', `--pip-args=--no-binary=${LLAMA} --no-cache-dir`, SOURCE],
};

/** The one table: what each build installs, with uv and with pipx. */
export const BUILDS: Record<Build, BuildEntry> = {
  cpu: {
    label: 'CPU',
    description: 'llama.cpp on the processor, exact, prebuilt: nothing is compiled (seconds)',
    env: {},
    uv: ['tool', 'install', SOURCE],
    pipx: ['install', SOURCE],
  },
  cuda: {
    label: 'NVIDIA GPU (CUDA)',
    description: 'llama.cpp compiled for CUDA (minutes); needs the CUDA toolkit (nvcc) and a C++ compiler',
    platforms: ['linux', 'win32'],
    env: { CMAKE_ARGS: `-DGGML_CUDA=on ${ONE_CPU_LEVEL}` },
    ...rebuild,
  },
  metal: {
    label: 'Apple GPU (Metal)',
    description: 'llama.cpp with Metal, prebuilt: nothing is compiled (seconds)',
    platforms: ['darwin'],
    env: {},
    uv: ['tool', 'install', SOURCE],
    pipx: ['install', SOURCE],
  },
  vulkan: {
    label: 'GPU through Vulkan (AMD, Intel, NVIDIA)',
    description: 'llama.cpp compiled for Vulkan (minutes); needs the Vulkan SDK and a C++ compiler',
    platforms: ['linux', 'win32'],
    env: { CMAKE_ARGS: `-DGGML_VULKAN=on ${ONE_CPU_LEVEL}` },
    ...rebuild,
  },
  remote: {
    label: 'Remote only',
    description: 'Bielik runs on an inference server (llama-server, vLLM, ...); nothing is compiled',
    env: {},
    uv: ['tool', 'install', SOURCE],
    pipx: ['install', SOURCE],
    remote: true,
  },
};

/** The builds offered on `platform`, in the table's order. */
export function buildsFor(platform: NodeJS.Platform): Build[] {
  return (Object.keys(BUILDS) as Build[]).filter((b) => !BUILDS[b].platforms || BUILDS[b].platforms!.includes(platform));
}

/** One program with its arguments and environment, and how to show it to a person. */
export interface Step {
  program: string;
  args: string[];
  env: Record<string, string>;
  /** The command as one would type it in the OS's usual shell (shown, never run). */
  display: string;
}

export interface Sources {
  /** bielik.server.installSource: a PyPI name, a git URL (git+https://...) or a wheel's path. */
  source: string;
  /** bielik.server.installSourceRemote: the lean package for remote-only installs. */
  remote: string;
}

function step(program: string, name: string, args: string[], env: Record<string, string>, platform: NodeJS.Platform): Step {
  const quote = platform === 'win32' ? quotePowerShell : quotePosix;
  const vars = Object.entries(env);
  const prefix = platform === 'win32'
    ? vars.map(([k, v]) => `$env:${k}=${quote(v)}; `).join('')
    : vars.map(([k, v]) => `${k}=${quote(v)} `).join('');
  return { program, args, env, display: `${prefix}${[name, ...args].map(quote).join(' ')}` };
}

/** The install of `build` with `installer` (found at `program`). */
export function installStep(build: Build, installer: Installer, program: string, sources: Sources, platform: NodeJS.Platform): Step {
  const entry = BUILDS[build];
  const source = entry.remote ? sources.remote : sources.source;
  const args = entry[installer].map((a) => (a === SOURCE ? source : a));
  return step(program, installer, args, entry.env, platform);
}

/** The upgrade of `pkg` (bielik-lsp or bielik-lsp-remote) where `installer` installed it. */
export function upgradeStep(installer: Installer, program: string, pkg: string, platform: NodeJS.Platform): Step {
  const args = installer === 'uv' ? ['tool', 'upgrade', pkg] : ['upgrade', pkg];
  return step(program, installer, args, {}, platform);
}

export const UV_DOCS = 'https://docs.astral.sh/uv/getting-started/installation/';

/** astral's installer of uv, as its documentation gives it for the OS. */
export function uvInstallerStep(platform: NodeJS.Platform): Step {
  if (platform === 'win32') {
    const script = 'irm https://astral.sh/uv/install.ps1 | iex';
    return {
      program: 'powershell.exe', args: ['-NoProfile', '-ExecutionPolicy', 'ByPass', '-Command', script], env: {},
      display: `powershell -ExecutionPolicy ByPass -c "${script}"`,
    };
  }
  const script = 'if command -v curl >/dev/null 2>&1; then curl -LsSf https://astral.sh/uv/install.sh | sh; else wget -qO- https://astral.sh/uv/install.sh | sh; fi';
  return { program: '/bin/sh', args: ['-c', script], env: {}, display: 'curl -LsSf https://astral.sh/uv/install.sh | sh' };
}

/** Which installer put the server at `realPath` (its links resolved), and under which package:
 * uv keeps tools in `.../uv/tools/PKG` (`uv\data\tools\PKG` on Windows), pipx in `.../venvs/PKG`
 * under its home. Undefined for anything else (a clone's .venv, pip --user, a system package). */
export function installedBy(realPath: string): { installer: Installer; pkg: string } | undefined {
  const parts = realPath.split(/[\\/]+/);
  for (let i = parts.length - 2; i >= 1; i--) {
    const [parent, pkg] = [parts[i - 1].toLowerCase(), parts[i]];
    if (!/^bielik-lsp(-remote)?$/.test(pkg)) continue;
    if (parent === 'tools' && parts.slice(0, i - 1).some((p) => p.toLowerCase() === 'uv')) return { installer: 'uv', pkg };
    if (parent === 'venvs' && parts.slice(0, i - 1).some((p) => p.toLowerCase().includes('pipx'))) return { installer: 'pipx', pkg };
  }
  return undefined;
}

/** Whether `server` (a PEP 440 version) is older than `extension` (x.y.z): by release numbers,
 * then a pre-release or dev build of the same release is older. */
export function isOlder(server: string, extension: string): boolean {
  const parse = (v: string) => {
    const m = /^v?(\d+(?:\.\d+)*)(.*)$/.exec(v.trim());
    return m ? { nums: m[1].split('.').map(Number), rest: m[2] } : undefined;
  };
  const [s, e] = [parse(server), parse(extension)];
  if (!s || !e) return false;
  for (let i = 0; i < Math.max(s.nums.length, e.nums.length); i++) {
    const d = (s.nums[i] ?? 0) - (e.nums[i] ?? 0);
    if (d) return d < 0;
  }
  return /^[.\-_]?(dev|a|b|c|rc|alpha|beta|pre)/i.test(s.rest) && !/^[.\-_]?(dev|a|b|c|rc|alpha|beta|pre)/i.test(e.rest);
}

export function quotePosix(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

export function quotePowerShell(arg: string): string {
  return /^[\w+=:./\\-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, "''")}'`;
}

/** What the terminal runs: `shellPath` and `shellArgs` for vscode.window.createTerminal, and the
 * environment it adds ($BIELIK_STATUS_FILE: where the exit code goes). */
export interface TerminalLaunch {
  shellPath: string;
  shellArgs: string[];
  env: Record<string, string>;
  statusFile: string;
}

const DONE = 'Done. Press Enter to close this terminal.';
const FAILED = 'It failed (exit code above). Press Enter to close this terminal.';

// $1.. are the program and its arguments; messages come through the environment, so nothing here
// is quoted for a shell.
const POSIX_SCRIPT = [
  '"$@"', 's=$?', 'printf "%s\\n" "$s" > "$BIELIK_STATUS_FILE"',
  'if [ "$s" -eq 0 ]; then printf "\\n%s\\n" "$BIELIK_DONE"; else printf "\\nexit code %s. %s\\n" "$s" "$BIELIK_FAILED"; fi',
  'read -r _ || true', 'exit "$s"',
].join('\n');

function powerShellScript(s: Step): string {
  const call = ['&', ...[s.program, ...s.args].map((a) => `'${a.replace(/'/g, "''")}'`)].join(' ');
  return [
    '$ErrorActionPreference = "Continue"', call, '$s = $LASTEXITCODE', 'if ($null -eq $s) { $s = 0 }',
    'Set-Content -Path $env:BIELIK_STATUS_FILE -Value $s -Encoding ascii',
    'if ($s -eq 0) { Write-Host "`n$env:BIELIK_DONE" } else { Write-Host "`nexit code $s. $env:BIELIK_FAILED" }',
    '[void](Read-Host)', 'exit $s',
  ].join('\n');
}

/** How `s` runs as a terminal's process on `platform`, its exit code going to a fresh file. */
export function terminalLaunch(s: Step, platform: NodeJS.Platform, tmp = os.tmpdir()): TerminalLaunch {
  const statusFile = pathFor(platform).join(tmp, `bielik-install-${crypto.randomBytes(6).toString('hex')}.status`);
  const env = { ...s.env, BIELIK_STATUS_FILE: statusFile, BIELIK_DONE: DONE, BIELIK_FAILED: FAILED };
  if (platform === 'win32') {
    const encoded = Buffer.from(powerShellScript(s), 'utf16le').toString('base64');
    return { shellPath: 'powershell.exe', shellArgs: ['-NoProfile', '-ExecutionPolicy', 'ByPass', '-EncodedCommand', encoded], env, statusFile };
  }
  return { shellPath: '/bin/sh', shellArgs: ['-c', POSIX_SCRIPT, 'bielik-install', s.program, ...s.args], env, statusFile };
}
