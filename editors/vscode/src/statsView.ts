/**
 * The "Bielik Stats" panel: the server's statistics as tables (statsPage.ts), refreshed from its
 * Refresh button or by running Show Stats again; Raw JSON opens the server's answer as a JSON
 * document.
 */
import * as crypto from 'crypto';
import * as vscode from 'vscode';
import { statsPage } from './statsPage';

export type Fetch = () => Promise<{ report: Record<string, unknown>; uri?: string } | undefined>;

export class StatsView implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  private last: Record<string, unknown> | undefined;

  constructor(private readonly fetch: Fetch) {}

  /** Open (or reveal) the panel with fresh numbers; returns the report shown. */
  async show(): Promise<Record<string, unknown> | undefined> {
    const got = await this.fetch();
    if (!got) return undefined;
    if (!this.panel) {
      this.panel = vscode.window.createWebviewPanel('bielik.stats', 'Bielik Stats',
        { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true }, { enableScripts: true });
      this.panel.onDidDispose(() => { this.panel = undefined; });
      this.panel.webview.onDidReceiveMessage((m: { command?: string }) =>
        m?.command === 'refresh' ? this.refresh() : m?.command === 'raw' ? this.raw() : undefined);
    } else {
      this.panel.reveal(undefined, true);
    }
    this.render(got.report, got.uri);
    return got.report;
  }

  async refresh(): Promise<void> {
    const got = await this.fetch();
    if (got && this.panel) this.render(got.report, got.uri);
  }

  private render(report: Record<string, unknown>, uri?: string): void {
    this.last = report;
    const nonce = crypto.randomBytes(16).toString('base64');
    this.panel!.webview.html = statsPage(report, uri, nonce, this.panel!.webview.cspSource, new Date());
  }

  private async raw(): Promise<void> {
    const content = JSON.stringify(this.last ?? {}, null, 2);
    const doc = await vscode.workspace.openTextDocument({ language: 'json', content });
    await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.Active, preview: true });
  }

  dispose(): void {
    this.panel?.dispose();
  }
}
