"""DSAgentBench evaluator for one daregen desktop task (written next to each config by finalize/dsagent/build.py).

    python evaluator.py RESULT_DIR [EXPECTED_JSON]

RESULT_DIR holds the files collected from the VM (the config's evaluator.result
`dest` names); EXPECTED_JSON defaults to expected.json beside this file. Prints
the score in [0, 1]; a task counts as solved at SOLVED_THRESHOLD or more.

Self-contained on purpose (standard library, pandas, scikit-learn; no network,
no LLM, no daregen import): the harness runs it on the host after collecting
the files, and anyone can read it next to the instruction. The DARE-bench metrics
and the solved threshold are daregen's own (pipeline/core/metrics.py's registry, which
`daregen score` uses; expected.json names its metric by registry name): in this
template they are imported, and the build replaces that import with their source
text (finalize/dsagent/build.py, evaluator_source), so there is one definition; so is
the rule a forecast's time column is read by (pipeline/core/ts_reference.py, time_keys).
Every check returns a score in [0, 1], and any mismatch keeps the score below the
threshold, so partial credit never counts as solved.
"""

from __future__ import annotations

import io
import json
import math
import os
import stat
import sys
from pathlib import Path

import pandas as pd

# ---- daregen metrics: begin (replaced by pipeline/core/metrics.py's self-contained block at build time) ----
from pipeline.core.metrics import METRICS, SOLVED_THRESHOLD, UnscorablePrediction  # noqa: F401 (the threshold is part of what a reader sees)
# ---- daregen metrics: end ----
# ---- daregen time keys: begin (replaced by pipeline/core/ts_reference.py's self-contained block at build time) ----
from pipeline.core.ts_reference import parse_time, time_keys  # noqa: F401 (parse_time: the perturbations' reader)
# ---- daregen time keys: end ----

_PARTIAL_CAP = 0.9  # a partly right answer scores at most this, below the solved threshold
# The largest result file read, as daregen's own limit on a prediction file (safe_io's max_file_bytes).
MAX_RESULT_BYTES = 512 << 20


