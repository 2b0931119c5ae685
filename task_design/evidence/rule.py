"""An evidence rule's entry (Rule), its cases, and how a registry of them is kept (see task_design.evidence)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

# What a rule reads: a column's name, its own entry (its Format line or description), the dataset's title,
# its description (or title and description together), or a card's structured declaration (a col_mapping
# line "column: role", a task category: DatasetRecord.declared_roles, task_categories), or one level of a
# categorical column (`Alive`).
Reads = Literal["name", "entry", "title", "description", "declaration", "level"]
# What a firing rule says of the column (or, for the title and description, of the dataset).
Verdict = Literal["outcome", "class_outcome", "covariate", "design_factor", "calendar", "coordinate", "table_count",
                  "derived", "not_outcome", "study_subject", "no_subject", "experiment", "lookup_table"]


@dataclass(frozen=True)
class Case:
    text: str
    fires: bool


@dataclass(frozen=True)
class Rule:
    id: str
    statement: str  # one sentence: what it decides and why
    reads: Reads
    verdict: Verdict
    priority: int  # higher decides a conflict with another rule's verdict
    matcher: re.Pattern[str]
    cases: tuple[Case, ...]
    anchored: bool = False  # applied at the text's start (re.match), not anywhere in it (re.search)
    owner: str = ""  # the module whose decisions apply it

    def __post_init__(self) -> None:
        if not re.fullmatch(r"(?<![a-z])[a-z]+(?:[.-][a-z0-9]+)+", self.id):
            raise ValueError(f"rule id {self.id!r} is not `group.name`")
        if not self.statement.strip().endswith("."):
            raise ValueError(f"rule {self.id}: its statement is one sentence ending with a full stop")
        if not any(c.fires for c in self.cases) or all(c.fires for c in self.cases):
            raise ValueError(f"rule {self.id}: needs a case where it fires and one where it must not")

    def fires(self, text: str) -> re.Match[str] | None:
        """The match of this rule on `text`, as its owner applies it, or None."""
        return (self.matcher.match if self.anchored else self.matcher.search)(text)


def registry(rules: Iterable[Rule]) -> dict[str, Rule]:
    """The rules by id; ids and priorities unique, so that a conflict is settled by priority alone."""
    out: dict[str, Rule] = {}
    priorities: dict[int, str] = {}
    for r in rules:
        if r.id in out:
            raise ValueError(f"duplicate rule id {r.id!r}")
        if r.priority in priorities:
            raise ValueError(f"rules {priorities[r.priority]!r} and {r.id!r} share priority {r.priority}")
        out[r.id] = r
        priorities[r.priority] = r.id
    return out


def strongest(rules: Iterable[Rule]) -> Rule | None:
    """Of rules that fired, the one whose verdict stands: the highest priority."""
    return max(rules, key=lambda r: r.priority, default=None)
