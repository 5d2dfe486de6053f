#!/usr/bin/env node
/**
 * The extension where no bielik-lsp is installed, in a running code-server, as a new user meets
 * it: the offer to install, the quick pick of builds, the install in a terminal, the server
 * started after it, ghost text. Writes what it saw as JSON (one entry per check, in order;
 * tests/test_vscode_install.py turns each into a test case).
 *
 *   node install.mjs --url http://127.0.0.1:PORT/ --file WORKSPACE/doc.md --out results.json
 *                    [--build CPU] [--screenshots DIR] [--chromium /usr/bin/chromium]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { launch, openFile } from './workbench.mjs';

const { values: opt } = parseArgs({
  options: {
    url: { type: 'string' },
    file: { type: 'string' },
    out: { type: 'string' },
    build: { type: 'string', default: 'CPU' },
    screenshots: { type: 'string' },
    chromium: { type: 'string', default: '/usr/bin/chromium' },
    'ready-timeout-s': { type: 'string', default: '300' },
  },
});
const results = { checks: {}, order: [], log: [] };
const started = Date.now();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
let page;

function log(msg) {
  const line = `[install ${((Date.now() - started) / 1000).toFixed(1)}s] ${msg}`;
  results.log.push(line);
  console.log(line);
}

async function shot(name, keep = false) {
  const dir = keep && opt.screenshots ? opt.screenshots : join(dirname(opt.out), 'screenshots');
  mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: join(dir, `${name}.png`) });
}

/** One check; a failure ends the run (each step needs the one before). */
async function check(name, fn) {
  const t0 = Date.now();
  try {
    const detail = await fn();
    results.checks[name] = { ok: true, detail, ms: Date.now() - t0 };
  } catch (e) {
    results.checks[name] = { ok: false, detail: e instanceof Error ? e.message : String(e), ms: Date.now() - t0 };
    await shot(`failed-${name}`).catch(() => undefined);
  }
  results.order.push(name);
  log(`${results.checks[name].ok ? 'ok' : 'FAILED'} ${name}: ${String(results.checks[name].detail).slice(0, 400)}`);
  writeFileSync(opt.out, JSON.stringify(results, null, 2));
  if (!results.checks[name].ok) throw new Error(`${name} failed`);
}

const statusText = () => page.locator('[id$="bielik.status"]').innerText().catch(() => '');
const toasts = () => page.locator('.notification-toast').allInnerTexts();

async function main() {
  let browser;
  ({ browser, page } = await launch(opt.chromium));
  try {
    await check('offer_to_install', async () => {
      await openFile(page, opt.url, opt.file);
      const toast = page.locator('.notification-toast', { hasText: 'Bielik needs its language server' });
      await toast.waitFor({ timeout: 60000 });
      await sleep(1000);
      const all = await toasts();
      if (all.length !== 1) throw new Error(`notifications: ${JSON.stringify(all)}`);
      const status = await statusText();
      if (!/not installed/.test(status)) throw new Error(`status bar: ${JSON.stringify(status)}`);
      await shot('vscode-install-offer', true);
      return `${all[0].replace(/\s*\n\s*/g, ' | ')} / status bar: ${status.trim()}`;
    });

    await check('quick_pick_of_builds', async () => {
      await page.locator('.notification-toast').getByRole('button', { name: 'Install…' }).click();
      const widget = page.locator('.quick-input-widget');
      await widget.locator('.monaco-list-row').first().waitFor({ timeout: 15000 });
      await sleep(500);
      const title = await widget.locator('.quick-input-title').innerText();
      // Each row: its label, description and detail (the command), as the user reads them.
      const rows = await widget.locator('.monaco-list-row').evaluateAll((els) => els.map((el) => ({
        label: el.querySelector('.label-name')?.textContent?.trim(),
        description: el.querySelector('.label-description')?.textContent?.trim(),
        detail: [...el.querySelectorAll('.label-name')].slice(1).map((e) => e.textContent.trim()).join(' '),
      })));
      if (!/Install the Bielik server/.test(title)) throw new Error(`title ${JSON.stringify(title)}`);
      await shot('vscode-install-pick', true);
      return JSON.stringify(rows);
    });

    await check('install_runs_in_a_terminal', async () => {
      await page.locator('.quick-input-widget .monaco-list-row', { hasText: opt.build }).first().click();
      const terminal = page.locator('.terminal-wrapper .xterm-rows').first();
      await terminal.waitFor({ timeout: 30000 });
      const end = Date.now() + Number(opt['ready-timeout-s']) * 1000;
      let text = '';
      while (!/Done\.|failed/.test(text)) {
        if (Date.now() > end) throw new Error(`the terminal never said it was done: ${JSON.stringify(text)}`);
        await sleep(500);
        text = (await terminal.innerText().catch(() => '')).replace(/\u00a0/g, ' ');
      }
      await shot('vscode-install-terminal', true);
      const tab = await page.locator('.terminal-tabs-entry, .single-terminal-tab').allInnerTexts().catch(() => []);
      // The command line itself may have scrolled out of the visible rows; the tool's own lines stay.
      if (!/Installed \d+ executables?: bielik-lsp/.test(text) || !/Done\./.test(text)) throw new Error(JSON.stringify(text));
      return `${JSON.stringify(tab.join(' '))}: ${text.split('\n').map((l) => l.trim()).filter(Boolean).join(' | ')}`;
    });

    await check('server_starts_after_it', async () => {
      const end = Date.now() + Number(opt['ready-timeout-s']) * 1000;
      let status = await statusText();
      while (!/spec:/.test(status)) {
        if (/error/.test(status) || Date.now() > end) throw new Error(`status bar: ${JSON.stringify(status)}`);
        await sleep(500);
        status = await statusText();
      }
      const errors = (await toasts()).filter((t) => /cannot|failed|error/i.test(t));
      if (errors.length) throw new Error(`notifications: ${JSON.stringify(errors)}`);
      return status.trim();
    });

    await check('ghost_text_after_the_install', async () => {
      await page.locator('.editor-group-container.active .monaco-editor textarea').first().focus();
      await page.keyboard.press('Control+End');
      for (const phrase of ['\n\nNajemca zobowiązuje się', ' płacić czynsz', '\n\nStrony ustalają, że']) {
        await page.keyboard.type(phrase, { delay: 35 });
        const ghost = page.locator('.ghost-text-decoration, .ghost-text-decoration-preview').first();
        if (await ghost.waitFor({ timeout: 30000 }).then(() => true, () => false)) {
          await shot('vscode-install-ghost');
          return JSON.stringify(await ghost.innerText());
        }
      }
      throw new Error('no ghost text after three pauses');
    });
  } finally {
    await browser.close().catch(() => undefined);
  }
}

try {
  await main();
} catch (e) {
  log(`run ended: ${e instanceof Error ? e.message : e}`);
} finally {
  results.seconds = (Date.now() - started) / 1000;
  writeFileSync(opt.out, JSON.stringify(results, null, 2));
}
