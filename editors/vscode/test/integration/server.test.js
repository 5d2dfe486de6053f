// Drives the real Python server (bielik-lsp with the embedded models) through vscode-jsonrpc, the
// way the extension does: the same initializationOptions, command arguments and status handling
// (out/config.js, out/protocol.js, out/status.js). Run `npm run compile` first.
//
// Server: $BIELIK_LSP_PYTHON -m app.cli serve in the repository root (default: the
// repository's .venv python), or $BIELIK_LSP_COMMAND (a JSON array) if set.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const config = require('../../out/config');
const inline = require('../../out/inline');
const proto = require('../../out/protocol');
const { StatusModel } = require('../../out/status');
const { statsBody } = require('../../out/statsPage');
const { Inbox, serverCommand, spawnServer, stop } = require('./helpers');
const READY_TIMEOUT_MS = Number(process.env.BIELIK_READY_TIMEOUT_MS || 300000);
const TEXT = 'W początkach roku 1878, kiedy świat polityczny zajmował się pokojem san-stefańskim, ' +
  'warszawscy kupcy tudzież inteligencja pewnej okolicy Krakowskiego Przedmieścia niemniej ' +
  'gorąco interesowała się przyszłością galanteryjnego sklepu pod firmą J. Mincel i S. Wokulski.\n\n' +
  'W renomowanej jadłodajni, gdzie na wieczorną przekąskę zbierali się właściciele składów';

/** Settings as a user would set them in VS Code (what `inspect` reports as globalValue). */
const USER_SETTINGS = { inlineMaxTokens: 12, continueMaxTokens: 12, debounceMs: 5, timeBudgetMs: 15000, suggestionMs: 15000, drafter: 'lookup' };
const inspectOf = (values) => (key) => (key in values ? { globalValue: values[key] } : {});

function endOf(text) {
  const lines = text.split('\n');
  const last = lines[lines.length - 1];
  return { line: lines.length - 1, character: last.length }; // UTF-16 code units, like VS Code
}

function offsetOf(text, pos) {
  const lines = text.split('\n');
  let off = 0;
  for (let i = 0; i < pos.line; i++) off += lines[i].length + 1;
  return off + pos.character;
}

