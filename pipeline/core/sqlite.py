"""SQLite access shared by every stage: identifier quoting and read-only connections.

Table and column names come from the data (a source database, a dataset's headers), so they are
always quoted as identifiers and never pasted into SQL as text. A file we only read is opened
read-only three ways (a `mode=ro` URI, `query_only`, an authorizer that denies writes), so a
hostile or buggy statement can never change a source database or a built task.
"""

from __future__ import annotations

import sqlite3
import urllib.parse
from pathlib import Path

def quote_identifier(name: object) -> str:
    """Double quotes with inner quotes doubled: `x"; DROP TABLE t; --` stays one identifier."""
    return '"' + str(name).replace('"', '""') + '"'


_WRITES = frozenset(getattr(sqlite3, n) for n in dir(sqlite3) if n.startswith((
    "SQLITE_CREATE_", "SQLITE_DROP_")) or n in (
    "SQLITE_INSERT", "SQLITE_DELETE", "SQLITE_ALTER_TABLE", "SQLITE_ATTACH", "SQLITE_DETACH", "SQLITE_REINDEX",
    "SQLITE_ANALYZE"))


def _read_only_authorizer(action: int, arg1, *_args) -> int:
    """Defence in depth beside mode=ro and query_only: deny anything that writes. UPDATE is
    allowed on sqlite_master alone, because SQLite reports its own schema load that way when a
    statement first uses a pragma table function (pragma_table_info etc.)."""
    if action in _WRITES or (action == sqlite3.SQLITE_UPDATE and arg1 != "sqlite_master"):
        return sqlite3.SQLITE_DENY
    return sqlite3.SQLITE_OK


def connect_read_only(path: str | Path) -> sqlite3.Connection:
    """A connection that cannot write `path` (percent-encoded, so `?` or `#` in a folder name is a path),
    to a database without generated columns (sqlite3.DatabaseError otherwise: see refuse_generated_columns).
    No value it reads is longer than the file: a real value is stored in it."""
    resolved = Path(path).resolve()
    uri = "file:" + urllib.parse.quote(str(resolved)) + "?mode=ro"
    con = sqlite3.connect(uri, uri=True)
    try:
        con.execute("PRAGMA query_only = ON")
        con.set_authorizer(_read_only_authorizer)
        con.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, max(resolved.stat().st_size, 1 << 20))
        refuse_generated_columns(con)
    except BaseException:
        con.close()
        raise
    return con


def table_names(con: sqlite3.Connection) -> list[str]:
    """The user tables of `con`, sorted by name."""
    return [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")]


# PRAGMA table_xinfo's `hidden`: 0 an ordinary column, 1 a virtual table's hidden column, 2 a VIRTUAL
# generated column, 3 a STORED generated column. PRAGMA table_info (and so pandas) never shows 1-3.
_ORDINARY = 0


def refuse_generated_columns(con: sqlite3.Connection) -> None:
    """sqlite3.DatabaseError if a table has a generated column: a VIRTUAL one is computed on every read,
    so an 8 KB file whose column is `zeroblob(1e9)` or a long printf() expands to gigabytes on
    `SELECT *`, and table_info hides it from every check of the table's shape."""
    for table in table_names(con):
        for name, hidden in con.execute("SELECT name, hidden FROM pragma_table_xinfo(?) ORDER BY cid", (table,)):
            if hidden != _ORDINARY:
                raise sqlite3.DatabaseError(f"table {table!r} has a generated column {name!r}, which is refused")


def column_names(con: sqlite3.Connection, table: str) -> list[str]:
    """The ordinary columns of `table`, in their order, from PRAGMA table_xinfo."""
    return [name for name, hidden in con.execute(
        "SELECT name, hidden FROM pragma_table_xinfo(?) ORDER BY cid", (table,)) if hidden == _ORDINARY]


def select_all(con: sqlite3.Connection, table: str) -> str:
    """`SELECT * FROM table` spelled with its column list: only the stored columns, whatever the schema."""
    columns = ", ".join(quote_identifier(c) for c in column_names(con, table))
    return f"SELECT {columns} FROM {quote_identifier(table)}"
