"""Source adapters by key, and the `--sources` spec parser.

A spec is a comma-separated list of `key` or `key:argument`, e.g. `builtin` or
`builtin,local:data/mine`.
"""

from __future__ import annotations

import functools
from typing import Callable

from sourcing.base import Source


def _builtin(arg: str | None) -> Source:
    from sourcing.builtin import BuiltinSource

    if arg:
        raise ValueError("the builtin source takes no argument")
    return BuiltinSource()


def _local(arg: str | None) -> Source:
    from sourcing.local import LocalFilesSource

    if not arg:
        raise ValueError("the local source needs a path: local:PATH")
    return LocalFilesSource(arg)


SOURCES: dict[str, Callable[[str | None], Source]] = {"builtin": _builtin, "local": _local}


def parse_sources(spec: str) -> list[tuple[str, str | None]]:
    out = []
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        key, _, arg = part.partition(":")
        if key not in SOURCES:
            raise ValueError(f"unknown source {key!r}; known: {', '.join(sorted(SOURCES))}")
        out.append((key, arg or None))
    if not out:
        raise ValueError("no sources given")
    return out


@functools.lru_cache(maxsize=None)
def open_source(key: str, arg: str | None) -> Source:
    """One adapter per (key, argument) per process: adapters cache catalogues and docs."""
    return SOURCES[key](arg)
