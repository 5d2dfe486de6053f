// A small stand-in for the `vscode` module and vscode-languageclient's LanguageClient, installed
// through Module._load so that out/extension.js runs unchanged under node's test runner.
'use strict';
const Module = require('node:module');

/** Every server program a fake client spawned: killed after the tests (`killSpawned`). */
const spawned = [];

class Emitter {
  constructor() { this.listeners = []; }
  event = (fn) => { this.listeners.push(fn); return { dispose: () => { this.listeners = this.listeners.filter((l) => l !== fn); } }; };
  fire(x) { return Promise.all(this.listeners.map((l) => l(x))); }
}

class Position {
  constructor(line, character) { this.line = line; this.character = character; }
}

class Range {
  constructor(a, b, c, d) {
    [this.start, this.end] = a instanceof Position ? [a, b] : [new Position(a, b), new Position(c, d)];
  }
}

class InlineCompletionItem {
  constructor(insertText, range, command) { Object.assign(this, { insertText, range, command }); }
}

class InlineCompletionList {
  constructor(items) { this.items = items; }
}

class SnippetString {
  constructor(value) { this.value = value; }
}

/** A text document with the parts the extension reads: text, offsets, uri, language. */
function createDocument(uri, languageId, text) {
  const doc = {
    uri: { toString: () => uri },
    languageId,
    text,
    getText: () => doc.text,
    offsetAt(pos) {
      const lines = doc.text.split('\n');
      let off = 0;
      for (let i = 0; i < pos.line; i++) off += lines[i].length + 1;
      return off + pos.character;
    },
    positionAt(offset) {
      const before = doc.text.slice(0, offset).split('\n');
      return new Position(before.length - 1, before[before.length - 1].length);
    },
  };
  return doc;
}

