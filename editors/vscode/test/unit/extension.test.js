// The extension's glue (out/extension.js) with mocked `vscode` and LanguageClient.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const cp = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { load, killSpawned } = require('./mock-vscode');

test.after(killSpawned);

/** Folders made by program() and user(), removed once every test has run. */
const made = [];
test.after(() => {
  for (const dir of made) fs.rmSync(dir, { recursive: true, force: true });
});

/** A real program in a fresh folder: `bielik-lsp` that runs `body` (sh), executable. */
function program(body = 'exec sleep 60', name = 'bielik-lsp') {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bielik-bin-'));
  made.push(dir);
  const file = path.join(dir, name);
  fs.writeFileSync(file, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  return file;
}
const SERVER = program();

async function activated(settings = {}) {
  const env = load();
  Object.assign(env.vscode.__state.settings, { 'server.command': SERVER, ...settings });
  const subscriptions = [];
  env.bielik = await env.extension.activate({ subscriptions });
  env.client = env.clients[env.clients.length - 1];
  env.item = env.vscode.__state.statusBarItems[0];
  return env;
}

test('activate starts the configured server for the configured languages', async () => {
  const { client, vscode } = await activated({ k: 2, languages: ['markdown', 'latex'] });
  assert.equal(client.running, true);
  assert.deepEqual(client.process.spawnargs, [SERVER, 'serve', '--stdio', `--clientProcessId=${process.pid}`],
    'the arguments vscode-languageclient adds for stdio: the server watches the editor');
  assert.deepEqual(client.clientOptions.documentSelector.map((d) => d.language), ['markdown', 'markdown', 'latex', 'latex']);
  assert.deepEqual(client.clientOptions.initializationOptions, { k: 2, languages: ['markdown', 'latex'] });
  const pulled = client.clientOptions.middleware.workspace.configuration({ items: [{ section: 'bielik' }, { section: 'editor' }] });
  assert.deepEqual(pulled, [{ k: 2, languages: ['markdown', 'latex'] }, null]);
  for (const id of ['bielik.client.continueDocument', 'bielik.client.toggleSpeculation', 'bielik.client.showStats', 'bielik.client.restart', 'bielik.client.showLog']) {
    assert.ok(vscode.__state.commands.has(id), id);
  }
  assert.equal(client.clientOptions.revealOutputChannelOn, 4, 'the library shows no notices of its own');
  await vscode.__state.commands.get('bielik.client.restart')();
  assert.equal(client.process.exitCode !== null || client.process.signalCode !== null, true, 'the old server is gone');
});

test('status bar follows bielik/status and the active file', async () => {
  const { client, vscode, item } = await activated();
  await vscode.__open('file:///a.md', 'markdown');
  assert.equal(item.visible, true);
  assert.match(item.text, /starting/);
  client.notify('bielik/status', { state: 'loading', message: 'model loading' });
  assert.match(item.text, /loading/);
  client.notify('bielik/status', { state: 'ready', message: 'model ready' });
  client.notify('bielik/status', { state: 'ready', message: 'model ready', uri: 'file:///a.md', speculation: 'on', speculationSource: 'toggle', drafter: 'lookup', reason: 'speculation on for this file: lookup drafter', acceptanceRate: 0.8, tokensPerSecond: 20 });
  assert.equal(item.text, '$(feather) Bielik spec:on 80% 20.0 tok/s');
  assert.match(item.tooltip, /Why: speculation on for this file: lookup drafter/);
  await vscode.__open('file:///b.md', 'markdown');
  assert.equal(item.text, '$(feather) Bielik spec:auto');
  await vscode.__open('file:///c.py', 'python');
  assert.equal(item.visible, false, 'hidden for languages the server does not serve');
  client.notify('bielik/status', { state: 'error', message: 'cannot load /x.gguf' });
  assert.equal(item.visible, true, 'errors always show');
  assert.equal(item.backgroundColor.id, 'statusBarItem.errorBackground');
});

test('continue document sends the cursor position and reports the result', async () => {
  const { client, vscode } = await activated();
  await vscode.__open('file:///a.md', 'markdown', 3, 7);
  client.respond = async () => ({ uri: 'file:///a.md', text: ' dalej.', stopReason: 'paragraph' });
  const result = await vscode.commands.executeCommand('bielik.client.continueDocument', 16);
  assert.equal(result.text, ' dalej.');
  assert.deepEqual(client.requests.at(-1), ['workspace/executeCommand',
    { command: 'bielik.continueDocument', arguments: [{ uri: 'file:///a.md', position: { line: 3, character: 7 }, maxTokens: 16 }] }]);
  client.respond = async () => ({ uri: 'file:///a.md', text: '', stopReason: 'edited' });
  await vscode.commands.executeCommand('bielik.client.continueDocument');
  assert.deepEqual(vscode.__state.messages.at(-1), ['info', 'Bielik: nothing added (edited).']);
  client.respond = async () => { throw Object.assign(new Error('the model is still loading'), { code: -32803 }); };
  await vscode.commands.executeCommand('bielik.client.continueDocument');
  assert.deepEqual(vscode.__state.messages.at(-1), ['error', 'Bielik: the model is still loading']);
});

test('commands refuse files the server does not serve', async () => {
  const { client, vscode } = await activated();
  await vscode.__open('file:///a.py', 'python');
  const n = client.requests.length;
  assert.equal(await vscode.commands.executeCommand('bielik.client.continueDocument'), undefined);
  assert.equal(client.requests.length, n);
  assert.equal(vscode.__state.messages.at(-1)[0], 'warning');
});

test('toggle speculation: quick pick or argument, status bar updated', async () => {
  const { client, vscode, item } = await activated();
  await vscode.__open('file:///a.md', 'markdown');
  client.notify('bielik/status', { state: 'ready', message: 'model ready' });
  client.respond = async (m, p) => ({ uri: p.arguments[0].uri, speculation: p.arguments[0].mode, drafter: 'none', reason: 'speculation off for this file' });
  vscode.__state.quickPick = 'off';
  const r = await vscode.commands.executeCommand('bielik.client.toggleSpeculation');
  assert.equal(r.speculation, 'off');
  assert.deepEqual(client.requests.at(-1)[1], { command: 'bielik.toggleSpeculation', arguments: [{ uri: 'file:///a.md', mode: 'off' }] });
  assert.match(item.text, /spec:off/);
  assert.match(item.tooltip, /Why: speculation off for this file/);
  await vscode.commands.executeCommand('bielik.client.toggleSpeculation', 'on');
  assert.deepEqual(client.requests.at(-1)[1].arguments, [{ uri: 'file:///a.md', mode: 'on' }]);
  vscode.__state.quickPick = undefined; // dismissed
  const n = client.requests.length;
  assert.equal(await vscode.commands.executeCommand('bielik.client.toggleSpeculation'), undefined);
  assert.equal(client.requests.length, n);
});

test('show stats opens a panel with tables, refreshes it, and opens the raw JSON', async () => {
  const { client, vscode } = await activated();
  await vscode.__open('file:///a.md', 'markdown');
  let requests = 1;
  client.respond = async () => ({ state: 'ready', session: { requests }, files: { 'file:///a.md': { requests, speculation: 'auto' } }, config: {} });
  await vscode.commands.executeCommand('bielik.client.showStats');
  assert.deepEqual(client.requests.at(-1)[1], { command: 'bielik.showStats', arguments: [{ uri: 'file:///a.md' }] });
  const panel = vscode.__state.panels[0];
  assert.equal(panel.title, 'Bielik Stats');
  assert.match(panel.webview.html, /This file <code>file:\/\/\/a.md<\/code>/);
  assert.match(panel.webview.html, /Suggestions<\/th><td>0 of 1 requests/);
  requests = 5;
  await panel.post({ command: 'refresh' });
  assert.match(panel.webview.html, /0 of 5 requests/);
  await vscode.commands.executeCommand('bielik.client.showStats');
  assert.equal(vscode.__state.panels.length, 1, 'the same panel again');
  assert.equal(panel.revealed, 1);
  await panel.post({ command: 'raw' });
  const raw = vscode.__state.shownDocuments.at(-1);
  assert.equal(raw.language, 'json');
  assert.equal(JSON.parse(raw.content).session.requests, 5);
  assert.deepEqual(vscode.__state.outputs[0].lines.filter((l) => l.startsWith('{')), [], 'no JSON dumped in the log');
});

test('configuration changes: server settings are sent, client settings restart the server', async () => {
  const env = await activated({ k: 6 });
  await env.vscode.__configure({ debounceMs: 50 });
  assert.deepEqual(env.client.notifications.at(-1), ['workspace/didChangeConfiguration',
    { settings: { bielik: { k: 6, debounceMs: 50, languages: ['markdown', 'plaintext', 'latex'] } } }]);
  await env.vscode.__configure({ debounceMs: undefined });
  assert.equal(env.client.notifications.at(-1)[1].settings.bielik.debounceMs, 0, 'unset goes back to the default');
  assert.equal(env.clients.length, 1);
  await env.vscode.__configure({ 'server.args': ['--preset', 'bielik', 'serve'] });
  assert.equal(env.clients.length, 2, 'a new client');
  assert.equal(env.clients[0].running, false);
  assert.deepEqual(env.clients[1].process.spawnargs.slice(1, 4), ['--preset', 'bielik', 'serve']);
});

/**
 * A throwaway user: HOME and PATH of their own, with a stand-in `uv` on PATH (a real program) that
 * answers `uv tool dir [--bin]` and, on `uv tool install|upgrade`, puts a `bielik-lsp` (SERVER's
 * body) into its tools folder with a link in ~/.local/bin, as uv does. Every call goes to
 * ~/uv-calls with the CMAKE_ARGS it saw.
 */
function user({ uv = true } = {}) {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'bielik-home-'));
  made.push(home);
  const bin = path.join(home, 'path-bin');
  fs.mkdirSync(bin);
  if (uv) {
    fs.writeFileSync(path.join(bin, 'uv'), `#!/bin/sh
echo "$* | CMAKE_ARGS=$CMAKE_ARGS" >> "$HOME/uv-calls"
case "$1 $2 $3" in
  "tool dir --bin") echo "$HOME/.local/bin" ;;
  "tool dir "*) echo "$HOME/.local/share/uv/tools" ;;
  "tool install "*|"tool upgrade "*)
    for pkg in "$@"; do :; done
    case "$pkg" in *remote*) pkg=bielik-lsp-remote ;; *) pkg=bielik-lsp ;; esac
    mkdir -p "$HOME/.local/share/uv/tools/$pkg/bin" "$HOME/.local/bin"
    printf '#!/bin/sh\nexec sleep 60\n' > "$HOME/.local/share/uv/tools/$pkg/bin/bielik-lsp"
    chmod +x "$HOME/.local/share/uv/tools/$pkg/bin/bielik-lsp"
    ln -sf "$HOME/.local/share/uv/tools/$pkg/bin/bielik-lsp" "$HOME/.local/bin/bielik-lsp"
    echo "Installed 1 executable: bielik-lsp" ;;
esac
`, { mode: 0o755 });
  }
  const saved = { HOME: process.env.HOME, PATH: process.env.PATH };
  process.env.HOME = home;
  process.env.PATH = [bin, '/usr/bin', '/bin'].join(path.delimiter); // no bielik-lsp, uv or pipx there
  const calls = () => (fs.existsSync(path.join(home, 'uv-calls')) ? fs.readFileSync(path.join(home, 'uv-calls'), 'utf8').trim().split('\n') : []);
  return { home, calls, restore: () => Object.assign(process.env, saved) };
}

