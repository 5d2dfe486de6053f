/**
 * VS Code glue: starts bielik-lsp through vscode-languageclient (inline completions come from the
 * client's built-in LSP inline completion support, cycled by VS Code itself), registers the
 * commands, reports partial accepts, and keeps the status bar item up to date from
 * `bielik/status`.
 */
import * as os from 'os';
import * as vscode from 'vscode';
import {
  CloseAction,
  CloseHandlerResult,
  DidChangeConfigurationNotification,
  ErrorAction,
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  RevealOutputChannelOn,
  State,
} from 'vscode-languageclient/node';
import * as config from './config';
import { Host, installServer, offerUpgrade } from './installUi';
import { Restarts, Started, Where, askInstallers, describeExit, findInstallers, launchArgs, locateServer, startServer } from './launch';
import { PARTIAL_ACCEPT, PARTS, PartialAccept, ShownItem, partialAccept, partialAcceptParams } from './inline';
import {
  CLIENT_COMMANDS,
  ContinueResult,
  ExecuteCommandParams,
  MODES,
  SpeculationMode,
  STATUS_NOTIFICATION,
  StatusPayload,
  ToggleResult,
  continueParams,
  statsParams,
  toggleParams,
} from './protocol';
import { StatusModel } from './status';
import { StatsView } from './statsView';

const SETTING = 'bielik.server.command';
const MISSING = 'bielik-lsp is not installed: click to install it';
const WAIT_FOR_EXIT_MS = 2000;

/**
 * The language client, with the library's own failure notifications turned off: Bielik reports
 * a server that cannot start or keeps crashing once, with the reason (see `start`, `closed`).
 * Everything still goes to the output channel.
 */
class Client extends LanguageClient {
  override error(message: string, data?: unknown, _show?: boolean | 'force'): void {
    super.error(message, data, false);
  }
}

export class Bielik implements vscode.Disposable {
  client: LanguageClient | undefined;
  readonly model = new StatusModel();
  readonly item: vscode.StatusBarItem;
  readonly output: vscode.LogOutputChannel;
  private sent: Record<string, unknown> = {};
  private langs: string[] = [...config.DEFAULT_LANGUAGES];
  /** The items of the last inline completion answer, for the document they came for. */
  private shown: { uri: string; items: ShownItem[] } | undefined;
  /** The server process of this client (a restart after a crash spawns a new one). */
  private server: Started | undefined;
  private restarts = new Restarts();
  private readonly stats: StatsView;
  private readonly disposables: vscode.Disposable[] = [];
  /** What uv and pipx said about their folders, asked once when the server was not found. */
  private reported: Where['reported'];
  /** An install or upgrade runs in a terminal: settings changes restart nothing meanwhile. */
  private installing = false;
  /** The "not installed" offer was shown (once a session; the status bar item stays). */
  private offered = false;
  /** The server's version was checked (once a session). */
  private upgradeOffered = false;
  private readonly host: Host;

  /** `version`: the extension's own (the server is offered an upgrade when older). */
  constructor(private readonly version?: string) {
    this.item = vscode.window.createStatusBarItem('bielik.status', vscode.StatusBarAlignment.Right, 100);
    this.item.name = 'Bielik';
    this.item.command = CLIENT_COMMANDS.toggleSpeculation;
    this.output = vscode.window.createOutputChannel('Bielik', { log: true });
    this.stats = new StatsView(() => this.fetchStats());
    this.disposables.push(
      this.item,
      this.output,
      this.stats,
      vscode.commands.registerCommand(CLIENT_COMMANDS.continueDocument, (maxTokens?: number) => this.continueDocument(maxTokens)),
      vscode.commands.registerCommand(CLIENT_COMMANDS.toggleSpeculation, (mode?: SpeculationMode) => this.toggleSpeculation(mode)),
      vscode.commands.registerCommand(CLIENT_COMMANDS.showStats, () => this.showStats()),
      vscode.commands.registerCommand(CLIENT_COMMANDS.restart, () => this.restart()),
      vscode.commands.registerCommand(CLIENT_COMMANDS.showLog, () => this.output.show(true)),
      vscode.commands.registerCommand(CLIENT_COMMANDS.installServer, () => installServer(this.host)),
      vscode.commands.registerCommand(CLIENT_COMMANDS.acceptNextWord, () => this.acceptPart(PARTS.word)),
      vscode.commands.registerCommand(CLIENT_COMMANDS.acceptNextLine, () => this.acceptPart(PARTS.line)),
      vscode.window.onDidChangeActiveTextEditor(() => this.render()),
      vscode.workspace.onDidCloseTextDocument((doc) => this.model.forget(doc.uri.toString())),
      vscode.workspace.onDidChangeConfiguration((e) => this.configurationChanged(e)),
      vscode.workspace.onDidGrantWorkspaceTrust(() => this.sendSettings()),
    );
    this.host = {
      where: () => this.where(),
      sources: () => config.installSources(this.inspect()),
      output: this.output,
      setState: (state, message) => {
        this.installing = state === 'installing';
        this.model.setState(state, message);
        this.render();
      },
      stop: () => this.stop(),
      start: () => this.restart(), // a server still running (an install asked for by hand) goes first
    };
  }

