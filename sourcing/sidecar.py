"""A dataset's sidecar `<name>.json` (daregen's own documentation convention), read the same way by every
file source (sourcing.local, sourcing.sqlite_source)."""

from __future__ import annotations

import os
from pathlib import Path

from pipeline.core.safe_io import InputLimits, read_json_inside


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
