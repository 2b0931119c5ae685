"""`daregen tasks` reads a tree's tasks.parquet like every tree reader: a regular file at exactly
TREE/tasks.parquet, no link, bounded in bytes, rows and decoded size, decoded by pyarrow and handed to
duckdb as a table. `--where`/`--order-by` are parsed over the index's columns with values bound as
parameters, never pasted into SQL; `--sql` is one SELECT on a connection that can read or write no
file. Each refusal is one line.

Findings of issue 42 reproduced here: a 5 KB tasks.parquet that decodes to 8 GB (and one of a
thousand row groups, each a decode of its own), an index followed
through a symbolic link, `--where` with a stacked `COPY ... TO` that wrote a file, a tree path with
glob characters that read another tree's index, a value whose line break forged a row of the table.
"""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.cli import main
from pipeline.review.task_index import _COLUMNS, TASKS_PARQUET, query, write_task_index
from pipeline.review.task_filter import parse_order_by, parse_where
from tests.factories import write_question_list_by_hand as write_question_list, write_task_folder


def _tree(root: Path, *tasks: tuple[str, str]) -> Path:
    """A tree of (task_dir, problem_type) tasks with its index, as a build writes it."""
    root.mkdir(parents=True, exist_ok=True)
    write_question_list(root, [write_task_folder(root, name, problem_type=kind) for name, kind in tasks])
    write_task_index(root)
    return root


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return _tree(tmp_path / "tree", ("a_class", "classification"), ("b_reg", "regression"),
                 ("c_class", "classification"))


def _refused(capsys, argv: list[str]) -> str:
    """The one line `daregen` prints when it refuses `argv`."""
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("daregen: error: ") and err.count("\n") == 1, err
    return err


def _refused_writing_nothing(capsys, tree: Path, tmp_path: Path, flag: str, template: str) -> str:
    """The one line `daregen tasks TREE FLAG VALUE` refuses with, where VALUE (`template` with `{out}` a file
    path) tries to write that file: the file must not exist afterwards."""
    out = tmp_path / "copied.csv"
    err = _refused(capsys, ["tasks", str(tree), flag, template.format(out=out)])
    assert not out.exists()
    return err


def _bomb(path: Path, rows: int, value_bytes: int) -> None:
    """An index of the right schema whose `baselines` column holds one dictionary entry of `value_bytes`
    on every row, without statistics: a few KB on disk, rows x value_bytes decoded."""
    columns = {}
    for name, (kind, _) in _COLUMNS.items():
        if name == "baselines":
            columns[name] = pa.DictionaryArray.from_arrays(pa.array([0] * rows, pa.int32()), pa.array(["x" * value_bytes]))
        else:
            columns[name] = pa.array([{pa.string(): "t", pa.int64(): 1}.get(kind, 0.5)] * rows, kind)
    pq.write_table(pa.table(columns), path, compression="zstd", write_statistics=False)


def test_an_ordinary_query_filters_orders_and_selects(tree: Path, capsys) -> None:
    assert main(["tasks", str(tree), "--where", "problem_type = 'classification' and not task_dir like 'c%'",
                 "--columns", "task_dir,problem_type"]) == 0
    assert [line.split() for line in capsys.readouterr().out.splitlines()] == [
        ["task_dir", "problem_type"], ["a_class", "classification"]]
    header, rows = query(tree, columns="task_dir", order_by="problem_type desc")
    assert rows == [("b_reg",), ("a_class",), ("c_class",)]  # ties in task_dir order
    _, rows = query(tree, where="task_dir in ('b_reg', 'c_class') or val_rows between -1 and 0 or licence is null",
                    columns="task_dir")
    assert rows == [("b_reg",), ("c_class",)]
    _, rows = query(tree, sql="select problem_type, count(*) from tasks group by 1 order by 1")
    assert rows == [("classification", 2), ("regression", 1)]


def test_a_decompression_bomb_is_refused_from_its_metadata(tmp_path: Path, capsys) -> None:
    """5 KB on disk, 8 GB decoded (80,000 rows of one 100 KB value): the index's bound is 256 MiB."""
    tree = _tree(tmp_path / "tree", ("a_class", "classification"))
    _bomb(tree / TASKS_PARQUET, 80_000, 100_000)
    assert (tree / TASKS_PARQUET).stat().st_size < 10_000
    err = _refused(capsys, ["tasks", str(tree)])
    assert "over the 268435456-byte limit (max_decoded_bytes)" in err


def test_too_many_rows_are_refused(tmp_path: Path, capsys) -> None:
    tree = _tree(tmp_path / "tree", ("a_class", "classification"))
    _bomb(tree / TASKS_PARQUET, 200_001, 1)
    assert "200001 rows, over the limit of 200000 (max_rows)" in _refused(capsys, ["tasks", str(tree)])


