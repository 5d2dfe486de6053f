#!/usr/bin/env node
/**
 * Spelling in a real VS Code (code-server through headless Chromium), as a user meets it: the
 * misspelt word gets its squiggle, hovering shows the message, Ctrl+. opens the quick fixes and
 * Enter applies the first (preferred) one. Writes what it saw as JSON, and screenshots.
 * scripts/spelling_screenshots.py starts code-server with the extension and runs this.
 *
 *   node spelling.mjs --url http://127.0.0.1:PORT/ --file WORKSPACE/doc.md --word zaczoł
 *                     --fix zaczął --out results.json --screenshots DIR [--timeout-s 300]
 *                     [--prefix vscode-spelling]   (grammar: --word byli --fix były, its own names)
 */
import { writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { launch, openFile } from './workbench.mjs';

const { values: opt } = parseArgs({
  options: {
    url: { type: 'string' },
    file: { type: 'string' },
    word: { type: 'string' },
    fix: { type: 'string' },
    out: { type: 'string' },
    screenshots: { type: 'string' },
    chromium: { type: 'string', default: '/usr/bin/chromium' },
    'timeout-s': { type: 'string', default: '300' },
    prefix: { type: 'string', default: 'vscode-spelling' },
  },
});
const results = { steps: [] };
const step = (name, detail) => {
  results.steps.push({ name, detail });
  console.log(`ok ${name}: ${detail}`);
};

const { browser, page } = await launch(opt.chromium);
try {
  mkdirSync(opt.screenshots, { recursive: true });
  await openFile(page, opt.url, opt.file);
  const editor = page.locator('.editor-group-container.active .monaco-editor');
  const squiggle = editor.locator('[class*="squiggly-"]').first();
  await squiggle.waitFor({ timeout: Number(opt['timeout-s']) * 1000 });
  step('squiggle', await squiggle.getAttribute('class'));
  // Then the model's ranking: once the status bar no longer says the server is loading.
  const status = page.locator('.statusbar-item', { hasText: 'Bielik' }).first();
  const end = Date.now() + Number(opt['timeout-s']) * 1000;
  while (/loading/i.test(await status.innerText()) && Date.now() < end) await page.waitForTimeout(500);
  step('status', (await status.innerText()).trim());
  const toasts = await page.locator('.notification-toast').allInnerTexts();
  step('notifications', JSON.stringify(toasts));
  for (const close of await page.locator('.notification-toast .codicon-notifications-clear').all()) {
    await close.click().catch(() => undefined); // shown in the results above, not in the pictures
  }

  // The squiggle is a decoration under the text layer: point at the text above it.
  const box = await squiggle.boundingBox();
  const at = { x: box.x + box.width / 2, y: box.y + box.height / 2 };
  await page.mouse.move(at.x, at.y);
  const hover = page.locator('.monaco-hover-content', { hasText: opt.word }).first();
  await hover.waitFor({ timeout: 20000 });
  step('hover', (await hover.innerText()).replace(/\s+/g, ' ').slice(0, 300));
  await page.screenshot({ path: join(opt.screenshots, `${opt.prefix}.png`) });

  await page.mouse.click(at.x, at.y);
  await page.keyboard.press('Escape');
  await page.keyboard.press('Control+.');
  const menu = page.locator('.action-widget').first();
  await menu.waitFor({ timeout: 20000 });
  step('quick fixes', (await menu.innerText()).replace(/\s+/g, ' ').slice(0, 300));
  await page.screenshot({ path: join(opt.screenshots, `${opt.prefix}-fixes.png`) });
  await page.keyboard.press('Enter');

  const lines = editor.locator('.view-lines');
  // the editor renders spaces as no-break spaces: a fix of two words is compared as text
  const shown = async () => (await lines.innerText()).replace(/\u00a0/g, ' ');
  const deadline = Date.now() + 20000;
  let text = await shown();
  while (!text.includes(opt.fix) && Date.now() < deadline) {
    await page.waitForTimeout(100);
    text = await shown();
  }
  if (!text.includes(opt.fix)) throw new Error(`the fix did not write ${opt.fix}: ${text}`);
  step('fixed', text.split('\n')[0]);
  await page.waitForTimeout(1500); // the diagnostics of the fixed line go away
  await page.screenshot({ path: join(opt.screenshots, `${opt.prefix}-fixed.png`) });
  results.ok = true;
} catch (e) {
  results.ok = false;
  results.error = e instanceof Error ? e.message : String(e);
  console.log(`FAILED: ${results.error}`);
  await page.screenshot({ path: join(opt.screenshots, `${opt.prefix}-failed.png`) }).catch(() => undefined);
} finally {
  writeFileSync(opt.out, JSON.stringify(results, null, 2));
  await browser.close();
}
