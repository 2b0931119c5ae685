"""Tree reports tell the truth about a tree's files (licences, counts, baselines, rejections) and are
self-contained and byte-identical for the same tree."""

from __future__ import annotations

import csv
import json
import re
import sqlite3
from pathlib import Path

import pytest

from pipeline.core import names
from pipeline.review.reports import (CORPUS_REPORT_HTML, LICENSE_DISTRIBUTION_MD, LICENSES_CSV, file_row_counts,
                                     read_tree_facts, write_tree_reports)
from tests.factories import CC0, DARE_EXAMPLES, NO_DARE_EXAMPLES, write_question_list_by_hand, write_task_folder

@pytest.fixture
def tree(tmp_path) -> Path:
    root = tmp_path / "tree"
    entries = [
        write_task_folder(root, "iris_class", licence=CC0, mm_baselines={"trivial": 0.2, "reference": 0.91}),
        write_task_folder(root, "cars_reg", problem_type="regression", target="mpg", model="Ridge",
                          licence="CC0: Public Domain", rows=12),
        write_task_folder(root, "mystery_class", licence=None),  # no licence recorded anywhere
        write_task_folder(root, "sales_ts", problem_type="time_series_analysis", target="sales", model="ETS",
                          licence="Attribution 4.0 International (CC BY 4.0)",
                          baselines={"seasonal_naive": 0.42, "ets": 0.77}),
    ]
    write_question_list_by_hand(root, entries)
    (root / names.RUN_REPORT_JSON).write_text(json.dumps({
        "considered": 7, "built": 4, "seconds": 98765.4321,
        "rejections": [{"ref": "a/b", "stage": "design", "reason": "too few rows (24 < 30)"},
                       {"ref": "a/c", "stage": "design", "reason": "too few rows (3 < 30)"},
                       {"ref": "a/d", "stage": "profile", "reason": "no usable feature besides the target 'y'"}],
    }), encoding="utf-8")
    return root


def test_licence_table_counts_shares_and_flags_unknown(tree):
    write_tree_reports(tree)
    md = (tree / LICENSE_DISTRIBUTION_MD).read_text(encoding="utf-8")
    assert "| CC0: Public Domain | cc0 | 2 | 50.0% |" in md
    assert "| Attribution 4.0 International (CC BY 4.0) | cc-by | 1 | 25.0% |" in md
    assert "| unknown | unknown | 1 | 25.0% |" in md
    # The most common licence comes first.
    assert md.index("CC0: Public Domain |") < md.index("| unknown | unknown")
    unknown_section = md.split("## Tasks with an unknown licence", 1)[1]
    assert unknown_section.startswith(": 1 of 4")
    assert "- `mystery_class` (recorded: unknown)" in unknown_section
    assert "iris_class" not in unknown_section
    assert md.endswith("\n") and not md.endswith("\n\n")