def test_many_row_groups_are_refused(tmp_path: Path, capsys) -> None:
    """The build writes one row group; a thousand one-row groups would each cost pyarrow a decode."""
    tree = _tree(tmp_path / "tree", ("a_class", "classification"))
    rows = pq.read_table(tree / TASKS_PARQUET)
    pq.write_table(pa.concat_tables([rows] * 1_000), tree / TASKS_PARQUET, row_group_size=1)
    assert "has 1000 row groups, over the limit of 64 (max_row_groups)" in _refused(capsys, ["tasks", str(tree)])


def test_an_index_that_is_a_link_or_a_fifo_is_refused(tree: Path, tmp_path: Path, capsys) -> None:
    other = _tree(tmp_path / "other", ("secret_reg", "regression"))
    (tree / TASKS_PARQUET).unlink()
    (tree / TASKS_PARQUET).symlink_to(other / TASKS_PARQUET)
    assert "tasks.parquet is a symbolic link, which is refused" in _refused(capsys, ["tasks", str(tree)])
    (tree / TASKS_PARQUET).unlink()
    os.mkfifo(tree / TASKS_PARQUET)
    assert "tasks.parquet is not a regular file" in _refused(capsys, ["tasks", str(tree)])


def test_an_index_of_another_shape_is_refused(tree: Path, capsys) -> None:
    pq.write_table(pa.table({"task_dir": ["a"]}), tree / TASKS_PARQUET)
    assert "not a daregen task index: no column 'ref'" in _refused(capsys, ["tasks", str(tree)])


def test_a_tree_path_with_glob_characters_reads_its_own_index(tmp_path: Path, capsys) -> None:
    """`t[1]` as a glob matches `t1`: read as a pattern, the first tree's query listed the second's tasks."""
    own = _tree(tmp_path / "t[1]", ("mine_class", "classification"))
    _tree(tmp_path / "t1", ("theirs_reg", "regression"))
    _, rows = query(own, columns="task_dir")
    assert rows == [("mine_class",)]
    star = _tree(tmp_path / "*", ("star_class", "classification"))
    assert query(star, columns="task_dir")[1] == [("star_class",)]


@pytest.mark.parametrize("where", [
    "1=1; copy tasks to '{out}'",
    "task_dir = 'a'; copy tasks to '{out}'",
    "task_dir = 'a') union select * from read_csv('{out}') --",
    "problem_type = 'x' or 1=1",
    "exists (select 1)",
])
def test_where_is_parsed_never_pasted(tree: Path, tmp_path: Path, capsys, where: str) -> None:
    assert _refused_writing_nothing(capsys, tree, tmp_path, "--where", where).startswith("daregen: error: --where: ")


def test_a_quote_in_a_value_is_a_value(tree: Path) -> None:
    _, rows = query(tree, where="task_dir = 'a''; drop table tasks; --'")
    assert rows == []
    assert parse_where("target = 'it''s'", ["target"]) == ('("target" = ?)', ["it's"])


@pytest.mark.parametrize("order_by", ["task_dir; copy tasks to '{out}'", "(select 1)", "1", "task_dir desc desc"])
def test_order_by_is_parsed_never_pasted(tree: Path, tmp_path: Path, capsys, order_by: str) -> None:
    assert _refused_writing_nothing(capsys, tree, tmp_path, "--order-by", order_by).startswith(
        "daregen: error: --order-by: ")
    assert parse_order_by("val_rows desc, ref", ["val_rows", "ref", "task_dir"]) == (
        '"val_rows" DESC, "ref" ASC, "task_dir" ASC')


@pytest.mark.parametrize("sql", [
    "select * from tasks; copy tasks to '{out}'",
    "copy tasks to '{out}'",
    "copy (select 1) to '{out}'",
    "attach '{out}' as other",
    "set enable_external_access = true",
    "install httpfs",
])
def test_sql_is_one_select_and_writes_nothing(tree: Path, tmp_path: Path, capsys, sql: str) -> None:
    assert "must be one SELECT over tasks" in _refused_writing_nothing(capsys, tree, tmp_path, "--sql", sql)


@pytest.mark.parametrize("sql", [
    "select * from read_csv('{secret}')",
    "select * from read_text('{secret}')",
    "select * from '{other}'",
    "select * from read_parquet('{other}')",
    "select * from glob('{glob}')",
    "select * from tasks, (select * from read_csv('{secret}'))",
])
def test_sql_reads_no_other_file(tree: Path, tmp_path: Path, capsys, sql: str) -> None:
    secret = tmp_path / "secret.csv"
    secret.write_text("token\nhunter2\n", encoding="utf-8")
    other = _tree(tmp_path / "other", ("theirs_reg", "regression")) / TASKS_PARQUET
    err = _refused(capsys, ["tasks", str(tree), "--sql", sql.format(secret=secret, other=other, glob=tmp_path / "*")])
    assert "file system operations are disabled" in err and "hunter2" not in err


