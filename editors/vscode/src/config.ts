/**
 * Settings: which `bielik.*` keys the server understands, what the extension sends it, and how
 * the server is started. Pure logic (no `vscode` import) so that tests and the Node integration
 * test use exactly what the extension uses.
 */

/** Server settings (camelCase, as the server's initializationOptions want them) with the
 * server's defaults. `null` means the server decides (its config file, then its own default). */
export const SERVER_SETTINGS: Readonly<Record<string, unknown>> = {
  preset: null,
  target: null,
  drafterModel: null,
  drafter: 'auto',
  k: 8,
  temperature: 0,
  topP: 1,
  seed: null,
  dtype: null,
  translation: 'anchored',
  backend: 'auto',
  drafterBackend: null,
  threads: null,
  gpuLayers: null,
  prefixCacheMb: 512,
  debounceMs: 150,
  timeBudgetMs: 2500,
  pauseMs: 1000,
  firstAfterPauseMs: 250,
  prepareNext: true,
  inlineMaxTokens: 24,
  continueMaxTokens: 128,
  maxPromptChars: 8000,
  loadTimeoutS: 900,
  languages: ['markdown', 'plaintext', 'latex'],
  globs: [],
  enabled: true,
};

/** Client-only settings: changing one restarts the server. */
export const RESTART_KEYS = ['server.command', 'server.args', 'languages'];

export const DEFAULT_LANGUAGES = ['markdown', 'plaintext', 'latex'];

/** What `WorkspaceConfiguration.inspect` tells about one key (the parts we use). */
export interface Inspected<T = unknown> {
  defaultValue?: T;
  globalValue?: T;
  workspaceValue?: T;
  workspaceFolderValue?: T;
}

export type Inspect = (key: string) => Inspected | undefined;

function explicit(info: Inspected | undefined): unknown {
  if (!info) return undefined;
  for (const v of [info.workspaceFolderValue, info.workspaceValue, info.globalValue]) {
    if (v !== undefined) return v;
  }
  return undefined;
}

/**
 * The settings object for the server: only what the user set explicitly (so that the server's
 * own config file keeps working for everything else), never a null (the server rejects nulls).
 * `languages` is always sent: the client starts the server only for those languages anyway.
 */
export function serverSettings(inspect: Inspect): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(SERVER_SETTINGS)) {
    const value = explicit(inspect(key));
    if (value !== undefined && value !== null) out[key] = value;
  }
  if (out.languages === undefined) out.languages = languages(inspect);
  return out;
}

/**
 * The object for `workspace/didChangeConfiguration` after a change: the explicit settings, plus
 * the server's default for every key the user has just unset (the server merges updates into its
 * current configuration, so an unset key must be sent back to its default). Returns `restart`
 * when a key went back to a "server decides" default that cannot be sent (null).
 */
export function changedSettings(
  previous: Record<string, unknown>,
  inspect: Inspect,
): { settings: Record<string, unknown>; restart: boolean } {
  const settings = serverSettings(inspect);
  let restart = false;
  for (const key of Object.keys(previous)) {
    if (key in settings) continue;
    const fallback = SERVER_SETTINGS[key];
    if (fallback === null || fallback === undefined) restart = true;
    else settings[key] = fallback;
  }
  return { settings, restart };
}

export function languages(inspect: Inspect): string[] {
  const value = explicit(inspect('languages'));
  return Array.isArray(value) && value.every((v) => typeof v === 'string') ? value : DEFAULT_LANGUAGES;
}

export interface ServerCommand {
  command: string;
  args: string[];
}

/** `bielik.server.command` and `bielik.server.args`, with a leading `~/` expanded. */
export function serverCommand(inspect: Inspect, home?: string): ServerCommand {
  let command = explicit(inspect('server.command'));
  let args = explicit(inspect('server.args'));
  if (typeof command !== 'string' || !command.trim()) command = 'bielik-lsp';
  if (!Array.isArray(args) || !args.every((a) => typeof a === 'string')) args = ['serve'];
  let cmd = (command as string).trim();
  if (home && cmd.startsWith('~/')) cmd = home + cmd.slice(1);
  return { command: cmd, args: args as string[] };
}

/** Document selector for the client: the configured languages, files and unsaved buffers. */
export function documentSelector(langs: string[]): { language: string; scheme: string }[] {
  const out: { language: string; scheme: string }[] = [];
  for (const language of langs) {
    for (const scheme of ['file', 'untitled']) out.push({ language, scheme });
  }
  return out;
}

/** Whether a change of `bielik.*` (given `affects(section)`) needs a server restart. */
export function needsRestart(affects: (section: string) => boolean): boolean {
  return RESTART_KEYS.some((key) => affects(`bielik.${key}`));
}
