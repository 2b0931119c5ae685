"""The registry's entries for the gates issue 47 (item 3) adds after the target's choice, where one reads text:
the levels of a vital status (SEER's `Status`, Alive/Dead) beside a follow-up time (`Survival Months`), which
make that time the censored duration of the status (task_design.time_tables.survival_roles), so that it is no
feature of a task on the status and no target of its own. The data gates of the same item (a ratio target, a
column restating the target, an index computed from the target, a rate of a forecast's target) are tests on
numbers, not on text: task_design.restated and task_design.temporal, each with its rule id and code.

Kept apart from rules.py so that each merges independently; task_design.evidence joins them into one registry."""

from __future__ import annotations

import re

from task_design.evidence.rule import Case, Rule

GATE_RULES = (
    Rule(
        id='survival.vital-status-levels', reads='level', verdict='covariate', priority=909,
        owner='task_design.time_tables',
        statement=("A two-level column whose levels are alive and dead (deceased, living) is a vital status: beside "
                   "one follow-up time (SEER's `Survival Months` for `Status`), that time is censored by it, so it is "
                   "neither a feature of the status nor a target."),
        matcher=re.compile(r"^\W*(?:alive|dead|deceased|living|died|death)\W*$", re.I),
        cases=(Case('Alive', True), Case('Dead', True), Case('deceased', True), Case('Positive', False),
               Case('alive and well at 5 years', False), Case('Yes', False),)),
)
