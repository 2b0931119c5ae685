"""`daregen export` reads a tree (and each `--holdout` tree) it did not write as hostile: no link or special
file is followed or copied, every data file is bounded before it is decoded, metadata is checked, a bad task
is dropped with its name and reason while the rest export, an export never deletes a file it did not write,
two exports never share a file name unless they share its content, and untrusted text stays inert."""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.cli import main
from pipeline.core import names
from pipeline.core.jsonio import read_json, write_json
from pipeline.core.safe_io import InputLimits
from pipeline.export.export import CARD, EXPORT_REPORT, export_tree, split_files

SECRET = "BARSLEAK-export-secret"


def _ts_task(tree: Path, name: str, seed: int, licence: str = "CC0") -> Path:
    """A time-series task with what export reads (a series has no SFT solution, so no sandbox runs)."""
    rng = np.random.default_rng(seed)
    task = tree / name
    (task / names.SOURCE_DIR).mkdir(parents=True)
    (task / names.VERIFY_DIR).mkdir(parents=True)
    series = pd.DataFrame({"t": pd.date_range("2000-01-01", periods=40, freq="D").strftime("%Y-%m-%d"),
                           "y": rng.normal(0, 1, 40).round(4), "x": rng.normal(5, 2, 40).round(4)})
    series.iloc[:30].to_csv(task / names.SOURCE_DIR / "train.csv", index=False)
    val = series.iloc[30:].reset_index(drop=True).rename_axis(names.ROW_ID).reset_index()
    val.drop(columns=["y"]).to_csv(task / names.SOURCE_DIR / "val_v1.csv", index=False)
    val[[names.ROW_ID, "y"]].to_csv(task / names.VERIFY_DIR / names.GROUND_TRUTH_V1, index=False)
    val[["t", "y"]].to_csv(task / names.VERIFY_DIR / names.GROUND_TRUTH_V2, index=False)
    write_json(task / names.VERIFY_DIR / names.ALL_METADATA, {
        "question": {"target": ["y"], "problem_type": names.TIME_SERIES_PROBLEM, "time_column": "t",
                     "time_format": "%Y-%m-%d"},
        "data_info": {"licenseName": licence}, "daregen": {"ref": f"local/{name}"}})
    return task


def _tree(root: Path, n: int = 3, **licences: str) -> Path:
    tree = root / "tree"
    tasks = [_ts_task(tree, f"task{i}_ts", seed=i + 100 * len(str(root)), licence=licences.get(f"task{i}_ts", "CC0"))
             for i in range(n)]
    write_json(tree / names.QUESTION_LIST, [
        {"file_path": t.name, "task": names.TIME_SERIES_PROBLEM, "question_v1": f"Forecast y for {t.name}.",
         "needed_files_v1": ["train.csv", "val_v1.csv"]} for t in tasks])
    return tree


def _export(tree: Path, out: Path, **kw):
    return export_tree(tree, out, eval_fraction=0.0, seed=0, jobs=1, **kw)


def _all_bytes(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file() and not p.is_symlink())


def _dropped(out: Path) -> dict[str, str]:
    return {d["task_dir"]: d["reason"] for d in read_json(out / EXPORT_REPORT)["dropped_tasks"]}


@pytest.mark.parametrize("attack", ["symlink to a secret", "hard link to a secret", "linked task folder",
                                    "link to /dev/zero", "fifo", "nested symlink"])
def test_a_task_with_a_link_or_special_file_is_dropped_and_nothing_it_points_at_is_copied(
        tmp_path: Path, attack: str) -> None:
    tree = _tree(tmp_path)
    secret = tmp_path / "credentials"
    secret.write_text(SECRET)
    source = tree / "task1_ts" / names.SOURCE_DIR
    if attack == "symlink to a secret":
        (source / "notes.txt").symlink_to(secret)
    elif attack == "hard link to a secret":
        os.link(secret, source / "notes.txt")
    elif attack == "linked task folder":
        elsewhere = tmp_path / "elsewhere"
        (tree / "task1_ts").rename(elsewhere)
        (elsewhere / names.SOURCE_DIR / "notes.txt").write_text(SECRET)
        (tree / "task1_ts").symlink_to(elsewhere)
    elif attack == "link to /dev/zero":
        (source / "zeros.bin").symlink_to("/dev/zero")
    elif attack == "fifo":
        os.mkfifo(source / "pipe.csv")
    else:
        (source / "deeper").mkdir()
        (source / "deeper" / "notes.txt").symlink_to(secret)
    out = tmp_path / "export"
    _export(tree, out)
    assert SECRET.encode() not in _all_bytes(out)
    assert "task1_ts" in _dropped(out), _dropped(out)
    assert not (out / "tasks" / "task1_ts").exists()
    assert {p.name for p in (out / "tasks").iterdir() if p.is_dir()} == {"task0_ts", "task2_ts"}
    assert not any(p.is_symlink() for p in out.rglob("*"))
    assert all(p.stat().st_nlink == 1 for p in (out / "tasks").rglob("*") if p.is_file())  # copies, not links