async function until(what, fn, ms = 15000) {
  const end = Date.now() + ms;
  while (!(await fn())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test('no bielik-lsp anywhere: one offer to install it; the CUDA build installs in a terminal, then starts', async () => {
  const env = load();
  const u = user();
  try {
    const state = env.vscode.__state;
    state.pressButton = 'Install…';
    state.quickPick = 'NVIDIA GPU (CUDA)';
    const bielik = await env.extension.activate({ subscriptions: [] });
    await env.vscode.__open('file:///a.md', 'markdown');
    const [kind, text, buttons] = state.messages[0];
    assert.equal(kind, 'info', 'an offer, not an error');
    assert.match(text, /^Bielik needs its language server, bielik-lsp, which is not installed here\. Install it now/);
    assert.deepEqual(buttons, ['Install…', 'Use Another Program']);
    await until('the server started from where uv put it', () => env.clients.length === 1 && env.clients[0].running);
    const [items, options] = state.quickPicks[0];
    assert.deepEqual(items.map((i) => i.label), ['CPU', 'NVIDIA GPU (CUDA)', 'GPU through Vulkan (AMD, Intel, NVIDIA)', 'Remote only']);
    assert.equal(items[0].detail, 'uv tool install bielik-lsp');
    assert.equal(items[1].detail, "CMAKE_ARGS='-DGGML_CUDA=on -DGGML_BACKEND_DL=OFF -DGGML_CPU_ALL_VARIANTS=OFF -DGGML_NATIVE=ON' uv tool install --no-binary-package bielik-llama-cpp --reinstall-package bielik-llama-cpp bielik-lsp");
    assert.match(options.title, /Install the Bielik server/);
    const terminal = state.terminals[0];
    assert.equal(terminal.shown, true, 'the user sees the install');
    assert.equal(terminal.options.name, 'Bielik: install');
    assert.match(terminal.output, /Installed 1 executable: bielik-lsp/);
    assert.ok(u.calls().includes('tool install --no-binary-package bielik-llama-cpp --reinstall-package bielik-llama-cpp bielik-lsp | CMAKE_ARGS=-DGGML_CUDA=on -DGGML_BACKEND_DL=OFF -DGGML_CPU_ALL_VARIANTS=OFF -DGGML_NATIVE=ON'), u.calls().join('\n'));
    assert.equal(env.clients[0].process.spawnargs[0], path.join(u.home, '.local', 'bin', 'bielik-lsp'), 'where uv links it, not on PATH');
    assert.equal(state.messages.at(-1)[1], 'Bielik: bielik-lsp is installed and starting.', 'nothing more to run: the wheels are exact');
    assert.equal(state.messages.filter((m) => m[0] === 'error').length, 0);
    assert.notEqual(bielik.model.state, 'missing');
    await env.extension.deactivate();
  } finally {
    u.restore();
  }
});

test('remote only: the lean package, and the inference server URL kept in the user settings', async () => {
  const env = load();
  const u = user();
  try {
    const state = env.vscode.__state;
    Object.assign(state, { pressButton: 'Install…', quickPick: 'Remote only', inputBox: 'http://gpu-box:8080/v1' });
    state.settings['server.installSourceRemote'] = 'git+https://example.org/bielik-lsp-remote';
    await env.extension.activate({ subscriptions: [] });
    await until('the server started', () => env.clients.length === 1 && env.clients[0].running);
    assert.deepEqual(state.updates, [['target', 'http://gpu-box:8080/v1', 1]], 'bielik.target in the user (global) settings');
    assert.equal(state.inputBoxOptions.validateInput('host:8080'), 'a URL such as http://host:8080/v1');
    assert.equal(state.inputBoxOptions.validateInput('https://h/v1'), undefined);
    assert.ok(u.calls().includes('tool install git+https://example.org/bielik-lsp-remote | CMAKE_ARGS='), u.calls().join('\n'));
    assert.doesNotMatch(state.messages.at(-1)[1], /bielik-lsp setup/, 'nothing to build');
    await env.extension.deactivate();
  } finally {
    u.restore();
  }
});

test('neither uv nor pipx: the offer says how to get uv, with its official installer', async () => {
  const env = load();
  const u = user({ uv: false });
  try {
    const state = env.vscode.__state;
    Object.assign(state, { pressButton: ['Install…', 'How to Get uv'], quickPick: 'CPU' });
    const bielik = await env.extension.activate({ subscriptions: [] });
    await until('the uv offer', () => state.messages.length === 2);
    const [kind, text, buttons] = state.messages[1];
    assert.equal(kind, 'info');
    assert.match(text, /neither is here\. Install uv with its official installer \(curl -LsSf https:\/\/astral\.sh\/uv\/install\.sh \| sh\)\?/);
    assert.deepEqual(buttons, ['Install uv', 'How to Get uv']);
    await until('the docs opened', () => state.executed.some((e) => e[0] === 'openExternal'));
    assert.deepEqual(state.executed.find((e) => e[0] === 'openExternal'), ['openExternal', 'https://docs.astral.sh/uv/getting-started/installation/']);
    assert.equal(state.terminals.length, 0, 'nothing runs unasked');
    assert.equal(bielik.model.state, 'missing');
    assert.match(state.statusBarItems[0].text, /cloud-download.*not installed/);
    assert.equal(state.statusBarItems[0].command, 'bielik.client.installServer');
    await env.extension.deactivate();
  } finally {
    u.restore();
  }
});

test('a server older than the extension: one notification, Upgrade runs uv tool upgrade and restarts it', async () => {
  const u = user();
  const env = load();
  try {
    cp.execFileSync(path.join(u.home, 'path-bin', 'uv'), ['tool', 'install', 'bielik-lsp']); // installed before
    process.env.PATH = `${path.join(u.home, '.local', 'bin')}${path.delimiter}${process.env.PATH}`;
    env.lc.LanguageClient.serverInfo = { name: 'bielik-lsp', version: '0.0.9' };
    const state = env.vscode.__state;
    state.pressButton = 'Upgrade';
    await env.extension.activate({ subscriptions: [], extension: { packageJSON: { version: '0.1.0' } } });
    await until('the restart after the upgrade', () => env.clients.length === 2 && env.clients[1].running);
    const infos = state.messages.filter((m) => m[0] === 'info');
    assert.equal(infos.length, 1);
    assert.deepEqual(infos[0], ['info', 'Bielik: the server is bielik-lsp 0.0.9, older than this extension (0.1.0). Upgrade it (uv tool upgrade bielik-lsp)?', ['Upgrade', 'Not Now']]);
    assert.equal(u.calls().at(-1), 'tool upgrade bielik-lsp | CMAKE_ARGS=');
    assert.equal(state.terminals[0].options.name, 'Bielik: upgrade');
    assert.equal(env.clients[0].running, false, 'the old server was stopped first');
    await env.extension.deactivate();
  } finally {
    u.restore();
  }
});

test('a server as new as the extension: no notification', async () => {
  const u = user();
  const env = load();
  try {
    cp.execFileSync(path.join(u.home, 'path-bin', 'uv'), ['tool', 'install', 'bielik-lsp']);
    env.lc.LanguageClient.serverInfo = { name: 'bielik-lsp', version: '0.1.0' };
    await env.extension.activate({ subscriptions: [], extension: { packageJSON: { version: '0.1.0' } } });
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(env.clients.length, 1);
    assert.equal(env.clients[0].running, true, 'found in ~/.local/bin, not on PATH');
    assert.deepEqual(env.vscode.__state.messages, []);
    await env.extension.deactivate();
  } finally {
    u.restore();
  }
});

test('bielik-lsp on PATH is found with no setting', async () => {
  const env = load();
  const saved = process.env.PATH;
  process.env.PATH = `${path.dirname(SERVER)}${path.delimiter}${saved}`;
  try {
    await env.extension.activate({ subscriptions: [] });
    assert.equal(env.clients.at(-1).process.spawnargs[0], SERVER);
    assert.deepEqual(env.vscode.__state.messages, []);
    await env.extension.deactivate();
  } finally {
    process.env.PATH = saved;
  }
});

test('a setting naming a missing file says so, once', async () => {
  const env = load();
  env.vscode.__state.settings['server.command'] = '/nonexistent/bin/bielik-lsp';
  await env.extension.activate({ subscriptions: [] });
  assert.equal(env.clients.length, 0);
  assert.deepEqual(env.vscode.__state.messages.map((m) => m[1]),
    ['Bielik: bielik.server.command is "/nonexistent/bin/bielik-lsp", which is not an executable file. Install the server (Bielik: Install Server) or set bielik.server.command to its bielik-lsp.']);
  await env.extension.deactivate();
});

test('a server that exits at start: one error with the end of its stderr, no restarts', async () => {
  const env = load();
  const bad = program('echo "Traceback (most recent call last):" >&2; echo "bielik-lsp: error: unrecognized arguments: --stdio" >&2; exit 2');
  env.vscode.__state.settings['server.command'] = bad;
  const bielik = await env.extension.activate({ subscriptions: [] });
  await env.vscode.__open('file:///a.md', 'markdown');
  assert.equal(env.clients.length, 1, 'started once, not again');
  assert.equal(bielik.model.state, 'error');
  assert.deepEqual(env.vscode.__state.messages.map((m) => m.slice(0, 2)), [['error',
    `Bielik: cannot start ${bad}: it exited with code 2: bielik-lsp: error: unrecognized arguments: --stdio`]]);
  assert.match(env.vscode.__state.statusBarItems[0].text, /error/);
  await env.extension.deactivate();
});

test('a running server that crashes is restarted, twice more at most, then one error', async () => {
  const { client, vscode, bielik, clients } = await activated();
  for (let i = 0; i < 3; i++) assert.equal((await client.crash()).action, 2, `restart ${i + 1}`);
  assert.deepEqual(vscode.__state.messages, [], 'restarts are quiet');
  assert.equal((await client.crash()).action, 1, 'the fourth crash in 3 minutes: not restarted');
  assert.equal(clients.length, 1);
  assert.equal(vscode.__state.messages.length, 1);
  assert.match(vscode.__state.messages[0][1], /^Bielik: the server was killed \(SIGKILL\), its third crash in 3 minutes; not restarted/);
  assert.equal(bielik.model.state, 'error');
});

test('a workspace cannot choose the server program; an untrusted one cannot choose models', async () => {
  const env = load();
  Object.assign(env.vscode.__state.settings, { target: 'embedded:gemma-3-270m' });
  Object.assign(env.vscode.__state.workspaceSettings, { 'server.command': './run-me.sh', target: '/repo/x.gguf', k: 3 });
  env.vscode.__state.trusted = false;
  const saved = process.env.PATH;
  process.env.PATH = `${path.dirname(SERVER)}${path.delimiter}${saved}`;
  try {
    await env.extension.activate({ subscriptions: [] });
  } finally {
    process.env.PATH = saved;
  }
  const client = env.clients.at(-1);
  assert.equal(client.process.spawnargs[0], SERVER, 'the workspace value is ignored');
  assert.deepEqual(client.clientOptions.initializationOptions,
    { target: 'embedded:gemma-3-270m', k: 3, languages: ['markdown', 'plaintext', 'latex'] });
  await env.vscode.__trust();
  assert.deepEqual(client.notifications.at(-1), ['workspace/didChangeConfiguration',
    { settings: { bielik: { target: '/repo/x.gguf', k: 3, languages: ['markdown', 'plaintext', 'latex'] } } }]);
  assert.equal(env.clients.length, 1, 'trust does not restart the server');
  await env.extension.deactivate();
});

test('a setting of the wrong type is not sent, and the user is told once', async () => {
  const { client, vscode } = await activated({ globs: '*.md', k: 2 });
  assert.deepEqual(client.clientOptions.initializationOptions, { k: 2, languages: ['markdown', 'plaintext', 'latex'] });
  assert.deepEqual(vscode.__state.messages.at(-1), ['warning', 'Bielik: bielik.globs must be a list of strings, not "*.md"; ignored']);
  await vscode.__configure({ globs: ['*.md'] });
  assert.deepEqual(client.notifications.at(-1)[1].settings.bielik.globs, ['*.md']);
});

test('a first start with the default settings shows no message and sends an object', async () => {
  const { client, vscode, item } = await activated();
  await vscode.__open('file:///umowa.md', 'markdown');
  client.notify('bielik/status', { state: 'loading', message: 'model loading' });
  client.notify('bielik/status', { state: 'ready', message: 'model ready' });
  assert.deepEqual(vscode.__state.messages, []);
  assert.deepEqual(client.clientOptions.initializationOptions, { languages: ['markdown', 'plaintext', 'latex'] });
  assert.equal(item.text, '$(feather) Bielik spec:auto');
  assert.doesNotMatch(item.tooltip, /error/);
});

/** Three items for `doc` at its end, through the extension's middleware, as VS Code gets them. */
async function threeItems(env, uri, text) {
  const { vscode, client } = env;
  await vscode.__open(uri, 'markdown', 0, 0, text);
  const editor = vscode.window.activeTextEditor;
  const at = editor.selection.active;
  const range = new vscode.Range(at, at);
  const command = (i) => ({ title: 'Bielik: suggestion accepted', command: 'bielik.accepted', arguments: [uri, String(i)] });
  const items = [' pierwsza propozycja, dalej', ' druga propozycja.', ' trzecia\ni czwarta linia']
    .map((t, i) => new vscode.InlineCompletionItem(t, range, command(i)));
  const provide = client.clientOptions.middleware.provideInlineCompletionItems;
  const result = await provide(editor.document, at, { triggerKind: 0 }, {}, async () => new vscode.InlineCompletionList(items));
  return { result, items, command };
}

test('every item reaches VS Code, which cycles through them', async () => {
  const env = await activated();
  const { result, items } = await threeItems(env, 'file:///a.md', 'Umowa najmu');
  assert.deepEqual(result.items, items);
});

test('accept next word / line: VS Code inserts the part, the server hears which item and how far', async () => {
  const env = await activated();
  const { vscode, client } = env;
  const { command } = await threeItems(env, 'file:///a.md', 'Umowa najmu');
  const parts = [];
  vscode.commands.registerCommand('editor.action.inlineSuggest.acceptNextWord', () => vscode.__type(parts.shift()));
  vscode.commands.registerCommand('editor.action.inlineSuggest.acceptNextLine', () => vscode.__type(parts.shift()));
  // VS Code shows the second item (the user cycled to it) and takes its words one by one.
  parts.push(' ', 'druga');
  vscode.__type(parts.shift()); // the user types the space; the item stays
  await vscode.commands.executeCommand('bielik.client.acceptNextWord');
  assert.deepEqual(client.notifications.at(-1), ['textDocument/didPartiallyAcceptCompletion',
    { item: { insertText: ' druga propozycja.', command: command(1) }, acceptedLength: 6 }]);
  const n = client.notifications.length;
  parts.push(' propozycja.'); // the rest: VS Code accepts it whole and runs the item's command
  await vscode.commands.executeCommand('bielik.client.acceptNextWord');
  assert.equal(client.notifications.length, n, 'no partial accept for a whole one');
  // The third item, a line at a time.
  await threeItems(env, 'file:///a.md', 'Umowa najmu');
  parts.push(' trzecia\n');
  const accept = await vscode.commands.executeCommand('bielik.client.acceptNextLine');
  assert.equal(accept.acceptedLength, 9);
  assert.deepEqual(client.notifications.at(-1)[1].item.command, command(2));
  // Text no item continues: nothing to report.
  parts.push(' inaczej');
  assert.equal(await vscode.commands.executeCommand('bielik.client.acceptNextWord'), undefined);
});
