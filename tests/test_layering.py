"""The layering contracts in pyproject.toml are checked by import-linter, and they bite: a stage that
imports the CLI breaks them (on a copy of the code, so the tree under test is never edited)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("pipeline", "sourcing", "task_design", "postprocess", "finalize")
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def _copy(tmp_path: Path) -> Path:
    for pkg in PACKAGES:
        shutil.copytree(ROOT / pkg, tmp_path / pkg, ignore=shutil.ignore_patterns("__pycache__", "*.md", "prompts"))
    for name in ("flows.py", "pyproject.toml"):
        shutil.copy(ROOT / name, tmp_path / name)
    return tmp_path


def _lint(tree: Path) -> subprocess.CompletedProcess:
    # PYTHONPATH first, so the copy is analysed rather than the installed (editable) daregen
    env = os.environ | {"PYTHONPATH": str(tree)}
    return subprocess.run([str(LINT_IMPORTS), "--config", str(tree / "pyproject.toml"), "--no-cache"], cwd=tree,
                          env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.skipif(not LINT_IMPORTS.exists(), reason="import-linter is not installed (make setup installs it)")
def test_a_stage_importing_the_cli_breaks_the_contracts(tmp_path) -> None:
    tree = _copy(tmp_path)
    assert _lint(tree).returncode == 0
    stage = tree / "postprocess" / "split.py"
    stage.write_text("import pipeline.cli  # a stage reaching up into the application\n" + stage.read_text())
    result = _lint(tree)
    assert result.returncode == 1, result.stdout
    assert "Stages never import the application (the rest of pipeline/, flows) BROKEN" in result.stdout
    assert "postprocess is not allowed to import pipeline.cli" in result.stdout
    assert "postprocess.split -> pipeline.cli (l.1)" in result.stdout
