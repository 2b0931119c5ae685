"""Local files as a source: every .csv or .parquet file in a folder is a dataset.

`--sources local:PATH`. A sidecar `<name>.json` may document the file with the
DatasetRecord fields (title, description, column_descriptions, license,
target_hint, ...). Useful for curators' own data and for tests.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pandas as pd

from pipeline.core.safe_io import InputLimits, check_table_file, read_json_inside
from pipeline.core.records import DatasetRecord

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
        files = [self.path] if self.path.is_file() else sorted(self.path.iterdir())
        return {f"local/{f.stem}": f for f in files if f.suffix.lower() in _SUFFIXES}

    def candidates(self) -> list[str]:
        return sorted(self._files())

    def _file(self, ref: str) -> Path:
        try:
            return self._files()[ref]
        except KeyError:
            raise ValueError(f"local source: no file for {ref!r} in {self.path}") from None

    def record(self, ref: str) -> DatasetRecord:
        path = self._file(ref)
        doc = read_sidecar(path, self._root, self.limits, _DOC_FIELDS)
        fields = {"title": path.stem, **doc}
        for listed in ("tags", "outcome_columns"):
            if listed in fields:
                fields[listed] = tuple(fields[listed])
        return DatasetRecord(ref=ref, source=self.key, slug=f"local_{_slug(path.stem)}", **fields)

    def load_table(self, ref: str) -> pd.DataFrame:
        path = self._file(ref)
        check_table_file(path, self._root, path.suffix.lower().lstrip("."), self.limits)  # UnsafeInput: a rejection
        try:
            return pd.read_parquet(path) if path.suffix.lower() == ".parquet" else pd.read_csv(path)
        except Exception as exc:  # a malformed file is a rejection of that dataset, not a crash
            raise ValueError(f"cannot read {path.name}: {exc}") from exc