def _result_bytes(path: Path) -> bytes:
    """A collected file's bytes, read only if it is itself a regular file with one name and of bounded
    size (OSError otherwise): a result that is a link, symbolic or hard, to the expected side
    (`../reference.csv` from a result folder beside this file) scored 1.0 as if it were the agent's
    answer; a FIFO would hang the harness, a huge file exhaust its memory."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1 or st.st_size > MAX_RESULT_BYTES:
            raise OSError(f"{path.name} is not a regular file of at most {MAX_RESULT_BYTES} bytes")
        data = fh.read(MAX_RESULT_BYTES + 1)
    if len(data) > MAX_RESULT_BYTES:
        raise OSError(f"{path.name} grew over {MAX_RESULT_BYTES} bytes")
    return data


def _result_csv(path: Path) -> pd.DataFrame:
    return pd.read_csv(io.BytesIO(_result_bytes(path)), dtype=str, keep_default_na=False)


def _partial(correct: int, total: int) -> float:
    if total <= 0:
        return 0.0
    if correct >= total:
        return 1.0
    return min(_PARTIAL_CAP, correct / total)


def _close(expected, got, rtol: float, atol: float) -> bool:
    """Numbers within tolerance, lists element-wise, anything else by text."""
    if isinstance(expected, list):
        return isinstance(got, list) and len(got) == len(expected) and all(
            _close(e, g, rtol, atol) for e, g in zip(expected, got))
    if isinstance(expected, bool) or expected is None or isinstance(expected, str):
        return str(expected).strip() == str(got).strip() if got is not None else expected is None
    try:
        value = float(got)
    except (TypeError, ValueError):
        return False
    if math.isnan(float(expected)):
        return math.isnan(value)
    return math.isfinite(value) and abs(value - float(expected)) <= atol + rtol * abs(float(expected))


# ----------------------------------------------------------------------------- checks


def check_answers(result_dir: Path, spec: dict) -> float:
    """A JSON object of named answers, each compared with its own tolerance."""
    path = result_dir / spec["file"]
    try:
        answers = json.loads(_result_bytes(path).decode("utf-8"))
    except (OSError, ValueError):
        return 0.0
    if not isinstance(answers, dict):
        return 0.0
    items = spec["answers"]
    correct = sum(name in answers and _close(item["value"], answers[name], item["rtol"], item["atol"])
                  for name, item in items.items())
    return _partial(correct, len(items))


def _text(value) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return str(value).strip()


def check_table(result_dir: Path, spec: dict) -> float:
    """A CSV compared column by column with the expected one, rows aligned on the key column."""
    try:
        got = _result_csv(result_dir / spec["file"])
    except (OSError, ValueError, pd.errors.EmptyDataError):
        return 0.0
    key, columns = spec["key"], spec["columns"]
    if key not in got.columns or len(got) != len(spec["rows"]):
        return 0.0
    expected = pd.DataFrame(spec["rows"], columns=[key, *columns])
    got_keys = got[key].str.strip()
    if got_keys.duplicated().any():
        return 0.0
    exp_keys = expected[key].map(_text)
    if set(got_keys) != set(exp_keys):
        return 0.0
    got = got.set_index(got_keys).loc[list(exp_keys)]
    correct = 0
    for col in columns:
        if col not in got.columns:
            continue
        exp = expected[col].tolist()
        if spec["numeric"].get(col):
            values = pd.to_numeric(got[col].str.strip().replace("", "nan"), errors="coerce").tolist()
            ok = all(_close(float("nan") if e is None else e, g, spec["rtol"], spec["atol"])
                     for e, g in zip(exp, values))
        else:
            ok = [_text(e) for e in exp] == [g.strip() for g in got[col].tolist()]
        correct += bool(ok)
    return _partial(correct, len(columns))


def _axis_title(channel: dict):
    axis = channel.get("axis") if isinstance(channel.get("axis"), dict) else {}
    return channel.get("title", axis.get("title"))


def check_vega_lite(result_dir: Path, spec: dict) -> float:
    """A Vega-Lite spec: schema, title, mark type, field mapping, axis titles and inline data."""
    try:
        chart = json.loads(_result_bytes(result_dir / spec["file"]).decode("utf-8"))
    except (OSError, ValueError):
        return 0.0
    if not isinstance(chart, dict):
        return 0.0
    mark = chart.get("mark")
    mark = mark.get("type") if isinstance(mark, dict) else mark
    title = chart.get("title")
    title = title.get("text") if isinstance(title, dict) else title
    enc = chart.get("encoding") if isinstance(chart.get("encoding"), dict) else {}
    checks = [
        "vega-lite" in str(chart.get("$schema", "")),
        mark == spec["mark"],
        _text(title) == spec["title"],
    ]
    for name, want in spec["encoding"].items():
        channel = enc.get(name) if isinstance(enc.get(name), dict) else {}
        checks.append(channel.get("field") == want["field"] and channel.get("type") == want["type"])
        checks.append(_text(_axis_title(channel)) == want["title"])
    data = chart.get("data") if isinstance(chart.get("data"), dict) else {}
    values = data.get("values") if isinstance(data.get("values"), list) else []
    x, y = spec["encoding"]["x"]["field"], spec["encoding"]["y"]["field"]
    # A quantitative x is a number like y: `18` is `18.0`, and df.to_json's 10 significant digits
    # are within the tolerance; a nominal or ordinal x is a label, compared as text.
    x_key = float if spec["encoding"]["x"]["type"] == "quantitative" else _text
    try:
        got = sorted((x_key(v[x]), float(v[y])) for v in values)
        want_rows = sorted((x_key(a), float(b)) for a, b in spec["values"])
    except (KeyError, TypeError, ValueError):
        got, want_rows = [], [None]
    same_x = (lambda w, g: _close(w, g, spec["rtol"], spec["atol"])) if x_key is float else (lambda w, g: w == g)
    checks.append(len(got) == len(want_rows) and all(
        same_x(w[0], g[0]) and _close(w[1], g[1], spec["rtol"], spec["atol"]) for g, w in zip(got, want_rows)))
    return _partial(sum(checks), len(checks))


def check_prediction(result_dir: Path, spec: dict) -> float:
    """DARE-bench scoring of prediction.csv, aligned on the id columns (extra rows ignored).

    With `time_column`/`time_format` (time-series CF) that id column is compared as parsed time points
    (time_keys, the rule `daregen score` applies too): a prediction whose times do not parse with the
    task's own format scores 0 (the instruction names the format)."""
    try:
        pred = _result_csv(result_dir / spec["file"])
        ref = pd.read_csv(Path(spec["reference_path"]), dtype=str, keep_default_na=False)
    except (OSError, ValueError, pd.errors.EmptyDataError):
        return 0.0
    ids, targets = spec["id_columns"], spec["targets"]
    if any(c not in pred.columns for c in ids + targets):
        return 0.0
    for col in ids:  # ids as the file spells them, minus surrounding blanks
        pred[col], ref[col] = pred[col].str.strip(), ref[col].str.strip()
    time_column = spec.get("time_column")
    if time_column:
        ref[time_column] = time_keys(ref[time_column], spec["time_format"])
        try:
            pred[time_column] = time_keys(pred[time_column], spec["time_format"])
        except ValueError:
            return 0.0
    if spec.get("ignore_extra_rows"):  # CF: rows for keys the ground truth does not hold are ignored
        pred = pred.merge(ref[ids], on=ids, how="inner")
    if pred.duplicated(subset=ids).any():
        return 0.0
    merged = ref[ids + targets].merge(pred[ids + targets], on=ids, how="left", suffixes=("", "__pred"),
                                      indicator=True)
    if len(merged) != len(ref) or (merged["_merge"] != "both").any():
        return 0.0
    score = METRICS[spec["metric"]].function  # expected.json names the metric as the registry does
    try:
        scores = [score(merged[t], merged[f"{t}__pred"]) for t in targets]
    except (UnscorablePrediction, ValueError):  # a value that is no number, or an R² that is undefined
        return 0.0
    metric = sum(scores) / len(scores)
    # Free-modelling metrics are judged against the reference model's own metric on the same rows:
    # matching the reference (within 5%) counts as solved.
    bar = spec.get("reference_metric")
    return metric if not bar else min(1.0, metric / bar)


