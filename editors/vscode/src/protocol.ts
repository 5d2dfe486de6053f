/**
 * The server's custom protocol: command names and arguments, the `bielik/status` payload.
 * Names match lsp_server/commands.py and lsp_server/status.py.
 */

export const SERVER_COMMANDS = {
  continueDocument: 'bielik.continueDocument',
  toggleSpeculation: 'bielik.toggleSpeculation',
  showStats: 'bielik.showStats',
  /** Each suggestion carries it; VS Code runs it when the suggestion is accepted. */
  accepted: 'bielik.accepted',
} as const;

/** The extension's own VS Code command ids. They differ from the server's command names because
 * vscode-languageclient registers a VS Code command for every command the server advertises. */
export const CLIENT_COMMANDS = {
  continueDocument: 'bielik.client.continueDocument',
  toggleSpeculation: 'bielik.client.toggleSpeculation',
  showStats: 'bielik.client.showStats',
  restart: 'bielik.client.restart',
  showLog: 'bielik.client.showLog',
  acceptNextWord: 'bielik.client.acceptNextWord',
  acceptNextLine: 'bielik.client.acceptNextLine',
  installServer: 'bielik.client.installServer',
} as const;

export const STATUS_NOTIFICATION = 'bielik/status';

export type SpeculationMode = 'on' | 'off' | 'auto';
export const MODES: SpeculationMode[] = ['auto', 'on', 'off'];

export interface Position {
  line: number;
  character: number;
}

/** The per-file part of `bielik/status`: speculation mode, the policy's reasons, last speed. */
export interface FileStatus {
  speculation?: SpeculationMode;
  speculationSource?: string;
  drafter?: string;
  reason?: string;
  policyReasons?: string[];
  acceptanceRate?: number;
  tokensPerSecond?: number;
  charsPerSecond?: number; // Unicode characters of committed text per second
  prefilledTokens?: number;
}

/** `bielik/status` as the server sends it (per-file fields only when `uri` is present). */
export interface StatusPayload extends FileStatus {
  state: 'loading' | 'ready' | 'error' | string;
  message: string;
  uri?: string;
}

export interface ToggleResult {
  uri: string;
  speculation: SpeculationMode;
  drafter: string;
  reason: string;
}

export interface ContinueResult {
  uri: string;
  text: string;
  stopReason: string;
  stats?: Record<string, unknown>;
}

export interface ExecuteCommandParams {
  command: string;
  arguments: unknown[];
}

/** What the extension sends for "continue document": the cursor, and a token budget if given. */
export function continueParams(uri: string, position?: Position, maxTokens?: number): ExecuteCommandParams {
  const args: Record<string, unknown> = { uri };
  if (position) args.position = { line: position.line, character: position.character };
  if (maxTokens !== undefined) args.maxTokens = maxTokens;
  return { command: SERVER_COMMANDS.continueDocument, arguments: [args] };
}

/** Set a file's speculation mode; without a mode the server cycles auto -> off -> on -> auto. */
export function toggleParams(uri: string, mode?: SpeculationMode): ExecuteCommandParams {
  return { command: SERVER_COMMANDS.toggleSpeculation, arguments: [mode ? { uri, mode } : { uri }] };
}

/** Statistics for one file (and the session), or for all files. */
export function statsParams(uri?: string): ExecuteCommandParams {
  return { command: SERVER_COMMANDS.showStats, arguments: uri ? [{ uri }] : [] };
}

/** The mode the server's cycle gives next (mirrors lsp_server/commands.py). */
export function nextMode(mode: SpeculationMode | undefined): SpeculationMode {
  return ({ auto: 'off', off: 'on', on: 'auto' } as const)[mode ?? 'auto'];
}