def test_licences_csv_is_sorted_task_dir_licence(tree):
    write_tree_reports(tree)
    with open(tree / LICENSES_CSV, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    assert rows == [["task_dir", "licence"], ["cars_reg", CC0], ["iris_class", CC0], ["mystery_class", "unknown"],
                    ["sales_ts", "Attribution 4.0 International (CC BY 4.0)"]]
    assert b"\r\n" not in (tree / LICENSES_CSV).read_bytes()


def test_licence_falls_back_to_meta_data_licenses(tmp_path):
    root = tmp_path / "tree"
    write_task_folder(root, "only_meta_class", licence=None)
    meta_path = root / "only_meta_class" / names.VERIFY_DIR / names.ALL_METADATA
    meta = json.loads(meta_path.read_text())
    meta["meta_data"]["licenses"] = [{"name": "CC-BY-SA-4.0"}]
    meta_path.write_text(json.dumps(meta))
    [facts] = read_tree_facts(root)
    assert (facts.licence, facts.licence_key) == ("CC-BY-SA-4.0", "cc-by-sa")


def test_corpus_report_is_self_contained_and_charts_every_section(tree):
    write_tree_reports(tree)
    page = (tree / CORPUS_REPORT_HTML).read_text(encoding="utf-8")
    assert not re.search(r"""(src|href)\s*=\s*["']?https?://""", page)
    assert "<script" not in page and "<link" not in page and "<img" not in page
    assert "@import" not in page and "url(http" not in page
    for section in ("Tasks by type and variant", "File formats and model types", "Licences", "Rows and features",
                    "Baseline difficulty", "Rejection reasons"):
        assert f"<h2>{section}</h2>" in page
    assert page.count("<svg") >= 8  # type/variant, formats, models, licences, rows, features, baselines, rejections
    ids = re.findall(r'\bid="([^"]+)"', page)
    assert len(ids) == len(set(ids)), "ids of the inline SVGs must be unique within the page"
    # Rejections are bucketed by kind, with counts, from run_report.json; its timings stay out.
    assert "<td>too few rows</td><td class=\"n\">2</td>" in page
    assert "<td>no usable feature besides the target</td><td class=\"n\">1</td>" in page
    assert "98765" not in page
    # Both baseline families are reported per task; a task without baselines is counted.
    assert "<td>sales_ts</td><td>ets 0.770, seasonal_naive 0.420</td>" in page
    assert "<td>iris_class</td><td>reference 0.910, trivial 0.200</td>" in page
    assert "2 tasks record no baseline." in page
    # Type and variant: the time-series task is XF / CF, the tabular ones IF / MM.
    assert "<td>time_series_analysis</td><td>XF/CF</td><td class=\"n\">1</td>" in page
    assert "<td>classification</td><td>IF/MM</td><td class=\"n\">2</td>" in page
    assert "1 of 4 tasks have an unknown licence" in page
    assert page.endswith("</html>\n")


def test_reports_are_byte_identical_across_calls(tree):
    write_tree_reports(tree)
    first = {name: (tree / name).read_bytes() for name in (CORPUS_REPORT_HTML, LICENSE_DISTRIBUTION_MD, LICENSES_CSV)}
    write_tree_reports(tree)
    assert first == {name: (tree / name).read_bytes() for name in first}
    # A generation's folder name may hold a timestamp: the reports must not depend on it.
    moved = tree.rename(tree.parent / "20260101T000000Z.partial")
    write_tree_reports(moved)
    assert first == {name: (moved / name).read_bytes() for name in first}
    assert b"<dc:date>" not in first[CORPUS_REPORT_HTML] and b"Matplotlib v" not in first[CORPUS_REPORT_HTML]


def test_rows_features_and_facts_come_from_the_files(tree):
    facts = {f.task_dir: f for f in read_tree_facts(tree)}
    assert facts["cars_reg"].n_rows == 12 + 3  # train_v2 + val_v2
    assert facts["iris_class"].n_features == 2
    assert facts["sales_ts"].variants == ("XF", "CF")
    assert facts["mystery_class"].licence_key == "unknown"
    assert facts["iris_class"].baselines == {"reference": 0.91, "trivial": 0.2}


def test_row_counts_per_sqlite_table_and_quoted_newlines(tmp_path):
    task = tmp_path / "t"
    (task / "source").mkdir(parents=True)
    (task / "source" / "train_v1.csv").write_text('a,b\n1,"two\nlines"\n2,x\n', encoding="utf-8")
    con = sqlite3.connect(task / "source" / "train_v1.sqlite")
    con.execute('CREATE TABLE "table_1" (row_id INTEGER, x REAL)')
    con.execute('CREATE TABLE "we""ird" (row_id INTEGER)')
    con.executemany('INSERT INTO "table_1" VALUES (?, ?)', [(i, i / 2) for i in range(4)])
    con.execute('INSERT INTO "we""ird" VALUES (1)')
    con.commit()
    con.close()
    assert file_row_counts(task) == {"source/train_v1.csv": 2, "source/train_v1.sqlite:table_1": 4,
                                     'source/train_v1.sqlite:we"ird': 1}


def test_broken_metadata_is_reported_not_fatal(tree):
    (tree / "cars_reg" / names.VERIFY_DIR / names.ALL_METADATA).write_text("{not json", encoding="utf-8")
    write_tree_reports(tree)
    page = (tree / CORPUS_REPORT_HTML).read_text(encoding="utf-8")
    assert "<h2>Unreadable tasks</h2>" in page and "cars_reg" in page
    assert "- `cars_reg` (recorded: unknown)" in (tree / LICENSE_DISTRIBUTION_MD).read_text(encoding="utf-8")


def test_empty_tree_gets_reports_and_a_missing_one_is_refused(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    write_tree_reports(empty)
    assert "0 tasks." in (empty / LICENSE_DISTRIBUTION_MD).read_text(encoding="utf-8")
    assert (empty / LICENSES_CSV).read_text(encoding="utf-8") == "task_dir,licence\n"
    assert "This tree holds no task." in (empty / CORPUS_REPORT_HTML).read_text(encoding="utf-8")
    with pytest.raises(ValueError, match="not a directory"):
        write_tree_reports(tmp_path / "missing")


@pytest.mark.skipif(not DARE_EXAMPLES.is_dir(), reason=NO_DARE_EXAMPLES)
def test_published_dare_examples_tree(tmp_path):
    """The reports read a foreign tree: DARE-bench's own tasks, tabular and time series."""
    import shutil

    tree = shutil.copytree(DARE_EXAMPLES, tmp_path / "dare")
    write_tree_reports(tree)
    md = (tree / LICENSE_DISTRIBUTION_MD).read_text(encoding="utf-8")
    assert "| CC0: Public Domain | cc0 | 3 | 75.0% |" in md
    assert "| Attribution 4.0 International (CC BY 4.0) | cc-by | 1 | 25.0% |" in md
    assert "## Tasks with an unknown licence: 0 of 4" in md
    facts = {f.task_dir: f for f in read_tree_facts(tree)}
    covid = facts["punyaslokaprusty_covid-19-tracking-in-usa_ts"]
    # train.csv (294 rows) + val_v1.csv (126 rows); val_v2 repeats val's identifiers and is not counted.
    assert (covid.problem_type, covid.variants, covid.n_rows) == ("time_series_analysis", ("XF", "CF"), 420)
    pokemon = facts["vishushekhar_pokemonunitedataset_class"]
    assert (pokemon.file_type, pokemon.model_type, pokemon.n_features) == ("sqlite", "GaussianNB", 4)


def test_reports_of_the_session_built_tree(built_tree):
    """On a real build: every task is counted once, with rows and features read from its files."""
    from pipeline.review.diff import diff_trees
    from pipeline.review.reports import render_corpus_report, render_licence_distribution, render_licences_csv

    facts = read_tree_facts(built_tree)
    entries = json.loads((built_tree / names.QUESTION_LIST).read_text(encoding="utf-8"))
    assert sorted(f.task_dir for f in facts) == sorted(e["file_path"] for e in entries)
    # A time-series task may select no exogenous feature (a univariate forecaster), so 0 features is fine.
    odd = [f for f in facts if not (f.n_rows and f.n_features is not None and not f.problem)]
    assert not odd, odd
    md = render_licence_distribution(facts)
    table = [line for line in md.splitlines() if line.startswith("| ") and not line.startswith("| licence")]
    assert sum(int(line.split("|")[3]) for line in table) == len(facts)
    run_report = json.loads((built_tree / names.RUN_REPORT_JSON).read_text(encoding="utf-8"))
    manifest = json.loads((built_tree / names.MANIFEST).read_text(encoding="utf-8"))
    page = render_corpus_report(facts, run_report, manifest)
    assert page == render_corpus_report(read_tree_facts(built_tree), run_report, manifest)
    assert f"<td>seed</td><td>{manifest['seed']}</td>" in page
    # Where the build already wrote the reports, they are what this module renders for the tree.
    for name, text in ((LICENSE_DISTRIBUTION_MD, md), (LICENSES_CSV, render_licences_csv(facts)),
                       (CORPUS_REPORT_HTML, page)):
        if (built_tree / name).exists():
            assert (built_tree / name).read_text(encoding="utf-8") == text, name
    assert diff_trees(built_tree, built_tree).identical


def test_corrupt_data_file_is_named_in_the_report(tree):
    (tree / "iris_class" / "source" / "train_v1.parquet").write_bytes(b"PAR1 truncated")
    [iris] = [f for f in read_tree_facts(tree) if f.task_dir == "iris_class"]
    assert iris.problem.startswith("source/train_v1.parquet: unreadable (")
    assert iris.n_rows is None


def test_curators_see_each_target_its_evidence_rejected_candidates_sizes_and_leak_screen(tmp_path):
    """Issue 12, item 9: the corpus report and run_report.md show, per task, the target and its evidence, the
    candidates passed over (counted, the first few named) and the leak screen; the corpus report charts MM
    validation sizes with their minimum. Source text is escaped in both."""
    from pipeline.review.reports import design_rows
    from pipeline.run_report import write_report_md

    root = tmp_path / "tree"
    excluded = {f"c{i}": f"ranked below 'label' (fallback {i})" for i in range(5)}
    entries = [
        write_task_folder(root, "shop_class", mm_baselines={"best_single_feature_macro_f1": 0.41,
                                                            "reference_macro_f1": 0.8, "trivial_macro_f1": 0.3},
                          daregen={"target_evidence": "documentation: <b>the outcome</b> | of the study",
                                   "target_evidence_kind": "outcome_description",
                                   "excluded_targets": excluded, "design_attempts": ["price (regression): flat"],
                                   "val_rows": 47}),
        write_task_folder(root, "cars_reg", problem_type="regression", target="mpg",
                          daregen={"target_evidence": "source hint", "target_evidence_kind": "source_hint",
                                   "val_rows": 1200}),
        write_task_folder(root, "old_reg", problem_type="regression", target="mpg",
                          daregen={"target_evidence": "a tree built before evidence kinds", "val_rows": 60}),
    ]
    write_question_list_by_hand(root, entries)
    rows = {r["task"]: r for r in design_rows(root)}
    shop = rows["shop_class"]
    assert shop["target"] == "label" and shop["MM val rows"] == "47"
    assert shop["rejected candidates"].startswith("5: c0 (ranked below") and shop["rejected candidates"].endswith(
        "and 2 more")
    assert shop["attempts refused"] == "1: price (regression): flat"
    assert shop["leak screen"] == "best single feature 0.410 vs reference 0.800 (macro_f1)"
    assert rows["cars_reg"]["rejected candidates"] == "0" and rows["cars_reg"]["leak screen"] == ""
    # Every target's evidence kind, "unrecorded" where the tree does not say (a tree built before kinds).
    assert [rows[t]["evidence kind"] for t in ("shop_class", "cars_reg", "old_reg")] == [
        "outcome_description", "source_hint", "unrecorded"]

    write_tree_reports(root)
    page = (root / CORPUS_REPORT_HTML).read_text()
    assert "Targets and their evidence" in page and "MM validation sizes" in page
    assert "&lt;b&gt;the outcome&lt;/b&gt;" in page and "<b>the outcome" not in page
    assert '<td class="n">47</td>' in page  # the minimum
    # Tasks per evidence kind, each marked as resting on the documentation or on a fallback.
    assert "<td>source_hint</td><td class=\"n\">1</td><td class=\"n\">33%</td><td>documented</td>" in page
    assert "<td>outcome_description</td><td class=\"n\">1</td><td class=\"n\">33%</td><td>fallback</td>" in page
    write_report_md(root, {"built": 2, "by_type": {}, "considered": 2, "rejections": [], "seconds": 1.0,
                           "designs": list(rows.values())})
    md = (root / names.RUN_REPORT_MD).read_text()
    assert "## Targets and their evidence" in md
    assert "## Tasks per evidence kind" in md and "| source_hint | 1 | 33% | documented |" in md
    assert "| outcome_description | 1 | 33% | fallback |" in md and "| unrecorded | 1 | 33% | fallback |" in md
    assert "\\<b>the outcome\\</b> \\| of the study" in md


def test_rows_histogram_of_a_two_task_tree_plots_both_tasks_min_included(tmp_path):
    from pipeline.review.reports import log_bins

    root = tmp_path / "two"
    entries = [write_task_folder(root, "small_class", rows=7), write_task_folder(root, "big_class", rows=1000)]
    write_question_list_by_hand(root, entries)
    write_tree_reports(root)
    page = (root / CORPUS_REPORT_HTML).read_text(encoding="utf-8")
    assert "2 of 2 tasks plotted, 10 to 1003 rows" in page  # train_v2 rows + 3 val rows
    # The edges hold both ends exactly, whatever logspace's rounding: no value falls outside.
    for values in ([10, 1003], [7, 7], [1, 3], [123457, 9876543]):
        edges = log_bins(values)
        assert edges[0] <= min(values) and edges[-1] >= max(values)


def test_header_flags_rejection_reasons_in_full_and_readable_files(tree):
    (tree / names.MANIFEST).write_text(json.dumps({"seed": 7, "sources": "builtin", "limit": 40,
                                                   "code_version": "0.1.0", "files": {}}), encoding="utf-8")
    write_task_folder(tree, "onecol_reg", problem_type="regression", target="mpg",
                      mm_baselines={"reference_r2": 0.5123, "best_single_feature_r2": 0.5123, "trivial_r2": 0.0})
    write_task_folder(tree, "flat_ts", problem_type="time_series_analysis", target="sales",
                      baselines={"v1/SARIMAX": 0.8, "v2/ExponentialSmoothing": 0.0, "v2/seasonal_naive": 0.0})
    run = json.loads((tree / names.RUN_REPORT_JSON).read_text())
    run["rejections"].append({"ref": "a/e", "stage": "finalize",
                              "reason": "check failed: MM infeasible: the reference models score r2 0.010"})
    (tree / names.RUN_REPORT_JSON).write_text(json.dumps(run), encoding="utf-8")
    write_tree_reports(tree)
    page = (tree / CORPUS_REPORT_HTML).read_text(encoding="utf-8")
    assert "<td>seed</td><td>7</td>" in page and "<td>code version</td><td>0.1.0</td>" in page
    assert "<td>sources</td><td>builtin</td>" in page
    assert "<td>onecol_reg</td><td>the reference scores no better than the best single feature (0.512)</td>" in page
    assert "<td>flat_ts</td><td>every CF baseline scores 0 (2 recorded)</td>" in page
    assert "iris_class</td><td>every" not in page
    assert "<td>check failed: MM infeasible</td>" in page  # the bucket says which check
    assert "<td>a/e</td><td>finalize</td><td>check failed: MM infeasible: the reference models score r2 0.010</td>" \
        in page
    assert f'<a href="{names.RUN_REPORT_MD}">' in page
    for name in (CORPUS_REPORT_HTML, LICENSE_DISTRIBUTION_MD, LICENSES_CSV):
        assert (tree / name).stat().st_mode & 0o777 == 0o644
