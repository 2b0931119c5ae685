"""A curator diff names every task added, removed or changed between two trees, and for a changed task
exactly what changed (fields old -> new, row counts, ground-truth hashes, instruction words), deterministically."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from pipeline.core import names
from pipeline.cli import main
from pipeline.review.diff import (diff_trees, json_changes, render_html, render_markdown, word_diff,
                                  word_diff_markdown, write_diff_reports)
from pipeline.core.hashing import sha256_file
from tests.factories import QUESTION_V1, write_question_list_by_hand, write_task_folder


def _tree(root: Path, specs: dict[str, dict]) -> Path:
    write_question_list_by_hand(root, [write_task_folder(root, name, **kw) for name, kw in specs.items()])
    return root


@pytest.fixture
def trees(tmp_path) -> tuple[Path, Path]:
    old = _tree(tmp_path / "old", {
        "kept_class": {},
        "gone_class": {},
        "model_class": {},
        "target_class": {},
        "rows_class": {"rows": 5},
        "truth_class": {"truth": ["a", "b", "a"]},
        "words_class": {},
    })
    new = _tree(tmp_path / "new", {
        "kept_class": {},
        "fresh_reg": {"problem_type": "regression", "target": "mpg", "model": "Ridge"},
        "model_class": {"model": "GaussianNB"},
        "target_class": {"target": "colour_code"},
        "rows_class": {"rows": 7},
        "truth_class": {"truth": ["a", "a", "b"]},
        "words_class": {"question_v1": QUESTION_V1.replace("LogisticRegression", "GaussianNB")},
    })
    return old, new


def _change(diff, task_dir):
    return next(t for t in diff.changed if t.task_dir == task_dir)


def test_added_removed_changed_and_unchanged_tasks(trees):
    d = diff_trees(*trees)
    assert d.added == ("fresh_reg",)
    assert d.removed == ("gone_class",)
    assert [t.task_dir for t in d.changed] == ["model_class", "rows_class", "target_class", "truth_class",
                                               "words_class"]
    assert d.unchanged == ("kept_class",)
    assert d.summary() == "1 added, 1 removed, 5 changed, 1 unchanged"


def test_changed_model_and_target_are_reported_old_to_new(trees):
    d = diff_trees(*trees)
    model = {c.path: c for c in _change(d, "model_class").fields}
    assert model["question.model_type"].old == "LogisticRegression"
    assert model["question.model_type"].new == "GaussianNB"
    assert set(model) == {"question.model_type"}  # nothing else in all_metadata.json moved
    target = {c.path: c for c in _change(d, "target_class").fields}
    assert (target["question.target"].old, target["question.target"].new) == (["label"], ["colour_code"])
    md = render_markdown(d)
    assert '| `question.model_type` | `"LogisticRegression"` | `"GaussianNB"` |' in md
    assert '| `question.target` | `["label"]` | `["colour_code"]` | +"colour_code", −"label" |' in md


def test_row_count_change_names_the_file(trees):
    d = diff_trees(*trees)
    rows = _change(d, "rows_class").row_counts
    assert [(r.file, r.old, r.new) for r in rows] == [("source/train_v2.csv", 5, 7)]
    assert "| `source/train_v2.csv` | 5 | 7 |" in render_markdown(d)
    assert _change(d, "rows_class").ground_truth == ()  # same val rows, same labels


def test_ground_truth_hash_change(trees):
    old, new = trees
    d = diff_trees(old, new)
    [gt] = _change(d, "truth_class").ground_truth
    gt_path = f"{names.VERIFY_DIR}/{names.GROUND_TRUTH}"
    assert gt.file == gt_path
    assert gt.old == sha256_file(old / "truth_class" / gt_path)
    assert gt.new == sha256_file(new / "truth_class" / gt_path)
    assert gt.old != gt.new
    assert _change(d, "truth_class").row_counts == ()  # same number of rows, different labels
    assert f"- `{gt_path}`: `{gt.old[:12]}` → `{gt.new[:12]}`" in render_markdown(d)


def test_word_diff_of_instructions_in_markdown_and_html(trees):
    d = diff_trees(*trees)
    [w] = _change(d, "words_class").instructions
    assert w.key == "question_v1"
    assert (w.removed_words, w.added_words) == (1, 1)
    assert [(o.op, o.text.strip()) for o in w.ops if o.op != "="] == [("-", "LogisticRegression"),
                                                                      ("+", "GaussianNB")]
    md, page = render_markdown(d), render_html(d)
    assert "Fit a [-LogisticRegression-] {+GaussianNB+} model" in md
    assert "Fit a <del>LogisticRegression</del> <ins>GaussianNB</ins> model" in page


def test_word_diff_keeps_text_and_elides_long_unchanged_runs():
    old = " ".join(f"w{i}" for i in range(60))
    new = old.replace("w30", "W30")
    d = word_diff(old, new, "question_v1")
    assert "".join(o.text for o in d.ops if o.op != "+") == old
    assert "".join(o.text for o in d.ops if o.op != "-") == new
    assert word_diff_markdown(d) == ("… w22 w23 w24 w25 w26 w27 w28 w29 [-w30-] {+W30+} "
                                     "w31 w32 w33 w34 w35 w36 w37 w38 …")


def test_json_paths_are_readable_for_odd_keys_and_list_members():
    old = {"question": {"expected_ranges": {"petal width": [0.1, 2.5], "x": [0, 1]}, "tags": [{"ref": "a"}]}}
    new = {"question": {"expected_ranges": {"petal width": [0.1, 2.6]}, "tags": [{"ref": "b"}], "seed": 3}}
    changes = {c.path: c for c in json_changes(old, new)}
    assert changes['question.expected_ranges["petal width"]'].new == [0.1, 2.6]
    assert changes["question.expected_ranges.x"].kind == "removed"
    assert changes["question.tags[0].ref"].old == "a"
    assert changes["question.seed"].kind == "added"
    # 1 and 1.0 are written differently into a task file, so they count as a change.
    assert json_changes({"r": 1}, {"r": 1.0}) != []


def test_same_rows_in_rewritten_parquet_bytes_is_no_change(tmp_path):
    frame = pd.DataFrame({"x": [1.5, 2.5, 3.5], "label": ["a", "b", "a"]})
    specs = {"pq_class": {}}
    old, new = _tree(tmp_path / "old", specs), _tree(tmp_path / "new", specs)
    frame.to_parquet(old / "pq_class" / "source" / "train_v2.parquet", compression="snappy")
    frame.to_parquet(new / "pq_class" / "source" / "train_v2.parquet", compression="gzip")
    rel = "pq_class/source/train_v2.parquet"
    assert sha256_file(old / rel) != sha256_file(new / rel)
    d = diff_trees(old, new)
    assert d.identical and d.unchanged == ("pq_class",)
    frame.iloc[:2].to_parquet(new / "pq_class" / "source" / "train_v2.parquet")
    [change] = diff_trees(old, new).changed
    assert change.files_changed == ("source/train_v2.parquet",)
    assert [(r.file, r.old, r.new) for r in change.row_counts] == [("source/train_v2.parquet", 3, 2)]


def test_missing_or_empty_trees_are_a_first_generation(tmp_path, trees):
    old, new = trees
    first = diff_trees(tmp_path / "never_built", new)
    assert first.added == tuple(sorted(p.name for p in new.iterdir() if p.is_dir())) and not first.changed
    gone = diff_trees(old, tmp_path / "never_built")
    assert len(gone.removed) == 7 and not gone.added
    (tmp_path / "empty").mkdir()
    nothing = diff_trees(tmp_path / "empty", tmp_path / "never_built")
    assert nothing.identical and "No task changed." in render_markdown(nothing)
    (tmp_path / "a_file").write_text("x")
    with pytest.raises(ValueError, match="not a directory"):
        diff_trees(tmp_path / "a_file", new)


def test_reports_are_self_contained_escaped_and_byte_identical(trees, tmp_path):
    old, new = trees
    entries = json.loads((new / names.QUESTION_LIST).read_text())
    for e in entries:
        if e["file_path"] == "words_class":
            e["question_v2"] = "Predict <script>alert(1)</script> `label` & more."
    (new / names.QUESTION_LIST).write_text(json.dumps(entries))
    md1, html1 = write_diff_reports(old, new, tmp_path / "r1")
    md2, html2 = write_diff_reports(old, new, tmp_path / "r2")
    assert (md1.name, html1.name) == ("diff.md", "diff.html")
    assert md1.read_bytes() == md2.read_bytes() and html1.read_bytes() == html2.read_bytes()
    page = html1.read_text(encoding="utf-8")
    assert not re.search(r"""(src|href)\s*=\s*["']?https?://""", page)
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert md1.read_text(encoding="utf-8").endswith("\n")
    assert str(tmp_path) not in md1.read_text(encoding="utf-8").replace(str(old), "").replace(str(new), "")


