"""tasks.parquet: one row per task of a tree, to query (`daregen tasks TREE --sql ...`).

The index is made from the task folders alone (pipeline.review.reports.read_task_facts), in task
folder order, with fixed column types, so the same tasks give the same bytes; the build writes it
before the manifest, which lists it. A tree may be downloaded, so the file is read like every tree file
(pipeline.core.safe_io, within INDEX_LIMITS) by pyarrow, and duckdb gets the table, never the path:
a tree path holding `[` or `*` is a path, not a glob that reads another tree's index.
"""

from __future__ import annotations

import csv
import io
import json
import os
import resource
import threading
from collections.abc import Mapping
from contextlib import contextmanager
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.core.safe_io import InputLimits, UnsafeInput, read_parquet_inside
from pipeline.core.sqlite import quote_identifier
from pipeline.core.text import printable
from pipeline.review.reports import TaskFacts, read_tree_facts
from pipeline.review.task_filter import parse_order_by, parse_where
from pipeline.run_report import evidence_strength

TASKS_PARQUET = "tasks.parquet"
# Column -> (arrow type, its value from one task's facts). Scores: mm_baselines' reference_r2 /
# reference_accuracy for tabular tasks; time series record baselines only.
_COLUMNS = {
    "task_dir": (pa.string(), lambda f: f.task_dir),
    "ref": (pa.string(), lambda f: f.ref),
    "problem_type": (pa.string(), lambda f: f.problem_type),
    "target": (pa.string(), lambda f: f.target),
    "evidence_kind": (pa.string(), lambda f: f.target_evidence_kind),
    # What the choice rests on: the source's documentation, or a fallback reading of the target's own words
    # (a reviewer reads those first), and the evidence sentence itself, naming the rule that fired.
    "evidence_strength": (pa.string(), lambda f: evidence_strength(f.target_evidence_kind)),
    "target_evidence": (pa.string(), lambda f: f.target_evidence),
    "n_features": (pa.int64(), lambda f: f.n_features),
    "train_rows": (pa.int64(), lambda f: f.train_rows),
    "val_rows": (pa.int64(), lambda f: f.val_rows),
    "file_format": (pa.string(), lambda f: f.file_type),
    "model": (pa.string(), lambda f: f.model_type),
    "baselines": (pa.string(), lambda f: json.dumps(f.baselines, sort_keys=True)),
    "reference_score": (pa.float64(), lambda f: _reference_score(f)),
    "curation_state": (pa.string(), lambda f: f.curation_state),
    "design_digest": (pa.string(), lambda f: f.design_digest),  # what `curate approve --digest` names
    "licence": (pa.string(), lambda f: f.licence),
}
COLUMNS = tuple(_COLUMNS)
# What `daregen tasks` shows in a terminal without --columns: all 17 made a row of ~400 characters. The
# machine formats (csv, json) give every column unless asked for fewer.
TABLE_COLUMNS = ("task_dir", "problem_type", "target", "evidence_strength", "train_rows", "val_rows",
                 "reference_score", "curation_state")


def _reference_score(f: TaskFacts) -> float | None:
    scores = [v for k, v in f.baselines.items() if k.startswith("reference_")]
    return scores[0] if scores else None


def index_table(tree: Path, digests: Mapping[str, str] | None = None) -> pa.Table:
    """The index's rows; `digests`: the design digests the build computed (stamp_curation), by task folder."""
    facts = read_tree_facts(Path(tree), digests)
    schema = pa.schema([(name, kind) for name, (kind, _) in _COLUMNS.items()])
    return pa.table({name: pa.array([value(f) for f in facts], type=kind)
                     for name, (kind, value) in _COLUMNS.items()}, schema=schema)


def write_task_index(tree: Path, digests: Mapping[str, str] | None = None) -> Path:
    """Write `tree`/tasks.parquet (no statistics that could vary, one row group)."""
    path = Path(tree) / TASKS_PARQUET
    pq.write_table(index_table(tree, digests), path, compression="zstd", write_statistics=False)
    return path


