"""Reading and writing files that someone else controls: a downloaded tree, uploaded predictions,
a `local:` folder.

Three rules, each a function here so every command applies the same one:

- `regular_file_inside(path, root)`: the file lies under `root` with no symbolic link on the way
  (a link could point at `~/.bashrc`, `/etc/passwd` or the tree's own ground truth) and it is a
  regular file (a FIFO would block the reader forever, a device never ends);
- `check_table_file(path, root, file_type, limits)`: the file is no larger than the limits in
  bytes, and its shape (rows, columns, cells and, for parquet, the decoded size its metadata
  declares) is checked before any reader decodes it, so a 1 MB parquet bomb or a 100k-column
  CSV is refused in milliseconds instead of costing gigabytes;
- `write_text_inside(path, root, text)`: writes go through no link, by temp file and rename in
  the real directory, so a link planted where daregen writes is replaced, never written through.

`read_json_inside` bounds JSON in bytes and depth; `printable` escapes control characters before
untrusted text reaches a terminal. Every refusal is an `UnsafeInput` (a ValueError) whose message
is one line naming the file.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import sqlite3
import stat
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from pipeline.core.jsonio import write_text
from pipeline.core.sqlite import column_names, connect_read_only, quote_identifier, table_names
from pipeline.core.text import printable  # noqa: F401 -- re-exported: readers of untrusted trees import it here


class UnsafeInput(ValueError):
    """A file daregen will not read or write; the message is the one-line reason."""


class InputLimits(BaseModel):
    """Bounds on every read of untrusted data. The defaults admit any DARE-bench-sized task with room
    to spare; raise them in a config file's `[limits]` table for bigger inputs."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_file_bytes: int = Field(default=512 << 20, gt=0)  # one data or prediction file on disk
    max_decoded_bytes: int = Field(default=2 << 30, gt=0)  # what a parquet file declares it decodes to
    max_rows: int = Field(default=5_000_000, gt=0)
    max_columns: int = Field(default=2_000, gt=0)
    max_cells: int = Field(default=20_000_000, gt=0)  # rows x columns
    max_json_bytes: int = Field(default=32 << 20, gt=0)  # all_metadata.json, question_list.json, sidecars
    max_json_depth: int = Field(default=64, gt=0)


def _display(path: Path, root: Path) -> str:
    try:
        return Path(os.path.abspath(path)).relative_to(os.path.abspath(root)).as_posix()
    except ValueError:
        return str(path)


def _relative_without_links(path: Path, root: Path) -> Path:
    """`path` relative to `root`, refused when it leaves `root` or an existing component on the way
    (the file included) is a symbolic link. Components that do not exist yet are fine."""
    path, root = Path(os.path.abspath(path)), Path(os.path.abspath(root))
    try:
        rel = path.relative_to(root)
    except ValueError:
        raise UnsafeInput(f"{path} lies outside {root}") from None
    current = root
    for part in rel.parts:
        current = current / part
        if current.is_symlink():
            how = "is a symbolic link" if current == path else f"is reached through a symbolic link ({part})"
            raise UnsafeInput(f"{rel.as_posix()} {how}, which is refused")
    return rel


def regular_file_inside(path: Path, root: Path, max_bytes: int | None = None) -> Path:
    """`path` if it is a regular file under `root` reached through no symbolic link (the root itself
    may be one: a published tree is a link to its generation) and, given `max_bytes`, no larger;
    UnsafeInput otherwise."""
    rel = _relative_without_links(path, root)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        raise UnsafeInput(f"{rel.as_posix()} does not exist") from None
    if not stat.S_ISREG(st.st_mode):
        raise UnsafeInput(f"{rel.as_posix()} is not a regular file")
    if max_bytes is not None and st.st_size > max_bytes:
        raise UnsafeInput(f"{rel.as_posix()} is {st.st_size} bytes, over the {max_bytes}-byte limit (max_file_bytes)")
    return Path(os.path.abspath(path))


