"""A card's plain statement of its target, linked to ONE column (issue 41, item 1).

stated_target(record, names, classes) -> StatedTarget | None. Pure.

Kaggle, OpenML and Hugging Face cards declare no target in a field, but most say it in words, anywhere: in
the overview ("the target variable is whether a dog is considered healthy"), a use-case list ("Binary
classification with Healthy as the target"), a features table's row ("`Churn` | (Target Variable) ..."),
scikit-learn's DESCR ("Target: Column 11 is a quantitative measure of disease progression"). The statements
are the registry's `stated.*` entries (task_design.evidence.stated); this module links what a statement says
to a column of the table:

- a column's own entry calling it the target names that column (`stated.target-entry`);
- the words a statement captures name a column by its name (whole words, Markdown marks and `_`/`.` aside;
  a name inside a longer matched name counts once), else by its own description (at least two of its
  content words, and DESCRIBED_SHARE of them, in the statement's words);
- "Column N" names the table's Nth column; "into K classes" the one categorical column with K values.

Precision first: a statement whose words fit two columns links to none, and when the strongest rule that
links a column links two different ones (two statements disagree), the card names no one target and this
returns None. A column's name alone is never a statement: only the card's words are read.

What a card format declares (task_design.evidence.declared) is read here too: a Hugging Face col_mapping
(`declared.col-mapping`, first of all), a label sentence, a Task/Goal/Target section. statement_signals gives
every rule's reading per column, none settling another: the signals a learned target model weighs.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pipeline.core.records import DatasetRecord
from pipeline.core.wording import TITLE_FRAME_WORDS, letter_words, prefix_stem
from task_design.evidence import Rule, rule
from task_design.evidence.declared import DECLARED_RULES
from task_design.evidence.stated import STATED_RULES

DESCRIBED_SHARE = 0.6  # the share of a column's description words that a statement must hold
_NUMBER_WORDS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
                 "eleven": 11, "twelve": 12}
_ENTRY = rule("stated.target-entry")
_COL_MAPPING = rule("declared.col-mapping")
_TABULAR = rule("declared.task-tabular")
# The statements read in the card's words, strongest first (the col_mapping and entry rules read fields).
_DESCRIPTION_RULES = tuple(sorted((r for r in (*STATED_RULES, *DECLARED_RULES) if r.reads == "description"),
                                  key=lambda r: -r.priority))


@dataclass(frozen=True)
class StatedTarget:
    column: str
    rule_id: str
    span: str  # the card's words that state it

    @property
    def evidence(self) -> str:
        return f"the card states its target ({self.rule_id}): {self.span.strip()!r}"


def _plain(text: str) -> str:
    """Lower case, every mark, separator and punctuation a space: `Breed_Size` and "breed size" meet."""
    return " ".join(re.sub(r"[\W_]+", " ", text).lower().split())


def _content(text: str) -> set[str]:
    return {prefix_stem(w) for w in letter_words(text) if len(w) >= 4 and w not in TITLE_FRAME_WORDS}


# Words joining the names of a list: "sqft or bedrooms", "height, weight and age".
_LIST_JOIN = re.compile(r"^(?:e?s)?\s*(?:and|or|and or|as well as|plus|vs|versus)?\s*$")


def _by_name(words: str, names: Sequence[str]) -> set[str]:
    """The column the words name first by its whole name (a name inside a longer named one counts once), or
    the names of a list ("sqft or bedrooms") that they open with, which fits several."""
    text = f" {_plain(words)} "
    marked = {_plain(m) for m in re.findall(r"[`*'\"“‘]{1,4}([^`*'\"”’\n]{1,40})[`*'\"”’]+", words)}
    # A name as a word of the sentence, or its plural ("final grades" names `final_grade`).
    found = {c: p for c in names if (p := _plain(c)) and (len(p) >= 2 or p in marked)
             and any(f" {p}{s} " in text for s in ("", "s", "es"))}
    found = {c: p for c, p in found.items() if not any(p != q and f" {p} " in f" {q} " for q in found.values())}
    # The head the statement names comes first ("the death rate of each county"); a list there fits several.
    at = sorted((min(i for s in ("", "s", "es") if (i := text.find(f" {p}{s} ")) >= 0), len(p), c)
                for c, p in found.items())
    if len(at) >= 2 and _LIST_JOIN.match(text[at[0][0] + at[0][1] + 1:at[1][0]]):
        return {at[0][2], at[1][2]}
    return {at[0][2]} if at else set()


def _by_description(words: str, record: DatasetRecord, names: Sequence[str]) -> set[str]:
    said = _content(words)
    out = set()
    for c in names:
        own = _content(record.column_descriptions.get(c, ""))
        if len(own) >= 2 and len(own & said) >= DESCRIBED_SHARE * len(own):
            out.add(c)
    return out


def _linked(words: str, record: DatasetRecord, names: Sequence[str]) -> set[str]:
    return _by_name(words, names) or _by_description(words, record, names)


# "for predicting cancer recurrence, understanding risk factors ...", "predict yield from rainfall": the
# statement's object stops at the first comma, conjunction or inputs' preposition.
_OBJECT_END = re.compile(r",|\s(?:and|using|based on|from|given|with|by)\s", re.I)


def _count(text: str) -> int:
    return int(text) if text.isdigit() else _NUMBER_WORDS[text.lower()]


def _columns(r: Rule, m: re.Match[str], record: DatasetRecord, names: Sequence[str],
             classes: Mapping[str, int]) -> set[str]:
    """The columns one statement (rule `r`'s match `m`) fits."""
    groups = {k: v for k, v in m.groupdict().items() if v}
    if "n" in groups or "n2" in groups:
        n = int(groups.get("n") or groups["n2"])
        return {names[n - 1]} if 1 <= n <= len(names) else set()
    if "k" in groups or "k2" in groups:
        k = _count(groups.get("k") or groups["k2"])
        return {c for c, n in classes.items() if n == k}
    if "x" in groups:  # what is predicted ends where a list of purposes or the inputs begin
        groups["x"] = _OBJECT_END.split(groups["x"], maxsplit=1)[0]
    if "before" in groups:  # "... with Healthy as the target": the words before, from the last such break
        groups["before"] = _OBJECT_END.split(groups["before"])[-1]
    for key in ("paren", "x2", "x3", "x", "before"):  # a name in brackets or marks before the rest of the sentence
        if key in groups and (linked := _linked(groups[key], record, names)):
            return linked
    return set()


def stated_target(record: DatasetRecord, names: Sequence[str],
                  classes: Mapping[str, int] | None = None) -> StatedTarget | None:
    """The one column the card states as its target, or None. `classes`: the categorical columns' numbers of
    values, for "into K classes" (left out, that statement is not read). A card format's declaration
    (a Hugging Face col_mapping, `declared.col-mapping`) comes first, then a column's own entry, then the
    statements of the card's words, strongest first."""
    mapped = [c for c, role in record.declared_roles.items() if c in names and _COL_MAPPING.fires(f"{c}: {role}")]
    if len(mapped) == 1:
        return StatedTarget(mapped[0], _COL_MAPPING.id, f"col_mapping: {mapped[0]}: {record.declared_roles[mapped[0]]}")
    entries = [c for c in names if _ENTRY.fires(record.column_descriptions.get(c, ""))]
    if len(entries) == 1:
        doc = record.column_descriptions[entries[0]]
        return StatedTarget(entries[0], _ENTRY.id, doc[:120])
    text = f"{record.title}\n{record.description}"
    for r in _DESCRIPTION_RULES:
        if r.id == "stated.k-classes" and classes is None:
            continue
        found: dict[str, str] = {}
        for m in r.matcher.finditer(text):
            if len(cols := _columns(r, m, record, names, classes or {})) == 1:
                found.setdefault(next(iter(cols)), m.group(0))
        if len(found) == 1:
            col, span = next(iter(found.items()))
            return StatedTarget(col, r.id, span[:160])
        if found:  # statements of equal strength name different columns: no one target
            return None
    return None


def declared_tabular(record: DatasetRecord) -> str | None:
    """The task category by which the card declares a tabular classification or regression task
    (`declared.task-tabular`), or None."""
    return next((c for c in record.task_categories if _TABULAR.fires(c)), None)


def statement_signals(record: DatasetRecord, names: Sequence[str],
                      classes: Mapping[str, int] | None = None) -> dict[str, tuple[str, ...]]:
    """{column: the ids of every rule whose statement names it} (the `declared.*` and `stated.*` rules, each
    read on its own, none deciding over another): the signals a learned target model reads per candidate,
    where stated_target settles them into one column by priority. A statement fitting two columns names
    neither; `declared.task-tabular` names no column (declared_tabular reads it)."""
    out: dict[str, set[str]] = {}
    for c, role in record.declared_roles.items():
        if c in names and _COL_MAPPING.fires(f"{c}: {role}"):
            out.setdefault(c, set()).add(_COL_MAPPING.id)
    for c in names:
        if _ENTRY.fires(record.column_descriptions.get(c, "")):
            out.setdefault(c, set()).add(_ENTRY.id)
    text = f"{record.title}\n{record.description}"
    for r in _DESCRIPTION_RULES:
        if r.id == "stated.k-classes" and classes is None:
            continue
        for m in r.matcher.finditer(text):
            if len(cols := _columns(r, m, record, names, classes or {})) == 1:
                out.setdefault(next(iter(cols)), set()).add(r.id)
    return {c: tuple(sorted(ids)) for c, ids in sorted(out.items())}
