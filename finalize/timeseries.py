"""Write, execute and check one time-series task in the DARE-bench `_ts` layout.

    <slug>_ts/source/  metadata.txt, train.csv, val_v1.csv, val_v2.csv
    <slug>_ts/verify/  all_metadata.json, ground_truth_v1.csv, ground_truth_v2.csv

ground_truth_v2.csv is the output of the reference (pipeline.core.ts_reference), run on
the written files (val_v1 joined with ground_truth_v1 on row_id, keys from val_v2),
and must equal what postprocess derived; `check_ts_task` re-reads a task and
returns its problems, so `daregen verify` runs the same reference and checks.
"""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from finalize.checks import Problem, check_scoring, checks_failed, errors
from finalize.layout import BuildContext, fresh_task_dir
from finalize.metadata_txt import render_metadata_txt, with_checked_claims
from pipeline.core.text import md_name
from pipeline.core.ts_reference import (RESAMPLE_ALIASES, RULE_WORDS, check_resample_alias, check_standard_format,
                                         ground_truth_v2, joined_keys, parse_times, round_trips)
from pipeline.core import names
from pipeline.core.csv_convention import read_task_csv
from pipeline.core.jsonio import read_json, write_text
from pipeline.core.metrics import scoring_sentence
from pipeline.core.records import CHECK_FAILED, DatasetRejected, TimeSeriesSpec
from pipeline.core.task_metadata import (DataInfo, MetaData, Provenance, TaskMetadata, TimeSeriesQuestion,
                                         rejected_when_invalid, write_all_metadata)
from pipeline.core.timing import timed
from postprocess.timeseries import TimeSeriesPackage

VAL_V1_CSV = names.data_file(names.VAL_V1, "csv")
VAL_V2_CSV = names.data_file(names.VAL_V2, "csv")
NEEDED_V1 = [names.TS_TRAIN_CSV, VAL_V1_CSV, names.METADATA_TXT]
NEEDED_V2 = [names.TS_TRAIN_CSV, VAL_V2_CSV, names.METADATA_TXT]
TASK_KIND = names.TIME_SERIES_PROBLEM

_PREAMBLE = ("Please complete the task as described below without asking any follow-up questions or requesting "
             "additional information. Your task is to achieve good performance while balancing time and accuracy "
             "in the sandbox environment.")
_METADATA = ("You are provided with a processed dataset, along with a metadata file `metadata.txt` that describes "
             "the original dataset and each of its columns.")


def _ids_text(spec: TimeSeriesSpec) -> str:
    return ", ".join(md_name(c) for c in spec.identifiers)


def _validation_v1_text(spec: TimeSeriesSpec, train_columns: list[str], val_columns: list[str]) -> list[str]:
    """What val_v1 holds, from its real columns. DARE-bench's sentence ("all non-target features are
    provided") is kept where it is true; a univariate series' val_v1 holds only its time points, and
    saying otherwise sends an agent looking for features that are not there."""
    t = spec.target[0]
    ids = [c for c in spec.identifiers if c in val_columns]
    features = [c for c in val_columns if c not in ids and c != names.ROW_ID]
    others = [c for c in train_columns if c not in spec.identifiers and c != t]
    where = f"The validation file `{VAL_V1_CSV}` contains future time points"
    if features and features == others:
        return [f"{where} where all non-target features are provided, but the target column {md_name(t)} is unknown.",
                f"Your task is to predict the target column {md_name(t)} at those validation time points using the "
                "provided features."]
    listed = ", ".join(md_name(c) for c in [names.ROW_ID, *ids])
    if not features:
        return [f"{where}: it holds only {listed}; no other feature is known at those points, and the target "
                f"column {md_name(t)} is unknown.",
                f"Your task is to predict the target column {md_name(t)} at those validation time points from the "
                "history in the training data."]
    return [f"{where}: it holds {listed} and the features {', '.join(f'{md_name(c)}' for c in features)}; the target "
            f"column {md_name(t)} is unknown.",
            f"Your task is to predict the target column {md_name(t)} at those validation time points using the "
            "provided features."]


