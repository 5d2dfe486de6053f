/**
 * Finding and starting the server program, and telling why it did not start. Pure Node (no
 * `vscode` import) so that the tests run it against real processes.
 */
import * as cp from 'child_process';
import * as fs from 'fs';
import * as path from 'path';

export const SERVER_NAME = 'bielik-lsp';
/** The packages whose tool environments hold a `bielik-lsp` program: the whole server and the
 * lean one for an inference server elsewhere (install.ts installs either). */
export const PACKAGES = ['bielik-lsp', 'bielik-lsp-remote'];

export interface Where {
  env: NodeJS.ProcessEnv;
  home: string;
  platform: NodeJS.Platform;
  /** Folders of a trusted workspace: their `.venv` is looked in (a clone of bielik-lsp). */
  trustedFolders: string[];
  /** What uv and pipx said about their folders (`askInstallers`), when they were asked. */
  reported?: ToolFolders;
}

/** Where installers put programs (`bins`) and the environments behind them (`envs`). */
export interface ToolFolders {
  bins: string[];
  envs: string[];
}

export type Located =
  | { found: true; command: string; how: string }
  | { found: false; problem: string };

/** Path functions of the machine's OS (path.win32 on Windows), so that tests can ask for either. */
export function pathFor(platform: NodeJS.Platform): path.PlatformPath {
  return platform === 'win32' ? path.win32 : path.posix;
}

