"""Errors the user can fix: printed as one line (`bielik-lsp: error: ...`), exit code 2."""


class UserError(Exception):
    """A bad file, flag or situation the user can fix; never shown as a traceback."""
