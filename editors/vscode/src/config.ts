/**
 * Settings: which `bielik.*` keys the server understands, what the extension sends it, and how
 * the server is started. Pure logic (no `vscode` import) so that tests and the Node integration
 * test use exactly what the extension uses.
 */

import { DEFAULT_LANGUAGES, KINDS, RESTRICTED_KEYS, SERVER_SETTINGS } from './settings';
import type { Kind } from './settings';

export { DEFAULT_LANGUAGES, KINDS, RESTRICTED_KEYS, SERVER_SETTINGS };
export type { Kind };

/** The JSON type the server wants for a key (settings.ts, generated from the server's schema). */
export function kindOf(key: string): Kind {
  return KINDS[key];
}

function hasKind(value: unknown, kind: Kind): boolean {
  if (kind === 'strings') return Array.isArray(value) && value.every((v) => typeof v === 'string');
  if (kind === 'integer') return Number.isInteger(value);
  return typeof value === kind;
}

/** Client-only settings: changing one restarts the server. */
export const RESTART_KEYS = ['server.command', 'server.args', 'languages'];

/** What `WorkspaceConfiguration.inspect` tells about one key (the parts we use). */
export interface Inspected<T = unknown> {
  defaultValue?: T;
  globalValue?: T;
  workspaceValue?: T;
  workspaceFolderValue?: T;
}

export type Inspect = (key: string) => Inspected | undefined;

/** The value set explicitly: folder over workspace over user; `userOnly`: the user's alone. */
function explicit(info: Inspected | undefined, userOnly = false): unknown {
  if (!info) return undefined;
  const layers = userOnly ? [info.globalValue] : [info.workspaceFolderValue, info.workspaceValue, info.globalValue];
  for (const v of layers) {
    if (v !== undefined) return v;
  }
  return undefined;
}

export interface ReadSettings {
  settings: Record<string, unknown>;
  /** One line per value left out for having the wrong type. */
  problems: string[];
}

/**
 * The settings object for the server: only what the user set explicitly (so that the server's
 * own config file keeps working for everything else), never a null (the server rejects nulls),
 * never a value of the wrong type (VS Code only warns in its editor: a `"globs": "*.md"` would
 * reach the server as a string). `languages` is always sent: the client starts the server only
 * for those languages anyway. `trusted`: whether the workspace is trusted.
 */
export function readSettings(inspect: Inspect, trusted = true): ReadSettings {
  const settings: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const key of Object.keys(SERVER_SETTINGS)) {
    const value = explicit(inspect(key), !trusted && RESTRICTED_KEYS.includes(key));
    if (value === undefined || value === null) continue;
    const kind = kindOf(key);
    if (hasKind(value, kind)) settings[key] = value;
    else problems.push(`bielik.${key} must be ${describeKind(kind)}, not ${JSON.stringify(value)}; ignored`);
  }
  if (settings.languages === undefined) settings.languages = languages(inspect);
  return { settings, problems };
}

export function serverSettings(inspect: Inspect, trusted = true): Record<string, unknown> {
  return readSettings(inspect, trusted).settings;
}

function describeKind(kind: Kind): string {
  if (kind === 'strings') return 'a list of strings';
  return kind === 'integer' ? 'an integer' : `a ${kind}`;
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
  trusted = true,
): { settings: Record<string, unknown>; restart: boolean } {
  const settings = serverSettings(inspect, trusted);
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
  return Array.isArray(value) && value.every((v) => typeof v === 'string') ? value : [...DEFAULT_LANGUAGES];
}

export interface ServerCommand {
  /** `bielik.server.command` as set (undefined: not set; launch.ts looks for bielik-lsp). */
  command: string | undefined;
  args: string[];
}

/** `bielik.server.command` and `bielik.server.args`. Both are machine-scoped: only the user's
 * (or the remote machine's) settings count, so opening a folder never chooses which program
 * runs. */
export function serverCommand(inspect: Inspect): ServerCommand {
  const command = explicit(inspect('server.command'), true);
  let args = explicit(inspect('server.args'), true);
  if (!Array.isArray(args) || !args.every((a) => typeof a === 'string')) args = ['serve'];
  const given = typeof command === 'string' && command.trim() ? command.trim() : undefined;
  return { command: given, args: args as string[] };
}

/** Where `bielik.server.installSource` / `installSourceRemote` say to install the server from
 * (machine settings, like the command: only the user's count). */
export function installSources(inspect: Inspect): { source: string; remote: string } {
  const value = (key: string, fallback: string) => {
    const v = explicit(inspect(key), true);
    return typeof v === 'string' && v.trim() ? v.trim() : fallback;
  };
  return { source: value('server.installSource', 'bielik-lsp'), remote: value('server.installSourceRemote', 'bielik-lsp-remote') };
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