function executable(file: string, platform: NodeJS.Platform): boolean {
  try {
    if (!fs.statSync(file).isFile()) return false;
    if (platform !== 'win32') fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** `name` and, on Windows, `name` with each of PATHEXT's endings. */
function names(name: string, where: Where): string[] {
  if (where.platform !== 'win32' || path.extname(name)) return [name];
  const exts = (where.env.PATHEXT ?? '.EXE;.CMD;.BAT').split(';').filter(Boolean);
  return [name, ...exts.map((e) => name + e.toLowerCase())];
}

function pathDirs(where: Where): string[] {
  const sep = where.platform === 'win32' ? ';' : ':';
  return (where.env.PATH ?? where.env.Path ?? '').split(sep).filter(Boolean);
}

/** The first of `dirs` holding the program `name` (with Windows' endings). */
function inDirs(name: string, dirs: string[], where: Where): string | undefined {
  const p = pathFor(where.platform);
  for (const dir of dirs) {
    for (const n of names(name, where)) {
      const file = p.join(dir, n);
      if (executable(file, where.platform)) return file;
    }
  }
  return undefined;
}

/** A program inside a virtual environment: `bin/NAME`, or `Scripts\NAME.exe` on Windows. */
export function venvProgram(venv: string, name: string, platform: NodeJS.Platform): string {
  const p = pathFor(platform);
  return platform === 'win32' ? p.join(venv, 'Scripts', `${name}.exe`) : p.join(venv, 'bin', name);
}

function unique(items: (string | undefined | false)[]): string[] {
  return [...new Set(items.filter((i): i is string => !!i))];
}

/** Where uv and pipx put programs by default, as their documentation says, on every OS: uv's
 * $UV_TOOL_BIN_DIR, $XDG_BIN_HOME, $XDG_DATA_HOME/../bin, ~/.local/bin (%USERPROFILE%\.local\bin
 * on Windows); pipx's $PIPX_BIN_DIR, ~/.local/bin. */
export function toolBinDirs(where: Where): string[] {
  const p = pathFor(where.platform);
  const e = where.env;
  return unique([
    e.UV_TOOL_BIN_DIR, e.XDG_BIN_HOME, e.XDG_DATA_HOME && p.join(e.XDG_DATA_HOME, '..', 'bin'),
    e.PIPX_BIN_DIR, p.join(where.home, '.local', 'bin'),
  ]);
}

/** The folders that hold uv's tool environments and pipx's venvs by default, per OS (for a tool
 * whose program was not linked into a bin folder). */
export function toolEnvDirs(where: Where): string[] {
  const p = pathFor(where.platform);
  const { env: e, home } = where;
  const uv = where.platform === 'win32'
    ? [e.APPDATA && p.join(e.APPDATA, 'uv', 'data', 'tools'), e.APPDATA && p.join(e.APPDATA, 'uv', 'tools')]
    : [e.XDG_DATA_HOME && p.join(e.XDG_DATA_HOME, 'uv', 'tools'), p.join(home, '.local', 'share', 'uv', 'tools')];
  const pipxHomes = where.platform === 'win32'
    ? [p.join(home, 'pipx'), e.LOCALAPPDATA && p.join(e.LOCALAPPDATA, 'pipx'), p.join(home, '.local', 'pipx')]
    : where.platform === 'darwin'
      ? [p.join(home, '.local', 'pipx'), p.join(home, 'Library', 'Application Support', 'pipx')]
      : [p.join(home, '.local', 'share', 'pipx'), p.join(home, '.local', 'pipx')];
  return unique([e.UV_TOOL_DIR, ...uv, ...[e.PIPX_HOME, ...pipxHomes].map((h) => h && p.join(h, 'venvs'))]);
}

/** Where an install puts `bielik-lsp` besides PATH (an editor started from a desktop menu often
 * has a shorter PATH than a shell): pip --user / pipx, Homebrew, and a clone's `.venv` opened as
 * a trusted workspace. */
export function usualPlaces(where: Where): string[] {
  const p = pathFor(where.platform);
  const places = where.platform === 'win32' ? [] : [
    p.join(where.home, '.local', 'bin', SERVER_NAME),
    p.join('/usr', 'local', 'bin', SERVER_NAME),
    p.join('/opt', 'homebrew', 'bin', SERVER_NAME),
  ];
  return [...places, ...where.trustedFolders.map((f) => venvProgram(p.join(f, '.venv'), SERVER_NAME, where.platform))];
}

/** After PATH, in this order: the usual places, the bin folders uv and pipx reported, their
 * default bin folders, then the tool environments themselves (uv's and pipx's). */
export function toolPlaces(where: Where): string[] {
  const p = pathFor(where.platform);
  const bins = unique([...(where.reported?.bins ?? []), ...toolBinDirs(where)]);
  const envs = unique([...(where.reported?.envs ?? []), ...toolEnvDirs(where)]);
  const program = where.platform === 'win32' ? `${SERVER_NAME}.exe` : SERVER_NAME;
  return unique([
    ...usualPlaces(where),
    ...bins.map((d) => p.join(d, program)),
    ...envs.flatMap((d) => PACKAGES.map((pkg) => venvProgram(p.join(d, pkg), SERVER_NAME, where.platform))),
  ]);
}

/**
 * The program to run: `setting` (bielik.server.command; undefined when not set) if it names
 * one that exists, else `bielik-lsp` on PATH or in one of `toolPlaces`.
 */
export function locateServer(setting: string | undefined, where: Where): Located {
  let wanted = setting?.trim();
  if (wanted && wanted.startsWith('~/')) wanted = path.join(where.home, wanted.slice(2));
  if (wanted && (path.isAbsolute(wanted) || wanted.includes('/') || wanted.includes('\\'))) {
    if (executable(wanted, where.platform)) return { found: true, command: wanted, how: 'bielik.server.command' };
    return { found: false, problem: `bielik.server.command is "${setting}", which is not an executable file` };
  }
  const name = wanted || SERVER_NAME;
  const hit = inDirs(name, pathDirs(where), where);
  if (hit) return { found: true, command: hit, how: 'PATH' };
  if (name === SERVER_NAME) {
    const place = toolPlaces(where).find((p) => executable(p, where.platform));
    if (place) return { found: true, command: place, how: place };
  }
  const looked = name === SERVER_NAME ? `on PATH, in ${toolPlaces(where).map((p) => tilde(p, where.home)).join(', ')}` : 'on PATH';
  return { found: false, problem: `cannot find ${name} (looked ${looked})` };
}

function tilde(p: string, home: string): string {
  return home && p.startsWith(home) && /^[\\/]/.test(p.slice(home.length)) ? `~${p.slice(home.length)}` : p;
}

/** uv and pipx, where they are: PATH, then the places their installers use. */
export interface Installers {
  uv?: string;
  pipx?: string;
}

export function findInstallers(where: Where): Installers {
  const p = pathFor(where.platform);
  const { env: e, home } = where;
  const extra = where.platform === 'win32'
    ? [p.join(home, '.local', 'bin'), p.join(home, '.cargo', 'bin'), e.LOCALAPPDATA && p.join(e.LOCALAPPDATA, 'Microsoft', 'WinGet', 'Links')]
    : [...toolBinDirs(where), p.join(home, '.cargo', 'bin'), '/opt/homebrew/bin', '/usr/local/bin', '/usr/bin'];
  const dirs = unique([...pathDirs(where), e.UV_INSTALL_DIR, ...extra]);
  return { uv: inDirs('uv', dirs, where), pipx: inDirs('pipx', dirs, where) };
}

/** Ask uv and pipx where they put programs and environments (`uv tool dir [--bin]`, `pipx
 * environment --value ...`); an installer that fails or hangs adds nothing. */
export async function askInstallers(installers: Installers, env: NodeJS.ProcessEnv, timeoutMs = 5000): Promise<ToolFolders> {
  const ask = (program: string | undefined, args: string[]) => !program ? Promise.resolve(undefined)
    : new Promise<string | undefined>((resolve) => {
      cp.execFile(program, args, { env, timeout: timeoutMs, windowsHide: true, encoding: 'utf8' },
        (error, stdout) => resolve(error ? undefined : stdout.trim().split(/\r?\n/).at(-1)?.trim() || undefined));
    });
  const [uvBin, uvTools, pipxBin, pipxVenvs] = await Promise.all([
    ask(installers.uv, ['tool', 'dir', '--bin']),
    ask(installers.uv, ['tool', 'dir']),
    ask(installers.pipx, ['environment', '--value', 'PIPX_BIN_DIR']),
    ask(installers.pipx, ['environment', '--value', 'PIPX_LOCAL_VENVS']),
  ]);
  return { bins: unique([uvBin, pipxBin]), envs: unique([uvTools, pipxVenvs]) };
}

/** The arguments vscode-languageclient's stdio transport adds: the server watches our pid. */
export function launchArgs(args: string[], pid: number): string[] {
  return [...args, '--stdio', `--clientProcessId=${pid}`];
}

/** The last `max` characters a stream wrote, for an error message. */
export class Tail {
  private text = '';
  constructor(private readonly max = 8000) {}
  push(chunk: Buffer | string): void {
    this.text = (this.text + chunk.toString()).slice(-this.max);
  }
  /** The last `n` non-empty lines. */
  lines(n: number): string[] {
    return this.text.split(/\r?\n/).map((l) => l.trimEnd()).filter(Boolean).slice(-n);
  }
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface Started {
  child: cp.ChildProcess;
  stderr: Tail;
  /** Resolves when the process has ended and its stderr is read to the end. */
  exited: Promise<Exit>;
}

/** Spawn the server with piped stdio; rejects (ENOENT, EACCES) when it cannot be started. */
export function startServer(command: string, args: string[], options: cp.SpawnOptions = {}): Promise<Started> {
  return new Promise((resolve, reject) => {
    const child = cp.spawn(command, args, { ...options, stdio: ['pipe', 'pipe', 'pipe'], shell: false });
    const stderr = new Tail();
    child.stderr!.on('data', (d) => stderr.push(d));
    const exited = new Promise<Exit>((done) => child.on('close', (code, signal) => done({ code, signal })));
    child.once('error', (e) => reject(e));
    child.once('spawn', () => resolve({ child, stderr, exited }));
  });
}

/** One line on how a server that ended by itself ended, with the end of what it wrote: its
 * last line naming an error (a usage message or a traceback ends in one), else its last lines. */
export function describeExit(exit: Exit, stderr: Tail): string {
  const how = exit.signal ? `was killed (${exit.signal})` : `exited with code ${exit.code}`;
  const error = stderr.lines(40).filter((l) => /error/i.test(l)).at(-1);
  const said = error?.trim() ?? stderr.lines(3).join(' | ');
  return said ? `${how}: ${said.slice(-600)}` : how;
}

/** Restarts after crashes of a server that was running: at most `max` within `windowMs`. */
export class Restarts {
  private times: number[] = [];
  constructor(private readonly max = 3, private readonly windowMs = 3 * 60 * 1000) {}
  allow(now: number): boolean {
    this.times = this.times.filter((t) => now - t < this.windowMs);
    if (this.times.length >= this.max) return false;
    this.times.push(now);
    return true;
  }
}