function createVscode() {
  const state = {
    commands: new Map(),
    settings: {}, // key (without "bielik.") -> globalValue
    workspaceSettings: {}, // key -> workspaceValue (.vscode/settings.json of the open folder)
    trusted: true,
    activeTextEditor: undefined,
    messages: [],
    quickPick: undefined, // label to pick
    statusBarItems: [],
    outputs: [],
    panels: [],
    executed: [],
    shownDocuments: [],
    pressButton: undefined, // the button the user presses on the next error or information message
    quickPicks: [], // [items, options] of each quick pick shown
    inputBox: undefined, // what the user types into the next input box
    terminals: [], // createTerminal's options, with the process it runs (a real one: see createTerminal)
    updates: [], // [key, value, target] of configuration updates
    workspaceFolders: undefined,
    onActive: new Emitter(),
    onClose: new Emitter(),
    onConfig: new Emitter(),
    onTrust: new Emitter(),
    onCloseTerminal: new Emitter(),
  };
  const vscode = {
    __state: state,
    StatusBarAlignment: { Left: 1, Right: 2 },
    ViewColumn: { Active: -1, Beside: -2 },
    ThemeColor: class { constructor(id) { this.id = id; } },
    ThemeIcon: class { constructor(id) { this.id = id; } },
    ConfigurationTarget: { Global: 1, Workspace: 2, WorkspaceFolder: 3 },
    Uri: { parse: (s) => ({ toString: () => s }) },
    env: { openExternal: async (uri) => { state.executed.push(['openExternal', uri.toString()]); return true; } },
    Position,
    Range,
    InlineCompletionItem,
    InlineCompletionList,
    SnippetString,
    commands: {
      registerCommand(id, fn) {
        if (state.commands.has(id)) throw new Error(`command '${id}' already exists`);
        state.commands.set(id, fn);
        return { dispose: () => state.commands.delete(id) };
      },
      executeCommand(id, ...args) {
        state.executed.push([id, ...args]);
        const fn = state.commands.get(id);
        return fn ? fn(...args) : Promise.resolve(); // VS Code's own commands: recorded only
      },
    },
    window: {
      get activeTextEditor() { return state.activeTextEditor; },
      createStatusBarItem(id, alignment, priority) {
        const item = { id, alignment, priority, text: '', tooltip: '', visible: false, show() { this.visible = true; }, hide() { this.visible = false; }, dispose() {} };
        state.statusBarItems.push(item);
        return item;
      },
      createOutputChannel(name) {
        const out = {
          name, lines: [], appendLine(l) { this.lines.push(l); }, show() { this.shown = true; }, dispose() {},
          info(l) { this.lines.push(`info ${l}`); }, warn(l) { this.lines.push(`warn ${l}`); }, error(l) { this.lines.push(`error ${l}`); },
        };
        state.outputs.push(out);
        return out;
      },
      showErrorMessage: (m, ...buttons) => { state.messages.push(buttons.length ? ['error', m, buttons] : ['error', m]); return Promise.resolve(state.pressButton); },
      showWarningMessage: (m) => { state.messages.push(['warning', m]); return Promise.resolve(); },
      showInformationMessage: (m, ...buttons) => {
        state.messages.push(buttons.length ? ['info', m, buttons] : ['info', m]);
        return Promise.resolve([].concat(state.pressButton).find((p) => buttons.includes(p)));
      },
      showInputBox: async (options) => { state.inputBoxOptions = options; return state.inputBox; },
      /** A terminal runs its shellPath for real, as VS Code's does, and Enter is pressed for the
       * user once it has written its last line. */
      createTerminal(options) {
        const child = require('node:child_process').spawn(options.shellPath, options.shellArgs, { env: { ...process.env, ...options.env }, stdio: ['pipe', 'pipe', 'pipe'] });
        spawned.push(child);
        const terminal = { options, child, output: '', shown: false, show() { this.shown = true; }, dispose() { child.kill(); } };
        const read = (d) => {
          terminal.output += d;
          if (/Press Enter to close/.test(terminal.output)) child.stdin.end('\n');
        };
        child.stdout.on('data', read);
        child.stderr.on('data', read);
        child.on('close', (code) => { terminal.exitStatus = { code }; state.onCloseTerminal.fire(terminal); });
        state.terminals.push(terminal);
        return terminal;
      },
      onDidCloseTerminal: state.onCloseTerminal.event,
      setStatusBarMessage: (m) => { state.messages.push(['status', m]); return { dispose() {} }; },
      showQuickPick: async (items, options) => { state.quickPicks.push([items, options]); return items.find((i) => i.label === state.quickPick); },
      onDidChangeActiveTextEditor: state.onActive.event,
      get visibleTextEditors() { return state.activeTextEditor ? [state.activeTextEditor] : []; },
      createWebviewPanel(viewType, title, showOptions, options) {
        const panel = {
          viewType, title, showOptions, options, revealed: 0, disposed: false,
          webview: { html: '', cspSource: 'vscode-webview:', onDidReceiveMessage: (fn) => { panel.post = fn; return { dispose() {} }; } },
          onDidDispose: (fn) => { panel.onDispose = fn; return { dispose() {} }; },
          reveal() { panel.revealed += 1; },
          dispose() { panel.disposed = true; panel.onDispose?.(); },
        };
        state.panels.push(panel);
        return panel;
      },
      showTextDocument: async (doc) => { state.shownDocuments.push(doc); },
    },
    workspace: {
      getConfiguration(section) {
        return {
          inspect: (key) => ({ key: `${section}.${key}`, globalValue: state.settings[key], workspaceValue: state.workspaceSettings[key] }),
          get: (key, d) => (key in state.settings ? state.settings[key] : d),
          update: async (key, value, target) => { state.updates.push([key, value, target]); state.settings[key] = value; },
        };
      },
      onDidCloseTextDocument: state.onClose.event,
      onDidChangeConfiguration: state.onConfig.event,
      get isTrusted() { return state.trusted; },
      onDidGrantWorkspaceTrust: state.onTrust.event,
      get workspaceFolders() { return state.workspaceFolders; },
      openTextDocument: async (init) => ({ ...init }),
    },
  };
  /** Open an editor on a document (the cursor at `line`, `character`, or at the end of `text`). */
  vscode.__open = (uri, languageId, line = 0, character = 0, text = '') => {
    const document = createDocument(uri, languageId, text);
    const active = text ? document.positionAt(text.length) : new vscode.Position(line, character);
    state.activeTextEditor = { document, selection: { active } };
    return state.onActive.fire(state.activeTextEditor);
  };
  /** Type (or have VS Code insert) text at the cursor of the active editor. */
  vscode.__type = (text) => {
    const editor = state.activeTextEditor;
    const offset = editor.document.offsetAt(editor.selection.active);
    editor.document.text = editor.document.text.slice(0, offset) + text + editor.document.text.slice(offset);
    editor.selection = { active: editor.document.positionAt(offset + text.length) };
  };
  /** The user trusts the workspace. */
  vscode.__trust = () => {
    state.trusted = true;
    return state.onTrust.fire();
  };
  /** Change settings and fire onDidChangeConfiguration for the changed keys. */
  vscode.__configure = (values) => {
    const changed = Object.keys(values).map((k) => `bielik.${k}`);
    Object.assign(state.settings, values);
    for (const [k, v] of Object.entries(values)) if (v === undefined) delete state.settings[k];
    return state.onConfig.fire({ affectsConfiguration: (s) => s === 'bielik' || changed.some((c) => c === s || c.startsWith(`${s}.`)) });
  };
  return vscode;
}

