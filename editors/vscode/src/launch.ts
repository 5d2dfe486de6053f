/**
 * Finding and starting the server program, and telling why it did not start. Pure Node (no
 * `vscode` import) so that the tests run it against real processes.
 */
import * as cp from 'child_process';
import * as fs from 'fs';
import * as path from 'path';

export const SERVER_NAME = 'bielik-lsp';

export interface Where {
  env: NodeJS.ProcessEnv;
  home: string;
  platform: NodeJS.Platform;
  /** Folders of a trusted workspace: their `.venv` is looked in (a clone of bielik-lsp). */
  trustedFolders: string[];
}

export type Located =
  | { found: true; command: string; how: string }
  | { found: false; problem: string };

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

function onPath(name: string, where: Where): string | undefined {
  const sep = where.platform === 'win32' ? ';' : ':';
  for (const dir of (where.env.PATH ?? where.env.Path ?? '').split(sep).filter(Boolean)) {
    for (const n of names(name, where)) {
      const file = path.join(dir, n);
      if (executable(file, where.platform)) return file;
    }
  }
  return undefined;
}

/** Where an install puts `bielik-lsp` besides PATH (an editor started from a desktop menu often
 * has a shorter PATH than a shell): pip --user / pipx, Homebrew, and a clone's `.venv` opened as
 * a trusted workspace. */
export function usualPlaces(where: Where): string[] {
  const win = where.platform === 'win32';
  const bin = win ? path.join('.venv', 'Scripts', `${SERVER_NAME}.exe`) : path.join('.venv', 'bin', SERVER_NAME);
  const places = win ? [] : [
    path.join(where.home, '.local', 'bin', SERVER_NAME),
    path.join('/usr', 'local', 'bin', SERVER_NAME),
    path.join('/opt', 'homebrew', 'bin', SERVER_NAME),
  ];
  return [...places, ...where.trustedFolders.map((f) => path.join(f, bin))];
}

/**
 * The program to run: `setting` (bielik.server.command; undefined when not set) if it names
 * one that exists, else `bielik-lsp` on PATH or in a usual place.
 */
export function locateServer(setting: string | undefined, where: Where): Located {
  let wanted = setting?.trim();
  if (wanted && wanted.startsWith('~/')) wanted = path.join(where.home, wanted.slice(2));
  if (wanted && (path.isAbsolute(wanted) || wanted.includes('/') || wanted.includes('\\'))) {
    if (executable(wanted, where.platform)) return { found: true, command: wanted, how: 'bielik.server.command' };
    return { found: false, problem: `bielik.server.command is "${setting}", which is not an executable file` };
  }
  const name = wanted || SERVER_NAME;
  const hit = onPath(name, where);
  if (hit) return { found: true, command: hit, how: 'PATH' };
  if (name === SERVER_NAME) {
    const place = usualPlaces(where).find((p) => executable(p, where.platform));
    if (place) return { found: true, command: place, how: place };
  }
  const looked = name === SERVER_NAME ? `on PATH, in ${usualPlaces(where).map((p) => tilde(p, where.home)).join(', ')}` : 'on PATH';
  return { found: false, problem: `cannot find ${name} (looked ${looked})` };
}

function tilde(p: string, home: string): string {
  return home && p.startsWith(home + path.sep) ? `~${p.slice(home.length)}` : p;
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

/** One line on how a server that ended by itself ended, with the end of what it wrote. */
export function describeExit(exit: Exit, stderr: Tail): string {
  const how = exit.signal ? `was killed (${exit.signal})` : `exited with code ${exit.code}`;
  const said = stderr.lines(3).join(' | ');
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
