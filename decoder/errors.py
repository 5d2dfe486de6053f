"""Errors as users read them: one line, the cause first."""

from __future__ import annotations


def one_line(error: BaseException, limit: int = 300) -> str:
    """`Type: first line of the message`, cut at `limit` characters; the type alone if empty."""
    lines = str(error).strip().splitlines()
    name = type(error).__name__
    return f"{name}: {lines[0][:limit]}" if lines else name