/**
 * A fake LanguageClient recording what the extension asks of it. Its start() runs the extension's
 * server function for real (the program is spawned) and, as the real client does, fails when
 * the program ends before it could answer `initialize` (here: within `startMs`).
 */
function createLanguageClientModule(clients) {
  class LanguageClient {
    constructor(id, name, serverOptions, clientOptions) {
      Object.assign(this, { id, name, serverOptions, clientOptions });
      this.notificationHandlers = new Map();
      this.requests = [];
      this.notifications = [];
      this.running = false;
      this.state = 1; // State.Stopped
      this.respond = async () => null; // (method, params) -> result
      this.failStart = LanguageClient.failNextStart;
      this.initializeResult = LanguageClient.serverInfo && { serverInfo: LanguageClient.serverInfo }; // what `initialize` answered
      LanguageClient.failNextStart = undefined;
      clients.push(this);
    }
    onNotification(method, handler) { this.notificationHandlers.set(method, handler); return { dispose() {} }; }
    async start() {
      this.state = 3; // State.Starting
      try {
        this.process = await this.serverOptions();
        spawned.push(this.process);
        const exited = new Promise((r) => this.process.once('exit', () => r(true)));
        if (await Promise.race([exited, new Promise((r) => setTimeout(() => r(false), LanguageClient.startMs))])) {
          // As vscode-languageclient 10 does: the close handler runs, and start() resolves.
          await this.clientOptions.errorHandler.closed();
          this.state = 1;
          return;
        }
        if (this.failStart) throw this.failStart;
      } catch (e) {
        this.state = 1;
        throw e;
      }
      this.running = true;
      this.state = 2; // State.Running
    }
    async stop() {
      if (this.state !== 2) throw new Error(`Client is not running and can't be stopped. It's current state is: ${this.state}`);
      this.running = false;
      this.state = 1;
      this.process.kill();
    }
    /** The server ends by itself while running: the connection closes. */
    async crash() {
      this.process.kill('SIGKILL');
      const verdict = await this.clientOptions.errorHandler.closed();
      this.running = false;
      this.state = 1;
      if (verdict.action === 2) await this.start(); // CloseAction.Restart
      return verdict;
    }
    error(message) { this.errors = [...(this.errors ?? []), message]; }
    async sendRequest(type, params) { const method = type.method ?? type; this.requests.push([method, params]); return this.respond(method, params); }
    async sendNotification(type, params) { this.notifications.push([type.method ?? type, params]); }
    notify(method, params) { this.notificationHandlers.get(method)(params); }
  }
  LanguageClient.startMs = 300;
  return {
    LanguageClient,
    State: { Stopped: 1, Running: 2, Starting: 3 },
    CloseAction: { DoNotRestart: 1, Restart: 2 },
    ErrorAction: { Continue: 1, Shutdown: 2 },
    RevealOutputChannelOn: { Debug: 0, Info: 1, Warn: 2, Error: 3, Never: 4 },
    ExecuteCommandRequest: { type: { method: 'workspace/executeCommand' } },
    DidChangeConfigurationNotification: { type: { method: 'workspace/didChangeConfiguration' } },
  };
}

/** vscode-languageclient's own LSP -> VS Code converter, on these mocks (any other VS Code
 * class it subclasses while loading is an empty class). */
function protocolConverter(vscode) {
  const known = { ...vscode };
  const code = new Proxy(known, { get: (t, k) => (k in t ? t[k] : (t[k] = class {})) });
  const original = Module._load;
  Module._load = function (request, parent, isMain) {
    return request === 'vscode' ? code : original.call(this, request, parent, isMain);
  };
  try {
    return require('vscode-languageclient/$test/common/protocolConverter').createConverter(undefined, false, false, false);
  } finally {
    Module._load = original;
  }
}

/** Fresh mocks and a fresh copy of out/extension.js. */
function load() {
  const vscode = createVscode();
  const clients = [];
  const lc = createLanguageClientModule(clients);
  const original = Module._load;
  Module._load = function (request, parent, isMain) {
    if (request === 'vscode') return vscode;
    if (request === 'vscode-languageclient/node') return lc;
    return original.call(this, request, parent, isMain);
  };
  const file = require.resolve('../../out/extension.js');
  const out = require('node:path').dirname(file);
  for (const cached of Object.keys(require.cache)) if (cached.startsWith(out)) delete require.cache[cached]; // each binds its own mocks
  try {
    const extension = require(file);
    return { vscode, clients, lc, extension };
  } finally {
    Module._load = original;
  }
}

/** Kill the server programs still running, so the test process can end at once. */
function killSpawned() {
  for (const child of spawned) if (child.exitCode === null && child.signalCode === null) child.kill();
}

module.exports = { load, protocolConverter, killSpawned };
