"""The registry's entries for what a card format declares (issue 47, item 6): a Hugging Face header's
train-eval-index `col_mapping` and `task_categories` (carried by the record as `declared_roles` and
`task_categories`, sourcing.cards), a sentence naming a column as the label ("The `weather` column is the
label"), and a section of the card headed Task, Goal, Target, Label or Objective (Kaggle's "## Task", a
bold "**Target**" line of a DARE-bench metadata.txt, a `=== Task ===` section of a card export).

task_design.stated_target links what they name to one column, as it does the `stated.*` statements; a
declaration is a signal of its own, named by its rule id. Kept apart from stated.py so that each merges
independently; task_design.evidence joins them into one registry.

Priorities: the card's structure (col_mapping 537, its tabular task category 536) over its prose; a task
section (532) and a label sentence (530) between the `stated.*` statements (521-535)."""

from __future__ import annotations

import re

from task_design.evidence.rule import Case, Rule
from task_design.evidence.stated import _MARK, OWNER
# A section's first lines: what the card says its task is (at most four lines of 200 characters).
_BODY = r"(?P<x>[^\n]{1,200}(?:\n[^\n#=][^\n]{0,199}){0,3})"

DECLARED_RULES = (
    Rule(
        id='declared.col-mapping', reads='declaration', verdict='outcome', priority=537, owner=OWNER,
        statement=("A Hugging Face card's train-eval-index col_mapping that maps a column to `target` or `label` "
                   "(read as the line \"column: role\") declares that column the dataset's target."),
        matcher=re.compile(r"^(?P<x>[^:\n]{1,80}):\s*" + _MARK + r"(?:target|targets|label|labels|class|y)" + _MARK +
                           r"\s*$", re.I),
        cases=(Case('weather: target', True), Case('species: label', True), Case('sentence: text', False),
               Case('id: id', False), Case('target_date: date', False),)),
    Rule(
        id='declared.task-tabular', reads='declaration', verdict='class_outcome', priority=536, owner=OWNER,
        statement=("A Hugging Face card whose task_categories declare a tabular classification or regression "
                   "task asks for a prediction of a row's label, not a forecast of a series, even when its rows "
                   "are dated."),
        matcher=re.compile(r"^tabular[-_ ](?:classification|regression)$", re.I),
        cases=(Case('tabular-classification', True), Case('tabular-regression', True),
               Case('time-series-forecasting', False), Case('text-classification', False),)),
    Rule(
        id='declared.task-section', reads='description', verdict='outcome', priority=532, owner=OWNER,
        statement=("A section of the card headed Task, Goal, Target, Label or Objective (\"## Task\", "
                   "\"**Target**\", \"=== Task ===\", \"Prediction task:\") states the target in its first lines; "
                   "after a verb of prediction (\"Predict the `weather` of each day\") its object."),
        matcher=re.compile(r"^[ \t]*(?:#{1,6}[ \t]*|={2,}[ \t]*|[*_]{1,2})?(?:the[ \t]+)?(?:prediction[ \t]+|"
                           r"ml[ \t]+|modell?ing[ \t]+|learning[ \t]+)?(?:task|goal|target|label|objective)s?"
                           r"(?:[ \t]+(?:variable|column|definition))?[ \t]*(?:[*_]{1,2}|={2,})?[ \t]*:?[ \t]*\n+"
                           r"(?:[^\n]{0,120}?\b(?:predict|classify|forecast|estimate)(?:ing|s)?[ \t]+)?" + _BODY,
                           re.I | re.M),
        cases=(Case('## Task\nPredict the `weather` of each day from its measurements.', True),
               Case('**Target**\nweather', True), Case('=== Task ===\nClassify each day by its weather', True),
               Case('Prediction task:\n\nspecies', True),
               Case('## Tasks and their owners are listed below', False),
               Case('The task is hard.\nPredict nothing.', False), Case('## Context\nweather data', False),)),
    Rule(
        id='declared.label-is', reads='description', verdict='outcome', priority=530, owner=OWNER,
        statement=("A sentence naming a column as the label (\"The `weather` column is the label\", \"the label "
                   "is `species`\", \"Label column: churn\") names that column as the target, as a Hugging Face "
                   "card of a tabular task says it."),
        # (the lookbehind starts a name only where a token starts: a long run of one mark is read once, not once
        # per character)
        matcher=re.compile(r"(?<![\w`*'\"“”‘’.-])(?P<before>[\w`*'\"“”‘’.-]+(?:[ \t]+[\w`*'\"“”‘’.-]+){0,3})[ \t]+(?:is|are|serves as|"
                           r"holds)[ \t]+(?:the|its|our)\s+(?:class\s+|target\s+|ground[- ]truth\s+)?labels?\b"
                           r"(?!\s+(?:of|for)\s+(?:the\s+)?(?:plot|axis|chart|figure|map))|"
                           r"\b(?:the\s+)?(?:class\s+|target\s+)?label(?:\s+column)?\s*(?:is|:|=)\s*(?P<x>[^.;!?\n]{1,80})",
                           re.I),
        cases=(Case('The `weather` column is the label.', True), Case('the label is `species`', True),
               Case('Label column: churn', True), Case('x is the label of the plot', False),
               Case('each image has a label', False), Case('labelled by hand', False),)),
)
