"""What the design digest leaves out (daregen.code_version, daregen.environment, verify/environment.json)
is written by the build that publishes the task, never taken from the task folder it assembled: a forged
value is replaced by the one finalize writes, a link there is replaced and never written through, and a
time series (which records no library versions) ships none."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.core import names
from pipeline.core.environment import code_version, fingerprint, fingerprint_digest
from pipeline.review.curation import stamp_machine_fields


def _task(tmp_path: Path, problem_type: str) -> tuple[Path, dict]:
    task = tmp_path / "t"
    (task / names.VERIFY_DIR).mkdir(parents=True)
    meta = {"question": {"problem_type": problem_type},
            "daregen": {"ref": "local/t", "code_version": "0.0.0-forged", "environment": "f" * 16, "seed": 0}}
    return task, meta


@pytest.mark.parametrize("forged", ["text", "link"])
def test_a_tabular_task_gets_this_builds_values(tmp_path, forged):
    task, meta = _task(tmp_path, "classification")
    env = task / names.VERIFY_DIR / names.ENVIRONMENT
    victim = tmp_path / "victim.txt"
    victim.write_text("the operator's", encoding="utf-8")
    if forged == "link":
        env.symlink_to(victim)
    else:
        env.write_text('{"forged": true}', encoding="utf-8")
    stamp_machine_fields(task, meta)
    assert meta["daregen"]["code_version"] == code_version()
    assert meta["daregen"]["environment"] == fingerprint_digest(fingerprint())
    assert not env.is_symlink() and json.loads(env.read_text(encoding="utf-8")) == fingerprint()
    assert victim.read_text(encoding="utf-8") == "the operator's"
    assert list(meta["daregen"]) == ["ref", "code_version", "environment", "seed"]  # the order finalize wrote


def test_a_time_series_ships_no_library_versions(tmp_path):
    task, meta = _task(tmp_path, "time_series_analysis")
    (task / names.VERIFY_DIR / names.ENVIRONMENT).write_text('{"forged": true}', encoding="utf-8")
    stamp_machine_fields(task, meta)
    assert "environment" not in meta["daregen"] and meta["daregen"]["code_version"] == code_version()
    assert not (task / names.VERIFY_DIR / names.ENVIRONMENT).exists()
