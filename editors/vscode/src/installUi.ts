/**
 * VS Code's side of installing and upgrading the server: the quick pick of builds, uv's own
 * installer when neither uv nor pipx is there, the terminal the install runs in, and the upgrade
 * offer when the server is older than the extension. The commands come from install.ts's table.
 */
import * as fs from 'fs';
import * as vscode from 'vscode';
import {
  BUILDS, Build, Installer, Sources, Step, UV_DOCS, buildsFor, installStep, installedBy, isOlder, terminalLaunch,
  upgradeStep, uvInstallerStep,
} from './install';
import { Installers, Where, findInstallers, toolBinDirs, toolEnvDirs, pathFor } from './launch';

/** What the flows need of the extension. */
export interface Host {
  where(): Where;
  sources(): Sources;
  output: vscode.LogOutputChannel;
  /** The status bar: installing, or back to what start() says. */
  setState(state: string, message: string): void;
  stop(): Promise<void>;
  /** Start the server (stopping one that runs). */
  start(): Promise<void>;
}

const POLL_MS = 500;

/** Run `step` in a terminal the user sees; resolves with its exit code (undefined: the terminal
 * was closed before it ended). */
export function runInTerminal(name: string, step: Step, platform: NodeJS.Platform): Promise<number | undefined> {
  const launch = terminalLaunch(step, platform);
  const terminal = vscode.window.createTerminal({
    name, shellPath: launch.shellPath, shellArgs: launch.shellArgs, env: launch.env,
    message: `${platform === 'win32' ? 'PS>' : '$'} ${step.display}`, iconPath: new vscode.ThemeIcon('cloud-download'),
  });
  terminal.show();
  const status = (): number | undefined => {
    try {
      const code = Number.parseInt(fs.readFileSync(launch.statusFile, 'utf8').trim(), 10);
      return Number.isNaN(code) ? undefined : code;
    } catch {
      return undefined;
    }
  };
  return new Promise((resolve) => {
    let closed = false;
    const finish = (code: number | undefined) => {
      clearInterval(timer);
      sub.dispose();
      fs.rm(launch.statusFile, { force: true }, () => undefined);
      resolve(code);
    };
    const timer = setInterval(() => {
      const code = status();
      if (code !== undefined || closed) finish(code);
    }, POLL_MS);
    const sub = vscode.window.onDidCloseTerminal((t) => {
      if (t === terminal) closed = true;
    });
  });
}

/** uv, else pipx: the installer to use and where it is. */
function pick(installers: Installers): { installer: Installer; program: string } | undefined {
  if (installers.uv) return { installer: 'uv', program: installers.uv };
  if (installers.pipx) return { installer: 'pipx', program: installers.pipx };
  return undefined;
}

/** Neither uv nor pipx: offer astral's installer of uv, run it, and look again. */
async function getUv(host: Host): Promise<{ installer: Installer; program: string } | undefined> {
  const where = host.where();
  const step = uvInstallerStep(where.platform);
  const [run, docs] = ['Install uv', 'How to Get uv'];
  const picked = await vscode.window.showInformationMessage(
    `Bielik: the server installs with uv (or pipx), and neither is here. Install uv with its official installer (${step.display})?`,
    run, docs);
  if (picked === docs) void vscode.env.openExternal(vscode.Uri.parse(UV_DOCS));
  if (picked !== run) return undefined;
  const code = await runInTerminal('Bielik: install uv', step, where.platform);
  const found = pick(findInstallers(host.where()));
  if (code !== 0 || !found) {
    void vscode.window.showErrorMessage(`Bielik: uv was not installed (${code === undefined ? 'the terminal was closed' : `exit code ${code}`}); see ${UV_DOCS}`);
    return undefined;
  }
  return found;
}

/** The quick pick of builds, each with the command it runs. */
async function chooseBuild(where: Where, installer: Installer, program: string, sources: Sources): Promise<Build | undefined> {
  const items = buildsFor(where.platform).map((build) => ({
    label: BUILDS[build].label,
    description: BUILDS[build].description,
    detail: installStep(build, installer, program, sources, where.platform).display,
    build,
  }));
  const picked = await vscode.window.showQuickPick(items, {
    title: 'Install the Bielik server (bielik-lsp)',
    placeHolder: 'Which build? It installs in a terminal, with ' + installer,
    ignoreFocusOut: true,
  });
  return picked?.build;
}