@pytest.mark.parametrize("meta, reason", [([], "is a list, not an object"),
                                          ({"question": {"target": "y", "problem_type": "time_series_analysis"}},
                                           "non-empty list of column names, got 'y'"),
                                          ({"question": []}, "no question block"),
                                          ({"question": {"target": ["y"], "problem_type": "poetry"}},
                                           "problem_type 'poetry'")])
def test_bad_metadata_drops_the_task_with_its_name_and_reason(tmp_path: Path, meta, reason: str) -> None:
    tree = _tree(tmp_path)
    write_json(tree / "task2_ts" / names.VERIFY_DIR / names.ALL_METADATA, meta)
    out = tmp_path / "export"
    result = _export(tree, out)
    assert reason in _dropped(out)["task2_ts"]
    assert any(line.startswith("dropped  tree::task2_ts: ") for line in result.lines)
    assert sum(result.rows.values()) == 2  # the other two tasks, one XF row each


def test_a_parquet_bomb_in_a_holdout_tree_is_refused_by_its_decoded_size(tmp_path: Path) -> None:
    """A dictionary-encoded column repeating one long value: kilobytes on disk, far more decoded."""
    tree = _tree(tmp_path)
    holdout = _tree(tmp_path / "held")
    bomb = holdout / "task0_ts" / names.SOURCE_DIR / "train_v2.parquet"
    pq.write_table(pa.table({"v": pa.array(["x" * 1000] * 20_000).dictionary_encode()}), bomb,
                   compression="zstd")
    assert bomb.stat().st_size < 100_000
    result = _export(tree, tmp_path / "export", holdouts=[holdout],
                     limits=InputLimits(max_decoded_bytes=5_000_000))
    reasons = {d.task_dir: d.reason for d in result.dropped if d.tree.startswith("holdout:")}
    assert "max_decoded_bytes" in reasons["task0_ts"], reasons


def test_a_parquet_bomb_whose_statistics_are_short_is_refused_by_what_it_decodes_to(tmp_path: Path) -> None:
    """Min and max ("a", "z") bound the values' order, not their length: every row but two holds a long value
    lying between them, so the statistics say 1 byte a row while the file decodes to rows x 1,000 bytes."""
    tree = _tree(tmp_path)
    holdout = _tree(tmp_path / "held")
    bomb = holdout / "task0_ts" / names.SOURCE_DIR / "train_v2.parquet"
    indices = pa.array([0, 2] + [1] * 19_998, type=pa.int32())
    column = pa.DictionaryArray.from_arrays(indices, pa.array(["a", "m" + "x" * 999, "z"]))
    pq.write_table(pa.table({"v": column}), bomb, compression="zstd", store_schema=False)  # read back dense
    stats = pq.ParquetFile(bomb).metadata.row_group(0).column(0).statistics
    assert (stats.min, stats.max) == ("a", "z") and bomb.stat().st_size < 100_000
    result = _export(tree, tmp_path / "export", holdouts=[holdout],
                     limits=InputLimits(max_decoded_bytes=5_000_000))
    reasons = {d.task_dir: d.reason for d in result.dropped if d.tree.startswith("holdout:")}
    assert "text columns that decode to over 5000000 bytes" in reasons["task0_ts"], reasons


def test_a_csv_with_one_wide_body_row_is_refused_before_pandas_reads_it(tmp_path: Path) -> None:
    tree = _tree(tmp_path)
    train = tree / "task0_ts" / names.SOURCE_DIR / "train.csv"
    train.write_text(train.read_text() + ",".join(["1"] * 100_000) + "\n")
    result = _export(tree, tmp_path / "export")
    assert "100000 fields" in {d.task_dir: d.reason for d in result.dropped}["task0_ts"]


