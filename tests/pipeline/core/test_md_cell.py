"""A source text put in a Markdown table cell renders as exactly that text, one cell, with no link, image, code
span or HTML formed, and carries no HTML entity (run_report.md is read in a terminal too, where `&#91;` is
noise): only backslash escapes."""

from __future__ import annotations

import re

import pytest
from markdown_it import MarkdownIt

from pipeline.core.text import md_cell

HOSTILE = ["a [b](javascript:alert(1)) c", "![i](http://x/y.png)", r"\[x](y)", r"\\[x](y)",
           "<img src=x onerror=alert(1)>", "</td><script>", r"a\|b|c", "`code` and ``two``",
           r"$\foo$ and \bar", "too few rows (12 < 30)", "list[str] of 3 (e.g. [a, b])", "a\\"]


def _cell_html(text: str) -> str:
    page = MarkdownIt("commonmark").enable("table").render(f"| h |\n|---|\n| {md_cell(text)} |\n")
    cells = re.findall(r"<td>(.*?)</td>", page, re.S)
    assert len(cells) == 1, page  # one cell: no `|` split it
    return cells[0]


@pytest.mark.parametrize("text", HOSTILE)
def test_a_cell_renders_as_its_text_and_forms_no_markup(text):
    import html

    rendered = _cell_html(text)
    assert "<a" not in rendered and "<img" not in rendered and "<code" not in rendered and "<script" not in rendered
    assert html.unescape(rendered) == text.strip()


@pytest.mark.parametrize("text", HOSTILE)
def test_no_html_entity_reaches_the_file(text):
    assert "&#" not in md_cell(text) and "&lt;" not in md_cell(text)


def test_plain_text_is_left_as_written():
    assert md_cell("too few rows (12 < 30)") == "too few rows (12 < 30)"
    assert md_cell(r"licence $\foo$") == r"licence $\foo$"
    assert md_cell("list[str]") == r"list\[str\]"
