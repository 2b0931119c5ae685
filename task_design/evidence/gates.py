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

# What breaks the symmetry of a product: in population = density x area, the density and the area are each the
# target divided by the other; the one whose name or entry reads as a quantity per unit is the restatement
# (task_design.restated, `derived.rate-of-target`); an index's name or entry says it is one
# (`derived.index-of-target`: a bound such as MASS/OME's `Trials` beside `Correct` has the same envelope).
_PER_UNIT = (r"dens|per|rate|ratio|yield|share|pct|percent|proportion|fraction|capita")
_INDEX = r"index|indices|aqi|idx"
GATE_RULES += (
    Rule(
        id='derived.per-unit-name', reads='name', verdict='derived', priority=858,
        owner='task_design.restated',
        statement=("A column named as a quantity per unit (a density, a rate, a ratio, a yield, a share) that is "
                   "the target divided by another column restates the target; its partner is a base quantity."),
        matcher=re.compile(r"(?:^|[^a-z])(?:" + _PER_UNIT + r")", re.I),
        cases=(Case('density_2021', True), Case('Yield', True), Case('pop_per_km2', True),
               Case('land_area_km2', False), Case('avgsal', False),)),
    Rule(
        id='derived.per-unit-entry', reads='entry', verdict='derived', priority=857,
        owner='task_design.restated',
        statement=("A column whose own entry describes a quantity per unit (\"persons per square kilometer\", a "
                   "density, a rate, a ratio) that is the target divided by another column restates the target."),
        matcher=re.compile(r"\b(?:per\s+\w+|density|densities|rate|ratio|yield|share|percent(?:age)?|proportion|"
                           r"fraction)\b", re.I),
        cases=(Case('Population density values, calculated as persons per square kilometer', True),
               Case('crop yield in tonnes per hectare', True), Case('average teacher salary, $', False),
               Case('total area in square kilometers', False),)),
    Rule(
        id='derived.index-name', reads='name', verdict='derived', priority=856,
        owner='task_design.restated',
        statement=("A column named as an index (`AQI`, `air_quality_index`) that is a nondecreasing function of "
                   "the target on half the rows and above it on the rest is an index computed from the target."),
        matcher=re.compile(r"(?:^|[^a-z])(?:" + _INDEX + r")(?:$|[^a-z])", re.I),
        cases=(Case('AQI', True), Case('air_quality_index', True), Case('Trials', False),
               Case('indexed_price', False),)),
)