  private where(): Where {
    return {
      env: process.env,
      home: os.homedir(),
      platform: process.platform,
      trustedFolders: vscode.workspace.isTrusted ? this.folders() : [],
      reported: this.reported,
    };
  }

  /** The server program: the setting, PATH, the usual places, then where uv and pipx say. */
  private async locate(setting: string | undefined) {
    const located = locateServer(setting, this.where());
    if (located.found || setting || this.reported) return located;
    this.reported = await askInstallers(findInstallers(this.where()), process.env);
    this.output.info(`uv and pipx put programs in: ${[...this.reported.bins, ...this.reported.envs].join(', ') || '(neither is here)'}`);
    return locateServer(setting, this.where());
  }

  private inspect(): config.Inspect {
    const cfg = vscode.workspace.getConfiguration('bielik');
    return (key) => cfg.inspect(key) as config.Inspected | undefined;
  }

  async start(): Promise<void> {
    const inspect = this.inspect();
    const { command: setting, args } = config.serverCommand(inspect);
    this.langs = config.languages(inspect);
    const { settings, problems } = config.readSettings(inspect, vscode.workspace.isTrusted);
    this.warn(problems);
    this.sent = settings;
    this.restarts = new Restarts();
    this.installing = false;
    const located = await this.locate(setting);
    if (!located.found && !setting) {
      this.missing(located.problem);
      return;
    }
    if (!located.found) {
      this.fail(`${located.problem}. Install the server (Bielik: Install Server) or set ${SETTING} to its bielik-lsp.`);
      return;
    }
    const command = located.command;
    this.output.info(`server: ${command} ${args.join(' ')} (found: ${located.how})`);
    const clientOptions: LanguageClientOptions = {
      documentSelector: config.documentSelector(this.langs),
      initializationOptions: this.sent,
      outputChannel: this.output,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      initializationFailedHandler: () => false,
      errorHandler: {
        error: (_error, _message, count) => ({ action: count && count <= 3 ? ErrorAction.Continue : ErrorAction.Shutdown, handled: true }),
        closed: () => this.closed(client),
      },
      middleware: {
        provideInlineCompletionItems: async (document, position, context, token, next) => {
          const result = await next(document, position, context, token);
          this.remember(document, position, result);
          return result;
        },
        workspace: {
          // The server pulls its section when a change notification comes without settings.
          configuration: (params) => params.items.map((item) =>
            item.section === 'bielik' || item.section === undefined
              ? config.serverSettings(this.inspect(), vscode.workspace.isTrusted) : null),
        },
      },
    };
    const client = new Client('bielik', 'Bielik', () => this.spawn(command, args), clientOptions);
    this.client = client;
    client.onNotification(STATUS_NOTIFICATION, (payload: StatusPayload) => {
      this.model.update(payload);
      this.render();
    });
    this.model.setState('starting', `starting ${command}`);
    this.render();
    try {
      await client.start();
      // A server that exits before it answers `initialize` can leave start() resolved (the
      // library drops its start promise when the connection closes): check what came of it.
      if (client.state !== State.Running) throw new Error('the connection closed before initialize');
      if (!this.upgradeOffered) {
        // Once a session: an upgrade that brings no newer release must not ask again.
        this.upgradeOffered = true;
        void offerUpgrade(this.host, command, client.initializeResult?.serverInfo?.version, this.version);
      }
    } catch (e) {
      if (client !== this.client) return;
      this.client = undefined;
      this.fail(`cannot start ${command}: ${await this.why(e)}`);
    }
  }

  private folders(): string[] {
    return (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath);
  }

  /** Start the server process for the client (again after a crash). */
  private async spawn(command: string, args: string[]) {
    const cwd = this.folders()[0] ?? os.homedir();
    this.server = undefined;
    this.server = await startServer(command, launchArgs(args, process.pid), { cwd, env: process.env });
    return this.server.child;
  }

  /** Why the start failed: how the server ended and the end of its stderr, if it did. */
  private async why(e: unknown): Promise<string> {
    const server = this.server;
    if (!server) return errorText(e);
    const exit = await Promise.race([server.exited, delay(WAIT_FOR_EXIT_MS)]);
    if (exit) return `it ${describeExit(exit, server.stderr)}`;
    server.child.kill();
    return errorText(e);
  }

