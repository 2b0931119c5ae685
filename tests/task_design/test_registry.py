"""The designer registry names each designer by its module's own DESIGNER_NAME, and reaches its `design`."""

from __future__ import annotations

import importlib

from task_design.registry import DESIGNER_MODULES, DESIGNER_SETTINGS, DESIGNERS


def test_keys_are_the_modules_designer_names_and_calls_reach_their_design():
    for name, module in DESIGNER_MODULES.items():
        assert importlib.import_module(module).DESIGNER_NAME == name
        assert DESIGNERS[name].__qualname__ == f"{module}.design"
    assert set(DESIGNER_SETTINGS) <= set(DESIGNERS)
