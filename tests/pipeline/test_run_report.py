"""One bucketing of rejection reasons serves the run report, the CLI summary and the corpus report: names,
parentheses and numbers never split a bucket, and every rejection is listed in run_report.md."""

from __future__ import annotations

from pathlib import Path

from pipeline.core import names
from pipeline.run_report import build_report, reason_kind, summary_table, write_report_md
from pipeline.steps import Outcome


def _report() -> dict:
    outcomes = [Outcome(ref="local/a", work_dir="", stage="finalize"),
                Outcome(ref="local/b", work_dir="", stage="source", ok=False, reason="too few rows (12 < 30)"),
                Outcome(ref="local/c", work_dir="", stage="source", ok=False, reason="too few rows (3 < 30)"),
                Outcome(ref="local/d", work_dir="", stage="design", ok=False, reason="a | b")]
    entries = [{"task": "regression", "file_path": "a_reg", "needed_files_v1": ["train_v1.csv"]}]
    return build_report(outcomes, entries, 4, 1.234, seed=0, sources="local:x", limit=None)


def test_reason_kinds_group_without_names_or_numbers():
    assert reason_kind("too few rows (24 < 30)") == "too few rows"
    assert reason_kind("no usable features for target 'value' once leaks are removed") == \
        "no usable features for target once leaks are removed"
    assert reason_kind("") == "(no reason given)"


def test_report_counts_and_summary_buckets(tmp_path: Path):
    report = _report()
    assert (report["built"], report["by_type"], report["by_format"]) == (1, {"regression": 1}, {"csv": 1})
    assert [r["ref"] for r in report["rejections"]] == ["local/b", "local/c", "local/d"]
    table = summary_table(report, tmp_path)
    assert "     2  too few rows" in table and f"{tmp_path / names.RUN_REPORT_MD}" in table
    write_report_md(tmp_path, report)
    md = (tmp_path / names.RUN_REPORT_MD).read_text()
    assert "| local/b | source | too few rows (12 < 30) |" in md and "| local/d | design | a / b |" in md


def test_a_failed_check_is_bucketed_by_which_check_failed():
    assert reason_kind("check failed: MM infeasible: the reference models score r2 0.010") == \
        "check failed: MM infeasible"
    assert reason_kind("check failed: MM leakage: a single feature alone reaches 0.99: 'x' (1.000)") == \
        "check failed: MM leakage"


def test_summary_markdown_names_the_tree_its_reports_and_the_top_reasons(tmp_path: Path):
    from pipeline.run_report import summary_markdown

    report = {**_report(), "cached": 0}
    md = summary_markdown(report, tmp_path / "out", tmp_path / "gen", {"corpus report": tmp_path / "gen" / "c.html"})
    assert "1 task (1 regression) from 4 candidate datasets" in md and "rejected: 3;" in md
    assert f"`{tmp_path / 'out'}` -> `{tmp_path / 'gen'}`" in md and f"`{tmp_path / 'gen' / 'c.html'}`" in md
    assert "| 2 | too few rows |" in md
    assert "nothing published" in summary_markdown(report, tmp_path / "out", None, {})


def test_a_bucket_keeps_the_number_a_reason_ends_on():
    assert reason_kind("every reference baseline (XF and CF) scores R² 0: nothing forecastable (split at 0.75)") == \
        "every reference baseline scores R² 0"


def test_the_header_counts_every_problem_type(tmp_path: Path):
    report = _report()
    report["by_type"] = {"classification": 6, "regression": 9, "time_series_analysis": 6}
    report["built"] = 21
    write_report_md(tmp_path, report)
    header = (tmp_path / names.RUN_REPORT_MD).read_text().splitlines()[2]
    assert header == "- built: 21 tasks (6 classification, 9 regression, 6 time_series_analysis)"


