"""tasks.parquet: one row per task of a tree, to query (`daregen tasks TREE --sql ...`).

The index is made from the task folders alone (pipeline.review.reports.read_task_facts), in task
folder order, with fixed column types, so the same tasks give the same bytes; the build writes it
before the manifest, which lists it. Queries run in duckdb over the file as the view `tasks`.
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.review.reports import TaskFacts, read_tree_facts
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


def _reference_score(f: TaskFacts) -> float | None:
    scores = [v for k, v in f.baselines.items() if k.startswith("reference_")]
    return scores[0] if scores else None


def index_table(tree: Path) -> pa.Table:
    facts = read_tree_facts(Path(tree))
    schema = pa.schema([(name, kind) for name, (kind, _) in _COLUMNS.items()])
    return pa.table({name: pa.array([value(f) for f in facts], type=kind)
                     for name, (kind, value) in _COLUMNS.items()}, schema=schema)


def write_task_index(tree: Path) -> Path:
    """Write `tree`/tasks.parquet (no statistics that could vary, one row group)."""
    path = Path(tree) / TASKS_PARQUET
    pq.write_table(index_table(tree), path, compression="zstd", write_statistics=False)
    return path


def query(tree: Path, sql: str | None = None, where: str | None = None, order_by: str | None = None,
          columns: str | None = None) -> tuple[list[str], list[tuple]]:
    """(column names, rows) of `sql` over the tree's index as `tasks`, or of a select built from
    `columns`, `where` and `order_by` (default: task_dir order)."""
    path = Path(tree) / TASKS_PARQUET
    if not path.is_file():
        raise ValueError(f"{tree}: no {TASKS_PARQUET} (a tree built before the task index, or not a daregen tree)")
    if sql is None:
        wanted = [c.strip() for c in (columns or ",".join(COLUMNS)).split(",") if c.strip()]
        unknown = [c for c in wanted if c not in COLUMNS]
        if unknown:
            raise ValueError(f"--columns: unknown column {unknown[0]!r} (known: {', '.join(COLUMNS)})")
        sql = (f"select {', '.join(wanted)} from tasks" + (f" where {where}" if where else "")
               + f" order by {order_by or 'task_dir'}")
    con = duckdb.connect(":memory:")
    try:
        literal = "'" + str(path.resolve()).replace("'", "''") + "'"  # a path, quoted as an SQL string
        con.execute(f"create view tasks as select * from read_parquet({literal})")
        cursor = con.execute(sql)
        return [d[0] for d in cursor.description], cursor.fetchall()
    except duckdb.Error as exc:
        raise ValueError(f"query failed: {str(exc).splitlines()[0]}") from None
    finally:
        con.close()


def render_rows(header: list[str], rows: list[tuple]) -> str:
    """A plain aligned table for a terminal (values printed as they are, None as empty)."""
    cells = [header] + [["" if v is None else str(v) for v in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells)