/** The inference server's URL for a remote-only install, kept in the user's bielik.target. */
async function askServerUrl(): Promise<boolean> {
  const url = await vscode.window.showInputBox({
    title: 'Bielik: the inference server your Bielik runs on',
    prompt: 'Its OpenAI-compatible URL (llama-server, vLLM, ...); kept in bielik.target (user settings)',
    placeHolder: 'http://host:8080/v1',
    ignoreFocusOut: true,
    validateInput: (v) => (/^https?:\/\/\S+$/.test(v.trim()) ? undefined : 'a URL such as http://host:8080/v1'),
  });
  if (!url) return false;
  await vscode.workspace.getConfiguration('bielik').update('target', url.trim(), vscode.ConfigurationTarget.Global);
  return true;
}

/** Bielik: Install Server. Returns whether the server got installed (and was started). */
export async function installServer(host: Host): Promise<boolean> {
  const where = host.where();
  const sources = host.sources();
  const initial = pick(findInstallers(where));
  const build = await chooseBuild(where, initial?.installer ?? 'uv', initial?.program ?? 'uv', sources);
  if (!build) return false;
  const tool = initial ?? await getUv(host);
  if (!tool) return false;
  if (BUILDS[build].remote && !(await askServerUrl())) return false;
  const step = installStep(build, tool.installer, tool.program, sources, where.platform);
  host.output.info(`installing the server: ${step.display}`);
  host.setState('installing', `installing bielik-lsp in a terminal: ${step.display}`);
  const code = await runInTerminal('Bielik: install', step, where.platform);
  if (code !== 0) {
    host.setState('missing', 'bielik-lsp is not installed: click to install it');
    const again = 'Try Again';
    const why = code === undefined ? 'the terminal was closed before it ended' : `exit code ${code}; its output is in the terminal`;
    if (await vscode.window.showErrorMessage(`Bielik: the install failed (${why}).`, again) === again) return installServer(host);
    return false;
  }
  host.output.info('the server is installed');
  void vscode.window.showInformationMessage('Bielik: bielik-lsp is installed and starting.');
  await host.start();
  return true;
}

/** How the server at `command` was installed: its links resolved, or, for a program in a tool
 * bin folder that is no link (uv's on Windows), the tool environment that holds it. */
function installation(command: string, where: Where): { installer: Installer; pkg: string } | undefined {
  let real = command;
  try {
    real = fs.realpathSync(command);
  } catch {
    // gone meanwhile: judge by its path
  }
  const direct = installedBy(real);
  if (direct) return direct;
  const p = pathFor(where.platform);
  const bins = [...(where.reported?.bins ?? []), ...toolBinDirs(where)];
  if (!bins.some((b) => p.resolve(b) === p.dirname(p.resolve(command)))) return undefined;
  for (const dir of [...(where.reported?.envs ?? []), ...toolEnvDirs(where)]) {
    for (const pkg of ['bielik-lsp', 'bielik-lsp-remote']) {
      const by = installedBy(p.join(dir, pkg, 'x'));
      if (by && fs.existsSync(p.join(dir, pkg))) return by;
    }
  }
  return undefined;
}

/** A server older than the extension: one notification, with an Upgrade button where uv or pipx
 * installed it (the upgrade runs in a terminal; the server restarts after). */
export async function offerUpgrade(host: Host, command: string, serverVersion: string | undefined, extensionVersion: string | undefined): Promise<void> {
  if (!serverVersion || !extensionVersion || !isOlder(serverVersion, extensionVersion)) return;
  const where = host.where();
  const by = installation(command, where);
  const program = by && findInstallers(where)[by.installer];
  const text = `Bielik: the server is bielik-lsp ${serverVersion}, older than this extension (${extensionVersion}).`;
  host.output.warn(`${text} (${command}, installed by ${by?.installer ?? 'an unknown installer'})`);
  if (!by || !program) {
    void vscode.window.showInformationMessage(`${text} Upgrade it the way you installed it (uv tool upgrade bielik-lsp, pipx upgrade bielik-lsp, or ./install.sh in a clone).`);
    return;
  }
  const step = upgradeStep(by.installer, program, by.pkg, where.platform);
  const upgrade = 'Upgrade';
  if (await vscode.window.showInformationMessage(`${text} Upgrade it (${step.display})?`, upgrade, 'Not Now') !== upgrade) return;
  await host.stop(); // Windows cannot replace a running program
  host.setState('installing', `upgrading bielik-lsp in a terminal: ${step.display}`);
  const code = await runInTerminal('Bielik: upgrade', step, where.platform);
  if (code !== 0) void vscode.window.showErrorMessage(`Bielik: the upgrade failed (${code === undefined ? 'the terminal was closed' : `exit code ${code}`}); the server starts as it was.`);
  await host.start();
}
