"""Evidence rules as data: each rule that reads documentation (or a column's name) to decide a column's
role is one entry of a registry, the way sqlfluff keeps its lint rules (docs/style.md, "Rules that read
documentation").

An entry (Rule) has an id, one sentence saying what it decides and why, the text it reads (a column's
name, its own entry, the dataset's title or description), its verdict, an explicit priority, its matcher
(a regular expression over that text, built from the one vocabulary, pipeline.core.wording) and its cases:
texts where it fires and texts where it must not, run as tests (tests/task_design/test_evidence.py) and
printed in the generated policy (task_design.evidence.policy). The modules that apply a rule take its
matcher from here by id (`pattern("outcome.entry-wording")`), so the entry is the rule's one owner.

When two rules with different verdicts fire on the same text, the higher priority decides (`strongest`);
bench/rule_report.py counts such conflicts over the corpus.
"""

from __future__ import annotations

import re

from task_design.evidence.declared import DECLARED_RULES
from task_design.evidence.gates import GATE_RULES
from task_design.evidence.rule import Case, Reads, Rule, Verdict, registry, strongest
from task_design.evidence.rules import RULES as _RULES
from task_design.evidence.stated import STATED_RULES

# One registry: the entries of rules.py, a card's plain statements of its target (stated.py), what a card
# format declares (declared.py) and the text the gates after the choice read (gates.py).
RULES = registry((*_RULES.values(), *STATED_RULES, *DECLARED_RULES, *GATE_RULES))


def rule(rule_id: str) -> Rule:
    return RULES[rule_id]


def pattern(rule_id: str) -> re.Pattern[str]:
    """The matcher of rule `rule_id`, for the module that applies it."""
    return RULES[rule_id].matcher


__all__ = ["RULES", "Case", "Reads", "Rule", "Verdict", "pattern", "registry", "rule", "strongest"]