def question_v1(spec: TimeSeriesSpec, train_columns: list[str], val_columns: list[str]) -> str:
    """XF's instruction; `train_columns` and `val_columns` are the columns train.csv and val_v1.csv hold."""
    t = spec.target[0]
    return " ".join([
        _PREAMBLE, "Proceed under the assumption that all required information is provided.", _METADATA,
        f"Load data in `{names.TS_TRAIN_CSV}` as your full training set.",
        *_validation_v1_text(spec, train_columns, val_columns),
        "Train your model(s) on the training data using only CPU resources.",
        f"Then generate predictions for {md_name(t)} in `{VAL_V1_CSV}` for each `{names.ROW_ID}`.",
        f"The model should output a file named `{names.PREDICTION}`. The file must contain the column "
        f"`{names.ROW_ID}` (as provided in the original `{VAL_V1_CSV}`) and the corresponding predictions in a "
        f"column named {md_name(t)}, exactly one row for each row of `{VAL_V1_CSV}`. Each "
        f"prediction should be aligned with its {names.ROW_ID} so that performance can be computed correctly.",
        scoring_sentence(TASK_KIND, "v1"),
    ])


def question_v2(spec: TimeSeriesSpec, example: str | None = None) -> str:
    """CF's instruction; `example`: a time value of val_v2.csv, shown beside the format it is written in."""
    t = spec.target[0]
    parts = [
        _PREAMBLE, _METADATA, f"Load the file `{names.TS_TRAIN_CSV}` as your complete training data. "
        "This file contains the raw, non-resampled time series data.",
    ]
    if spec.entity_columns:
        parts.append(f"Each series is identified by {', '.join(f'{md_name(c)}' for c in spec.entity_columns)} and "
                     f"indexed by the time column {md_name(spec.time_column)}.")
    else:
        parts.append(f"The time column is {md_name(spec.time_column)}.")
    parts.append("Once that's done, using only CPU resources, train time series analysis model(s) on the "
                 f"training data. Then, based on the file `{VAL_V2_CSV}`, forecast the target column {md_name(t)}.")
    if spec.is_resampled:
        per = " for each series separately" if spec.entity_columns else ""
        parts.append(
            f"Before training, resample the training data{per} to a uniform time interval of one "
            f"{RULE_WORDS[spec.resample_rule]} (pandas offset alias '{RESAMPLE_ALIASES[spec.resample_rule]}', "
            "each interval labelled with its last day), "
            f"and aggregate the target column using the method '{spec.resample_aggregation}'. Fill intervals "
            "without observations by backward filling and then forward filling (imputer 'bfill_ffill'). The time "
            f"points in `{VAL_V2_CSV}` are on that resampled grid.")
    parts += [
        f"Predict the target at every row of `{VAL_V2_CSV}`: one prediction row for each of its rows, with the "
        f"same {_ids_text(spec)}. A row of it without a prediction scores 0; rows you add for other time points "
        "(a continuous range, say) are ignored.",
        f"Your output file must be named `{names.PREDICTION}` and must contain all identifier columns "
        f"({_ids_text(spec)}) together with the predicted values in a column named {md_name(t)}. "
        + time_format_sentence(spec.time_column, spec.time_format, example),
        "Also note that the validation file may contain non-contiguous and unsorted time points, meaning the time "
        "indices are not guaranteed to be consecutive. Each prediction must be aligned with its identifiers so "
        "that performance can be computed correctly.",
        scoring_sentence(TASK_KIND, "v2"),
    ]
    return " ".join(parts)


def time_format_sentence(time_column: str, time_format: str, example: str | None) -> str:
    """How the CF prediction's time column must be written: the one spelling both scorers accept
    (pipeline.core.ts_reference.time_keys), with one of the task's own values as an example."""
    shown = f", for example {md_name(example)}" if example else ""
    return (f"Write {md_name(time_column)} exactly as `{names.TS_TRAIN_CSV}` and `{VAL_V2_CSV}` write it, in the strftime "
            f"format {md_name(time_format)}{shown}: a time that does not parse in that format scores 0.")


def _first_time(frame: pd.DataFrame, column: str) -> str | None:
    return str(frame[column].iloc[0]) if column in frame.columns and len(frame) else None


