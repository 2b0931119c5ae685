"""Designers by key. Each has the call design(record, profile, table, rng, config) -> TaskSpec.

A designer with its own settings (a pydantic model) lists it in DESIGNER_SETTINGS;
it then also takes the keywords `settings` and `usage` (an LLMUsage to count into).

A designer's module (and with it pandas) is imported at its first call, not here, so
the CLI can check a designer's name and settings before the pipeline loads. Each key
is its module's DESIGNER_NAME (tests/task_design/test_registry.py).
"""

from __future__ import annotations

import importlib

from task_design.designers import DESIGNER_MODULES
from task_design.llm_schema import LLMSettings


def _design_of(module: str, function: str = "design"):
    def design(*args, **kwargs):
        return getattr(importlib.import_module(module), function)(*args, **kwargs)
    design.__qualname__ = f"{module}.{function}"
    return design


DESIGNERS = {name: _design_of(module) for name, module in DESIGNER_MODULES.items()}
DESIGNER_SETTINGS = {"llm": LLMSettings}
# Designers that can also make a second task of the other kind for a dataset (DARE-bench's two tasks per dataset):
# design_pair(record, profile, table, rng, rngs by problem type, config) -> [design()'s TaskSpec, maybe a
# second of the other problem type].
PAIR_DESIGNERS = {"heuristic": _design_of("task_design.heuristic", "design_pair")}
