"""Designers by key. Each has the call design(record, profile, table, rng, config) -> TaskSpec.

A designer with its own settings (a pydantic model) lists it in DESIGNER_SETTINGS;
it then also takes the keywords `settings` and `usage` (an LLMUsage to count into).
"""

from __future__ import annotations

from task_design import heuristic, llm
from task_design.llm_schema import LLMSettings

DESIGNERS = {heuristic.DESIGNER_NAME: heuristic.design, llm.DESIGNER_NAME: llm.design}
DESIGNER_SETTINGS = {llm.DESIGNER_NAME: LLMSettings}
# Designers that can also make a second task of the other kind for a dataset (issue 12, item 4):
# design_pair(record, profile, table, rngs by problem type, config) -> up to two TaskSpecs.
PAIR_DESIGNERS = {heuristic.DESIGNER_NAME: heuristic.design_pair}
