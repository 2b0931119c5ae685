"""Local files as a source: every .csv or .parquet file in a folder, or in its subfolders, is a dataset.

`--sources local:PATH`. PATH is a table file, or a folder whose tables and whose subfolders' tables
are candidates: `local/<stem>` for a table in PATH itself, `local/<folder>` for the one table of a
subfolder (one subfolder per dataset, e.g. a folder of `kaggle datasets download --unzip` results),
`local/<folder>/<path without suffix>` when the subfolder holds several. Hidden folders, folders
reached through a link and task trees daregen published (a `question_list.json`) are not entered.

A dataset's documentation, in the order its fields win:
- a sidecar `<name>.json` beside the table with the DatasetRecord fields (title, description,
  column_descriptions, license, target_hint, ...): daregen's own convention, for curators and tests;
- the cards of sourcing.cards (dataset-metadata.json, README.md, metadata.txt, DESCR, ...) in the
  table's folder and the folders above it up to its dataset folder (for a table in PATH itself, the
  folder-wide names only when it is PATH's one table; `<stem>.md`/`<stem>.rst` always), fitted to the
  table's header. What a card loses (an entry for an absent column, a second entry) is logged, one line each.
"""

from __future__ import annotations

import io
import logging
import os
import re
from pathlib import Path

import pandas as pd

from pipeline.core.names import QUESTION_LIST
from pipeline.core.safe_io import (InputLimits, check_table_file, read_bytes_inside, read_head_inside,
                                   read_json_inside, regular_file_inside)
from pipeline.core.records import DatasetRecord
from sourcing.cards import CARD_FILES, decode_card, fit_card, merge_cards, read_card

_LOG = logging.getLogger(__name__)
_HEADER_BYTES = 1 << 20  # a header line longer than this is not read for fitting a card (the docs stay as spelled)
_MAX_DEPTH = 4  # folders below a dataset folder searched for its tables (a zip's own folder inside)

_SUFFIXES = (".csv", ".parquet")
_DOC_FIELDS = {"title", "subtitle", "description", "about_file", "column_descriptions", "license", "url", "owner",
               "version", "tags", "usability_rating", "last_updated", "target_hint", "outcome_columns"}


def read_sidecar(data_path: Path, root: Path, limits: InputLimits, fields: set[str]) -> dict:
    """The `<name>.json` beside a data file, read inside `root` under the limits: a JSON object of
    known fields, or {} when there is none. A link, a special file, another shape or an unknown field
    is a ValueError (the dataset's rejection), whichever source reads it."""
    doc_path = data_path.with_suffix(".json")
    doc = read_json_inside(doc_path, root, limits) if os.path.lexists(doc_path) else {}
    if not isinstance(doc, dict):
        raise ValueError(f"{doc_path.name}: not a JSON object")
    unknown = set(doc) - fields
    if unknown:
        raise ValueError(f"{doc_path.name}: unknown fields {sorted(unknown)}")
    return doc


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9.-]+", "-", text.lower()).strip("-") or "dataset"


def _dataset_folder(path: Path) -> bool:
    """Whether a subfolder may hold datasets: not hidden (a cache), not reached through a link, and no
    task tree daregen published (its task files are no one's source data, though they are tables)."""
    return path.is_dir() and not path.is_symlink() and not path.name.startswith(".") \
        and not (path / QUESTION_LIST).exists()


def _tables_below(folder: Path, depth: int = 0) -> list[Path]:
    """Table files below `folder`, sorted; folders reached through a link are not entered."""
    found: list[Path] = []
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        if entry.is_dir(follow_symlinks=False):
            if depth < _MAX_DEPTH and _dataset_folder(Path(entry.path)):
                found += _tables_below(Path(entry.path), depth + 1)
        elif Path(entry.name).suffix.lower() in _SUFFIXES:
            found.append(Path(entry.path))
    return found


def header_columns(path: Path, root: Path) -> list[str] | None:
    """The column names of a table file as its reader will name them, read from the header alone;
    None when the header is not in the first megabyte (a card is then kept as spelled)."""
    if path.suffix.lower() == ".parquet":
        import pyarrow.parquet as pq

        try:
            return list(pq.read_schema(regular_file_inside(path, root)).names)
        except Exception:  # a broken file is load_table's rejection, with its reason
            return None
    head = read_head_inside(path, root, _HEADER_BYTES)
    if len(head) == _HEADER_BYTES and b"\n" not in head:
        return None
    try:
        return [str(c) for c in pd.read_csv(io.BytesIO(head), nrows=0).columns]
    except Exception:
        return None