def test_the_summary_says_what_its_times_include_and_ends_with_reports_and_next_commands(tmp_path: Path):
    for name in (names.QUESTION_LIST, names.CORPUS_REPORT_HTML):
        (tmp_path / name).write_text("[]\n")
    table = summary_table(_report(), tmp_path, startup_s=50.2, flow_s=126.4)
    assert "177 s since daregen started = start-up 50 s" in table and "build 126 s" in table
    # Issue 49: one build, one "build" time; its parts named apart (the run report's time, the datasets' phase)
    assert table.count("build ") == 1 and f"{_report()['seconds']:.0f} s of them to the run report" in table
    write_report_md(tmp_path, _report())
    assert "build time" not in (tmp_path / names.RUN_REPORT_MD).read_text()
    tail = table.split("\nreports:\n")[1]
    for name in (names.RUN_REPORT_MD, names.QUESTION_LIST, names.CORPUS_REPORT_HTML):
        assert str(tmp_path / name) in tail
    for command in ("daregen verify", "daregen score", "daregen diff", "daregen export"):
        assert command in tail.split("next:")[1]


def test_an_unpublished_build_names_no_file_it_did_not_write(tmp_path: Path):
    report = {**_report(), "built": 0, "run_report_md": str(tmp_path / "unpublished-run_report.md")}
    table = summary_table(report, tmp_path / "out")
    assert names.QUESTION_LIST not in table and "next:" not in table
    assert "unpublished-run_report.md" in table


def test_a_no_op_says_unchanged_in_the_summary_and_the_log_line(tmp_path: Path):
    from pipeline.run_report import outcome_line

    report = {**_report(), "unchanged": True, "generation": "g1"}
    assert summary_table(report, tmp_path).startswith("kept 1 task")
    assert "unchanged: the published generation g1" in summary_table(report, tmp_path)
    line = outcome_line(report, tmp_path / "out", tmp_path / "g1")
    assert line.startswith("unchanged:") and "published at" not in line
    assert outcome_line({**report, "unchanged": False}, tmp_path / "out", tmp_path / "g1").startswith("published at")
def test_curator_rejections_and_withheld_tasks_have_their_own_sections_and_counts(tmp_path: Path):
    from pipeline.run_report import summary_markdown

    outcomes = [Outcome(ref="local/a", work_dir="", stage="finalize"),
                Outcome(ref="local/r", work_dir="", stage="curation", ok=False, reason="curator rejection: no"),
                Outcome(ref="local/w", work_dir="", stage="withheld", ok=False, reason="unreviewed, not approved"),
                Outcome(ref="local/d", work_dir="", stage="design", ok=False, reason="too few rows (3 < 30)")]
    entries = [{"task": "regression", "file_path": "a_reg", "needed_files_v1": ["train_v1.csv"]}]
    report = build_report(outcomes, entries, 4, 1.0, seed=0, sources="local:x", limit=None)
    report["curation"] = {"approved": 1, "changed since approval": 0, "unreviewed": 0, "pinned": 0}
    write_report_md(tmp_path, report)
    md = (tmp_path / names.RUN_REPORT_MD).read_text()
    curator, withheld, rest = (md.index(f"## {t}") for t in ("Curator rejections", "Withheld", "Rejections"))
    assert curator < md.index("local/r") < withheld < md.index("local/w") < rest < md.index("local/d")
    line = "review: 1 approved, 0 changed since approval, 0 unreviewed, 0 pinned; 1 rejected by curators, 1 withheld"
    assert line in md
    assert line in summary_markdown(report, tmp_path, None, {})  # the Prefect artifact counts them too


def test_rejections_are_bucketed_by_their_code_not_their_wording():
    from pipeline.run_report import reason_buckets

    rejections = [{"reason": "documented outcome 'y' (model_formula) not learnable: nothing to learn", "code": "tried:a"},
                  {"reason": "top-ranked outcome 'z' (outcome_name) not learnable: nothing", "code": "tried:a"},
                  {"reason": "documented outcome 'w' (model_formula) not learnable: nothing", "code": "tried:b"},
                  {"reason": "check failed: MM infeasible: the reference models score r2 0.010"}]
    # The first two share a code though they read differently; the third reads like the first, but is another
    # check's; the last, from a stage that names no code, is bucketed by its wording.
    assert reason_buckets(rejections) == [("documented outcome not learnable", 2), ("documented outcome not learnable", 1),
                                          ("check failed: MM infeasible", 1)]
    report = build_report([Outcome(ref="r/a", work_dir="", stage="design", ok=False, reason="too few rows (3 < 30)",
                                   code="too_few_rows")], [], 1, 0.0, seed=0, sources="local:x", limit=None)
    assert report["rejections"] == [{"ref": "r/a", "stage": "design", "reason": "too few rows (3 < 30)",
                                     "code": "too_few_rows"}]


