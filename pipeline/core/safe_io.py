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

import io
import json
import os
import sqlite3
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from pydantic import BaseModel, ConfigDict, Field

from pipeline.core.jsonio import write_text
from pipeline.core.sqlite import column_names, connect_read_only, quote_identifier, table_names
from pipeline.core.text import md_cell, printable, shorten_cause  # noqa: F401 -- re-exported: readers of untrusted trees import them here


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
    # A dataset card beside the data (README.md, metadata.txt, dataset-metadata.json, DESCR): prose, so a
    # megabyte is far beyond any real card, and every card parser and the designer's text rules stay cheap.
    max_card_bytes: int = Field(default=1 << 20, gt=0)


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


def _entry_problem(st: os.stat_result, single_link: bool) -> str | None:
    """Why a (not followed) file entry is refused: a symbolic link, not a regular file or, with
    `single_link`, a file with another hard link (the same file as one elsewhere); None if it is fine."""
    if stat.S_ISLNK(st.st_mode):
        return "is a symbolic link, which is refused"
    if not stat.S_ISREG(st.st_mode):
        return "is not a regular file"
    if single_link and st.st_nlink > 1:
        return f"has {st.st_nlink} hard links (the same file as one elsewhere), which is refused"
    return None


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
        st = os.lstat(entry)
        if not stat.S_ISDIR(st.st_mode) and (problem := _entry_problem(st, single_link=False)):
            reasons.append(f"{_display(entry, root)} {problem}")
    return reasons


def _open_regular(path: Path, root: Path, max_bytes: int, single_link: bool = False,
                  limit_name: str = "max_file_bytes"):
    """A regular file under `root` opened for reading without following a link or blocking, and checked
    again on the open descriptor (a file swapped for a FIFO or a link after the check is refused too):
    (binary file object, its name for messages)."""
    path = regular_file_inside(path, root)
    name = _display(path, root)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise UnsafeInput(f"cannot open {name}: {exc.strerror}") from None
    fh = os.fdopen(fd, "rb")
    st = os.fstat(fh.fileno())
    problem = _entry_problem(st, single_link) or (
        f"is {st.st_size} bytes, over the {max_bytes}-byte limit ({limit_name})" if st.st_size > max_bytes else None)
    if problem:
        fh.close()
        raise UnsafeInput(f"{name} {problem}")
    return fh, name


def read_bytes_inside(path: Path, root: Path, max_bytes: int, single_link: bool = False,
                      limit_name: str = "max_file_bytes") -> bytes:
    """The bytes of a regular file under `root`, refused beyond `max_bytes` (the InputLimits field
    `limit_name`, which the message names) or, with `single_link`, when it has another hard link
    (see _open_regular)."""
    fh, name = _open_regular(path, root, max_bytes, single_link, limit_name)
    with fh:
        data = fh.read(max_bytes + 1)
    if len(data) > max_bytes:  # grew while we read it
        raise UnsafeInput(f"{name} is over the {max_bytes}-byte limit ({limit_name})")
    return data


def read_head_inside(path: Path, root: Path, head_bytes: int) -> bytes:
    """At most the first `head_bytes` bytes of a regular file under `root` (a table's header line),
    opened as _open_regular opens it, whatever the file's size."""
    fh, _ = _open_regular(path, root, max_bytes=1 << 62)
    with fh:
        return fh.read(head_bytes)


def regular_files_below(folder: Path, root: Path) -> list[Path]:
    """Every file below `folder` (recursively, sorted), refused at the first entry that is a symbolic link,
    not a regular file or folder, or a file with another hard link: a hard link is the same file as
    one elsewhere (a credentials file linked in on the same filesystem), so copying it out copies that."""
    _relative_without_links(folder, root)
    out, stack = [], [Path(folder)]
    while stack:
        current = stack.pop()
        for entry in sorted(os.scandir(current), key=lambda e: e.name):
            st = entry.stat(follow_symlinks=False)
            where = _display(Path(entry.path), root)
            if stat.S_ISDIR(st.st_mode):
                stack.append(Path(entry.path))
            elif problem := _entry_problem(st, single_link=True):
                raise UnsafeInput(f"{where} {problem}")
            else:
                out.append(Path(entry.path))
    return sorted(out)


