/**
 * Inline completions as they pass through the extension, and what it tells the server when the
 * user takes part of one. VS Code runs an item's command only when the whole of it is accepted;
 * accept next word / next line call no extension code outside proposed API, so the extension
 * wraps those two commands and reports the part itself. Pure logic (no `vscode` import).
 */

export const PARTIAL_ACCEPT = 'textDocument/didPartiallyAcceptCompletion';

/** The LSP form of a command (what the server attached to an item). */
export interface LspCommand {
  title: string;
  command: string;
  arguments?: unknown[];
}

/** An item VS Code got for a document: its text, where it starts, its command. */
export interface ShownItem {
  insertText: string;
  /** Offset (UTF-16 code units) in the document where the item's text starts. */
  start: number;
  command?: LspCommand;
}

export interface PartialAccept {
  item: ShownItem;
  /** How much of the item the document holds now (typed or accepted), in UTF-16 code units. */
  acceptedLength: number;
}

/**
 * The item the document continues at `cursor` after a partial accept, and how much of it is
 * in. None when no item fits or one is complete (then VS Code accepted it whole and ran its
 * command). Items that begin alike are told apart only by what follows: the first one wins.
 */
export function partialAccept(items: ShownItem[], text: string, cursor: number): PartialAccept | undefined {
  for (const item of items) {
    if (cursor <= item.start) continue;
    const held = text.slice(item.start, cursor);
    if (held.length < item.insertText.length && item.insertText.startsWith(held)) {
      return { item, acceptedLength: held.length };
    }
  }
  return undefined;
}

/** textDocument/didPartiallyAcceptCompletion's params: the server finds the item by its command. */
export function partialAcceptParams(accept: PartialAccept): { item: { insertText: string; command?: LspCommand }; acceptedLength: number } {
  const { insertText, command } = accept.item;
  return { item: { insertText, command }, acceptedLength: accept.acceptedLength };
}

/** VS Code's commands the extension wraps, by the extension's command that wraps each. */
export const PARTS = {
  word: 'editor.action.inlineSuggest.acceptNextWord',
  line: 'editor.action.inlineSuggest.acceptNextLine',
} as const;