class LocalFilesSource:
    """A folder someone else may have written: only regular files inside it are read (a link may point
    at another folder's data, a FIFO would hang the build), each within `limits`."""

    key = "local"

    def __init__(self, path: str | Path, limits: InputLimits | None = None):
        self.path = Path(path)
        self.limits = limits or InputLimits()
        if not self.path.exists():
            raise ValueError(f"local source: {self.path} does not exist")

    @property
    def _root(self) -> Path:
        return self.path.parent if self.path.is_file() else self.path

    def _files(self) -> dict[str, Path]:
        return {ref: path for ref, (path, _) in self._datasets().items()}

    def _datasets(self) -> dict[str, tuple[Path, Path]]:
        """ref -> (table file, its dataset folder)."""
        if self.path.is_file():
            files = [self.path] if self.path.suffix.lower() in _SUFFIXES else []
            return {f"local/{f.stem}": (f, f.parent) for f in files}
        out: dict[str, tuple[Path, Path]] = {}
        subfolders = []
        for entry in sorted(self.path.iterdir()):
            if entry.is_dir():
                if _dataset_folder(entry):
                    subfolders.append(entry)
            elif entry.suffix.lower() in _SUFFIXES:
                out[f"local/{entry.stem}"] = (entry, self.path)
        for folder in subfolders:
            tables = _tables_below(folder)
            for table in tables:
                ref = f"local/{folder.name}"
                if len(tables) > 1 or ref in out:
                    ref = f"local/{table.relative_to(self.path).with_suffix('').as_posix()}"
                out[ref] = (table, folder)
        return dict(sorted(out.items()))

    def candidates(self) -> list[str]:
        return sorted(self._files())

    def _file(self, ref: str) -> Path:
        try:
            return self._files()[ref]
        except KeyError:
            raise ValueError(f"local source: no file for {ref!r} in {self.path}") from None

    def _card_paths(self, table: Path, folder: Path) -> list[Path]:
        """The card files of `table`, nearest folder first, each folder's in CARD_FILES order."""
        alone = folder != self._root or sum(1 for p, f in self._datasets().values() if f == folder) == 1
        paths: list[Path] = []
        current = table.parent
        while True:
            names = [n.format(stem=table.stem) for n in CARD_FILES if alone or "{stem}" in n]
            listing = {p.name for p in current.iterdir()}
            paths += [current / n for n in dict.fromkeys(names) if n in listing]
            if current == folder or current == self._root:
                return paths
            current = current.parent

    def _card_fields(self, table: Path, folder: Path) -> dict:
        """The record fields the table's cards give (none: {}); a card that cannot be read rejects the dataset."""
        cards = []
        for path in self._card_paths(table, folder):
            data = read_bytes_inside(path, self._root, self.limits.max_card_bytes, limit_name="max_card_bytes")
            text, notes = decode_card(path.name, data)
            card = read_card(path.name, text)
            cards.append(card.model_copy(update={"notes": notes + card.notes}))
        card = merge_cards(cards)
        if card is None:
            return {}
        fields, notes = fit_card(card, table.name, header_columns(table, self._root))
        for note in notes:
            _LOG.warning("%s: %s", table.relative_to(self._root).as_posix(), note)
        return fields

    def record(self, ref: str) -> DatasetRecord:
        try:
            path, folder = self._datasets()[ref]
        except KeyError:
            raise ValueError(f"local source: no file for {ref!r} in {self.path}") from None
        doc = read_sidecar(path, self._root, self.limits, _DOC_FIELDS)
        name = ref.removeprefix("local/")
        fields = {"title": folder.name if folder != self._root else path.stem,
                  **self._card_fields(path, folder), **doc}
        for listed in ("tags", "outcome_columns"):
            if listed in fields:
                fields[listed] = tuple(fields[listed])
        return DatasetRecord(ref=ref, source=self.key, slug=f"local_{_slug(name)}", **fields)

    def load_table(self, ref: str) -> pd.DataFrame:
        path = self._file(ref)
        check_table_file(path, self._root, path.suffix.lower().lstrip("."), self.limits)  # UnsafeInput: a rejection
        try:
            return pd.read_parquet(path) if path.suffix.lower() == ".parquet" else pd.read_csv(path)
        except Exception as exc:  # a malformed file is a rejection of that dataset, not a crash
            raise ValueError(f"cannot read {path.name}: {exc}") from exc