def links_or_specials(folder: Path, root: Path) -> list[str]:
    """One reason per entry of `folder` (not recursive) that is a symbolic link or not a regular file
    or folder, and one if `folder` itself is reached through a link: what a tree must not contain."""
    try:
        _relative_without_links(folder, root)
    except UnsafeInput as exc:
        return [str(exc)]
    if not folder.is_dir():
        return []
    reasons = []
    for entry in sorted(folder.iterdir()):
        mode = os.lstat(entry).st_mode
        if stat.S_ISLNK(mode):
            reasons.append(f"{_display(entry, root)} is a symbolic link, which is refused")
        elif not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
            reasons.append(f"{_display(entry, root)} is not a regular file")
    return reasons


def read_bytes_inside(path: Path, root: Path, max_bytes: int) -> bytes:
    """The bytes of a regular file under `root`, refused beyond `max_bytes`. Opened without following
    a link and without blocking, and checked again on the open descriptor, so a file swapped for a
    FIFO or a link after the check is refused too."""
    path = regular_file_inside(path, root)
    name = _display(path, root)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise UnsafeInput(f"cannot open {name}: {exc.strerror}") from None
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise UnsafeInput(f"{name} is not a regular file")
        if st.st_size > max_bytes:
            raise UnsafeInput(f"{name} is {st.st_size} bytes, over the {max_bytes}-byte limit "
                              f"(max_file_bytes)")
        data = fh.read(max_bytes + 1)
    if len(data) > max_bytes:  # grew while we read it
        raise UnsafeInput(f"{name} is over the {max_bytes}-byte limit (max_file_bytes)")
    return data


def _depth(value: Any, limit: int) -> bool:
    """Whether `value` nests deeper than `limit` (iterative: a deep document must not recurse here)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
    return False


def read_json_inside(path: Path, root: Path, limits: InputLimits | None = None) -> Any:
    """A JSON file under `root`, bounded in bytes and nesting depth."""
    limits = limits or InputLimits()
    name = _display(path, root)
    data = read_bytes_inside(path, root, limits.max_json_bytes)
    try:
        value = json.loads(data.decode("utf-8"))
    except RecursionError:
        raise UnsafeInput(f"{name} nests deeper than {limits.max_json_depth} levels (max_json_depth)") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise UnsafeInput(f"{name} is not valid JSON: {str(exc).splitlines()[0]}") from None
    if _depth(value, limits.max_json_depth):
        raise UnsafeInput(f"{name} nests deeper than {limits.max_json_depth} levels (max_json_depth)")
    return value


def _check_shape(name: str, rows: int, columns: int, limits: InputLimits) -> None:
    if columns > limits.max_columns:
        raise UnsafeInput(f"{name} has {columns} columns, over the limit of {limits.max_columns} (max_columns)")
    if rows > limits.max_rows:
        raise UnsafeInput(f"{name} has {rows} rows, over the limit of {limits.max_rows} (max_rows)")
    if rows * columns > limits.max_cells:
        raise UnsafeInput(f"{name} has {rows} x {columns} cells, over the limit of {limits.max_cells} (max_cells)")


def _check_csv(name: str, data: bytes, limits: InputLimits) -> None:
    # The header's width and the newline count bound what pandas will build; counting never decodes.
    first = data[: data.find(b"\n") + 1 or len(data)]
    try:
        header = next(csv.reader(io.StringIO(first.decode("utf-8", errors="replace"))), [])
    except csv.Error as exc:
        raise UnsafeInput(f"{name} has an unreadable header: {exc}") from None
    _check_shape(name, max(0, data.count(b"\n") - 1), len(header), limits)


_OBJECT_BYTES = 50  # what a decoded text value costs beyond its characters (a Python str, an offset)


def _decoded_bytes(chunk) -> int:
    """An upper estimate of what one column chunk decodes to. The encoded size alone misses the usual
    bomb, a dictionary-encoded text column whose one value repeats on every row: it decodes to rows x
    that value. Text is charged its longest value per row (from the statistics; without them, the
    whole chunk per row, the worst case), numbers 8 bytes per row."""
    rows, encoded = chunk.num_values, chunk.total_uncompressed_size
    if chunk.physical_type not in ("BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY"):
        return max(encoded, rows * 8)
    stats = chunk.statistics
    if stats is not None and stats.has_min_max:
        longest = max(len(stats.min) if isinstance(stats.min, (str, bytes)) else 8,
                      len(stats.max) if isinstance(stats.max, (str, bytes)) else 8)
    else:
        longest = encoded
    return max(encoded, rows * (longest + _OBJECT_BYTES))


def _check_parquet(name: str, data: bytes, limits: InputLimits) -> None:
    import pyarrow.parquet as pq

    try:
        meta = pq.ParquetFile(io.BytesIO(data)).metadata
    except Exception as exc:  # pyarrow raises its own error types for a malformed footer
        raise UnsafeInput(f"{name} is not a readable parquet file: {str(exc).splitlines()[0][:200]}") from None
    _check_shape(name, meta.num_rows, meta.num_columns, limits)
    decoded = sum(_decoded_bytes(meta.row_group(i).column(j))
                  for i in range(meta.num_row_groups) for j in range(meta.num_columns))
    if decoded > limits.max_decoded_bytes:
        raise UnsafeInput(f"{name} declares {decoded} decoded bytes, over the {limits.max_decoded_bytes}-byte "
                          f"limit (max_decoded_bytes): a compression bomb?")


def _check_sqlite(name: str, path: Path, limits: InputLimits) -> None:
    """Each table's rows and columns within `limits`; a generated column is refused (connect_read_only)."""
    try:
        con = connect_read_only(path)
    except sqlite3.Error as exc:
        raise UnsafeInput(f"{name} is not a readable sqlite file: {exc}") from None
    try:
        for table in table_names(con):
            rows = con.execute(f"SELECT count(*) FROM {quote_identifier(table)}").fetchone()[0]
            _check_shape(f"{name}:{table}", rows, len(column_names(con, table)), limits)
    except sqlite3.Error as exc:
        raise UnsafeInput(f"{name} is not a readable sqlite file: {exc}") from None
    finally:
        con.close()


