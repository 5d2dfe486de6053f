// The extension's inline completion path against tests/editor_stub.py, a small LSP server that
// answers with three items (it tests this client, not bielik-lsp): vscode-languageclient's own
// converter turns them into VS Code items, the extension's middleware hands all of them to VS
// Code (which cycles through them), and a partial accept of the third reaches the server naming
// that item.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { load, protocolConverter } = require('../unit/mock-vscode');
const { python, spawnServer, stop } = require('./helpers');

const URI = 'file:///tmp/umowa.md';
const TEXT = 'Umowa najmu';

test('three items from a server: all reach VS Code, a partial accept names the one taken', async () => {
  const { child, conn } = spawnServer(python(), ['-m', 'tests.editor_stub']);
  conn.listen();
  let idleDir; // the stand-in's folder, removed at the end
  try {
    await conn.sendRequest('initialize', { processId: process.pid, rootUri: null, capabilities: {} });
    conn.sendNotification('initialized', {});
    conn.sendNotification('textDocument/didOpen', { textDocument: { uri: URI, languageId: 'markdown', version: 1, text: TEXT } });

    const env = load();
    // The extension's own server process is a stand-in that waits; the requests go to the stub.
    idleDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bielik-bin-'));
    const idle = path.join(idleDir, 'bielik-lsp');
    fs.writeFileSync(idle, '#!/bin/sh\nexec sleep 60\n', { mode: 0o755 });
    env.vscode.__state.settings['server.command'] = idle;
    await env.extension.activate({ subscriptions: [] });
    const client = env.clients.at(-1);
    client.sendNotification = async (type, params) => conn.sendNotification(type.method ?? type, params);
    const { vscode } = env;
    await vscode.__open(URI, 'markdown', 0, 0, TEXT);
    const editor = vscode.window.activeTextEditor;
    const converter = protocolConverter(vscode);
    const next = async (document, position, context, token) => converter.asInlineCompletionResult(
      await conn.sendRequest('textDocument/inlineCompletion', {
        textDocument: { uri: URI }, position: { line: position.line, character: position.character }, context: { triggerKind: 2 },
      }), token);
    const result = await client.clientOptions.middleware.provideInlineCompletionItems(
      editor.document, editor.selection.active, { triggerKind: 1 }, undefined, next);

    assert.deepEqual(result.items.map((i) => i.insertText), [' pierwsza propozycja, dalej', ' druga propozycja.', ' trzecia\ni czwarta linia']);
    assert.deepEqual(result.items.map((i) => i.command.command), ['bielik.accepted', 'bielik.accepted', 'bielik.accepted']);
    assert.equal(new Set(result.items.map((i) => i.command.arguments[1])).size, 3, 'each item names itself');

    // VS Code cycled to the third item (Alt+]); the user takes its first line (Shift+Tab).
    vscode.commands.registerCommand('editor.action.inlineSuggest.acceptNextLine', () => vscode.__type(' trzecia\n'));
    await vscode.commands.executeCommand('bielik.client.acceptNextLine');
    const { received } = await conn.sendRequest('stub/received');
    const partial = received.filter((m) => m.method === 'textDocument/didPartiallyAcceptCompletion');
    assert.equal(partial.length, 1);
    assert.deepEqual(partial[0].params.item.command, result.items[2].command);
    assert.equal(partial[0].params.acceptedLength, ' trzecia\n'.length);
    await env.extension.deactivate();
  } finally {
    await stop(conn, child);
    if (idleDir) fs.rmSync(idleDir, { recursive: true, force: true });
  }
});
