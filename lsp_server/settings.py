"""Server configuration: the engine's Settings plus what only the language server needs.

Clients send one flat object (initializationOptions or workspace/didChangeConfiguration, either
bare or under a "bielik" section) with camelCase or snake_case keys. A bad value raises
ConfigError with a message for the user; the caller keeps the old configuration. Both tables
are declared with decoder.schema, which also gives the editors theirs (scripts/gen_settings.py).
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, replace

from decoder.config import SCHEMA as ENGINE_SCHEMA
from decoder.config import Settings
from decoder.schema import ConfigError, Entry, camel, entries, setting, snake, validate

SECTION = "bielik"
# The grammar checker's diagnostic codes (polish/rules.NAMES, grammar.CERTAIN and ASKED, "model"):
# what grammarDisabledRules may name. Kept here so the settings' docs need no import of polish/.
GRAMMAR_CODES = (
    "model", "nie-razem", "nie-osobno", "w-we", "z-ze", "przecinek", "data", "tę-tą", "te-to",
    "dwiema", "rzeczpospolita", "żebym", "złoty", "przyimek-razem", "osoba", "zbiorowy", "razem",
)  # fmt: skip
# Prose formats: spell-checked by default (code files are not: identifiers are no prose).
SPELLING_LANGUAGES = (
    "plaintext", "markdown", "latex", "tex", "restructuredtext", "asciidoc", "org", "typst",
    "gitcommit", "git-commit", "text", "mail", "html",
)  # fmt: skip


@dataclass(frozen=True)
class ServerOptions:
    """The language server's defaults table, named for what the user notices."""

    # 0: the editors wait for a pause themselves (VS Code 50 ms, our Neovim plugin 20 ms), and a
    # request superseded by the next keystroke stops at its next pass.
    debounce_ms: int = setting(0, "wait this long for more typing before generating", minimum=0)
    suggestion_ms: int = setting(
        80,
        "a new suggestion shows about this long after you stop typing, once it holds a whole "
        "word (twice as long after: whatever it holds, even part of a word); the rest is "
        "prepared behind it",
        minimum=0,
    )
    time_budget_ms: int = setting(
        2500, "a suggestion arrives at most this long after its request", minimum=0
    )
    prepare_next: bool = setting(True, "while you read a suggestion, prepare the next one")
    inline_max_tokens: int = setting(24, "token budget of one inline suggestion", minimum=1)
    continue_max_tokens: int = setting(128, "default budget of continueDocument", minimum=1)
    max_prompt_chars: int = setting(8000, "context kept before the cursor", minimum=1)
    suffix_chars: int = setting(
        400,
        "text after the cursor the model reads first, so that a suggestion leads into it (0: none)",
        minimum=0,
    )
    ring: bool = setting(
        True,
        "context from elsewhere: chunks of the other open documents and of places recently "
        "edited, the most similar to the text at the cursor, read before the document's own",
    )
    ring_chunks: int = setting(2, "how many chunks of context from elsewhere", minimum=1)
    ring_chunk_chars: int = setting(
        400, "size of one chunk of context from elsewhere, in characters", minimum=64
    )
    load_timeout_s: int = setting(900, "a model load taking longer ends in an error", minimum=1)
    languages: tuple[str, ...] = setting((), "languageIds to serve (empty: all)")
    globs: tuple[str, ...] = setting((), "file path globs to serve (empty: all)")
    enabled: bool = setting(True, "serve completions at all")
    spelling: bool = setting(
        True, "Polish spelling diagnostics, with quick fixes (docs/spelling.md)"
    )
    spelling_languages: tuple[str, ...] = setting(
        SPELLING_LANGUAGES, "languageIds whose documents are spell-checked (empty: all)"
    )
    spelling_model: bool = setting(
        True,
        "the model reads the sentence: it ranks corrections and questions common words that a "
        "far likelier near form would replace (false: the dictionary alone)",
    )
    spelling_delay_ms: int = setting(
        400, "wait this long after an edit before checking its paragraph again", minimum=0
    )
    spelling_words: tuple[str, ...] = setting(
        (),
        "words accepted with all their inflected forms, besides the user and workspace "
        "dictionaries that 'Add to dictionary' writes",
    )
    grammar: bool = setting(
        True,
        "Polish grammar diagnostics: agreement and inflection (Morfeusz and the model), "
        "'nie' together or apart, w/we, z/ze, commas, with quick fixes (docs/grammar.md); "
        "in the languages spellingLanguages names",
    )
    grammar_model: bool = setting(
        True,
        "the model weighs the forms of a word that would agree with its neighbours (false: "
        "the certain rules alone)",
    )
    grammar_disabled_rules: tuple[str, ...] = setting(
        (),
        "grammar diagnostic codes not reported: " + ", ".join(GRAMMAR_CODES),
    )

    def __post_init__(self) -> None:
        validate(self, "server")
        unknown = [r for r in self.grammar_disabled_rules if r not in GRAMMAR_CODES]
        if unknown:
            raise ConfigError(
                f"grammarDisabledRules: unknown rule {unknown[0]!r} (the codes are "
                f"{', '.join(GRAMMAR_CODES)})"
            )

    def checks_grammar(self, language_id: str | None) -> bool:
        """Whether a document of this language gets grammar diagnostics."""
        languages = self.spelling_languages
        return self.grammar and (not languages or language_id in languages)

    def spells(self, language_id: str | None) -> bool:
        """Whether a document of this language gets spelling diagnostics."""
        languages = self.spelling_languages
        return self.spelling and (not languages or language_id in languages)

    def serves(self, uri: str, language_id: str | None) -> bool:
        """Whether completions are wanted for this document."""
        if not self.enabled:
            return False
        if self.languages and language_id not in self.languages:
            return False
        path = uri.split("://", 1)[-1]
        return not self.globs or any(fnmatch.fnmatch(path, g) for g in self.globs)


