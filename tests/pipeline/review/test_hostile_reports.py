"""Text from sources (licences, rejection reasons, names) cannot break the tree reports or the build:
no mathtext reaches matplotlib, a multi-line reason stays one table row, and a report that fails
anyway is a warning while the tree is still published."""

from __future__ import annotations

from pathlib import Path

from pipeline.core import names
from pipeline.run_report import write_report_md
from pipeline.review.reports import CORPUS_REPORT_HTML, LICENSE_DISTRIBUTION_MD, write_tree_reports
from tests.factories import write_question_list_by_hand as write_question_list, write_task_folder


def test_a_licence_with_dollars_and_backslashes_is_drawn_as_text(tmp_path: Path) -> None:
    licence = r"CC-BY-4.0 $\foo$"
    write_question_list(tmp_path, [write_task_folder(tmp_path, "t_class", licence=licence)])
    write_tree_reports(tmp_path)
    assert licence in (tmp_path / LICENSE_DISTRIBUTION_MD).read_text()
    assert r"CC-BY-4.0 $\foo$" in (tmp_path / CORPUS_REPORT_HTML).read_text()


def test_a_multi_line_reason_stays_one_table_row(tmp_path: Path) -> None:
    report = {"built": 0, "by_type": {}, "considered": 1, "seconds": 1.0,
              "rejections": [{"ref": "local/x|y", "stage": "source", "reason": "line one\n| forged | row |\nthree"}]}
    write_report_md(tmp_path, report)
    rows = [line for line in (tmp_path / names.RUN_REPORT_MD).read_text().splitlines() if line.startswith("| ")]
    assert rows[-1] == r"| local/x\|y | source | line one / forged / row / three |"


def test_a_failing_report_is_a_warning_not_a_lost_build(tmp_path: Path, capsys) -> None:
    from pipeline.build import _report_or_warn

    (tmp_path / names.QUESTION_LIST).write_text("[]")
    (tmp_path / LICENSE_DISTRIBUTION_MD).mkdir()  # cannot be written: the report fails
    _report_or_warn("tree reports", write_tree_reports, tmp_path)
    assert capsys.readouterr().err.startswith("daregen: warning: tree reports not written (")