def copy_file_inside(path: Path, root: Path, dest: Path, max_bytes: int) -> None:
    """Copy a regular file under `root` to the new file `dest`, bounded: opened without following a
    link or blocking, and refused on the open descriptor too when it is not a regular file, has another
    hard link or is past `max_bytes` (so a file swapped after a check is refused, and `/dev/zero` never
    fills a disk)."""
    src, name = _open_regular(path, root, max_bytes, single_link=True)
    with src:
        with open(dest, "xb") as out:
            copied = 0
            while chunk := src.read(1 << 20):
                copied += len(chunk)
                if copied > max_bytes:  # grew while we read it
                    raise UnsafeInput(f"{name} is over the {max_bytes}-byte limit (max_file_bytes)")
                out.write(chunk)


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


_CSV_CHUNK = 1 << 22  # bytes scanned per step: bounds the index arrays whatever the file holds
_QUOTE, _COMMA, _LF, _CR = 0x22, 0x2C, 0x0A, 0x0D


def _quotes_well_formed(buf: np.ndarray, quotes: np.ndarray, opening: np.ndarray) -> bool:
    """Whether every quote plays the part its parity gives it: an opening quote starts a field (or
    follows a closing one, the `""` escape), a closing quote ends one (or precedes an opening one).
    Then quote parity says exactly what the tokenizer will treat as quoted."""
    before = np.where(quotes > 0, buf[np.maximum(quotes - 1, 0)], _LF)
    after = np.where(quotes + 1 < len(buf), buf[np.minimum(quotes + 1, len(buf) - 1)], _LF)
    bounds_before = np.isin(before, (_COMMA, _LF, _CR, _QUOTE))
    bounds_after = np.isin(after, (_COMMA, _LF, _CR, _QUOTE))
    return bool(np.all(np.where(opening, bounds_before, bounds_after)))


def _csv_module_widths(data: bytes) -> Iterator[np.ndarray]:
    """Row widths by the csv module (quote rules like pandas' tokenizer), for a file whose quotes are
    not well formed (a stray `"` inside a field is text to both, which parity cannot tell)."""
    import csv

    reader = csv.reader(io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="replace", newline=""))
    batch: list[int] = []
    try:
        for row in reader:
            batch.append(max(1, len(row)))
            if len(batch) == 65536:
                yield np.array(batch)
                batch = []
    except csv.Error as exc:  # a field past the csv module's size limit: pandas would build it
        raise UnsafeInput(f"unreadable CSV: {exc}") from None
    if batch:
        yield np.array(batch)


def csv_row_widths(data: bytes) -> Iterator[np.ndarray]:
    """The number of fields of every row of CSV bytes, header first, in chunks, without decoding.

    Counts every line ending pandas' tokenizer ends a row on (LF, CRLF and a lone CR). Quote-aware:
    when every quote opens or closes a field (the `""` escape toggles twice), the parity of the quotes
    before a byte says whether it is quoted, so a comma or line break between quotes is text;
    otherwise the csv module counts. A blank line counts as a row of one field, so the counts bound
    what pandas builds from above."""
    buf = np.frombuffer(data, dtype=np.uint8)
    quotes_all = np.flatnonzero(buf == _QUOTE)
    if len(quotes_all) and not _quotes_well_formed(buf, quotes_all, np.arange(len(quotes_all)) % 2 == 0):
        yield from _csv_module_widths(data)
        return
    carried = 0  # commas of the row still open at a chunk's end
    for start in range(0, len(buf), _CSV_CHUNK):
        chunk = buf[start:start + _CSV_CHUNK]
        following = buf[start + 1:start + 1 + len(chunk)]
        lone_cr = chunk == _CR
        lone_cr[:len(following)] &= following != _LF  # CRLF ends its row at the LF
        comma = chunk == _COMMA
        events = np.flatnonzero(comma | (chunk == _LF) | lone_cr)
        events = events[np.searchsorted(quotes_all, events + start) % 2 == 0]  # not between quotes
        ends = np.flatnonzero(~comma[events])  # positions in `events` that end a row
        commas_before = ends - np.arange(len(ends))  # commas among events[:end], per end
        if len(ends):
            per_row = np.diff(commas_before, prepend=0)
            per_row[0] += carried
            yield per_row + 1
            carried = len(events) - len(ends) - int(commas_before[-1])
        else:
            carried += len(events)
    if len(buf) and buf[-1] not in (_LF, _CR):  # a last row without its line break
        yield np.array([carried + 1])


