"""`daregen diff` on trees someone else wrote finishes and tells the truth: a link, a FIFO or a parquet
bomb in a tree is reported as refused (never hashed, counted or decoded, never hangs), and no text in
a tree can close a Markdown code span or fence early."""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.core import names
from pipeline.review.diff import diff_trees, render_markdown
from pipeline.core.text import md_code
from pipeline.curate import status_lines
from pipeline.review.reports import LINKED_TASK, read_tree_facts, render_licence_distribution
from tests.factories import QUESTION_V1, write_question_list_by_hand as write_question_list, write_task_folder


def _trees(tmp_path: Path, new_v1: str = QUESTION_V1) -> tuple[Path, Path]:
    old, new = tmp_path / "old", tmp_path / "new"
    write_question_list(old, [write_task_folder(old, "t_class")])
    write_question_list(new, [write_task_folder(new, "t_class", question_v1=new_v1)])
    return old, new


def test_a_linked_ground_truth_is_refused_not_hashed(tmp_path: Path) -> None:
    old, new = _trees(tmp_path)
    secret = tmp_path / "secret.csv"
    secret.write_text((old / "t_class" / names.VERIFY_DIR / names.GROUND_TRUTH).read_text())  # same bytes
    gt = new / "t_class" / names.VERIFY_DIR / names.GROUND_TRUTH
    gt.unlink()
    gt.symlink_to(secret)
    change = diff_trees(old, new).changed[0]
    assert change.ground_truth[0].new == "refused: ground_truth.csv is a symbolic link, which is refused"


def test_a_fifo_is_reported_not_read(tmp_path: Path) -> None:
    old, new = _trees(tmp_path)
    os.mkfifo(old / "t_class" / names.SOURCE_DIR / "val_v1.csv")
    os.mkfifo(new / "t_class" / names.SOURCE_DIR / "val_v1.csv")
    change = diff_trees(old, new).changed[0]
    assert change.files_changed == ("source/val_v1.csv",) and change.row_counts == ()


def test_a_parquet_bomb_is_neither_hashed_nor_counted(tmp_path: Path) -> None:
    """Each row repeats one 10 kB value through a dictionary: 300k rows declare 3 GB decoded, past the
    default 2 GiB limit, in a file of a few kB."""
    old, new = _trees(tmp_path)
    value = pa.array(["x" * 10_000])
    bomb = pa.table({"x": pa.DictionaryArray.from_arrays(pa.array(np.zeros(300_000, dtype=np.int32)), value)})
    for tree, rows in ((old, 300_000), (new, 299_999)):
        pq.write_table(bomb.slice(0, rows), tree / "t_class" / names.SOURCE_DIR / "train_v2.parquet")
    assert (new / "t_class" / names.SOURCE_DIR / "train_v2.parquet").stat().st_size < 100_000
    change = diff_trees(old, new).changed[0]
    assert "source/train_v2.parquet" in change.files_changed
    assert not [r for r in change.row_counts if r.file.startswith("source/train_v2.parquet")]


def test_tildes_and_backticks_cannot_close_the_markdown_early(tmp_path: Path) -> None:
    hostile = QUESTION_V1 + "\n~~~~\n# Injected heading\n``` `tick` ```"
    old, new = _trees(tmp_path, hostile)
    md = render_markdown(diff_trees(old, new))
    assert "\n~~~~~text\n" in md and "\n~~~~~\n" in md  # a fence longer than the text's ~~~~
    assert md_code("a`b") == "``a`b``" and md_code("`x") == "`` `x ``"

def test_html_in_a_licence_is_shown_as_text(tmp_path: Path) -> None:
    write_question_list(tmp_path, [write_task_folder(tmp_path, "t_class", licence="<img src=x onerror=alert(1)>")])
    md = render_licence_distribution(read_tree_facts(tmp_path))
    assert not re.search(r"(?<!\\)<img", md) and "\\<img src=x onerror=alert(1)>" in md


def test_control_characters_in_a_task_name_are_printed_escaped(tmp_path: Path) -> None:
    from pipeline.review.diff import render_summary

    name = "t\r\x1b[2K_class"
    old, new = tmp_path / "old", tmp_path / "new"
    write_question_list(old, [write_task_folder(old, name)])
    write_question_list(new, [write_task_folder(new, name, model="GaussianNB")])
    summary = render_summary(diff_trees(old, new))
    assert "\x1b" not in summary and "\r" not in summary and "t\\r\\x1b[2K_class" in summary


HOSTILE = "x\x1b[2J\x1b]0;pwned\x07<img src=x onerror=alert(1)>[click](javascript:alert(1))"


def test_escape_bytes_and_markup_from_a_tree_stay_inert_in_diff_md_and_html(tmp_path: Path) -> None:
    from pipeline.review.diff import render_html

    old, new = tmp_path / "old", tmp_path / "new"
    write_question_list(old, [write_task_folder(old, "t_class", licence=HOSTILE)])
    write_question_list(new, [write_task_folder(new, "t_class", question_v1=QUESTION_V1 + " " + HOSTILE,
                                                licence=HOSTILE + "2")])
    d = diff_trees(old, new)
    md, page = render_markdown(d), render_html(d)
    for text in (md, page):
        assert "\x1b" not in text and "\x07" not in text
    assert "<img" not in page and "\\x1b" in md and "\\x1b" in page


def test_escape_bytes_and_markup_in_a_licence_stay_inert_in_the_licence_files(tmp_path: Path) -> None:
    from pipeline.review.reports import render_licences_csv

    write_question_list(tmp_path, [write_task_folder(tmp_path, "t_class", licence=HOSTILE)])
    facts = read_tree_facts(tmp_path)
    md, csv_text = render_licence_distribution(facts), render_licences_csv(facts)
    for text in (md, csv_text):
        assert "\x1b" not in text and "\x07" not in text
    # Escaped with backslashes (no entity): `\<img` and `\[click\](` render as text, never as markup.
    assert not re.search(r"(?<!\\)<img|(?<!\\)\[click", md) and "\\<img" in md and "\\[click\\](" in md


def test_a_task_folder_that_is_a_link_out_of_the_tree_is_refused_not_walked(tmp_path: Path) -> None:
    """Refused in one line by `diff` and `curate status`: a linked task folder's files may be anywhere, and
    hashing them (the red team's secret.txt) reads outside the tree, which `verify` refuses too."""
    old, new = _trees(tmp_path)
    outside = tmp_path / "outside"
    write_task_folder(outside, "t_class")
    (outside / "t_class" / "secret.txt").write_text("secret", encoding="utf-8")
    (new / "zz_link").symlink_to(outside / "t_class")
    d = diff_trees(old, new)
    assert d.refused == ("zz_link",) and "zz_link" not in d.added
    assert all(x.task_dir != "zz_link" for x in d.needs_decision) and "1 refused" in d.summary()
    assert f"- refused {md_code('zz_link')}: {LINKED_TASK}" in render_markdown(d).splitlines()
    lines = status_lines(new, None)
    [refused] = [line for line in lines if "zz_link" in line]
    assert refused.startswith("refused") and refused.endswith(LINKED_TASK)
    assert any(line.endswith("(1 tasks)") for line in lines)  # the link is no task