def ts_question(pkg: TimeSeriesPackage) -> TimeSeriesQuestion:
    spec = pkg.spec
    rel = lambda *parts: "./" + "/".join((spec.task_dir,) + parts)  # noqa: E731
    return TimeSeriesQuestion.from_spec(
        spec,
        train_save_file=rel(names.SOURCE_DIR, names.TS_TRAIN_CSV),
        val_v1_save_file=rel(names.SOURCE_DIR, VAL_V1_CSV),
        val_v2_save_file=rel(names.SOURCE_DIR, VAL_V2_CSV),
        output_file=rel(names.PREDICTION),
        ground_truth_v1_file=rel(names.VERIFY_DIR, names.GROUND_TRUTH_V1),
        ground_truth_v2_file=rel(names.VERIFY_DIR, names.GROUND_TRUTH_V2),
        needed_files_v1=list(NEEDED_V1),
        needed_files_v2=list(NEEDED_V2),
        prediction_starting_time=pkg.prediction_starting_time,
        contain_multiple_files=False,
        baselines=dict(sorted(pkg.baselines.items())),
    )


def question_list_entry(pkg: TimeSeriesPackage) -> dict:
    return {
        "file_path": pkg.spec.task_dir,
        "task": TASK_KIND,
        "question_v1": question_v1(pkg.spec, [str(c) for c in pkg.frames[names.TS_TRAIN].columns],
                                   [str(c) for c in pkg.frames[names.VAL_V1].columns]),
        "question_v2": question_v2(pkg.spec, _first_time(pkg.frames[names.VAL_V2], pkg.spec.time_column)),
        "needed_files_v1": list(NEEDED_V1),
        "needed_files_v2": list(NEEDED_V2),
        "available_tools": ["python_executor"],
        "usability_rating": pkg.record.usability_rating,
        "lastUpdated": pkg.record.last_updated,
        "contain_multiple_files": False,
    }


def _csv(frame: pd.DataFrame, path: Path) -> None:
    frame.to_csv(path, index=False, lineterminator="\n")


