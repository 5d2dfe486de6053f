// Shared by the integration tests: how to start a server process, and an inbox of notifications.
'use strict';
const cp = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const rpc = require('vscode-jsonrpc/node');

const ROOT = path.resolve(__dirname, '..', '..', '..', '..');

/** The python that runs the server (or the stub): $BIELIK_LSP_PYTHON, the repository's venv, python3. */
function python() {
  if (process.env.BIELIK_LSP_PYTHON) return process.env.BIELIK_LSP_PYTHON;
  const venv = path.join(ROOT, '.venv', 'bin', 'python');
  return fs.existsSync(venv) ? venv : 'python3';
}

/** bielik-lsp serve: $BIELIK_LSP_COMMAND (a JSON array) if set, else python -m app.cli serve. */
function serverCommand() {
  if (process.env.BIELIK_LSP_COMMAND) {
    const argv = JSON.parse(process.env.BIELIK_LSP_COMMAND);
    return { command: argv[0], args: argv.slice(1) };
  }
  return { command: python(), args: ['-m', 'app.cli', 'serve'] };
}

/**
 * Start `command args` from the repository root as an editor starts a server, and open a
 * JSON-RPC connection on its stdio (not yet listening). `stderr()` is what it wrote there so far.
 */
function spawnServer(command, args) {
  const child = cp.spawn(command, args, { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, PYTHONPATH: ROOT } });
  let err = '';
  child.stderr.on('data', (d) => { err += d; });
  const conn = rpc.createMessageConnection(new rpc.StreamMessageReader(child.stdout), new rpc.StreamMessageWriter(child.stdin));
  return { child, conn, stderr: () => err };
}

/** Waits for a notification matching `pred` (already received ones included). */
class Inbox {
  constructor() { this.items = []; this.waiters = []; }
  push(x) {
    this.items.push(x);
    this.waiters = this.waiters.filter((w) => (w.pred(x) ? (w.resolve(x), false) : true));
  }
  wait(pred, ms, what) {
    const found = this.items.find(pred);
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
      this.waiters.push({ pred, resolve: (x) => { clearTimeout(timer); resolve(x); } });
    });
  }
}

/** Ask the server to shut down and wait for the process to end. */
async function stop(conn, child) {
  try {
    await Promise.race([conn.sendRequest('shutdown'), new Promise((r) => setTimeout(r, 5000))]);
    conn.sendNotification('exit');
  } catch { /* already gone */ }
  await new Promise((r) => { if (child.exitCode !== null) r(); else { child.on('exit', r); setTimeout(() => { child.kill('SIGKILL'); r(); }, 5000); } });
  conn.dispose();
}

module.exports = { ROOT, python, serverCommand, spawnServer, Inbox, stop };