def test_cli_diff_writes_reports_and_prints_a_summary(trees, tmp_path, capsys):
    old, new = trees
    out = tmp_path / "review"
    assert main(["diff", str(old), str(new), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "1 added, 1 removed, 5 changed, 1 unchanged" in printed
    assert "changed  model_class: 1 field\n" in printed
    assert str(out / "diff.md") in printed and (out / "diff.html").is_file()


def test_build_settings_from_the_manifests(trees):
    old, new = trees
    (old / names.MANIFEST).write_text(json.dumps({"seed": 0, "sources": "builtin", "files": {"a": "1"}}))
    (new / names.MANIFEST).write_text(json.dumps({"seed": 1, "sources": "builtin", "files": {"a": "2"}}))
    for tree, seconds in ((old, 10.5), (new, 99.25)):  # run reports hold timings: never a difference
        (tree / names.RUN_REPORT_JSON).write_text(json.dumps({"seconds": seconds}))
    d = diff_trees(old, new)
    assert [(c.path, c.old, c.new) for c in d.build_settings] == [("manifest.seed", 0, 1)]
    assert "- build setting `manifest.seed`: 0 → 1" in render_markdown(d)
    assert names.MANIFEST in d.root_files_changed and names.RUN_REPORT_JSON not in d.root_files_changed


def test_removed_tasks_say_why_a_retyped_task_is_one_change_and_reordered_lists_say_so(tmp_path):
    old = _tree(tmp_path / "old", {"cars_class": {"features": ("x", "colour")}, "gone_class": {},
                                   "order_class": {"features": ("x", "colour"),
                                                   "question_v1": "Use the features `x`, `colour` to predict `label`."}})
    new = _tree(tmp_path / "new", {"cars_reg": {"problem_type": "regression", "target": "mpg"},
                                   "order_class": {"features": ("colour", "x"),
                                                   "question_v1": "Use the features `colour`, `x` to predict `label`."}})
    meta_path = old / "gone_class" / names.VERIFY_DIR / names.ALL_METADATA
    meta = json.loads(meta_path.read_text())
    meta["daregen"]["ref"] = "local/gone"
    meta_path.write_text(json.dumps(meta))
    (new / names.RUN_REPORT_JSON).write_text(json.dumps({"rejections": [
        {"ref": "local/gone", "stage": "finalize", "reason": "check failed: MM infeasible: r2 0.010"}]}))
    d = diff_trees(old, new)
    assert (d.added, d.removed) == ((), ("gone_class",))
    assert d.removed_why == {"gone_class": "rejected at finalize: check failed: MM infeasible: r2 0.010"}
    retyped = _change(d, "cars_reg")
    assert retyped.old_task_dir == "cars_class"
    md, page = render_markdown(d), render_html(d)
    assert "- `gone_class`: rejected at finalize: check failed: MM infeasible: r2 0.010" in md
    assert "### `cars_reg` (was `cars_class`)" in md and "was cars_class; type" in md
    assert "rejected at finalize" in page and "(was <code>cars_class</code>)" in page
    order = _change(d, "order_class")
    assert [(c.path, _list_delta_note(md, c.path)) for c in order.fields] == [
        ("question.selected_features", "reordered")]
    words = order.instructions[0]
    assert words.reordered and "reordered: the same words in a new order" in md and "[-" not in md
    # A reordered list of records is one change too, not one per position.
    records = [{"a": 1}, {"b": 2}]
    assert [c.path for c in json_changes({"j": records}, {"j": records[::-1]})] == ["j"]


def _list_delta_note(md: str, path: str) -> str:
    row = next(line for line in md.splitlines() if line.startswith(f"| `{path}` |"))
    return row.rstrip(" |").rsplit("| ", 1)[-1]