  /** The connection closed: restart a server that was running (a few times), else report once. */
  private async closed(client: LanguageClient): Promise<CloseHandlerResult> {
    const running = client.state === State.Running;
    const server = this.server;
    if (!running || client !== this.client) return { action: CloseAction.DoNotRestart, handled: true }; // start() reports
    const exit = server && await Promise.race([server.exited, delay(WAIT_FOR_EXIT_MS)]);
    const how = exit && server ? describeExit(exit, server.stderr) : 'closed the connection';
    if (this.restarts.allow(Date.now())) {
      this.output.warn(`the server ${how}; restarting it`);
      this.model.setState('starting', `restarting: the server ${how}`);
      this.render();
      return { action: CloseAction.Restart, handled: true };
    }
    this.client = undefined;
    this.fail(`the server ${how}, its third crash in 3 minutes; not restarted (Bielik: Restart Server)`);
    return { action: CloseAction.DoNotRestart, handled: true };
  }

  /** No server anywhere (and no setting): the status bar offers the install, and one message
   * says so with the same offer (once a session). */
  private missing(problem: string): void {
    this.model.setState('missing', MISSING);
    this.render();
    this.output.warn(problem);
    if (this.offered) return;
    this.offered = true;
    const [install, choose] = ['Install…', 'Use Another Program'];
    void Promise.resolve(vscode.window.showInformationMessage(
      'Bielik needs its language server, bielik-lsp, which is not installed here. Install it now (a few minutes, in a terminal)?',
      install, choose)).then((picked) => {
      if (picked === install) void vscode.commands.executeCommand(CLIENT_COMMANDS.installServer);
      else if (picked === choose) void vscode.commands.executeCommand('workbench.action.openSettings', SETTING);
    });
  }

  /** One error message, with the way to fix it; the status bar shows the error until a restart. */
  private fail(message: string): void {
    this.model.setState('error', message);
    this.render();
    this.output.error(message);
    const [open, log] = ['Open Setting', 'Show Log'];
    void Promise.resolve(vscode.window.showErrorMessage(`Bielik: ${message}`, open, log)).then((picked) => {
      if (picked === open) void vscode.commands.executeCommand('workbench.action.openSettings', SETTING);
      else if (picked === log) this.output.show(true);
    });
  }

