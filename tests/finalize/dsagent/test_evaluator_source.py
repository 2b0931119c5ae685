"""The evaluator a desktop task ships runs without daregen and scores with daregen's own metrics: the build
copies pipeline/core/metrics.py's self-contained block in place of the template's import."""

from __future__ import annotations

import json
import subprocess
import sys

import pandas as pd

from finalize.dsagent.build import evaluator_source
from pipeline.core.metrics import macro_f1

# Run evaluator.py as `python evaluator.py RESULTS` would, but with every daregen package unimportable
# (the editable install would otherwise make a stray `import pipeline` work by accident).
_RUN_WITHOUT_DAREGEN = """
import runpy, sys
class NoDaregen:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {"pipeline", "finalize", "sourcing", "task_design", "postprocess", "flows"}:
            raise ImportError("daregen import in the evaluator: " + name)
sys.meta_path.insert(0, NoDaregen())
sys.argv = ["evaluator.py", *sys.argv[1:]]
runpy.run_path("evaluator.py", run_name="__main__")
"""


def test_the_built_evaluator_runs_without_daregen_and_agrees_with_the_kernel_metric(tmp_path) -> None:
    source = evaluator_source()
    assert "from pipeline" not in source and "def macro_f1(" in source
    task, results = tmp_path / "task", tmp_path / "results"
    task.mkdir()
    results.mkdir()
    (task / "evaluator.py").write_text(source, encoding="utf-8")
    reference = pd.DataFrame({"row_id": [1, 2, 3, 4, 5], "y": [1, 1, 2, 2, 3]})
    reference.to_csv(task / "reference.csv", index=False)
    check = {"kind": "prediction", "file": "prediction.csv", "metric": "macro_f1", "id_columns": ["row_id"],
             "targets": ["y"], "reference_file": "reference.csv"}
    (task / "expected.json").write_text(json.dumps({"check": check}), encoding="utf-8")
    prediction = pd.DataFrame({"row_id": [5, 4, 3, 2, 1], "y": ["3.0", "2", "1", "1", "1"]})
    prediction.to_csv(results / "prediction.csv", index=False)

    run = subprocess.run([sys.executable, "-c", _RUN_WITHOUT_DAREGEN, str(results)], cwd=task,
                         env={"PATH": "/usr/bin:/bin", "PYTHONNOUSERSITE": "1"}, capture_output=True, text=True,
                         timeout=120)

    assert run.returncode == 0, run.stderr
    expected = macro_f1(reference["y"].astype(str), pd.Series(["1", "1", "1", "2", "3.0"]))
    assert 0 < expected < 1
    assert float(run.stdout) == round(expected, 6)


def test_help_is_help_and_scores_nothing(tmp_path) -> None:
    # Issue 49: `evaluator.py --help` printed 0.0 (the score of a result folder named `--help`); the usage was
    # only in the docstring.
    (tmp_path / "evaluator.py").write_text(evaluator_source(), encoding="utf-8")

    def run(*argv: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-c", _RUN_WITHOUT_DAREGEN, *argv], cwd=tmp_path, capture_output=True,
                              env={"PATH": "/usr/bin:/bin", "PYTHONNOUSERSITE": "1"}, text=True, timeout=120)

    helped = run("--help")
    assert helped.returncode == 0 and helped.stdout.startswith("usage: evaluator.py [-h] RESULT_DIR [EXPECTED_JSON]")
    assert "RESULT_DIR" in helped.stdout and "0.0" not in helped.stdout.split()
    wrong = run()
    assert wrong.returncode == 2 and wrong.stdout == "" and "usage: evaluator.py" in wrong.stderr
