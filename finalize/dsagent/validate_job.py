"""Runs inside the sandbox: each task's oracle, then its evaluator on the oracle's output and on
perturbed copies of it. Standard library and pandas only (forked from the warm pool).

The working directory holds one folder per task, laid out like the task folder in
the VM (its input files only). An oracle runs with its own folder as the working
directory; the expected answers are written only after it has finished, outside
every task folder, so no oracle can read them. The one exception is declared per
task: a time-series oracle's hidden inputs (the held-out future rows, under
`_hidden/` in its folder), which no config places in the VM.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import time
import traceback
from pathlib import Path

import pandas as pd


NOT_APPLICABLE = "n/a"  # a perturbation that leaves this output's content unchanged (e.g. constant predictions)


class _NoOp(Exception):
    pass


def _read_table(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def _write_table(frame: pd.DataFrame, path: Path) -> None:
    frame.to_csv(path, index=False, lineterminator="\n")


def _changed(value):
    if isinstance(value, bool) or value is None:
        return "wrong"
    if isinstance(value, (int, float)):
        return value + 1 + abs(value) * 0.5
    if isinstance(value, list):
        return [_changed(value[0]), *value[1:]] if value else [1]
    return f"{value}_wrong"


def _other_time_format(texts: pd.Series, fmt: str) -> list[str]:
    """The same time points written in another text format (ISO 8601 with a `T`, or day-first)."""
    from finalize.dsagent.evaluator_template import parse_time

    times = [parse_time(t, fmt) for t in texts]
    other = "%Y-%m-%dT%H:%M:%S" if fmt.replace("%:z", "%z") != "%Y-%m-%dT%H:%M:%S" else "%d/%m/%Y %H:%M"
    return [t.strftime(other + ("%z" if t.tzinfo is not None else "")) for t in times]


def _perturb_table(path: Path, how: str, key: str, targets: list[str] | None, check: dict | None = None) -> None:
    frame = _read_table(path)
    check = check or {}
    cols = targets or [c for c in frame.columns if c != key]
    col = cols[0]
    if how == "wrong_column":
        frame = frame.rename(columns={col: f"{col}_renamed"})
    elif how == "missing_id_column":
        frame = frame.drop(columns=[key])
    elif how == "time_format":
        column = check["time_column"]
        before = frame[column].tolist()
        frame[column] = _other_time_format(frame[column], check["time_format"])
        if frame[column].tolist() == before:
            raise _NoOp
    elif how == "shuffled_ids":
        before = sorted(map(tuple, frame[[key, *cols]].to_numpy().tolist()))
        if check.get("time_ordered"):
            # Rows of a forecast are in time (or entity) order: a series shifted by one step still tracks
            # itself, and a panel shifted by a block can land on the same entity a few steps on (high R²
            # either way). A fixed-seed permutation is what "rows in the wrong order" means there.
            import numpy as np

            order = np.random.default_rng(0).permutation(len(frame))
        else:
            order = [*range(1, len(frame)), 0]
        frame[key] = frame[key].to_numpy()[order] if len(frame) > 1 else frame[key]
        if sorted(map(tuple, frame[[key, *cols]].to_numpy().tolist())) == before:
            raise _NoOp
    elif how == "wrong_value":
        if targets:  # a prediction file: every prediction wrong (one wrong row rarely moves F1 or R²)
            labels = sorted(set(frame[col]))
            numeric = pd.to_numeric(frame[col], errors="coerce")
            if numeric.notna().all() and len(labels) > 2:
                frame[col] = (numeric * -3.0 + numeric.abs().max() + 1.0).map(repr)
            else:
                nxt = {a: labels[(i + 1) % len(labels)] if len(labels) > 1 else f"{a}_wrong"
                       for i, a in enumerate(labels)}
                frame[col] = frame[col].map(nxt)
        else:  # one cell changed; a missing cell would read back as missing, so pick a filled one
            filled = [i for i, v in enumerate(frame[col]) if v.strip() not in ("", "nan", "NaN")]
            row = filled[0] if filled else 0
            value = frame.at[row, col]
            try:
                frame.at[row, col] = repr(_changed(float(value)))
            except ValueError:
                frame.at[row, col] = f"{value}_wrong" if filled else "12345.678"
    _write_table(frame, path)


def _perturb_json(path: Path, how: str, kind: str) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    if kind == "answers":
        first = sorted(data)[0]
        if how == "wrong_column":
            data[f"{first}_renamed"] = data.pop(first)
        else:
            data[first] = _changed(data[first])
    else:
        enc = data["encoding"]
        if how == "wrong_column":
            enc["x"]["field"] = f"{enc['x']['field']}_renamed"
        elif how == "unlabeled_axis":
            enc["x"].pop("title", None)
            if isinstance(enc["x"].get("axis"), dict):
                enc["x"]["axis"].pop("title", None)
        elif how == "wrong_mark":
            data["mark"] = "line" if data["mark"] != "line" else "area"
        else:
            row = data["data"]["values"][0]
            row[enc["y"]["field"]] = _changed(row[enc["y"]["field"]])
    path.write_text(json.dumps(data), encoding="utf-8")


def perturb(result_dir: Path, output: str, how: str, check: dict) -> None:
    """Apply one named perturbation to the collected output in `result_dir`."""
    path = result_dir / output
    if how == "missing_file":
        path.unlink(missing_ok=True)
    elif check["kind"] in ("table", "prediction"):
        key = check["id_columns"][0] if check["kind"] == "prediction" else check["key"]
        _perturb_table(path, how, key, check.get("targets"), check)
    else:
        _perturb_json(path, how, check["kind"])


def validate_batch(evaluator_source: str, tasks: list[dict]) -> dict:
    """{task name: {"oracle": score | None, "perturbations": {name: score}, "error": reason}}."""
    scope: dict = {"__name__": "dsagent_evaluator"}
    exec(compile(evaluator_source, "evaluator.py", "exec"), scope)  # noqa: S102 - the evaluator we ship
    evaluate = scope["evaluate"]
    root = Path.cwd()
    out = {}
    for t in tasks:
        folder = root / t["name"]
        record: dict = {"oracle": None, "perturbations": {}, "error": ""}
        out[t["name"]] = record
        # Seconds for the build's cost profile; validation.json takes only the scores and the verdict.
        record["seconds"] = seconds = {"oracles": 0.0, "evaluations": 0.0}
        stdout = io.StringIO()
        started = time.perf_counter()
        try:
            os.chdir(folder)
            with contextlib.redirect_stdout(stdout):
                exec(compile(t["oracle"], "oracle.py", "exec"), {"__name__": "__main__"})  # noqa: S102
        except BaseException as exc:  # noqa: BLE001 - any oracle failure is the task's rejection reason
            last = traceback.format_exception_only(type(exc), exc)[-1].strip()
            record["error"] = f"oracle failed: {last}"[:300]
            continue
        finally:
            os.chdir(root)
            seconds["oracles"] = time.perf_counter() - started
        started = time.perf_counter()
        expected_dir = root / "_expected" / t["name"]
        expected_dir.mkdir(parents=True)
        if t["reference_csv"] is not None:
            (expected_dir / "reference.csv").write_text(t["reference_csv"], encoding="utf-8")
        collected = root / "_results" / t["name"]
        for variant in ["oracle", *t["perturbations"]]:
            result_dir = collected / variant
            result_dir.mkdir(parents=True)
            if (folder / t["output"]).is_file():
                shutil.copyfile(folder / t["output"], result_dir / t["output"])
            try:
                if variant != "oracle":
                    perturb(result_dir, t["output"], variant, t["expected"]["check"])
                score = evaluate(result_dir, t["expected"], expected_dir)
            except _NoOp:
                score = NOT_APPLICABLE
            except Exception as exc:  # noqa: BLE001 - a perturbation that cannot apply is reported
                record["error"] = f"{variant}: {type(exc).__name__}: {exc}"[:300]
                score = None
            if variant == "oracle":
                record["oracle"] = score
            else:
                record["perturbations"][variant] = score
        seconds["evaluations"] = time.perf_counter() - started
    return out