def _read_text(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def run_ts_reference(task_dir: Path, question: dict) -> pd.DataFrame:
    """ground_truth_v2 from the task's files: val_v1 + ground_truth_v1 (the future rows), val_v2 (the keys)."""
    src, verify = task_dir / names.SOURCE_DIR, task_dir / names.VERIFY_DIR
    target = question["target"][0]
    val_v1 = _read_text(src / VAL_V1_CSV)
    gt_v1 = read_task_csv(verify / names.GROUND_TRUTH_V1, dtype={names.ROW_ID: str})
    future = val_v1.merge(gt_v1, on=names.ROW_ID, how="inner", validate="one_to_one")
    future[target] = pd.to_numeric(future[target], errors="coerce")
    return ground_truth_v2(question, future, _read_text(src / VAL_V2_CSV))


def write_ts_task(pkg: TimeSeriesPackage, root: Path, ctx: BuildContext) -> dict:
    """Write, run the reference for ground_truth_v2, check. Returns the question_list entry."""
    # the source's column documentation, minus format claims the data contradicts (metadata_txt.py)
    pkg = replace(pkg, record=with_checked_claims(pkg.record, pkg.frames[names.TS_TRAIN]))
    spec = pkg.spec
    task_dir, src, verify = fresh_task_dir(root, spec.task_dir)
    try:
        train = pkg.frames[names.TS_TRAIN]
        metadata_txt = render_metadata_txt(pkg.record, [str(c) for c in train.columns])
        write_text(src / names.METADATA_TXT, metadata_txt)
        _csv(train, src / names.TS_TRAIN_CSV)
        _csv(pkg.frames[names.VAL_V1], src / VAL_V1_CSV)
        _csv(pkg.frames[names.VAL_V2], src / VAL_V2_CSV)
        _csv(pkg.frames[names.TS_GROUND_TRUTH_V1], verify / names.GROUND_TRUTH_V1)
        with rejected_when_invalid():
            written = write_all_metadata(verify / names.ALL_METADATA, TaskMetadata(
                question=ts_question(pkg),
                data_info=DataInfo.of(pkg.record),
                meta_data=MetaData.of(pkg.record, metadata_txt),
                daregen=Provenance.of(
                    spec, pkg.record, seed=ctx.seed, design_config=ctx.design_digest, source_digest=ctx.source_digest,
                    train_rows=len(train), val_rows=len(pkg.frames[names.VAL_V1]),
                    frequency=spec.frequency, season_length=spec.season_length, time_source=spec.time_source,
                    entities=pkg.n_entities),
            ))
        question = written["question"]
        with timed("finalize/reference run"):
            executed = run_ts_reference(task_dir, question)
        expected = pkg.frames[names.TS_GROUND_TRUTH_V2]
        t = spec.target[0]
        if len(executed) != len(expected) or not np.allclose(executed[t].to_numpy(float),
                                                              expected[t].to_numpy(float)):
            raise DatasetRejected(CHECK_FAILED + "the executed reference disagrees with the CF ground truth",
                                  "reference_disagrees")
        _csv(executed, verify / names.GROUND_TRUTH_V2)
        entry = question_list_entry(pkg)
        with timed("finalize/file checks"):
            problems = errors(check_ts_task(task_dir) + check_scoring(spec.task_dir, entry, question))
        if problems:
            raise checks_failed(problems)
    except BaseException:
        shutil.rmtree(task_dir, ignore_errors=True)
        raise
    return entry


def check_ts_task(task_dir: Path) -> list[Problem]:
    """The published invariants of a `_ts` task, from its files (one Problem per defect).

    daregen's own keys (`baselines`) are required of daregen's tasks only (those with a
    `daregen` block); a published DARE-bench task gets a warning instead."""
    where = task_dir.name
    src, verify = task_dir / names.SOURCE_DIR, task_dir / names.VERIFY_DIR
    missing = [f"{names.SOURCE_DIR}/{f}" for f in (names.TS_TRAIN_CSV, VAL_V1_CSV, VAL_V2_CSV, names.METADATA_TXT)
               if not (src / f).is_file()]
    missing += [f"{names.VERIFY_DIR}/{f}" for f in (names.GROUND_TRUTH_V1, names.GROUND_TRUTH_V2, names.ALL_METADATA)
                if not (verify / f).is_file()]
    if missing:
        return [Problem(where, f"missing {', '.join(missing)}")]
    meta = read_json(verify / names.ALL_METADATA)
    q, ours = meta["question"], "daregen" in meta
    target, time_col, fmt = q["target"][0], q["time_column"], q["time_format"]
    train, val_v1, val_v2 = (_read_text(src / f) for f in (names.TS_TRAIN_CSV, VAL_V1_CSV, VAL_V2_CSV))
    gt_v1, gt_v2 = _read_text(verify / names.GROUND_TRUTH_V1), _read_text(verify / names.GROUND_TRUTH_V2)
    ids = list(val_v2.columns)
    entities = [c for c in ids if c != time_col]
    problems: list[Problem] = []
    if time_col not in ids or target in val_v2.columns:
        problems.append(Problem(where, f"val_v2 must hold only identifier columns, got {ids}"))
    extra = [c for c in ids if c != time_col and c not in q.get("entity_columns", entities)]
    if extra:
        problems.append(Problem(where, f"val_v2 holds non-identifier column(s) {extra}"))
    if target in val_v1.columns:
        problems.append(Problem(where, f"val_v1 holds the target {target!r}"))
    if list(gt_v1.columns) != [names.ROW_ID, target] or list(gt_v2.columns) != ids + [target]:
        problems.append(Problem(where, "ground-truth columns are not row_id/identifiers plus the target"))
        return problems
    if set(gt_v1[names.ROW_ID]) != set(val_v1[names.ROW_ID]) or len(gt_v1) != len(val_v1):
        problems.append(Problem(where, "ground_truth_v1 row_ids differ from val_v1's"))
    if gt_v2[ids].to_dict("records") != val_v2.to_dict("records"):
        problems.append(Problem(where, "ground_truth_v2 keys differ from val_v2's"))
    for name, frame in (("train", train), ("val_v1", val_v1), ("val_v2", val_v2)):
        bad = [t for t in frame[time_col].unique().tolist() if not round_trips(t, fmt)]
        if bad:
            problems.append(Problem(where, f"{name} timestamps do not round-trip through {fmt!r}, e.g. {bad[0]!r}"))
        # the instruction hands the agent `fmt`: it must work with the parsers an agent reaches for
        unusable = check_standard_format(frame[time_col], fmt)
        if unusable:
            problems.append(Problem(where, f"{name}: {unusable}", "error" if ours else "warning"))
    if q.get("is_resampled") and q.get("resample_rule"):
        rejected = check_resample_alias(q["resample_rule"])
        if rejected:
            problems.append(Problem(where, rejected, "error" if ours else "warning"))
    if problems:
        return problems
    problems += _order_problems(where, train, val_v1, time_col, fmt, entities)
    if not q.get("baselines"):
        problems.append(Problem(where, "no baselines recorded in all_metadata.json", "error" if ours else "warning"))
    if pd.to_numeric(gt_v2[target]).nunique() < 2:
        problems.append(Problem(where, "constant CF ground truth"))
    return problems


def _order_problems(where: str, train: pd.DataFrame, val: pd.DataFrame, time_col: str, fmt: str,
                    entities: list[str]) -> list[Problem]:
    """Each val time point is later than every train time point of its entity."""
    t_train, t_val = parse_times(train[time_col], fmt), parse_times(val[time_col], fmt)

    def key(f: pd.DataFrame) -> pd.Series:
        return joined_keys(f[entities]) if entities else pd.Series("", index=f.index)
    last = t_train.groupby(key(train)).max()
    first = t_val.groupby(key(val)).min()
    late = [k for k in first.index if k in last.index and not first[k] > last[k]]
    return [Problem(where, f"val starts before train ends for entity {late[0]!r}")] if late else []


def ts_counts(tree: Path, entries: list[dict]) -> dict[str, int]:
    """How many time-series tasks a build wrote, how many are panels (> 1 entity) and resampled."""
    counts = {"tasks": 0, "panels": 0, "resampled": 0}
    for e in entries:
        if e.get("task") != TASK_KIND:
            continue
        meta = read_json(Path(tree) / e["file_path"] / names.VERIFY_DIR / names.ALL_METADATA)
        counts["tasks"] += 1
        counts["panels"] += meta.get("daregen", {}).get("entities", 1) > 1
        counts["resampled"] += bool(meta["question"].get("is_resampled"))
    return counts


def verify_ts_task(task_dir: Path, question: dict) -> list[Problem]:
    """`daregen verify` for a `_ts` task: re-run the CF reference, compare, re-check the files."""
    where = task_dir.name
    problems = check_ts_task(task_dir)
    if errors(problems):
        return problems
    # A published task names its resampling only in the instruction text, and its CF grid need
    # not come from the XF rows: not re-run, and a disagreement is only a warning there.
    severity = "error" if "daregen" in read_json(task_dir / names.VERIFY_DIR / names.ALL_METADATA) else "warning"
    if question.get("is_resampled") and not question.get("resample_rule"):
        return problems + [Problem(where, "resampled without a resample_rule key: CF reference not re-run",
                                   "warning")]
    try:
        with timed("finalize/reference run"):
            executed = run_ts_reference(task_dir, question)
    except (KeyError, ValueError) as exc:
        return problems + [Problem(where, f"time-series reference failed: {exc}"[:300], severity)]
    recorded = pd.read_csv(task_dir / names.VERIFY_DIR / names.GROUND_TRUTH_V2, dtype=str, keep_default_na=False)
    t = question["target"][0]
    ids = [c for c in recorded.columns if c != t]
    same_keys = executed[ids].astype(str).to_dict("records") == recorded[ids].to_dict("records")
    if not same_keys or not np.allclose(executed[t].to_numpy(float), pd.to_numeric(recorded[t]).to_numpy(float)):
        problems.append(Problem(where, f"{names.GROUND_TRUTH_V2} disagrees with the re-run time-series reference",
                                severity))
    return problems
