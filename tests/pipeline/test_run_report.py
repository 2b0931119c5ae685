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
