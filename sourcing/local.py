"""Local files as a source: every .csv or .parquet file in a folder, or in its subfolders, is a dataset.

`--sources local:PATH`. PATH is a table file, or a folder whose tables and whose subfolders' tables
are candidates: `local/<stem>` for a table in PATH itself, `local/<folder>` for the one table of a
subfolder (one subfolder per dataset, e.g. a folder of `kaggle datasets download --unzip` results),
`local/<folder>/<path without suffix>` when the subfolder holds several. Hidden folders, folders
reached through a link and task trees daregen published (a `question_list.json`) are not entered.
A SQLite database (`.sqlite`, `.sqlite3`, `.db`: many Kaggle downloads are a `database.sqlite` beside
their card) is read by sourcing.sqlite_source, one dataset per analysis table, `REF/<table>`.

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
import stat
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from pipeline.core.names import QUESTION_LIST
from pipeline.core.safe_io import (InputLimits, check_table_file, read_bytes_inside, read_head_inside,
                                   regular_file_inside)
from pipeline.core.records import DatasetRecord
from sourcing.cards import CARD_FILES, decode_card, fit_card, merge_cards, read_card
from sourcing.sidecar import read_sidecar
from sourcing.sqlite_source import DATABASE_SUFFIXES, SQLiteSource

_LOG = logging.getLogger(__name__)
_HEADER_BYTES = 1 << 20  # a header line longer than this is not read for fitting a card (the docs stay as spelled)
_MAX_DEPTH = 4  # folders below a dataset folder searched for its tables (a zip's own folder inside)

_SUFFIXES = (".csv", ".parquet", *DATABASE_SUFFIXES)  # a database: one dataset per analysis table
_DOC_FIELDS = {"title", "subtitle", "description", "about_file", "column_descriptions", "license", "url", "owner",
               "version", "tags", "usability_rating", "last_updated", "target_hint", "outcome_columns"}


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


@dataclass(frozen=True)
class _Dataset:
    path: Path  # the table file, or the database
    folder: Path  # its dataset folder (where its cards are looked for)
    table: str | None = None  # a database's table ("" when the database shows none); None for a table file


def _sqlite_ref(d: _Dataset) -> str:
    """The `sqlite:` source's ref of a database table (its candidates are `sqlite/<stem>/<table>`)."""
    return f"sqlite/{d.path.stem}/{d.table}" if d.table else f"sqlite/{d.path.stem}"