# One row per task (a tree of 200,000 tasks is far beyond any built): bounds far below the readers'
# defaults (512 MiB, 2 GiB decoded, 5M rows), so a
# crafted tasks.parquet (a 271 KB file whose one dictionary entry of 100 KB stood on every row decoded
# to 8 GB) is refused from its metadata and dictionaries before anything decodes it. The build writes
# one row group; 64 admit another writer's, and 20,000 one-row groups cost 35 s and 1.8 GB to read.
INDEX_LIMITS = InputLimits(max_file_bytes=16 << 20, max_decoded_bytes=256 << 20, max_rows=200_000,
                           max_columns=64, max_cells=12_800_000, max_row_groups=64)
# duckdb for a query over the index, and nothing else: no file read or written (COPY ... TO, ATTACH,
# read_csv('/etc/passwd'), glob), no extension installed or loaded, no Python variable found by name,
# one thread, bounded memory. lock_configuration, set once the table is registered, keeps a query
# from SETting any of it back.
_DUCKDB_CONFIG = {"enable_external_access": False, "autoinstall_known_extensions": False,
                  "autoload_known_extensions": False, "python_enable_replacements": False, "threads": 1,
                  "memory_limit": "1GB"}


# A query's own bounds (`--sql`): wall-clock time, and what its result may hold once out of duckdb.
QUERY_SECONDS = 30
MAX_RESULT_ROWS, MAX_RESULT_CELLS, MAX_RESULT_BYTES = 200_000, 2_000_000, 64 << 20
QUERY_ADDRESS_SPACE = 3 << 30
_RESULT_BATCH_ROWS = 16  # a batch is converted whole before its size is known: keep one small


def load_index(tree: Path) -> pa.Table:
    """The tree's index, read through safe_io like every tree reader (a regular file at exactly
    `tree`/tasks.parquet, no link, within INDEX_LIMITS) and checked to hold the index's columns with
    their types; UnsafeInput (a ValueError, one line) otherwise."""
    tree = Path(tree)
    path = tree / TASKS_PARQUET
    if not os.path.lexists(path):
        raise UnsafeInput(f"{tree}: no {TASKS_PARQUET} (a tree built before the task index, or not a daregen tree)")
    table = read_parquet_inside(path, tree, INDEX_LIMITS)
    for name, (kind, _) in _COLUMNS.items():
        if name not in table.schema.names:
            raise UnsafeInput(f"{TASKS_PARQUET} is not a daregen task index: no column {name!r}")
        if table.schema.field(name).type != kind:
            raise UnsafeInput(f"{TASKS_PARQUET} is not a daregen task index: column {name!r} is "
                              f"{table.schema.field(name).type}, not {kind}")
    return table.select(list(COLUMNS))


def query(tree: Path, sql: str | None = None, where: str | None = None, order_by: str | None = None,
          columns: str | None = None) -> tuple[list[str], list[tuple]]:
    """(column names, rows) of `sql` (one SELECT) over the tree's index as the table `tasks`, or of a
    select built from `columns`, `where` (a condition: task_filter.parse_where) and `order_by` (default:
    task_dir order). Nothing from the caller is pasted into SQL but `sql` itself, which runs alone, as a
    SELECT, on a connection that can touch no file."""
    params: list = []
    if sql is None:
        wanted = [c.strip() for c in (columns or ",".join(COLUMNS)).split(",") if c.strip()]
        wanted = list(COLUMNS) if wanted == ["all"] else wanted
        unknown = [c for c in wanted if c not in COLUMNS]
        if unknown:
            raise ValueError(f"--columns: unknown column {unknown[0]!r} (known: {', '.join(COLUMNS)})")
        condition, params = parse_where(where, COLUMNS) if where else ("", [])
        sql = (f"select {', '.join(quote_identifier(c) for c in wanted)} from tasks"
               + (f" where {condition}" if condition else "") + f" order by {parse_order_by(order_by, COLUMNS)}")
    table = load_index(tree)
    con = duckdb.connect(":memory:", config=_DUCKDB_CONFIG)
    try:
        con.register("tasks", table)
        con.execute("set lock_configuration = true")
        statements = con.extract_statements(sql)
        if len(statements) != 1 or statements[0].type != duckdb.StatementType.SELECT:
            kinds = ", ".join(s.type.name for s in statements) or "nothing"
            raise ValueError(f"--sql must be one SELECT over tasks (got {kinds})")
        return _bounded_result(con, sql, params)
    except duckdb.InterruptException:
        raise ValueError(f"query stopped after {QUERY_SECONDS} s, its time limit: narrow it (a WHERE, a LIMIT, "
                         "fewer joins)") from None
    except duckdb.Error as exc:
        raise ValueError(f"query failed: {str(exc).splitlines()[0]}") from None
    finally:
        con.close()