def test_a_release_that_withheld_every_task_says_so_first_everywhere(tmp_path: Path):
    from pipeline.run_report import nothing_published, summary_markdown

    outcomes = [Outcome(ref="local/w", work_dir="", stage="withheld", ok=False, unit="regression",
                        reason="changed since approval (design digest a, approved b)"),
                Outcome(ref="local/d", work_dir="", stage="design", ok=False, reason="too few rows (3 < 30)")]
    report = {**build_report(outcomes, [], 2, 1.0, seed=0, sources="local:x", limit=None), "published": False,
              "cached": 1}
    headline = nothing_published(report)
    assert headline.startswith("nothing published: none of the 1 built task is approved")
    assert summary_table(report, tmp_path / "out").splitlines()[0] == f"{headline}; {tmp_path / 'out'} is unchanged"
    assert summary_markdown(report, tmp_path / "out", None, {}).split("\n")[2] == f"**{headline}**"
    write_report_md(tmp_path, report)
    md = (tmp_path / names.RUN_REPORT_MD).read_text()
    assert "- considered: 2 datasets, rejected: 1" in md and "1 task withheld (--publish approved)" in md
    assert "- reused from the build cache: 1 task (withheld ones included)" in md
    assert nothing_published({**report, "published": True, "built": 1}) is None


def test_the_summary_says_how_many_approvals_went_stale_and_where_to_read_why(tmp_path: Path):
    """After a reseed every approval may be stale: the terminal summary says so, and points at the tree's diff.md
    and at `curate status`, spelled to run as printed; without an approval at stake it says nothing of review."""
    out = tmp_path / "tasks"
    out.mkdir()
    (out / names.QUESTION_LIST).write_text("[]")
    (out / names.DIFF_MD).write_text("# daregen diff\n")
    outcomes = [Outcome(ref="local/a", work_dir="", stage="finalize"), Outcome(ref="local/b", work_dir="", stage="finalize")]
    entries = [{"task": "regression", "file_path": f"{r}_reg", "needed_files_v1": ["train_v1.csv"]} for r in "ab"]
    report = {**build_report(outcomes, entries, 2, 1.0, seed=1, sources="local:x", limit=None), "published": True,
              "curation": {"approved": 0, "changed since approval": 2, "unreviewed": 0, "pinned": 0}}
    lines = summary_table(report, out).splitlines()
    review = lines.index("  review: 0 approved, 2 changed since approval (their approvals are stale: review again, "
                         "then approve)")
    assert lines[review + 1] == f"    what changed since the previous generation: {out / names.DIFF_MD}"
    assert lines[review + 2].startswith("    each task's review state: ") and \
        lines[review + 2].endswith(f"daregen curate status {out}")
    unreviewed = {**report, "curation": {"approved": 0, "changed since approval": 0, "unreviewed": 2, "pinned": 0}}
    assert "review:" not in summary_table(unreviewed, out)
    # --publish approved withheld the stale ones: still counted
    held = [Outcome(ref="local/a", work_dir="", stage="withheld", ok=False, reason="changed since approval (x)",
                    code="changed_since_approval")]
    released = {**build_report(held + outcomes[1:], entries[1:], 2, 1.0, seed=1, sources="local:x", limit=None),
                "published": True, "curation": {"approved": 1, "changed since approval": 0, "unreviewed": 0,
                                                "pinned": 0}}
    assert "  review: 1 approved, 1 changed since approval (its approval is stale" in summary_table(released, out)
