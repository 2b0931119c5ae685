"""Render `source/metadata.txt`, the dataset documentation an agent reads first.

The layout copies the published DARE-bench tasks' source/metadata.txt (docs/dare-format.md),
which is Kaggle's page layout flattened to text:

    <description>

    === About this file ===

    About this file
    <about_file>


    === Columns & descriptions ===

    <name>: <description>
    ...

Each column description is folded onto its one line, so the `name: description`
pairs read back by splitting each line on its first `: `.

A description's claim about how a column is written ("Date in format MMM-1-YYYY") is checked
against the values the task files hold, and cut where they contradict it: statsmodels documents
elec_equip's dates as `Jan-1-1995`, but its loader and so our files hold ISO dates, and an agent
that trusts the claim cannot parse them.
"""

from __future__ import annotations

import re

import pandas as pd

from pipeline.core.column_refs import NO_DESCRIPTION
from pipeline.core.records import DatasetRecord

ABOUT_HEADER = "=== About this file ==="
ABOUT_TITLE = "About this file"
COLUMNS_HEADER = "=== Columns & descriptions ==="


def _one_line(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


# "in format MMM-1-YYYY", "format: YYYY-MM-DD", "formatted as dd/mm/yyyy"
_FORMAT_CLAIM = re.compile(r"[,;]?\s{0,10}\(?\b(?:in|with)?\s{0,10}(?:the\s+)?(?:format(?:ted)?(?:\s+as)?|as)"
                           r"\s*+(?::\s*+)?"
                           r"(?P<fmt>[YMDHSymdhs][YMDHSymdhs0-9/\-:. ]*[YMDHSymdhs0-9])\)?", re.I)
# Human date tokens, longest first -> the text they stand for.
_DATE_TOKENS = (("YYYY", r"\d{4}"), ("MMMM", r"[A-Za-z]+"), ("MMM", r"[A-Za-z]{3}"), ("YY", r"\d{2}"),
                ("MM", r"\d{1,2}"), ("DD", r"\d{1,2}"), ("HH", r"\d{1,2}"), ("SS", r"\d{2}"), ("M", r"\d{1,2}"),
                ("D", r"\d{1,2}"), ("H", r"\d{1,2}"))


def _claim_pattern(claim: str) -> re.Pattern | None:
    """The values a human format such as `MMM-1-YYYY` allows, or None when it is not one."""
    text, out = claim.upper(), []
    while text:
        token = next(((t, rx) for t, rx in _DATE_TOKENS if text.startswith(t)), None)
        if token:
            out.append(token[1])
            text = text[len(token[0]):]
        elif text[0].isdigit() or text[0] in "/-:. ":
            out.append(re.escape(text[0]))
            text = text[1:]
        else:
            return None
    return re.compile("".join(out)) if any(rx == r"\d{4}" or "A-Za-z" in rx for rx in out) else None


def contradicted_claim_removed(description: str, values: pd.Series) -> str:
    """`description` without its format claims that some non-missing value of `values` contradicts."""
    texts = values.dropna().astype(str)
    if texts.empty:
        return description

    def keep_or_cut(m: re.Match) -> str:
        pattern = _claim_pattern(m["fmt"])
        if pattern is None or all(pattern.fullmatch(t.strip()) for t in texts):
            return m[0]
        return ""
    return _FORMAT_CLAIM.sub(keep_or_cut, description).strip()


def with_checked_claims(record: DatasetRecord, data: pd.DataFrame) -> DatasetRecord:
    """`record` whose column descriptions lose the format claims `data` (a task file's frame)
    contradicts; metadata.txt and the instructions are then written from it."""
    checked = {c: contradicted_claim_removed(d, data[c]) if c in data.columns else d
               for c, d in record.column_descriptions.items()}
    return record if checked == record.column_descriptions else record.model_copy(
        update={"column_descriptions": checked})


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


def metadata_descriptions(metadata_txt: str) -> dict[str, str]:
    """`name: description` lines of metadata.txt's columns section: after the *last* line that is
    exactly the section header, since the dataset's own description (above it) may contain one."""
    lines = metadata_txt.splitlines()
    starts = [i for i, line in enumerate(lines) if line.strip() == COLUMNS_HEADER]
    out = {}
    for line in lines[starts[-1] + 1:] if starts else []:
        name, sep, desc = line.partition(": ")
        if sep and name.strip():
            out[name.strip()] = desc.strip()
    return out
