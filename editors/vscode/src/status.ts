/**
 * The status bar's model: the last `bielik/status` for the server and for each file, rendered
 * to the item's text and tooltip. Pure logic; extension.ts puts the result on a StatusBarItem.
 */
import { FileStatus, SpeculationMode, StatusPayload } from './protocol';

export interface Rendered {
  text: string;
  tooltip: string;
  /** 'error' when the item should use the error background. */
  severity: 'normal' | 'warning' | 'error';
}

export class StatusModel {
  state = 'starting';
  message = 'starting the server';
  readonly files = new Map<string, FileStatus>();

  /** Apply one `bielik/status` notification. */
  update(payload: StatusPayload): void {
    if (!payload || typeof payload !== 'object') return;
    if (typeof payload.state === 'string') this.state = payload.state;
    if (typeof payload.message === 'string') this.message = payload.message;
    if (typeof payload.uri === 'string') {
      const f = { ...(this.files.get(payload.uri) ?? {}) };
      for (const key of ['speculation', 'speculationSource', 'drafter', 'reason', 'policyReasons',
        'acceptanceRate', 'tokensPerSecond', 'charsPerSecond', 'prefilledTokens'] as const) {
        if (payload[key] !== undefined) (f as Record<string, unknown>)[key] = payload[key];
      }
      this.files.set(payload.uri, f);
    }
  }

  /** A toggle's result, before the server's status notification arrives. */
  setSpeculation(uri: string, mode: SpeculationMode, reason?: string): void {
    const f = { ...(this.files.get(uri) ?? {}), speculation: mode, speculationSource: 'toggle' };
    if (reason !== undefined) f.reason = reason;
    this.files.set(uri, f);
  }

  /** The server stopped or failed to start (not a `bielik/status`). */
  setState(state: string, message: string): void {
    this.state = state;
    this.message = message;
  }

  forget(uri: string): void {
    this.files.delete(uri);
  }

  render(activeUri?: string): Rendered {
    const f = activeUri ? this.files.get(activeUri) : undefined;
    const icon = ({
      loading: '$(sync~spin)', starting: '$(sync~spin)', installing: '$(sync~spin)', ready: '$(feather)', error: '$(error)',
      stopped: '$(circle-slash)', missing: '$(cloud-download)',
    } as Record<string, string>)[this.state] ?? '$(question)';
    const parts = [`${icon} Bielik`];
    if (this.state === 'ready' && activeUri) {
      parts.push(`spec:${f?.speculation ?? 'auto'}`);
      if (f?.acceptanceRate !== undefined && f.acceptanceRate > 0) parts.push(percent(f.acceptanceRate));
      if (f?.tokensPerSecond !== undefined && f.tokensPerSecond > 0) parts.push(`${f.tokensPerSecond.toFixed(1)} tok/s`);
      if (f?.charsPerSecond !== undefined && f.charsPerSecond > 0) parts.push(`${f.charsPerSecond.toFixed(0)} chars/s`);
    } else if (this.state === 'missing') {
      parts.push('not installed');
    } else if (this.state !== 'ready') {
      parts.push(this.state);
      // What a long first start is doing (converting, building caches), as the server says it.
      if (this.state === 'loading' && this.message && this.message !== 'model loading') parts.push(`(${clip(this.message, 48)})`);
    }
    const lines = [`Bielik: model ${this.state}${this.message && this.message !== `model ${this.state}` ? ` (${this.message})` : ''}`];
    if (activeUri) {
      if (f?.speculation) {
        lines.push(`Speculation: ${f.speculation}${f.speculationSource ? ` (${f.speculationSource})` : ''}`);
      } else {
        lines.push('Speculation: auto (no suggestion yet for this file)');
      }
      if (f?.drafter) lines.push(`Drafter: ${f.drafter}`);
      if (f?.reason) lines.push(`Why: ${f.reason}`);
      if (f?.policyReasons?.length) lines.push(`Policy: ${f.policyReasons.join('; ')}`);
      if (f?.acceptanceRate !== undefined) lines.push(`Last acceptance rate: ${percent(f.acceptanceRate)}`);
      if (f?.tokensPerSecond !== undefined) lines.push(`Last speed: ${f.tokensPerSecond.toFixed(1)} tokens/s${f.charsPerSecond !== undefined ? `, ${f.charsPerSecond.toFixed(1)} characters/s` : ''}`);
      if (f?.prefilledTokens !== undefined) lines.push(`Last prefill: ${f.prefilledTokens} tokens`);
    }
    lines.push('', ({ error: 'Click to show the log.', missing: 'Click to install the server.' } as Record<string, string>)[this.state]
      ?? 'Click to toggle speculation for this file.');
    const severity = this.state === 'error' ? 'error' : this.state === 'stopped' ? 'warning' : 'normal';
    return { text: parts.join(' '), tooltip: lines.join('\n'), severity };
  }
}

function clip(text: string, max: number): string {
  const line = text.split('\n')[0];
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

export function percent(x: number): string {
  return `${Math.round(x * 100)}%`;
}