CHECKS = {"answers": check_answers, "table": check_table, "vega_lite": check_vega_lite,
          "prediction": check_prediction}


def evaluate(result_dir: Path, expected: dict, expected_dir: Path | None = None) -> float:
    """Score the collected files in `result_dir` against `expected` (the parsed expected.json)."""
    spec = dict(expected["check"])
    if "reference_file" in spec:
        spec["reference_path"] = str(Path(expected_dir or ".") / spec["reference_file"])
    try:
        score = CHECKS[spec["kind"]](Path(result_dir), spec)
    except Exception:  # a file the agent wrote that no check anticipated scores 0, never crashes the harness
        score = 0.0
    return round(min(1.0, max(0.0, float(score))), 6)


def main(argv: list[str]) -> int:
    """The command line: `--help` is help (exit 0, no score), a wrong call is its usage (exit 2); only a
    RESULT_DIR is scored (`evaluator.py --help` once printed 0.0, the score of a folder named `--help`)."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="evaluator.py", description="Score one daregen desktop task: prints a score in [0, 1]; "
        f"{SOLVED_THRESHOLD} or more solves the task.")
    parser.add_argument("result_dir", metavar="RESULT_DIR", help="the files collected from the VM (the config's "
                        "evaluator.result dest names), e.g. the folder that holds prediction.csv")
    parser.add_argument("expected", metavar="EXPECTED_JSON", nargs="?", default=None,
                        help="the task's expected.json (default: the one beside this file)")
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help (0) or a usage error (2): the caller gets the code, nothing is scored
        return int(exc.code or 0)
    expected_path = Path(args.expected) if args.expected else Path(__file__).with_name("expected.json")
    expected = json.loads(expected_path.read_text(encoding="utf-8"))
    print(evaluate(Path(args.result_dir), expected, expected_path.parent))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