def _bounded_result(con: duckdb.DuckDBPyConnection, sql: str, params: list) -> tuple[list[str], list[tuple]]:
    """(column names, rows) of `sql`, streamed in small Arrow batches within the result limits, interrupted
    (duckdb's connection interrupt) after QUERY_SECONDS, in an address space capped QUERY_ADDRESS_SPACE above
    what the process holds. A cursor's fetchall of `select repeat('x', 10**6) from range(3000)` built 3 GB of
    Python strings outside duckdb's memory_limit before failing with a MemoryError traceback, and duckdb
    evaluates a 2,048-row vector of such values outside that limit too; `select count(*) from range(10**13)`
    ran for hours."""
    timer = threading.Timer(QUERY_SECONDS, con.interrupt)
    timer.daemon = True
    timer.start()
    try:
        with _address_space_cap(QUERY_ADDRESS_SPACE):
            reader = con.sql(sql, params=params or None).to_arrow_reader(_RESULT_BATCH_ROWS)
            batches, rows, size = [], 0, 0
            for batch in reader:
                rows, size = rows + batch.num_rows, size + batch.nbytes
                if rows > MAX_RESULT_ROWS or rows * batch.num_columns > MAX_RESULT_CELLS or size > MAX_RESULT_BYTES:
                    raise ValueError(f"query result over its limits ({MAX_RESULT_ROWS:,} rows, {MAX_RESULT_CELLS:,} "
                                     f"cells, {MAX_RESULT_BYTES >> 20} MiB): narrow it (a WHERE, a LIMIT, fewer "
                                     "columns)")
                batches.append(batch)
            table = pa.Table.from_batches(batches, schema=reader.schema)
            del batches, reader
            # column by column: two result columns may share a name (`select 1, 1`), which a row dict would merge
            return list(table.schema.names), list(zip(*(column.to_pylist() for column in table.columns)))
    except MemoryError:
        raise ValueError(f"query failed: out of memory (a query may use {QUERY_ADDRESS_SPACE >> 30} GiB): narrow "
                         "it (smaller values, a LIMIT)") from None
    except OSError as exc:  # duckdb's errors while streaming (out of memory) reach Arrow's reader as OSError
        raise ValueError(f"query failed: {str(exc).splitlines()[0]}") from None
    finally:
        timer.cancel()


@contextmanager
def _address_space_cap(extra: int):
    """The process's address space capped `extra` bytes above its current size while the block runs (the soft
    RLIMIT_AS, set back after): an allocation past it fails in duckdb or Arrow as an error, never as the
    machine's out-of-memory killer. No cap where /proc/self/statm is missing or a lower limit already holds."""
    try:
        used = int(Path("/proc/self/statm").read_text(encoding="ascii").split()[0]) * resource.getpagesize()
    except (OSError, ValueError, IndexError):
        yield
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = used + extra
    if (soft != resource.RLIM_INFINITY and soft <= cap) or (hard != resource.RLIM_INFINITY and hard < cap):
        yield
        return
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
def render_csv(header: list[str], rows: list[tuple]) -> str:
    """The rows as CSV (None as empty), a header first; a cell's control characters shown escaped, as in
    the table, so a value from a downloaded tree cannot drive the terminal it is printed on."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([printable(h) for h in header])
    writer.writerows(["" if v is None else printable(v) if isinstance(v, str) else v for v in row] for row in rows)
    return out.getvalue()


def render_json(header: list[str], rows: list[tuple]) -> str:
    """The rows as a JSON list of objects, one per row, keys in column order (json escapes control
    characters itself)."""
    return json.dumps([dict(zip(header, row)) for row in rows], indent=1, default=str) + "\n"


def render_rows(header: list[str], rows: list[tuple]) -> str:
    """A plain aligned table for a terminal (None as empty), one line per row: a cell's control characters,
    its line breaks included, are shown escaped (printable), so a value from the tree cannot forge a row."""
    cells = [[printable(h) for h in header]] + [["" if v is None else printable(v) for v in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells)
