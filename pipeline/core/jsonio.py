"""Canonical JSON: sorted keys, 4-space indent, UTF-8, a trailing newline, no NaN.

Every JSON file daregen writes goes through `dumps`, so regenerations diff cleanly.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np


def to_jsonable(value: Any) -> Any:
    """Convert numpy scalars, tuples and paths into plain JSON values."""
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, np.generic):
        return to_jsonable(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"non-finite float {value!r} cannot go into a task file")
    if isinstance(value, Path):
        return str(value)
    return value


def dumps(obj: Any) -> str:
    return json.dumps(to_jsonable(obj), indent=4, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"


def write_json(path: Path, obj: Any) -> None:
    write_text(path, dumps(obj))


# mkstemp creates its file 0600; a tree and its reports are read by others (a web server, a curator).
FILE_MODE = 0o644


def write_text(path: Path, text: str) -> None:
    """Write via a temp file and rename, so readers never see half a file; the file is 0644."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        os.fchmod(fd, FILE_MODE)
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_json(path: Path) -> Any:
    return json.loads(Path(path).read_text(encoding="utf-8"))
