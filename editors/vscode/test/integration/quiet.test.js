// A first start with the extension's default settings (only bielik.server.command set, as the
// README says) against the real server: not one window/showMessage, and the stats name no error.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const config = require('../../out/config');
const proto = require('../../out/protocol');
const { StatusModel } = require('../../out/status');
const { statsBody } = require('../../out/statsPage');
const { Inbox, serverCommand, spawnServer, stop } = require('./helpers');

const READY_TIMEOUT_MS = Number(process.env.BIELIK_READY_TIMEOUT_MS || 300000);
const DEFAULTS = config.serverSettings(() => ({})); // nothing set: what the extension sends

test('default settings: the server starts without a message', { timeout: READY_TIMEOUT_MS + 60000 }, async () => {
  const { command, args } = serverCommand();
  const { child, conn, stderr } = spawnServer(command, args);
  const statuses = new Inbox();
  const messages = [];
  const model = new StatusModel();
  conn.onNotification(proto.STATUS_NOTIFICATION, (p) => { model.update(p); statuses.push(p); });
  conn.onNotification('window/showMessage', (p) => messages.push(p));
  conn.onNotification('window/logMessage', () => {});
  conn.onNotification('$/progress', () => {});
  conn.onRequest('window/workDoneProgress/create', () => null);
  conn.onRequest('workspace/configuration', (p) => p.items.map(() => DEFAULTS));
  conn.listen();
  try {
    assert.deepEqual(DEFAULTS, { languages: config.DEFAULT_LANGUAGES });
    await conn.sendRequest('initialize', {
      processId: process.pid, rootUri: null, initializationOptions: DEFAULTS,
      capabilities: { window: { workDoneProgress: true, showMessage: {} }, workspace: { configuration: true }, textDocument: { inlineCompletion: {} } },
    });
    conn.sendNotification('initialized', {});
    const ready = await statuses.wait((s) => s.state === 'ready' || s.state === 'error', READY_TIMEOUT_MS, 'ready');
    assert.equal(ready.state, 'ready', `${ready.message}\n${stderr().slice(-2000)}`);
    const uri = 'file:///tmp/umowa.md';
    conn.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'markdown', version: 1, text: 'Umowa najmu lokalu' } });
    const report = await conn.sendRequest('workspace/executeCommand', proto.statsParams(uri));
    assert.match(statsBody(report, uri), /<th scope="row">State<\/th><td>ready<\/td>/);
    assert.doesNotMatch(statsBody(report, uri), /class="error"/);
    assert.doesNotMatch(model.render(uri).tooltip, /error/i);
    assert.deepEqual(messages, [], 'no window/showMessage');
  } finally {
    await stop(conn, child);
  }
});