test('the extension protocol against the real bielik-lsp server', { timeout: READY_TIMEOUT_MS + 240000 }, async (t) => {
  const { command, args } = serverCommand();
  const { child, conn, stderr } = spawnServer(command, args);
  const statuses = new Inbox();
  const progress = new Inbox();
  const messages = [];
  const model = new StatusModel();
  const doc = { uri: 'file:///tmp/bielik-vscode-test.md', text: TEXT, version: 1 };
  let applyEdits = 0;

  conn.onNotification(proto.STATUS_NOTIFICATION, (p) => { model.update(p); statuses.push(p); });
  conn.onNotification('window/showMessage', (p) => messages.push(p));
  conn.onNotification('window/logMessage', () => {});
  conn.onNotification('$/progress', (p) => progress.push(p));
  conn.onRequest('window/workDoneProgress/create', () => null);
  conn.onRequest('workspace/configuration', (p) => p.items.map(() => config.serverSettings(inspectOf(USER_SETTINGS))));
  conn.onRequest('workspace/applyEdit', (p) => {
    // What VS Code does: check the version, apply, send didChange.
    applyEdits++;
    for (const change of p.edit.documentChanges) {
      if (change.textDocument.uri !== doc.uri || change.textDocument.version !== doc.version) {
        return { applied: false, failureReason: 'version mismatch' };
      }
      for (const edit of change.edits) {
        const a = offsetOf(doc.text, edit.range.start), b = offsetOf(doc.text, edit.range.end);
        doc.text = doc.text.slice(0, a) + edit.newText + doc.text.slice(b);
        doc.version++;
        conn.sendNotification('textDocument/didChange', {
          textDocument: { uri: doc.uri, version: doc.version },
          contentChanges: [{ range: edit.range, text: edit.newText }],
        });
      }
    }
    return { applied: true };
  });
  conn.listen();
  const exec = (params) => conn.sendRequest('workspace/executeCommand', params);

  try {
    await t.test('initialize with the extension\'s initializationOptions', async () => {
      const init = await conn.sendRequest('initialize', {
        processId: process.pid,
        rootUri: null,
        clientInfo: { name: 'bielik-vscode-test' },
        initializationOptions: config.serverSettings(inspectOf(USER_SETTINGS)),
        capabilities: {
          general: { positionEncodings: ['utf-16'] },
          window: { workDoneProgress: true, showMessage: {} },
          workspace: { applyEdit: true, workspaceEdit: { documentChanges: true }, configuration: true, didChangeConfiguration: {} },
          textDocument: { synchronization: { didSave: false }, inlineCompletion: {} },
        },
      });
      assert.ok(init.capabilities.inlineCompletionProvider, 'server advertises inline completion');
      const commands = init.capabilities.executeCommandProvider.commands;
      for (const c of Object.values(proto.SERVER_COMMANDS)) assert.ok(commands.includes(c), `server advertises ${c}`);
      conn.sendNotification('initialized', {});
    });

    await t.test('the model becomes ready (status notifications)', async () => {
      const ready = await statuses.wait((s) => s.state === 'ready' || s.state === 'error', READY_TIMEOUT_MS, 'bielik/status ready');
      assert.equal(ready.state, 'ready', `model failed: ${ready.message}\n${stderr().slice(-2000)}`);
      assert.ok(statuses.items.some((s) => s.state === 'loading'), 'a loading status came first');
      assert.match(model.render().text, /Bielik/);
      assert.equal(model.state, 'ready');
      assert.deepEqual(messages.filter((m) => m.type === 1), [], 'no error messages');
    });

    await t.test('inline completion on a Polish document', async () => {
      conn.sendNotification('textDocument/didOpen', { textDocument: { uri: doc.uri, languageId: 'markdown', version: doc.version, text: doc.text } });
      const n = statuses.items.length;
      const list = await conn.sendRequest('textDocument/inlineCompletion', {
        textDocument: { uri: doc.uri }, position: endOf(doc.text), context: { triggerKind: 1 },
      });
      const items = Array.isArray(list) ? list : list.items;
      assert.ok(items.length >= 1, 'a suggestion came back');
      const text = typeof items[0].insertText === 'string' ? items[0].insertText : items[0].insertText.value;
      assert.ok(text.trim().length > 0, 'non-empty suggestion');
      assert.ok(!text.includes('\uFFFD'), 'no U+FFFD');
      t.diagnostic(`suggestion: ${JSON.stringify(text)}`);
      // On accept VS Code runs the item's command; vscode-languageclient registered every command
      // the server advertises and forwards it as workspace/executeCommand, as done here.
      const command = items[0].command;
      assert.equal(command && command.command, proto.SERVER_COMMANDS.accepted, 'the item carries the accept command');
      // Accept next word twice, as the extension reports it: how much of the item is in.
      const item = { insertText: text, start: doc.text.length, command };
      for (const length of [1, 2]) {
        conn.sendNotification(inline.PARTIAL_ACCEPT, inline.partialAcceptParams({ item, acceptedLength: length }));
      }
      await exec({ command: command.command, arguments: command.arguments });
      const accepted = (await exec(proto.statsParams(doc.uri))).files[doc.uri];
      assert.equal(accepted.suggestions_accepted, 1, 'the server counted the accept');
      assert.equal(accepted.partially_accepted, 2, 'and both partial accepts');
      assert.equal(accepted.accepted_chars, 2, 'each character once');
      const s = await statuses.wait((x) => statuses.items.indexOf(x) >= n && x.uri === doc.uri, 10000, 'per-file status');
      assert.equal(s.speculation, 'auto');
      assert.equal(typeof s.acceptanceRate, 'number');
      assert.equal(typeof s.tokensPerSecond, 'number');
      const r = model.render(doc.uri);
      assert.match(r.text, /spec:auto/);
      assert.match(r.tooltip, /Why: /);
    });

    await t.test('toggle speculation for the file', async () => {
      const n = statuses.items.length;
      const off = await exec(proto.toggleParams(doc.uri, 'off'));
      assert.equal(off.speculation, 'off');
      assert.equal(off.drafter, 'none');
      await statuses.wait((x) => statuses.items.indexOf(x) >= n && x.uri === doc.uri && x.speculation === 'off', 10000, 'status off');
      assert.match(model.render(doc.uri).text, /spec:off/);
      assert.match(model.render(doc.uri).tooltip, /speculation off/);
      const cycled = await exec(proto.toggleParams(doc.uri));
      assert.equal(cycled.speculation, proto.nextMode('off'));
      const back = await exec(proto.toggleParams(doc.uri, 'auto'));
      assert.equal(back.speculation, 'auto');
    });

    await t.test('continue document: versioned edits with progress', async () => {
      const before = doc.text;
      const result = await exec(proto.continueParams(doc.uri, endOf(doc.text), 8));
      t.diagnostic(`continued: ${JSON.stringify(result.text)} (${result.stopReason})`);
      assert.equal(typeof result.stopReason, 'string');
      assert.equal(doc.text, before + result.text, 'the applied edits are the returned text');
      if (result.text) assert.ok(applyEdits >= 1, 'workspace/applyEdit used');
      await progress.wait((p) => p.value && p.value.kind === 'end', 10000, 'progress end');
      assert.ok(progress.items.some((p) => p.value.kind === 'begin' && /continu/i.test(p.value.title)));
    });

    await t.test('show stats', async () => {
      const report = await exec(proto.statsParams(doc.uri));
      assert.equal(report.state, 'ready');
      assert.ok(report.files[doc.uri].requests >= 1);
      assert.equal(report.config.inlineMaxTokens, 12);
      const page = statsBody(report, doc.uri);
      assert.match(page, /This file <code>/);
      assert.match(page, /Suggestions<\/th><td>\d+ of [1-9]\d* requests/, 'the page reads the real report');
    });

    await t.test('a configuration change reaches the server', async () => {
      const { settings, restart } = config.changedSettings(
        config.serverSettings(inspectOf(USER_SETTINGS)), inspectOf({ ...USER_SETTINGS, inlineMaxTokens: 8, debounceMs: undefined }));
      assert.equal(restart, false);
      conn.sendNotification('workspace/didChangeConfiguration', { settings: { bielik: settings } });
      const report = await exec(proto.statsParams(doc.uri));
      assert.equal(report.config.inlineMaxTokens, 8);
      assert.equal(report.config.debounceMs, 0, 'an unset key went back to the default');
      assert.deepEqual(messages.filter((m) => m.type === 1), [], 'no error messages');
    });

    await t.test('the server refuses a string where a list belongs, and keeps its settings', async () => {
      conn.sendNotification('workspace/didChangeConfiguration', { settings: { bielik: { globs: '*.md' } } });
      const report = await exec(proto.statsParams(doc.uri));
      assert.deepEqual(report.config.globs, [], 'globs unchanged');
      assert.ok(messages.some((m) => m.type === 1 && /globs must be a list of strings/.test(m.message)),
        `an error message: ${JSON.stringify(messages)}`);
    });
  } finally {
    await stop(conn, child);
  }
});
