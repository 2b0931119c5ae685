"""SQLite databases as a relational source: one analysis table per fact table, built by joins.

`--sources sqlite:PATH`, PATH a database file or a folder of them. A file counts
as a database when its header is SQLite's magic string, whatever its extension;
a `.sqlite`/`.db` file without it becomes a candidate that is rejected with the
reason. Databases are opened read-only (`mode=ro`, `query_only`, and an
authorizer that allows reading only), so neither a bug nor a hostile name can
change them.

Relations are many-to-one links from a column to a unique key of another table:
declared foreign keys first (PRAGMA foreign_key_list), then name matches with
compatible declared types (`orders.customer_id` -> `customers.customer_id` or
`customers.id`). A fact table (one that links out and that no table links to)
plus every table reachable from it is one candidate, `sqlite/<db stem>/<fact>`;
its analysis table is the fact table LEFT JOINed along that path, recorded in
DatasetRecord.join_path. Most databases people hold have one table, or several
unrelated ones: each table that takes part in no relation is an ordinary tabular
candidate, `sqlite/<db stem>/<table>`, with an empty join path. Every identifier
is quoted, every value a parameter.

A database folder is read as `local:` reads one (sourcing/local.py): a database or
sidecar that is a symbolic link or not a regular file (a FIFO would hang the build)
is a rejection with its reason, and every table, the joined one too, is within the
build's InputLimits; a generated column is refused (pipeline.core.sqlite).
"""

from __future__ import annotations

import os
import re
import sqlite3
import stat
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from pipeline.core.records import DatasetRecord, DatasetRejected, JoinStep
from pipeline.core.safe_io import (InputLimits, check_table_file, check_table_shape, regular_file_inside)
from pipeline.core.sqlite import connect_read_only, quote_identifier
from pipeline.core.text import printable
from sourcing.sidecar import read_sidecar
from sourcing.normalize import control_free_name, unique_column_names

SQLITE_MAGIC = b"SQLite format 3\x00"
DATABASE_SUFFIXES = (".sqlite", ".sqlite3", ".db")
# The same sidecar fields as sourcing/local.py; column_descriptions and target_hint may name a
# column as `table.column` or by its analysis-table name.
_DOC_FIELDS = {"title", "subtitle", "description", "about_file", "column_descriptions", "license", "url", "owner",
               "version", "tags", "usability_rating", "last_updated", "target_hint"}


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9.-]+", "-", text.lower()).strip("-") or "table"


def is_sqlite_file(path: Path) -> bool:
    """A regular file (not through a link: never a FIFO, which would block the read) with SQLite's header."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return False
    with os.fdopen(fd, "rb") as f:
        return stat.S_ISREG(os.fstat(fd).st_mode) and f.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC


def _type_class(declared: str) -> str:
    """SQLite's type-affinity rules (datatype3.html 3.1), folded to what can be compared as a key."""
    t = (declared or "").upper()
    if "INT" in t:
        return "number"
    if any(k in t for k in ("CHAR", "CLOB", "TEXT")):
        return "text"
    if "BLOB" in t or not t:
        return "blob" if "BLOB" in t else "any"
    return "number"  # REAL, FLOA, DOUB, NUMERIC


def _compatible(a: str, b: str) -> bool:
    ca, cb = _type_class(a), _type_class(b)
    return "blob" not in (ca, cb) and (ca == cb or "any" in (ca, cb))


@dataclass(frozen=True)
class Relation:
    """table.column -> ref_table.ref_column, many-to-one (ref_column is unique)."""

    table: str
    column: str
    ref_table: str
    ref_column: str
    declared: bool


@dataclass(frozen=True)
class Schema:
    tables: tuple[str, ...]
    columns: dict[str, tuple[tuple[str, str], ...]]  # table -> ((name, declared type), ...)
    primary_keys: dict[str, str | None]  # single-column primary key, if declared
    relations: tuple[Relation, ...]

    def outgoing(self, table: str) -> list[Relation]:
        return [r for r in self.relations if r.table == table]


def _is_unique(con: sqlite3.Connection, table: str, column: str) -> bool:
    """No two rows share a non-missing value: the join onto it cannot duplicate fact rows."""
    t, c = quote_identifier(table), quote_identifier(column)
    n, n_distinct = con.execute(f"SELECT COUNT({c}), COUNT(DISTINCT {c}) FROM {t}").fetchone()
    return n == n_distinct


_KEY_NAME = re.compile(r"(?:(?i:[_\s]id)|[a-z]Id)$")  # customer_id, CUSTOMER_ID, store id, customerId


def _singular_stems(table: str) -> set[str]:
    t = table.casefold()
    stems = {t}
    if t.endswith("ies"):
        stems.add(t[:-3] + "y")
    if t.endswith("es"):
        stems.add(t[:-2])
    if t.endswith("s"):
        stems.add(t[:-1])
    return stems


