"""pyproject.toml's dependencies are exactly what the code imports: every third-party import of the
packages is declared, and every declared dependency is imported (the one documented exception aside)."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROJECT = ("pipeline", "sourcing", "task_design", "postprocess", "finalize", "flows")
# Declared but not imported, each with its reason in pyproject.toml.
NOT_IMPORTED = {"kaggle"}


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~;\[ ]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def _imported_modules() -> set[str]:
    files = [ROOT / "flows.py"] + [p for pkg in PROJECT[:-1] for p in (ROOT / pkg).rglob("*.py")]
    found = set()
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
    return found - set(sys.stdlib_module_names) - set(PROJECT) - {"__future__"}


def test_declared_dependencies_are_what_the_code_imports() -> None:
    declared = {_name(r) for r in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]}
    owners = packages_distributions()
    imported = {_name(owners[m][0]) for m in _imported_modules()}
    assert imported - declared == set(), "imported but not declared in pyproject.toml"
    assert declared - imported == NOT_IMPORTED, "declared in pyproject.toml but imported nowhere"