class LocalFilesSource:
    """A folder someone else may have written: only regular files inside it are read (a link may point
    at another folder's data, a FIFO would hang the build), each within `limits`."""

    key = "local"

    def __init__(self, path: str | Path, limits: InputLimits | None = None):
        self.path = Path(path)
        self.limits = limits or InputLimits()
        if not self.path.exists():
            raise ValueError(f"local source: {self.path} does not exist")
        self._databases: dict[Path, SQLiteSource] = {}

    @property
    def _root(self) -> Path:
        return self.path.parent if self.path.is_file() else self.path

    def _files(self) -> dict[str, Path]:
        return {ref: d.path for ref, d in self._datasets().items()}

    def _datasets(self) -> dict[str, _Dataset]:
        """ref -> the dataset's file, its dataset folder and, in a database, its table."""
        if self.path.is_file():
            files = [self.path] if self.path.suffix.lower() in _SUFFIXES else []
            return dict(self._expanded({f"local/{f.stem}": _Dataset(f, f.parent) for f in files}))
        out: dict[str, _Dataset] = {}
        subfolders = []
        for entry in sorted(self.path.iterdir()):
            if entry.is_dir():
                if _dataset_folder(entry):
                    subfolders.append(entry)
            elif entry.suffix.lower() in _SUFFIXES:
                out[f"local/{entry.stem}"] = _Dataset(entry, self.path)
        for folder in subfolders:
            tables = _tables_below(folder)
            for table in tables:
                ref = f"local/{folder.name}"
                if len(tables) > 1 or ref in out:
                    ref = f"local/{table.relative_to(self.path).with_suffix('').as_posix()}"
                out[ref] = _Dataset(table, folder)
        return dict(sorted(self._expanded(out)))

    def _database(self, path: Path) -> SQLiteSource:
        """The database file read as the `sqlite:` source reads it (read-only, its tables within the limits)."""
        if path not in self._databases:
            self._databases[path] = SQLiteSource(path, self.limits)
        return self._databases[path]

    def _expanded(self, found: dict[str, _Dataset]):
        """(ref, dataset) of every table file, a database giving one per analysis table (`REF/TABLE`, the
        `sqlite:` source's candidates): a Kaggle download is often a `database.sqlite` beside its card. A
        database that cannot be read stays one candidate, rejected with the reason when it is loaded."""
        for ref, d in found.items():
            if d.path.suffix.lower() not in DATABASE_SUFFIXES:
                yield ref, d
                continue
            if not stat.S_ISREG(os.lstat(d.path).st_mode):  # a FIFO or a link: never opened; rejected with the reason
                yield ref, _Dataset(d.path, d.folder, "")
                continue
            inner = self._database(d.path).candidates()
            tables = [c.split("/", 2)[2] for c in inner if c.count("/") == 2]
            yield from ([(f"{ref}/{t}", _Dataset(d.path, d.folder, t)) for t in tables]
                        or [(ref, _Dataset(d.path, d.folder, ""))])

    def candidates(self) -> list[str]:
        return sorted(self._files())

    def _card_paths(self, table: Path, folder: Path) -> list[Path]:
        """The card files of `table`, nearest folder first, each folder's in CARD_FILES order."""
        alone = folder != self._root or len({d.path for d in self._datasets().values() if d.folder == folder}) == 1
        paths: list[Path] = []
        current = table.parent
        while True:
            names = [n.format(stem=table.stem) for n in CARD_FILES if alone or "{stem}" in n]
            listing = {p.name for p in current.iterdir()}
            paths += [current / n for n in dict.fromkeys(names) if n in listing]
            if current == folder or current == self._root:
                return paths
            current = current.parent

    def _card_fields(self, table: Path, folder: Path, columns: list[str] | None = None,
                     name: str | None = None) -> dict:
        """The record fields the table's cards give (none: {}); a card that cannot be read rejects the dataset.
        `columns`, `name`: a database table's columns and name (default: the file's header and name)."""
        cards = []
        for path in self._card_paths(table, folder):
            data = read_bytes_inside(path, self._root, self.limits.max_card_bytes, limit_name="max_card_bytes")
            text, notes = decode_card(path.name, data)
            card = read_card(path.name, text)
            cards.append(card.model_copy(update={"notes": notes + card.notes}))
        card = merge_cards(cards)
        if card is None:
            return {}
        fields, notes = fit_card(card, name or table.name, columns if columns is not None
                                 else header_columns(table, self._root))
        for note in notes:
            _LOG.warning("%s: %s", table.relative_to(self._root).as_posix(), note)
        return fields

    def _dataset(self, ref: str) -> _Dataset:
        try:
            return self._datasets()[ref]
        except KeyError:
            raise ValueError(f"local source: no file for {ref!r} in {self.path}") from None

    def _database_record(self, ref: str, d: _Dataset) -> DatasetRecord:
        """The `sqlite:` source's record of the table (its schema, join path, sidecar), under this source's
        ref, with the card of its folder on top (title, description, licence, column entries)."""
        regular_file_inside(d.path, self._root, self.limits.max_file_bytes)  # UnsafeInput: the rejection's reason
        inner = self._database(d.path).record(_sqlite_ref(d))
        card = self._card_fields(d.path, d.folder, list(self._database(d.path).load_columns(_sqlite_ref(d))), d.table)
        fields = {k: v for k, v in card.items() if k not in ("column_descriptions", "title", "description")}
        if "tags" in fields:
            fields["tags"] = tuple(fields["tags"])
        title = f"{card['title']}: {d.table}" if card.get("title") else inner.title
        description = "\n\n".join(x for x in (card.get("description"), inner.description) if x)
        docs = {**inner.column_descriptions, **card.get("column_descriptions", {})}
        return inner.model_copy(update={"ref": ref, "source": self.key, "slug": f"local_{_slug(ref.removeprefix('local/'))}",
                                        "title": title, "description": description, "column_descriptions": docs,
                                        **fields})

    def record(self, ref: str) -> DatasetRecord:
        d = self._dataset(ref)
        if d.table is not None:
            return self._database_record(ref, d)
        path, folder = d.path, d.folder
        doc = read_sidecar(path, self._root, self.limits, _DOC_FIELDS)
        name = ref.removeprefix("local/")
        fields = {"title": folder.name if folder != self._root else path.stem,
                  **self._card_fields(path, folder), **doc}
        for listed in ("tags", "outcome_columns"):
            if listed in fields:
                fields[listed] = tuple(fields[listed])
        return DatasetRecord(ref=ref, source=self.key, slug=f"local_{_slug(name)}", **fields)

    def load_table(self, ref: str) -> pd.DataFrame:
        d = self._dataset(ref)
        if d.table is not None:
            regular_file_inside(d.path, self._root, self.limits.max_file_bytes)
            return self._database(d.path).load_table(_sqlite_ref(d))
        path = d.path
        check_table_file(path, self._root, path.suffix.lower().lstrip("."), self.limits)  # UnsafeInput: a rejection
        try:
            return pd.read_parquet(path) if path.suffix.lower() == ".parquet" else pd.read_csv(path)
        except Exception as exc:  # a malformed file is a rejection of that dataset, not a crash
            raise ValueError(f"cannot read {path.name}: {exc}") from exc
