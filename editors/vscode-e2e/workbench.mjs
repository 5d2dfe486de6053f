/**
 * What every browser run does first: Debian's Chromium through playwright-core, the workbench
 * loaded, the folder trusted as a new user does, and a file opened by Quick Open (Ctrl+P).
 */
import { basename } from 'node:path';
import { chromium } from 'playwright-core';

export async function launch(executablePath) {
  const browser = await chromium.launch({
    executablePath,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-dev-shm-usage'],
  });
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  page.setDefaultTimeout(20000);
  return { browser, page };
}

/** Load the workbench at `url`, trust the folder when asked, open `file`; returns its name. */
export async function openFile(page, url, file) {
  await page.goto(url, { timeout: 60000 });
  await page.locator('.monaco-workbench').waitFor({ timeout: 90000 });
  // A new user's first look at a folder: VS Code asks whether to trust it.
  const trust = page.getByRole('button', { name: /Yes, I trust the authors/ });
  if (await trust.waitFor({ timeout: 8000 }).then(() => true, () => false)) await trust.click();
  const name = basename(file);
  await page.locator('.monaco-workbench .part.editor').click({ position: { x: 5, y: 5 } }).catch(() => undefined);
  await page.keyboard.press('Control+P');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible', timeout: 15000 });
  await input.fill(name);
  await page.locator('.quick-input-widget .monaco-list-row', { hasText: name }).first().waitFor({ timeout: 15000 });
  await page.keyboard.press('Enter');
  await page.locator(`.tab.active[aria-label*="${name}"]`).first().waitFor({ timeout: 15000 });
  await page.locator('.editor-group-container.active .monaco-editor .view-lines').waitFor({ timeout: 15000 });
  return name;
}
