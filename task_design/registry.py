"""Designers by key. Each has the call design(record, profile, table, rng, config) -> TaskSpec."""

from __future__ import annotations

from task_design import heuristic

DESIGNERS = {heuristic.DESIGNER_NAME: heuristic.design}