def test_re_exporting_never_deletes_a_file_the_export_did_not_write(tmp_path: Path, capsys) -> None:
    tree = _tree(tmp_path)
    out = tmp_path / "export"
    _export(tree, out)
    _export(tree, out)  # only its own files there: replaced
    (out / "tasks" / "my_notes.md").write_text("keep me")
    assert main(["export", str(tree), "--out", str(out)]) == 2
    assert "tasks/my_notes.md" in capsys.readouterr().err
    assert (out / "tasks" / "my_notes.md").read_text() == "keep me"
    (out / "tasks" / "my_notes.md").unlink()
    (out / "data" / "link").symlink_to(tmp_path)  # a link counts as a file the export did not write
    with pytest.raises(ValueError, match="data/link"):
        _export(tree, out)


def test_two_exports_of_different_trees_never_share_a_split_file_name(tmp_path: Path) -> None:
    first, second = _tree(tmp_path / "a"), _tree(tmp_path / "b", n=2)
    _export(first, tmp_path / "a" / "export")
    _export(second, tmp_path / "b" / "export")
    a, b = split_files(tmp_path / "a" / "export"), split_files(tmp_path / "b" / "export")
    assert a["train"].name != b["train"].name and a["train"].name.startswith("train-")
    card = (tmp_path / "a" / "export" / CARD).read_text()
    assert f"path: data/{a['train'].name}" in card


def test_untrusted_text_is_inert_in_the_card_and_the_printed_lines(tmp_path: Path, capsys) -> None:
    hostile = "MIT\x1b[2J<img src=x onerror=alert(1)>[click](javascript:alert(1))|forged|"
    tree = _tree(tmp_path, task0_ts=hostile)
    write_json(tree / "task1_ts" / names.VERIFY_DIR / names.ALL_METADATA, [])  # a dropped task's line is printed
    os.rename(tree / "task1_ts", tree / "task1_\x1b[31mts")
    assert main(["export", str(tree), "--out", str(tmp_path / "export")]) == 0
    card = (tmp_path / "export" / CARD).read_text()
    printed = capsys.readouterr().out
    for text in (card, printed):
        assert "\x1b" not in text
    # Backslash-escaped (pipeline.core.text.md_cell): `\<img`, `\[click\](` and `\|forged\|` render as text.
    assert not re.search(r"(?<!\\)<img|(?<!\\)\[click|(?<!\\)\|forged", card)
    assert "\\<img" in card and "\\[click\\](" in card and "\\|forged\\|" in card
    assert "task1_\\x1b" in printed


def test_split_tables_that_share_a_row_id_are_dropped_before_they_are_joined(tmp_path: Path) -> None:
    """Each table is within the limits, but joined on a row_id they all repeat they would multiply (two
    tables of 2,000 rows: 4 million rows; of 30,000: 9 x 10^8), outside any sandbox."""
    import sqlite3

    tree = _tree(tmp_path)
    task = tree / "task3_class"
    (task / names.SOURCE_DIR).mkdir(parents=True)
    (task / names.VERIFY_DIR).mkdir(parents=True)
    con = sqlite3.connect(task / names.SOURCE_DIR / "train_v2.sqlite")
    for table in ("table_1", "table_2"):
        con.execute(f"CREATE TABLE {table} (row_id INTEGER, {table}_x INTEGER)")
        con.executemany(f"INSERT INTO {table} VALUES (1, ?)", [(i,) for i in range(2000)])
    con.commit()
    con.close()
    pd.DataFrame({names.ROW_ID: [0, 1], "y": ["a", "b"]}).to_csv(task / names.VERIFY_DIR / names.GROUND_TRUTH,
                                                                  index=False)
    write_json(task / names.VERIFY_DIR / names.ALL_METADATA, {
        "question": {"target": ["y"], "problem_type": "classification", "save_file_type": "sqlite"},
        "data_info": {"licenseName": "CC0"}, "daregen": {"ref": "local/task3"}})
    result = _export(tree, tmp_path / "export")
    reasons = {d.task_dir: d.reason for d in result.dropped}
    assert "table 'table_1' has no unique 'row_id' to join on" in reasons["task3_class"], reasons
    assert sum(result.rows.values()) == 3  # the three series export