SERVER_SCHEMA: tuple[Entry, ...] = entries(ServerOptions, "server")
# Every setting a client may set, by its snake_case name.
CLIENT_SCHEMA: dict[str, Entry] = {
    e.name: e for e in (*ENGINE_SCHEMA, *SERVER_SCHEMA) if e.meta.clients
}


@dataclass(frozen=True)
class Config:
    engine: Settings
    server: ServerOptions

    def updated(self, values: object) -> Config:
        """A copy with a client's settings object applied; ConfigError names the bad key.

        null means "back to the default".
        """
        if values is None:
            return self
        if not isinstance(values, dict):
            raise ConfigError(f"settings must be an object, not {type(values).__name__}")
        if isinstance(values.get(SECTION), dict):
            values = values[SECTION]
        changes: dict[str, dict] = {"engine": {}, "server": {}}
        for key, value in values.items():
            entry = CLIENT_SCHEMA.get(snake(key))
            if entry is None:
                raise ConfigError(f"unknown setting {key!r}")
            stored = entry.default if value is None else entry.check(value, as_name=key)
            changes[entry.scope][entry.name] = stored
        engine = replace(self.engine, **{k: v for k, v in changes["engine"].items() if v is None})
        return Config(engine.updated(changes["engine"]), replace(self.server, **changes["server"]))

    def describe(self) -> dict:
        """The effective configuration, camelCase, as clients write it."""
        return {
            e.camel: getattr(self.engine if e.scope == "engine" else self.server, e.name)
            for e in CLIENT_SCHEMA.values()
        }


def needs_reload(old: Settings, new: Settings) -> bool:
    """Whether a settings change means loading models or reconnecting (the rest applies now)."""
    return any(entry.reloads(old, new) for entry in ENGINE_SCHEMA)


__all__ = ["SECTION", "Config", "ServerOptions", "camel", "needs_reload", "snake"]