def test_sql_cannot_lift_its_own_settings(tree: Path, capsys) -> None:
    """The configuration is locked: a SELECT that calls a setting back cannot change it either."""
    err = _refused(capsys, ["tasks", str(tree), "--sql",
                            "select * from tasks where current_setting('enable_external_access') and 1=0; "
                            "set enable_external_access = true"])
    assert "must be one SELECT" in err
    _, rows = query(tree, sql="select current_setting('enable_external_access'), current_setting('lock_configuration')")
    assert rows == [(False, True)]


def test_a_value_with_a_line_break_stays_on_its_row(tree: Path, capsys) -> None:
    """A downloaded index's task_dir holding a newline (and an escape) printed a second, forged row."""
    table = pq.read_table(tree / TASKS_PARQUET)
    forged = "a_class\nz_forged  regression  approved\x1b[2K"
    dirs = [forged if d == "a_class" else d for d in table.column("task_dir").to_pylist()]
    pq.write_table(table.set_column(0, "task_dir", pa.array(dirs, pa.string())), tree / TASKS_PARQUET)
    capsys.readouterr()
    assert main(["tasks", str(tree), "--columns", "task_dir,problem_type"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 4 and lines[1].split() == ["a_class\\nz_forged", "regression", "approved\\x1b[2K",
                                                    "classification"]


def test_sql_is_interrupted_on_a_timer_in_one_line(tree: Path, capsys, monkeypatch) -> None:
    """Issue 48: `--sql` had no time limit (`select count(*) from range(10**13)` runs for hours); duckdb's
    connection interrupt stops it after QUERY_SECONDS."""
    monkeypatch.setattr("pipeline.review.task_index.QUERY_SECONDS", 1)
    err = _refused(capsys, ["tasks", str(tree), "--sql", "select count(*) from range(10000000000000)"])
    assert "query stopped after 1 s, its time limit" in err, err


@pytest.mark.parametrize("sql", [
    "select repeat('x', 1000000) from range(3000)",  # 3 GB of strings: a MemoryError traceback before
    "select * from range(1000000)",  # rows
    "select * from tasks a, tasks b, tasks c, tasks d, tasks e, tasks f, tasks g, tasks h, tasks i, tasks j",
])
def test_sql_results_are_fetched_within_a_row_and_byte_cap(tree: Path, capsys, sql: str) -> None:
    """Results leave duckdb (and its memory_limit) in small Arrow batches, counted as they come."""
    err = _refused(capsys, ["tasks", str(tree), "--sql", sql])
    assert "query result over its limits" in err and "MiB" in err, err


def test_a_bounded_result_keeps_columns_that_share_a_name(tree: Path) -> None:
    header, rows = query(tree, sql="select task_dir as a, 1 as a from tasks order by task_dir limit 2")
    assert header == ["a", "a"] and rows == [("a_class", 1), ("b_reg", 1)]
    assert query(tree, sql="select * from tasks where 1 = 0")[1] == []


def test_values_too_large_for_the_query_memory_fail_in_one_line(tree: Path, capsys) -> None:
    """A 2,048-row duckdb vector of 10 MB values (20 GB) is evaluated outside duckdb's memory_limit: the query
    runs in an address space capped above what the process holds, set back after."""
    import resource

    before = resource.getrlimit(resource.RLIMIT_AS)
    err = _refused(capsys, ["tasks", str(tree), "--sql", "select repeat('x', 10000000) from range(3000)"])
    assert "query failed: Out of Memory Error" in err or "query result over its limits" in err, err
    assert resource.getrlimit(resource.RLIMIT_AS) == before
def test_the_terminal_table_is_a_summary_and_csv_json_give_every_column(tree: Path, capsys) -> None:
    # Issue 49: all 17 columns made a ~400-character row, and there was no machine format.
    import csv
    import io
    import json

    from pipeline.review.task_index import COLUMNS, TABLE_COLUMNS

    capsys.readouterr()
    assert main(["tasks", str(tree)]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split() == list(TABLE_COLUMNS) and len(table) == 4
    assert main(["tasks", str(tree), "--columns", "all"]) == 0
    assert capsys.readouterr().out.splitlines()[0].split() == list(COLUMNS)
    assert main(["tasks", str(tree), "--format", "csv", "--where", "problem_type = 'classification'"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [r["task_dir"] for r in rows] == ["a_class", "c_class"] and list(rows[0]) == list(COLUMNS)
    assert main(["tasks", str(tree), "--format", "json", "--columns", "task_dir,train_rows"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert [list(r) for r in got] == [["task_dir", "train_rows"]] * 3 and got[0]["task_dir"] == "a_class"


def test_an_unquoted_text_value_is_quoted_back_as_typed_with_the_fix(tree: Path, capsys) -> None:
    # Issue 49: `--where "target = lifeExp"` said "got 'lifeexp'": lower-cased, and no word of quoting.
    err = _refused(capsys, ["tasks", str(tree), "--where", "target = lifeExp"])
    assert "got 'lifeExp'" in err and "text is quoted, 'lifeExp'" in err