  async stop(): Promise<void> {
    const client = this.client;
    const server = this.server;
    this.client = undefined;
    if (client) {
      try {
        await client.stop();
      } catch {
        // already stopped or never started
      }
    }
    if (server && !(await Promise.race([server.exited, delay(WAIT_FOR_EXIT_MS)]))) server.child.kill();
    this.model.setState('stopped', 'server stopped');
    this.render();
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  async configurationChanged(e: vscode.ConfigurationChangeEvent): Promise<void> {
    if (!e.affectsConfiguration('bielik') || this.installing) return;
    if (config.needsRestart((section) => e.affectsConfiguration(section)) || !this.client) {
      await this.restart();
      return;
    }
    await this.sendSettings();
  }

  /** Send the server what changed (settings, or workspace trust); restart when it cannot be sent. */
  async sendSettings(): Promise<void> {
    if (!this.client) return;
    const inspect = this.inspect();
    this.warn(config.readSettings(inspect, vscode.workspace.isTrusted).problems);
    const { settings, restart } = config.changedSettings(this.sent, inspect, vscode.workspace.isTrusted);
    if (restart) {
      await this.restart();
      return;
    }
    this.sent = settings;
    await this.client.sendNotification(DidChangeConfigurationNotification.type, { settings: { bielik: settings } });
  }

  /** Keep an answer's items (all of them: VS Code cycles through them) to tell partial accepts. */
  private remember(
    document: vscode.TextDocument,
    position: vscode.Position,
    result: vscode.InlineCompletionItem[] | vscode.InlineCompletionList | null | undefined,
  ): void {
    const items = (Array.isArray(result) ? result : result?.items ?? []).map((item) => ({
      insertText: typeof item.insertText === 'string' ? item.insertText : item.insertText.value,
      start: document.offsetAt(item.range?.start ?? position),
      command: item.command && { title: item.command.title, command: item.command.command, arguments: item.command.arguments },
    }));
    this.shown = { uri: document.uri.toString(), items };
  }

  /** Run VS Code's accept next word / line, then tell the server which item was taken how far. */
  async acceptPart(command: string): Promise<PartialAccept | undefined> {
    await vscode.commands.executeCommand(command);
    const editor = vscode.window.activeTextEditor;
    const doc = editor?.document;
    if (!doc || !this.client || this.shown?.uri !== doc.uri.toString()) return undefined;
    const accept = partialAccept(this.shown.items, doc.getText(), doc.offsetAt(editor!.selection.active));
    if (accept) await this.client.sendNotification(PARTIAL_ACCEPT, partialAcceptParams(accept));
    return accept;
  }

  private warn(problems: string[]): void {
    if (problems.length) void vscode.window.showWarningMessage(`Bielik: ${problems.join('; ')}`);
  }

  /** The active editor if it is a document the server serves. */
  private editor(): vscode.TextEditor | undefined {
    const editor = vscode.window.activeTextEditor;
    if (!editor || !this.langs.includes(editor.document.languageId)) {
      void vscode.window.showWarningMessage(`Bielik: open a ${this.langs.join(', ')} file first.`);
      return undefined;
    }
    if (!this.client) {
      void vscode.window.showWarningMessage('Bielik: the server is not running (Bielik: Restart Server).');
      return undefined;
    }
    return editor;
  }

  private async execute<T>(params: ExecuteCommandParams): Promise<T | undefined> {
    try {
      return (await this.client!.sendRequest(ExecuteCommandRequest.type, params)) as T;
    } catch (e) {
      if (!isCancelled(e)) void vscode.window.showErrorMessage(`Bielik: ${errorText(e)}`);
      return undefined;
    }
  }

  async continueDocument(maxTokens?: number): Promise<ContinueResult | undefined> {
    const editor = this.editor();
    if (!editor) return undefined;
    const pos = editor.selection.active;
    const result = await this.execute<ContinueResult>(continueParams(
      editor.document.uri.toString(), { line: pos.line, character: pos.character },
      typeof maxTokens === 'number' ? maxTokens : undefined));
    if (result && !result.text) {
      void vscode.window.showInformationMessage(`Bielik: nothing added (${result.stopReason}).`);
    } else if (result) {
      vscode.window.setStatusBarMessage(`Bielik: added ${result.text.length} characters (${result.stopReason})`, 4000);
    }
    return result;
  }

  async toggleSpeculation(mode?: SpeculationMode): Promise<ToggleResult | undefined> {
    const editor = this.editor();
    if (!editor) return undefined;
    const uri = editor.document.uri.toString();
    if (mode === undefined) {
      const current = this.model.files.get(uri)?.speculation ?? 'auto';
      const picked = await vscode.window.showQuickPick(
        MODES.map((m) => ({ label: m, description: m === current ? '(current)' : describeMode(m) })),
        { placeHolder: `Speculative decoding for this file (now ${current})` });
      if (!picked) return undefined;
      mode = picked.label as SpeculationMode;
    }
    const result = await this.execute<ToggleResult>(toggleParams(uri, mode));
    if (result) {
      this.model.setSpeculation(uri, result.speculation, result.reason);
      this.render();
    }
    return result;
  }

  /** The stats in a panel (refreshed there; its Raw JSON button opens the answer as JSON). */
  async showStats(): Promise<Record<string, unknown> | undefined> {
    if (!this.client) {
      void vscode.window.showWarningMessage('Bielik: the server is not running (Bielik: Restart Server).');
      return undefined;
    }
    return this.stats.show();
  }

  private async fetchStats(): Promise<{ report: Record<string, unknown>; uri?: string } | undefined> {
    if (!this.client) return undefined;
    const editor = vscode.window.activeTextEditor ?? vscode.window.visibleTextEditors?.[0];
    const uri = editor && this.langs.includes(editor.document.languageId) ? editor.document.uri.toString() : undefined;
    const report = await this.execute<Record<string, unknown>>(statsParams(uri));
    return report && { report, uri };
  }

  render(): void {
    const editor = vscode.window.activeTextEditor;
    const served = editor && this.langs.includes(editor.document.languageId);
    const r = this.model.render(served ? editor!.document.uri.toString() : undefined);
    this.item.text = r.text;
    this.item.tooltip = r.tooltip;
    const state = this.model.state;
    this.item.command = state === 'error' ? CLIENT_COMMANDS.showLog
      : state === 'missing' ? CLIENT_COMMANDS.installServer : CLIENT_COMMANDS.toggleSpeculation;
    this.item.backgroundColor = r.severity === 'normal' ? undefined
      : new vscode.ThemeColor(r.severity === 'error' ? 'statusBarItem.errorBackground' : 'statusBarItem.warningBackground');
    if (served || ['error', 'missing', 'installing'].includes(state)) this.item.show();
    else this.item.hide();
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}

function describeMode(mode: SpeculationMode): string {
  return { auto: 'let the policy decide', on: 'always draft', off: 'plain decoding' }[mode];
}

function delay(ms: number): Promise<undefined> {
  return new Promise((resolve) => setTimeout(() => resolve(undefined), ms));
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

function isCancelled(e: unknown): boolean {
  return typeof e === 'object' && e !== null && (e as { code?: number }).code === -32800;
}

let instance: Bielik | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<Bielik> {
  instance = new Bielik(context.extension?.packageJSON?.version);
  context.subscriptions.push(instance);
  await instance.start();
  return instance;
}

export async function deactivate(): Promise<void> {
  const b = instance;
  instance = undefined;
  if (b) await b.stop();
}