def _check_csv(name: str, data: bytes, limits: InputLimits) -> None:
    # Counted on the body, not the header: one body row of 10^6 fields or a file of lone-CR line
    # breaks would otherwise pass and cost pandas minutes and gigabytes.
    rows = cells = 0
    header: int | None = None
    for widths in csv_row_widths(data):
        if header is None:
            header, widths = int(widths[0]), widths[1:]
            if header > limits.max_columns:
                raise UnsafeInput(f"{name} has {header} columns, over the limit of {limits.max_columns} "
                                  f"(max_columns)")
        if len(widths) and int(widths.max()) > limits.max_columns:
            row = rows + 1 + int(np.argmax(widths > limits.max_columns))
            raise UnsafeInput(f"{name}: row {row} has {int(widths.max())} fields, over the limit of "
                              f"{limits.max_columns} (max_columns)")
        rows, cells = rows + len(widths), cells + int(widths.sum())
        if rows > limits.max_rows:
            raise UnsafeInput(f"{name} has over {limits.max_rows} rows, over the limit (max_rows)")
        if cells > limits.max_cells:
            raise UnsafeInput(f"{name} has over {limits.max_cells} cells, over the limit (max_cells)")


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
        raise UnsafeInput(f"{name} is not a readable parquet file: {shorten_cause(exc, 200)}") from None
    _check_shape(name, meta.num_rows, meta.num_columns, limits)
    decoded = sum(_decoded_bytes(meta.row_group(i).column(j))
                  for i in range(meta.num_row_groups) for j in range(meta.num_columns))
    if decoded > limits.max_decoded_bytes:
        raise UnsafeInput(f"{name} declares {decoded} decoded bytes, over the {limits.max_decoded_bytes}-byte "
                          f"limit (max_decoded_bytes): a compression bomb?")
    text = _text_decoded_bytes(name, data, limits.max_decoded_bytes)
    if text > limits.max_decoded_bytes:
        raise UnsafeInput(f"{name} has text columns that decode to over {limits.max_decoded_bytes} bytes "
                          f"(max_decoded_bytes): a compression bomb?")


def _text_decoded_bytes(name: str, data: bytes, budget: int) -> int:
    """What the file's top-level text columns decode to, counted rather than estimated (stopping once past
    `budget`). Statistics cannot bound it: min and max bound the values' order, not their length, so a
    dictionary of "a", a 100 KB value and "z" with the long one on every row has 1-byte statistics and
    decodes to rows x 100 KB. Each text column is read as its dictionary and indices, which costs what the
    estimate above already bounded, and each row is charged the length of the entry it takes."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    def is_text(t) -> bool:
        t = t.value_type if pa.types.is_dictionary(t) else t
        return any(check(t) for check in (pa.types.is_string, pa.types.is_large_string, pa.types.is_binary,
                                          pa.types.is_large_binary))

    total = 0
    try:
        columns = [f.name for f in pq.ParquetFile(io.BytesIO(data)).schema_arrow if is_text(f.type)]
        pf = pq.ParquetFile(io.BytesIO(data), read_dictionary=columns)
        for i in range(pf.metadata.num_row_groups if columns else 0):
            for column in pf.read_row_group(i, columns=columns).columns:
                for chunk in column.chunks:
                    if pa.types.is_dictionary(chunk.type):
                        taken = pc.sum(pc.take(pc.binary_length(chunk.dictionary), chunk.indices)).as_py()
                        total += (taken or 0) + len(chunk) * _OBJECT_BYTES
                    else:
                        total += chunk.nbytes + len(chunk) * _OBJECT_BYTES
                    if total > budget:
                        return total
    except Exception as exc:  # pyarrow raises its own error types for a malformed file
        raise UnsafeInput(f"{name} is not a readable parquet file: {shorten_cause(exc, 200)}") from None
    return total


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


def read_csv_text_inside(path: Path, root: Path, limits: InputLimits | None = None, single_link: bool = False):
    """A CSV under `root`, bounded, with every cell as the text written (pandas DataFrame); with
    `single_link`, refused when it has another hard link."""
    limits = limits or InputLimits()
    data = read_bytes_inside(path, root, limits.max_file_bytes, single_link)
    return read_csv_text_bytes(_display(path, root), data, limits)


def read_csv_text_bytes(name: str, data: bytes, limits: InputLimits | None = None):
    """CSV bytes held in memory (a completion's text, a file already read), checked like a file under
    the limits before pandas sees them, every cell as the text written; UnsafeInput past the limits."""
    import pandas as pd

    limits = limits or InputLimits()
    if len(data) > limits.max_file_bytes:
        raise UnsafeInput(f"{name} is {len(data)} bytes, over the {limits.max_file_bytes}-byte limit (max_file_bytes)")
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