def read_schema(con: sqlite3.Connection) -> Schema:
    tables = tuple(sorted(r[0] for r in con.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'")))
    columns, pks = {}, {}
    for t in tables:
        info = con.execute("SELECT name, type, pk FROM pragma_table_info(?) ORDER BY cid", (t,)).fetchall()
        columns[t] = tuple((name, decl or "") for name, decl, _ in info)
        pk = [name for name, _, k in info if k]
        pks[t] = pk[0] if len(pk) == 1 else None
    col_types = {t: dict(cols) for t, cols in columns.items()}
    relations: list[Relation] = []
    linked: set[tuple[str, str]] = set()
    unique_cache: dict[tuple[str, str], bool] = {}

    def unique(t: str, c: str) -> bool:
        if (t, c) not in unique_cache:
            unique_cache[(t, c)] = _is_unique(con, t, c)
        return unique_cache[(t, c)]

    # 1. Declared foreign keys, single-column ones (a composite key is not one join column).
    for t in tables:
        fks = con.execute('SELECT id, "table", "from", "to" FROM pragma_foreign_key_list(?) ORDER BY id, seq',
                          (t,)).fetchall()
        by_id: dict[int, list] = {}
        for fk_id, ref_table, col, ref_col in fks:
            by_id.setdefault(fk_id, []).append((ref_table, col, ref_col))
        for parts in by_id.values():
            if len(parts) != 1:
                continue
            ref_table, col, ref_col = parts[0]
            # SQLite resolves these names case-insensitively; a key to a missing table or column is ignored.
            ref_table = next((x for x in tables if x.casefold() == ref_table.casefold()), None)
            if ref_table is None or ref_table == t:
                continue
            ref_col = ref_col or pks[ref_table]  # `REFERENCES t` alone means t's primary key
            ref_col = next((k for k in col_types[ref_table] if ref_col and k.casefold() == ref_col.casefold()), None)
            col = next((k for k in col_types[t] if k.casefold() == col.casefold()), None)
            if ref_col is None or col is None or not unique(ref_table, ref_col):
                continue
            relations.append(Relation(t, col, ref_table, ref_col, declared=True))
            linked.add((t, col))
    # 2. Name matches: a key-like column c of t (`customer_id`, `store id`, `customerId`, never a bare
    #    `id`) -> a unique column k of another table d, k == c or k == "id" with c == "<d singular>_id".
    #    A declared primary key (or `id`) wins over a column that merely happens to be unique.
    for t in tables:
        for col, decl in columns[t]:
            if (t, col) in linked or col == pks[t] or not _KEY_NAME.search(col):
                continue
            matches = sorted(
                (0 if k == pks[d] or k.casefold() == "id" else 1, d, k)
                for d in tables if d != t for k, k_decl in columns[d]
                if (k.casefold() == col.casefold()
                    or (k.casefold() == "id" and col.casefold() in {f"{s}_id" for s in _singular_stems(d)}))
                and _compatible(decl, k_decl) and unique(d, k))
            if matches:
                _, d, k = matches[0]
                relations.append(Relation(t, col, d, k, declared=False))
                linked.add((t, col))
    return Schema(tables, columns, pks, tuple(relations))


def join_plan(schema: Schema, fact: str) -> list[Relation]:
    """Breadth-first from the fact table; each table joined once (the first way it is reached),
    relations in discovery order (declared first), so the path is deterministic and acyclic."""
    seen, queue, plan = {fact}, [fact], []
    while queue:
        table = queue.pop(0)
        for rel in schema.outgoing(table):
            if rel.ref_table not in seen:
                seen.add(rel.ref_table)
                queue.append(rel.ref_table)
                plan.append(rel)
    return plan


def standalone_tables(schema: Schema) -> list[str]:
    """Tables that neither link out nor are linked to: each is a plain tabular candidate."""
    related = {r.table for r in schema.relations} | {r.ref_table for r in schema.relations}
    return [t for t in schema.tables if t not in related]


def fact_tables(schema: Schema) -> list[str]:
    """Tables that link out and that nothing links to; if every linking table is also linked to
    (a cycle), every linking table."""
    linking = sorted({r.table for r in schema.relations})
    targets = {r.ref_table for r in schema.relations}
    return [t for t in linking if t not in targets] or linking


@dataclass(frozen=True)
class AnalysisLayout:
    """Which source column becomes which analysis-table column, and the join steps."""

    sources: tuple[tuple[str, str], ...]  # (table, column) per analysis column, in order
    names: tuple[str, ...]
    steps: tuple[JoinStep, ...]


def analysis_layout(schema: Schema, fact: str, plan: list[Relation]) -> AnalysisLayout:
    """Fact columns keep their names; a dimension column takes `<table>_<column>` when its
    name is taken. The result survives sourcing.normalize unchanged (unique, case-insensitively)."""
    sources: list[tuple[str, str]] = [(fact, c) for c, _ in schema.columns[fact]]
    wanted = [c for _, c in sources]
    for rel in plan:
        for col, _ in schema.columns[rel.ref_table]:
            if col == rel.ref_column:
                continue  # equals the left key, which the analysis table already holds
            taken = {w.strip().casefold() for w in wanted} | {rel.ref_column.casefold()}
            wanted.append(col if col.strip().casefold() not in taken else f"{rel.ref_table}_{col}")
            sources.append((rel.ref_table, col))
    names = unique_column_names(wanted)
    name_of = dict(zip(sources, names))
    steps = []
    for rel in plan:
        cols = tuple(name_of[(rel.ref_table, c)] for c, _ in schema.columns[rel.ref_table] if c != rel.ref_column)
        if rel.ref_column.casefold() in {c.casefold() for c in cols}:
            raise ValueError(f"table {rel.ref_table!r}: key {rel.ref_column!r} clashes with a joined column name")
        steps.append(JoinStep(left=rel.table, right=rel.ref_table, left_on=name_of[(rel.table, rel.column)],
                              right_on=rel.ref_column, columns=cols))
    return AnalysisLayout(tuple(sources), tuple(names), tuple(steps))


def join_query(fact: str, plan: list[Relation], sources: tuple[tuple[str, str], ...], ordered: bool = True) -> str:
    """SELECT ... FROM fact LEFT JOIN dims; tables get aliases t0, t1, ..., outputs c0, c1, ...
    (positional names: the real ones are set in pandas, never spelled in SQL text)."""
    alias = {fact: "t0"}
    joins = []
    for i, rel in enumerate(plan, start=1):
        alias[rel.ref_table] = f"t{i}"
        joins.append(f"LEFT JOIN {quote_identifier(rel.ref_table)} AS t{i} ON "
                     f"{alias[rel.table]}.{quote_identifier(rel.column)} = t{i}.{quote_identifier(rel.ref_column)}")
    select = ", ".join(f"{alias[t]}.{quote_identifier(c)} AS c{i}" for i, (t, c) in enumerate(sources))
    order = ["ORDER BY t0.rowid"] if ordered else []
    return " ".join([f"SELECT {select} FROM {quote_identifier(fact)} AS t0", *joins, *order])


class SQLiteSource:
    key = "sqlite"

    def __init__(self, path: str | Path, limits: InputLimits | None = None):
        self.path = Path(path)
        self.limits = limits or InputLimits()
        if not self.path.exists():
            raise ValueError(f"sqlite source: {self.path} does not exist")
        self._schemas: dict[Path, Schema] = {}

    @property
    def _root(self) -> Path:
        return self.path.parent if self.path.is_file() else self.path

    def _files(self) -> dict[str, Path]:
        """Database files by stem (file name when two share a stem); a named .sqlite/.db entry that is
        not a database (or not a regular file, or a link) is kept so that it is rejected with its reason."""
        files = [self.path] if self.path.is_file() else sorted(self.path.iterdir())
        files = [f for f in files if is_sqlite_file(f) or (f.suffix.lower() in DATABASE_SUFFIXES and not f.is_dir())]
        stems = [f.stem for f in files]
        return {(f.stem if stems.count(f.stem) == 1 else f.name): f for f in files}

    def _schema(self, db: Path) -> Schema:
        if db not in self._schemas:
            # UnsafeInput (a ValueError) is a rejection: a link or a special file first, then the header,
            # then the size and every table's shape.
            regular_file_inside(db, self._root, self.limits.max_file_bytes)
            if not is_sqlite_file(db):
                raise ValueError(f"{db.name} is not a SQLite database (no 'SQLite format 3' header)")
            check_table_file(db, self._root, "sqlite", self.limits)
            con = connect_read_only(db)
            try:
                self._schemas[db] = read_schema(con)
            except sqlite3.DatabaseError as exc:
                raise ValueError(f"{db.name}: unreadable SQLite database: {exc}") from exc
            finally:
                con.close()
        return self._schemas[db]

    def candidates(self) -> list[str]:
        out = []
        for stem, db in sorted(self._files().items()):
            try:
                facts = fact_tables(self._schema(db))
            except ValueError:
                out.append(f"sqlite/{stem}")  # rejected at load, with the reason, in the run report
                continue
            tables = sorted(facts + standalone_tables(self._schema(db)))
            # a database without tables still appears once, so its reason reaches the run report
            out += [f"sqlite/{stem}/{table}" for table in tables] or [f"sqlite/{stem}"]
        return out

    def _resolve(self, ref: str) -> tuple[Path, str]:
        _, _, rest = ref.partition("/")
        stem, _, fact = rest.partition("/")
        db = self._files().get(stem)
        if db is None:
            raise ValueError(f"sqlite source: no database for {ref!r} in {self.path}")
        schema = self._schema(db)
        if not fact:
            raise ValueError(f"{db.name}: the database holds no table")
        if fact not in schema.tables:
            raise ValueError(f"sqlite source: {db.name} has no table {fact!r}")
        return db, fact

    def _layout(self, ref: str) -> tuple[Path, str, list[Relation], AnalysisLayout]:
        db, fact = self._resolve(ref)
        schema = self._schema(db)
        plan = join_plan(schema, fact)  # empty for a standalone table: the table itself
        # Tables and keys are read back by name (the relational IF files keep them), so a name
        # is never rewritten here: one with a control character rejects the dataset.
        for what, name in [("table", fact), *(("table", r.ref_table) for r in plan),
                           *(("key column", r.ref_column) for r in plan)]:
            if control_free_name(name, what) != name:
                raise DatasetRejected(f"{what} name '{printable(name)}' holds a line break or tab", "control_character_name")
        return db, fact, plan, analysis_layout(schema, fact, plan)

    def load_columns(self, ref: str) -> tuple[str, ...]:
        """The analysis table's column names, as load_table names them, without reading a row."""
        return tuple(self._layout(ref)[3].names)

    def record(self, ref: str) -> DatasetRecord:
        db, fact, plan, layout = self._layout(ref)
        schema = self._schema(db)
        doc = read_sidecar(db, self._root, self.limits, _DOC_FIELDS)
        types = {t: dict(cols) for t, cols in schema.columns.items()}
        by_source = dict(zip(layout.sources, layout.names))
        # The schema documents each column: where it lives and its declared type.
        docs = {name: f"{c} from table {t}, declared {types[t][c] or 'without a type'}"
                for (t, c), name in by_source.items()}
        for key, text in (doc.pop("column_descriptions", None) or {}).items():
            t, dot, c = key.partition(".")
            name = by_source.get((t, c)) if dot else None
            docs[name or key] = text
        hint = doc.pop("target_hint", None)
        if hint and "." in hint:
            hint = by_source.get(tuple(hint.split(".", 1)), hint)
        tables = [fact] + [r.ref_table for r in plan]
        joins = "; ".join(f"{r.table}.{r.column} -> {r.ref_table}.{r.ref_column}"
                          f" ({'declared foreign key' if r.declared else 'matched by name'})" for r in plan)
        schema_text = "\n".join(
            f"{t}: " + ", ".join(f"{c} {d}".strip() for c, d in schema.columns[t]) for t in tables)
        if plan:
            description = (f"Table {fact} of the SQLite database {db.name}, left-joined many-to-one to "
                           f"{', '.join(tables[1:])} ({joins}).\n\nSchema:\n{schema_text}")
            title = f"{db.stem}: {fact} joined with {', '.join(tables[1:])}"
        else:
            description = f"Table {fact} of the SQLite database {db.name}.\n\nSchema:\n{schema_text}"
            title = f"{db.stem}: {fact}"
        fields = {"title": title, "description": description, **doc}
        if doc.get("description"):
            fields["description"] = doc["description"] + "\n\n" + description
        if "tags" in fields:
            fields["tags"] = tuple(fields["tags"])
        return DatasetRecord(ref=ref, source=self.key, slug=f"sqlite_{_slug(db.stem)}_{_slug(fact)}",
                             column_descriptions=docs, target_hint=hint, join_path=layout.steps, **fields)

    def load_table(self, ref: str) -> pd.DataFrame:
        db, fact, plan, layout = self._layout(ref)
        con = connect_read_only(db)
        try:
            (n_fact,) = con.execute(f"SELECT COUNT(*) FROM {quote_identifier(fact)}").fetchone()
            check_table_shape(f"{db.name}:{fact} joined", n_fact, len(layout.names), self.limits)
            try:
                df = pd.read_sql_query(join_query(fact, plan, layout.sources), con)
            except sqlite3.OperationalError:  # a WITHOUT ROWID fact table: its scan order is its key order
                df = pd.read_sql_query(join_query(fact, plan, layout.sources, ordered=False), con)
        except sqlite3.DatabaseError as exc:  # e.g. a corrupt page met while reading rows
            raise ValueError(f"{db.name}: cannot read {fact!r}: {exc}") from exc
        finally:
            con.close()
        if len(df) != n_fact:  # uniqueness was checked; a change underneath us must not pass silently
            raise ValueError(f"joining {fact!r} gave {len(df)} rows, not its {n_fact}")
        df.columns = list(layout.names)
        return df