def check_table_shape(name: str, rows: int, columns: int, limits: InputLimits) -> None:
    """UnsafeInput if a table of `rows` x `columns` is beyond `limits` (a source's joined table, say)."""
    _check_shape(name, rows, columns, limits)


def check_table_file(path: Path, root: Path, file_type: str, limits: InputLimits | None = None) -> Path:
    """`path` if it is a regular file under `root` whose size and shape are within `limits`, before any
    reader decodes it; UnsafeInput otherwise. `file_type`: csv, parquet or sqlite."""
    limits = limits or InputLimits()
    name = _display(path, root)
    data = read_bytes_inside(path, root, limits.max_file_bytes)
    if file_type == "csv":
        _check_csv(name, data, limits)
    elif file_type == "parquet":
        _check_parquet(name, data, limits)
    elif file_type == "sqlite":
        _check_sqlite(name, Path(path), limits)
    else:
        raise UnsafeInput(f"{name}: unknown file type {file_type!r}")
    return Path(path)


def read_csv_text_inside(path: Path, root: Path, limits: InputLimits | None = None):
    """A CSV under `root`, bounded, with every cell as the text written (pandas DataFrame)."""
    import pandas as pd

    limits = limits or InputLimits()
    name = _display(path, root)
    data = read_bytes_inside(path, root, limits.max_file_bytes)
    _check_csv(name, data, limits)
    return pd.read_csv(io.BytesIO(data), dtype=str, keep_default_na=False)


def write_text_inside(path: Path, root: Path, text: str) -> None:
    """Write `text` at `path` under `root`, by temp file and rename in the real folder. Refused when a
    folder on the way or the file itself is a symbolic link, or the file is not a regular file."""
    rel = _relative_without_links(path, root)
    path = Path(path)
    if path.exists() and not path.is_file():
        raise UnsafeInput(f"refusing to write {rel.as_posix()}: it is not a regular file")
    if not path.parent.is_dir():
        raise UnsafeInput(f"refusing to write {rel.as_posix()}: its folder does not exist")
    write_text(path, text)
    os.chmod(path, 0o644)  # the temp file was created 0600; a task file is readable like its neighbours


def md_cell(text: str) -> str:
    """Source text (a licence, a reason) as inline Markdown: a table cell stays one cell on one line, and
    HTML in it (`<img onerror=...>`, which Markdown renderers pass through) is shown as text."""
    # Only a `<` that could open a tag is escaped, so `too few rows (12 < 30)` reads as written.
    return re.sub(r"<(?=[A-Za-z/!?])", "&lt;", str(text)).replace("|", "\\|").replace("\r", " ").replace("\n", " ")
