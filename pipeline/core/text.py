"""Text shown to a person: one function, importable without pandas or pydantic (the CLI prints its
one-line errors with it before anything heavy loads)."""

from __future__ import annotations


def printable(text: str) -> str:
    """`text` for a terminal or a one-line report: control characters (an escape sequence can move the
    cursor and overprint FAIL with PASS; a newline forges a line) shown escaped, the rest as is."""
    return "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in str(text))
