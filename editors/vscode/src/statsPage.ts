/**
 * `bielik.showStats`'s answer as an HTML page for a webview: the model, this file, the session,
 * per kind of suggestion, in tables. Pure logic (no `vscode` import); statsView.ts shows it.
 */
import { percent } from './status';

type Report = Record<string, any>;

const esc = (s: unknown): string =>
  String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const num = (x: unknown, digits = 0): string => Number(x ?? 0).toFixed(digits);

function table(rows: [string, string][]): string {
  const body = rows.map(([k, v]) => `<tr><th scope="row">${esc(k)}</th><td>${v}</td></tr>`).join('');
  return `<table>${body}</table>`;
}

/** The counters of a file or of the session (lsp_server/status.py: Counters, FileStats). */
function counters(c: Report): [string, string][] {
  const rows: [string, string][] = [
    ['Suggestions', `${num(c.suggestions)} of ${num(c.requests)} requests (${num(c.cache_hits)} from the cache, ${num(c.superseded)} superseded by typing)`],
    ['Shown / accepted', `${num(c.shown)} shown, ${num(c.suggestions_accepted)} accepted, ${num(c.partially_accepted)} partly (${num(c.accepted_chars)} characters)`],
    ['Speed', `${num(c.tokens_per_second, 1)} tokens/s`],
    ['Speculation', `${num(c.accepted)} of ${num(c.drafted)} drafted tokens accepted (${percent(c.acceptance_rate ?? 0)})`],
    ['Tokens', `${num(c.generated_tokens)} generated; ${num(c.prefilled_tokens)} prefilled of ${num(c.prompt_tokens)} prompt tokens`],
  ];
  if (c.failed) rows.push(['Failed', `${num(c.failed)} requests answered with nothing after an error`]);
  return rows.map(([k, v]) => [k, esc(v)]);
}

function fileRows(c: Report): [string, string][] {
  if (c.speculation === undefined) return [];
  const rows: [string, string][] = [
    ['Speculation mode', esc(`${c.speculation} (${c.source ?? 'default'})`)],
    ['Drafter', esc(`${c.drafter || '-'}${c.reason ? `: ${c.reason}` : ''}`)],
    ['Last run', esc(`${percent(c.last_acceptance_rate ?? 0)} accepted, ${num(c.last_tokens_per_second, 1)} tokens/s, first text after ${num(c.last_first_token_ms)} ms, ${num(c.last_prefilled_tokens)} tokens prefilled, stopped: ${c.last_stop || '-'}`)],
  ];
  if (Array.isArray(c.policy_reasons) && c.policy_reasons.length) {
    rows.push(['Policy', `<ul>${c.policy_reasons.map((r: unknown) => `<li>${esc(r)}</li>`).join('')}</ul>`]);
  }
  return rows;
}

function kinds(c: Report): string {
  const entries = Object.entries((c.kinds ?? {}) as Record<string, Record<string, number>>);
  if (!entries.length) return '';
  const cols = ['delivered', 'shown', 'accepted', 'partially_accepted', 'accepted_chars'];
  const head = `<tr><th>kind</th>${cols.map((k) => `<th>${esc(k.replace('_', ' '))}</th>`).join('')}</tr>`;
  const body = entries.map(([kind, n]) => `<tr><th scope="row">${esc(kind)}</th>${cols.map((k) => `<td>${num(n[k])}</td>`).join('')}</tr>`).join('');
  return `<h3>By kind of suggestion</h3><table class="grid">${head}${body}</table>`;
}

function modelRows(report: Report): [string, string][] {
  const cfg = (report.config ?? {}) as Report;
  const rows: [string, string][] = [['State', esc(report.state ?? '?')]];
  if (report.error) rows.push(['Error', `<span class="error">${esc(report.error)}</span>`]);
  if (cfg.target) rows.push(['Target', esc(cfg.target)]);
  if (cfg.drafterModel) rows.push(['Drafter model', esc(cfg.drafterModel)]);
  if (cfg.backend) rows.push(['Backend', esc(cfg.backend)]);
  if (cfg.drafter) rows.push(['Drafter', esc(`${cfg.drafter}, up to ${cfg.k ?? '?'} tokens`)]);
  if (report.memory_mb !== undefined) {
    const peak = report.peak_memory_mb ? `, peak ${num(report.peak_memory_mb)} MB` : '';
    rows.push(['Memory', esc(`${num(report.memory_mb)} MB${peak}`)]);
  }
  return rows;
}

/** The page's body: everything the report says, for `uri` (the active file) if given. */
export function statsBody(report: Report, uri?: string): string {
  const parts = ['<h2>Model</h2>', table(modelRows(report))];
  const files = (report.files ?? {}) as Record<string, Report>;
  const shown = uri ? [[uri, files[uri] ?? {}] as const] : Object.entries(files);
  for (const [u, c] of shown) {
    parts.push(`<h2>${uri ? 'This file' : 'File'} <code>${esc(u)}</code></h2>`);
    parts.push(table([...fileRows(c), ...counters(c)]), kinds(c));
  }
  if (report.session) parts.push('<h2>Session</h2>', table(counters(report.session)), kinds(report.session));
  return parts.join('\n');
}

/** A whole page, with a Refresh and a Raw JSON button posting `refresh` / `raw` to the extension. */
export function statsPage(report: Report, uri: string | undefined, nonce: string, cspSource: string, when: Date): string {
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src ${cspSource} 'nonce-${nonce}'; script-src 'nonce-${nonce}';">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Bielik Stats</title>
<style nonce="${nonce}">
body { font-family: var(--vscode-font-family); color: var(--vscode-foreground); padding: 0 1em; }
table { border-collapse: collapse; margin: .3em 0 1em; }
th, td { text-align: left; padding: .2em .8em .2em 0; vertical-align: top; }
th[scope=row] { font-weight: 600; white-space: nowrap; }
table.grid td { text-align: right; }
ul { margin: 0; padding-left: 1.2em; }
.error { color: var(--vscode-errorForeground); }
.bar { display: flex; gap: .5em; align-items: center; margin-top: 1em; }
button { background: var(--vscode-button-background); color: var(--vscode-button-foreground); border: none; padding: .3em .9em; cursor: pointer; }
button:hover { background: var(--vscode-button-hoverBackground); }
.when { color: var(--vscode-descriptionForeground); }
</style></head>
<body>
<div class="bar"><button id="refresh">Refresh</button><button id="raw">Raw JSON</button>
<span class="when">as of ${esc(when.toLocaleTimeString())}</span></div>
${statsBody(report, uri)}
<script nonce="${nonce}">
const vscode = acquireVsCodeApi();
for (const id of ['refresh', 'raw']) document.getElementById(id).addEventListener('click', () => vscode.postMessage({ command: id }));
</script>
</body></html>`;
}
