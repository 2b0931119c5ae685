"""Text from data or a parameter (a column or file name in a reason, a sources spec, a licence) reaches the Prefect
summary artifact, the run's outcome table, the flow-run log and the corpus report's charts inert: no raw HTML, no
link, no code span it can close, no escape byte. Each escaping has one owner in pipeline.core.text."""

from __future__ import annotations

import re
from pathlib import Path

from pipeline.run_report import outcome_rows, rejection_line, summary_markdown
from tests.factories import write_question_list_by_hand as write_question_list
from tests.factories import write_task_folder

ESC = "\x1b[2J\x1b[31mPASS"
HTML = "<img src=x onerror=alert(1)>"
HOSTILE = f"a`|{HTML}[x](javascript:alert(1)){ESC}\r\nforged line"


def _report(**extra) -> dict:
    return {"built": 1, "considered": 3, "by_type": {"regression": 1}, "by_format": {"csv": 1},
            "tasks": [f"local_{HOSTILE}_reg"], "seconds": 1.0, "seed": 0, "sources": f"local:/data/{HOSTILE}",
            "limit": None, "cached": 0,
            "rejections": [{"ref": f"local/{HOSTILE}", "stage": "profile", "reason": f"column {HOSTILE!s} is constant"},
                           {"ref": "local/b", "stage": "design", "reason": f"no target: {HTML}"}], **extra}


def _inert_markdown(md: str) -> None:
    """No markup outside a code span (inside one, text is literal, and md_code sizes its fence past any backtick)
    and none formed by an unescaped character (md_cell escapes `<`, brackets, backticks and `|` with a
    backslash, which CommonMark reads as the character itself: `\\<img` is text)."""
    unescaped = re.sub(r"\\[!-/:-@\[-`{-~]", "", md)  # a backslash-escaped ASCII punctuation mark is text
    outside = re.sub(r"(`+)(?!`).*?(?<!`)\1(?!`)", "", unescaped)
    assert "<img" not in outside and "<script" not in outside, md
    assert "](javascript:" not in unescaped, md
    assert "\x1b" not in md and "\r" not in md, md
    assert "forged line" not in md.replace(" forged line", "")  # never at the start of a line of its own


def test_the_prefect_summary_artifact_shows_hostile_sources_and_reasons_as_text(tmp_path):
    md = summary_markdown(_report(), tmp_path / f"out{HTML}", tmp_path / "g1", {"run report": tmp_path / "r.md"})
    _inert_markdown(md)
    assert "\\x1b" in md  # the escape byte is shown, not dropped
    assert not any(line.startswith("forged line") for line in md.splitlines())


def test_the_outcome_table_and_the_log_lines_hold_no_escape_byte():
    from flows import OUTCOMES_ARTIFACT  # noqa: F401 -- the artifact these rows fill

    rows = outcome_rows(_report())
    assert len(rows) == 3 and {r["outcome"] for r in rows} == {"built", "rejected"}
    for row in rows:
        assert all("\x1b" not in v and "\n" not in v and "\r" not in v for v in row.values()), row
    from pipeline.core.text import printable

    for r in _report()["rejections"]:  # what flows._log_summary logs for each rejection
        line = printable(rejection_line(r))
        assert "\x1b" not in line and "\n" not in line and "\\x1b" in line or "local/b" in line


def test_the_licence_chart_draws_no_escape_byte(tmp_path: Path):
    from pipeline.review.reports import read_tree_facts, render_corpus_report

    write_question_list(tmp_path, [write_task_folder(tmp_path, "t_class", licence=f"CC-BY {ESC} {HTML}")])
    html = render_corpus_report(read_tree_facts(tmp_path), None)
    assert "\x1b" not in html and "\\x1b[2J" in html
    assert "<img" not in html
