"""Render `source/metadata.txt`, the dataset documentation an agent reads first.

The layout copies the published DARE-bench tasks (../shared/dare-examples/*/source/
metadata.txt), which is Kaggle's page layout flattened to text:

    <description>

    === About this file ===

    About this file
    <about_file>


    === Columns & descriptions ===

    <name>: <description>
    ...

Each column description is folded onto its one line, so the `name: description`
pairs read back by splitting each line on its first `: `.
"""

from __future__ import annotations

import re

from pipeline.core.records import DatasetRecord

ABOUT_HEADER = "=== About this file ==="
ABOUT_TITLE = "About this file"
COLUMNS_HEADER = "=== Columns & descriptions ==="
# DARE-bench's own spelling for an undocumented column (the covid-19 example).
NO_DESCRIPTION = "[no description]"


def _one_line(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def render_metadata_txt(record: DatasetRecord, columns: list[str]) -> str:
    """metadata.txt for `record`, with one line per entry of `columns`, in that order.

    `record.column_descriptions` is looked up by exact column name; a column
    without one reads `name: [no description]`. The description and about text
    go in verbatim, as DARE-bench writes them, so a published task's
    metadata.txt can be reproduced byte for byte. The text is a pure function
    of its inputs (no dates) and ends with exactly one newline.
    """
    column_lines = [
        f"{_one_line(name)}: {_one_line(record.column_descriptions.get(name, '')) or NO_DESCRIPTION}"
        for name in columns
    ]
    head = (
        f"{record.description}\n\n"
        f"{ABOUT_HEADER}\n\n"
        f"{ABOUT_TITLE}\n{record.about_file}\n\n\n"
        f"{COLUMNS_HEADER}\n"
    )
    return head + "".join(f"\n{line}" for line in column_lines) + ("\n" if column_lines else "")
