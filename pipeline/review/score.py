"""Score a folder of agent predictions against a DARE-bench task tree.

Predictions folder layout::

    <pred_dir>/
      <task_dir>/               the `file_path` of a question_list.json entry
        v1/prediction.csv       IF (tabular) or XF (time series)
        v2/prediction.csv       MM (tabular) or CF (time series)
      score_summary.json        written by `run_score` unless told otherwise

Each `prediction.csv` is aligned with the variant's reference in the task's
`verify/` folder and scored with the metric DARE-bench uses for that variant
(docs/dare-format.md, "Scoring"):

| kind / variant              | reference                  | aligned on          | metric              |
|-----------------------------|----------------------------|---------------------|---------------------|
| classification v1 (IF)      | simulated_pred_local.csv   | row_id              | exact match, 0 or 1 |
| regression v1 (IF)          | simulated_pred_local.csv   | row_id              | numpy.allclose, 0/1 |
| classification v2 (MM)      | ground_truth.csv           | row_id              | macro F1            |
| regression v2 (MM)          | ground_truth.csv           | row_id              | R² clipped to [0,1] |
| time series v1 (XF)         | ground_truth_v1.csv        | row_id              | R² clipped to [0,1] |
| time series v2 (CF)         | ground_truth_v2.csv        | identifier columns  | R² clipped to [0,1] |

A multi-output task scores each target column and averages.

DARE-bench's score is reported unchanged. Its "solved" (score >= 0.95) says little for a time
series: on a pooled panel seasonal naive already passes it, and on a quarterly CF where every
baseline scores 0 nothing can. So a time-series score also carries the best baseline daregen
recorded for that variant (`question.baselines`) and two verdicts that say different things:
`beats_baseline`, strictly better than that baseline, and `within_5pct_of_baseline`, the rule the
DSAgentBench evaluators apply (R² of at least 0.95 x that bar, so 1% below the baseline passes it
without beating it); both None where no baseline reaches MIN_BAR (no meaningful bar) or none is
recorded. Fault is split as
the house style asks: a bad prediction (missing or unreadable file, missing id
or target column, duplicate ids, rows that do not line up, non-numeric values
where numbers are needed) scores 0 with a one-line reason; a broken task tree
(missing metadata or reference, a reference without its target) raises
ValueError or FileNotFoundError, because that is our pipeline's bug; `score_tree`
skips such a task with its name and the reason and scores the others.
"""

from __future__ import annotations

import math
import os
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from finalize.dsagent.ts_variants import MIN_BAR, best_recorded_baseline
from pipeline.core.jsonio import write_json
from pipeline.core.metrics import (
    METRICS,
    SOLVED_THRESHOLD,
    BaselineVerdict,
    Metric,
    UnscorablePrediction,
    against_baseline,
    finite_numbers,
    margin_label,
    metric_for,
)
from pipeline.core.names import (
    ALL_METADATA,
    GROUND_TRUTH,
    GROUND_TRUTH_V1,
    GROUND_TRUTH_V2,
    PREDICTION,
    QUESTION_LIST,
    ROW_ID,
    SIMULATED_PRED,
    TIME_SERIES_PROBLEM,
    VARIANTS,
    VERIFY_DIR,
)
from pipeline.core.safe_io import (
    InputLimits,
    UnsafeInput,
    links_or_specials,
    printable,
    read_csv_text_bytes,
    read_csv_text_inside,
    read_json_inside,
)

SCORE_SUMMARY = "score_summary.json"


# --------------------------------------------------------------------------- metrics
#
# The metrics, their edge-case policy and the metric of each (task kind, variant) live in
# pipeline/core/metrics.py's registry (shared with the MM check, the time-series baselines and the
# DSAgentBench evaluator). Every CSV is read as text, so "1" vs "1.0" and timestamps stay under our
# control instead of pandas' inference.


# --------------------------------------------------------------------------- registry


@dataclass(frozen=True)
class ScoringRule:
    """How one (task kind, variant) is scored: against which file, aligned how, by which metric."""

    reference_file: str
    metric: Metric
    # False: align on row_id and every ground-truth row needs exactly one prediction row.
    # True: align on every non-target reference column (time-series CF) and ignore extras.
    align_on_identifiers: bool = False

    @property
    def metric_name(self) -> str:
        """What score reports and exported reward specs call the metric: its function's name."""
        return self.metric.function.__name__


# (task kind, variant) -> (the reference in verify/, align on the identifier columns); the metric is
# the registry's choice for the pair, looked up when a rule is asked for.
REFERENCES: Mapping[tuple[str, str], tuple[str, bool]] = {
    ("classification", "v1"): (SIMULATED_PRED, False),
    ("regression", "v1"): (SIMULATED_PRED, False),
    ("classification", "v2"): (GROUND_TRUTH, False),
    ("regression", "v2"): (GROUND_TRUTH, False),
    (TIME_SERIES_PROBLEM, "v1"): (GROUND_TRUTH_V1, False),
    (TIME_SERIES_PROBLEM, "v2"): (GROUND_TRUTH_V2, True),
}


def scoring_rule(kind: str, variant: str) -> ScoringRule:
    try:
        reference_file, align_on_identifiers = REFERENCES[(kind, variant)]
    except KeyError:
        known = sorted({k for k, _ in REFERENCES})
        raise ValueError(f"no scoring rule for kind {kind!r} variant {variant!r}; kinds: {known}") from None
    return ScoringRule(reference_file, metric_for(kind, variant), align_on_identifiers)


def _metric_called(function_name: str) -> Metric:
    """The registry's metric whose function a Score names (scores report the function's own name)."""
    for metric in METRICS.values():
        if metric.function.__name__ == function_name:
            return metric
    raise ValueError(f"no metric in the registry computes {function_name!r}")


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class Score:
    task: str
    variant: str
    metric: str
    score: float
    reason: str | None = None  # None when the prediction was scored normally
    baseline: float | None = None  # a time series' best recorded baseline R² for this variant
    solved_threshold: float = SOLVED_THRESHOLD  # the metric's (pipeline/core/metrics.py)

    def __post_init__(self) -> None:
        if self.variant not in VARIANTS:
            raise ValueError(f"variant {self.variant!r} is not one of {VARIANTS}")
        if not (math.isfinite(self.score) and 0.0 <= self.score <= 1.0):
            raise ValueError(f"score {self.score!r} for {self.task}/{self.variant} is outside [0, 1]")
        if self.reason is not None and self.score != 0.0:
            raise ValueError(f"{self.task}/{self.variant} has a reason but a non-zero score {self.score}")

    @property
    def solved(self) -> bool:
        return self.score >= self.solved_threshold

    def _against_baseline(self) -> BaselineVerdict | None:
        if self.baseline is None or self.baseline < MIN_BAR:
            return None
        return against_baseline(_metric_called(self.metric), self.score, self.baseline)

    @property
    def beats_baseline(self) -> bool | None:
        """Whether the forecast is strictly better than the best recorded baseline (None: no meaningful bar)."""
        verdict = self._against_baseline()
        return None if verdict is None else verdict.beats

    @property
    def within_5pct_of_baseline(self) -> bool | None:
        """Whether the forecast reaches 0.95 x the best recorded baseline, the DSAgentBench evaluators' bar
        (None: no meaningful bar). True also for a forecast that beats it."""
        verdict = self._against_baseline()
        return None if verdict is None else verdict.within_margin

    @property
    def baseline_label(self) -> str:
        """The verdict as `format_report` prints it: never "beats" for a score that does not exceed the bar."""
        if self.beats_baseline is None:
            return "no bar"
        if self.beats_baseline:
            return "beats it"
        margin = margin_label(_metric_called(self.metric))
        return f"within {margin} of it" if self.within_5pct_of_baseline else f"more than {margin} below it"

    def to_json(self) -> dict[str, Any]:
        out = {
            "task": self.task,
            "variant": self.variant,
            "metric": self.metric,
            "score": self.score,
            "solved": self.solved,
            "reason": self.reason,
        }
        if self.baseline is not None:
            out.update(baseline=self.baseline, beats_baseline=self.beats_baseline,
                       within_5pct_of_baseline=self.within_5pct_of_baseline)
        return out


@dataclass(frozen=True)
class VariantSummary:
    variant: str
    n_scored: int
    n_solved: int
    n_unscorable: int  # scored 0 with a reason
    mean_score: float | None  # None when no task was scored
    n_with_baseline: int = 0  # time-series scores with a meaningful baseline bar
    n_beat_baseline: int = 0  # strictly better than the baseline
    n_within_5pct_of_baseline: int = 0  # at least 0.95 x the baseline (those that beat it included)

    @property
    def solved_rate(self) -> float | None:
        return self.n_solved / self.n_scored if self.n_scored else None

    @classmethod
    def of(cls, variant: str, scores: Sequence[Score]) -> VariantSummary:
        mine = [s for s in scores if s.variant == variant]
        return cls(
            variant=variant,
            n_scored=len(mine),
            n_solved=sum(s.solved for s in mine),
            n_unscorable=sum(s.reason is not None for s in mine),
            mean_score=sum(s.score for s in mine) / len(mine) if mine else None,
            n_with_baseline=sum(s.beats_baseline is not None for s in mine),
            n_beat_baseline=sum(s.beats_baseline is True for s in mine),
            n_within_5pct_of_baseline=sum(s.within_5pct_of_baseline is True for s in mine),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "n_scored": self.n_scored,
            "n_solved": self.n_solved,
            "n_unscorable": self.n_unscorable,
            "mean_score": self.mean_score,
            "solved_rate": self.solved_rate,
            "n_with_baseline": self.n_with_baseline,
            "n_beat_baseline": self.n_beat_baseline,
            "n_within_5pct_of_baseline": self.n_within_5pct_of_baseline,
        }


@dataclass(frozen=True)
class ScoreReport:
    scores: tuple[Score, ...]  # sorted by (task, variant)
    # (task, reason) for each listed task that could not be scored at all: the tree's fault, not the solver's
    skipped: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        keys = [(s.task, s.variant) for s in self.scores]
        if keys != sorted(keys) or len(set(keys)) != len(keys):
            raise ValueError("scores must be unique and sorted by (task, variant)")

    @property
    def n_tasks(self) -> int:
        return len({s.task for s in self.scores})

    @property
    def variants(self) -> dict[str, VariantSummary]:
        return {v: VariantSummary.of(v, self.scores) for v in VARIANTS}

    def to_json(self) -> dict[str, Any]:
        return {
            "solved_threshold": SOLVED_THRESHOLD,
            "n_tasks": self.n_tasks,
            "n_scores": len(self.scores),
            "n_solved": sum(s.solved for s in self.scores),
            "n_unscorable": sum(s.reason is not None for s in self.scores),
            "variants": {v: summary.to_json() for v, summary in self.variants.items()},
            "scores": [s.to_json() for s in self.scores],
            "skipped_tasks": [{"task": task, "reason": reason} for task, reason in self.skipped],
        }


# --------------------------------------------------------------------------- reading


def _read_text_csv(path: Path) -> pd.DataFrame:
    """Every cell as the text written, so ids and labels are compared as the file spells them; a
    tree's file only if it is a regular file inside its task, within the default limits."""
    return read_csv_text_inside(path, path.parents[1])


def _int_ids(ids: pd.Series) -> pd.Series | None:
    """row_id as int64, or None when some value is not an integer (tolerates `3.0`)."""
    numbers = finite_numbers(ids)
    if numbers.isna().any() or (numbers != np.floor(numbers)).any():
        return None
    return numbers.astype("int64")


def _question(task_dir: Path) -> dict:
    """The task's question block, read bounded and through no link."""
    question = read_json_inside(task_dir / VERIFY_DIR / ALL_METADATA, task_dir)
    question = question.get("question") if isinstance(question, dict) else None
    if not isinstance(question, dict):
        raise ValueError(f"{task_dir.name}: {ALL_METADATA} has no question block")
    return question


def _task_kind(task_dir: Path) -> tuple[str, list[str]]:
    question = _question(task_dir)
    targets = question.get("target")
    if not isinstance(targets, list) or not targets or not all(isinstance(t, str) for t in targets):
        raise ValueError(f"{task_dir.name}: question.target must be a non-empty list of column names, got {targets!r}")
    kind = question.get("problem_type")
    if not isinstance(kind, str):
        raise ValueError(f"{task_dir.name}: question.problem_type is missing")
    return kind, targets


def _read_reference(path: Path, targets: Sequence[str], rule: ScoringRule) -> tuple[pd.DataFrame, list[str]]:
    reference = _read_text_csv(path)
    missing = [c for c in targets if c not in reference.columns]
    if missing:
        raise ValueError(f"{path}: reference lacks target column(s) {missing}")
    if rule.align_on_identifiers:
        id_columns = [c for c in reference.columns if c not in targets]
    else:
        id_columns = [ROW_ID]
        if ROW_ID not in reference.columns:
            raise ValueError(f"{path}: reference lacks {ROW_ID!r}")
        ids = _int_ids(reference[ROW_ID])
        if ids is None:
            raise ValueError(f"{path}: reference {ROW_ID!r} is not all integers")
        reference = reference.assign(**{ROW_ID: ids})
    if not id_columns:
        raise ValueError(f"{path}: reference has no identifier columns")
    if reference.duplicated(id_columns).any():
        raise ValueError(f"{path}: reference has duplicate ids on {id_columns}")
    return reference[id_columns + list(targets)], id_columns


def _read_prediction(path: Path, root: Path, limits: InputLimits) -> pd.DataFrame:
    """The prediction as text, if it is a regular file under the predictions folder `root` reached
    through no link, symbolic or hard (a link to the tree's own simulated_pred_local.csv would score 1.0),
    within the limits (a 1 GB file must score 0, not exhaust memory)."""
    if not os.path.lexists(path):
        raise UnscorablePrediction(f"missing prediction file {path}")
    return _unscorable_unless_read(path.name, lambda: read_csv_text_inside(path, root, limits, single_link=True))


def _prediction_bytes(text: object, limits: InputLimits) -> bytes:
    """A prediction handed over in memory as UTF-8 bytes, its size checked before it is encoded or
    copied. Only text is a prediction: a path-like is refused, never opened, since a completion that
    names the task's own ground truth must not score it."""
    if isinstance(text, os.PathLike):
        raise UnscorablePrediction("a path is not a prediction: pass the CSV text (a harness scores a file "
                                   "through score_prediction with the predictions folder it names)")
    if not isinstance(text, (str, bytes)):
        raise UnscorablePrediction(f"a prediction is CSV text, not {type(text).__name__}")
    if len(text) > limits.max_file_bytes:  # a UTF-8 character takes at least one byte
        raise UnscorablePrediction(f"prediction is {len(text)} characters, over the {limits.max_file_bytes}-byte "
                                   f"limit (max_file_bytes)")
    if isinstance(text, bytes):
        return text
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:  # a lone surrogate
        raise UnscorablePrediction(f"prediction is not valid UTF-8 text: {exc.reason} at character "
                                   f"{exc.start}") from None


def _unscorable_unless_read(name: str, read: Callable[[], pd.DataFrame]) -> pd.DataFrame:
    try:
        return read()
    except UnsafeInput as exc:
        raise UnscorablePrediction(str(exc)) from None
    except MemoryError:
        raise UnscorablePrediction(f"{name} does not fit in memory") from None
    # ParserError, EmptyDataError and UnicodeDecodeError are all ValueErrors.
    except (OSError, ValueError) as exc:
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise UnscorablePrediction(f"unreadable CSV {name}: {first_line}") from None


def align_prediction(
    reference: pd.DataFrame,
    prediction: pd.DataFrame,
    id_columns: Sequence[str],
    targets: Sequence[str],
    ignore_extra_rows: bool,
) -> pd.DataFrame:
    """Return the reference ids with `<target>` and `<target>__pred` columns, one row per reference row.

    Raises UnscorablePrediction with the reason when the prediction cannot be lined up.
    """
    id_columns = list(id_columns)
    missing_ids = [c for c in id_columns if c not in prediction.columns]
    if missing_ids:
        raise UnscorablePrediction(f"prediction lacks id column(s) {missing_ids}")

    missing_targets = [t for t in targets if t not in prediction.columns]
    if missing_targets:
        others = [c for c in prediction.columns if c not in id_columns]
        # DARE-bench accepts a single unnamed or misnamed prediction column for a
        # single-target task; with several targets there is no safe guess.
        if len(targets) == 1 and len(others) == 1:
            prediction = prediction.rename(columns={others[0]: targets[0]})
        else:
            raise UnscorablePrediction(f"prediction lacks target column(s) {missing_targets}")

    prediction = prediction[id_columns + list(targets)]
    if id_columns == [ROW_ID] and not ignore_extra_rows:
        ids = _int_ids(prediction[ROW_ID])
        if ids is None:
            raise UnscorablePrediction(f"prediction {ROW_ID!r} has non-integer values")
        prediction = prediction.assign(**{ROW_ID: ids})

    if ignore_extra_rows:
        prediction = prediction.merge(reference[id_columns], on=id_columns, how="inner")
    duplicated = prediction.duplicated(id_columns)
    if duplicated.any():
        raise UnscorablePrediction(f"prediction has {int(duplicated.sum())} duplicate id row(s) on {id_columns}")

    pred_renamed = prediction.rename(columns={t: f"{t}__pred" for t in targets})
    aligned = reference.merge(pred_renamed, on=id_columns, how="inner", validate="one_to_one")
    if len(aligned) != len(reference):
        raise UnscorablePrediction(
            f"row-count mismatch: prediction covers {len(aligned)} of {len(reference)} ground-truth rows"
        )
    if not ignore_extra_rows and len(prediction) != len(reference):
        extra = len(prediction) - len(aligned)
        raise UnscorablePrediction(f"row-count mismatch: {extra} prediction row(s) have ids not in the ground truth")
    return aligned


# --------------------------------------------------------------------------- scoring


def _parsed_time_keys(task_dir: Path, reference: pd.DataFrame,
                      prediction: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Time-series CF keys compared as instants, read by the one rule the DSAgentBench evaluator applies
    too (pipeline.core.ts_reference.time_keys): each prediction time must parse with the task's
    `time_format`, the format the CF question names. `1990-03` and ` 1990-03 ` name the same month
    under `%Y-%m`; `1990-03-01` does not parse with it and scores 0 with the reason, as it does on the
    desktop."""
    from pipeline.core.ts_reference import time_keys

    question = _question(task_dir)
    column, fmt = question.get("time_column"), question.get("time_format")
    if not column or not fmt or column not in reference.columns or column not in prediction.columns:
        return reference, prediction  # align_prediction names a missing id column
    reference = reference.assign(**{column: time_keys(reference[column], fmt)})
    try:
        times = time_keys(prediction[column], fmt)
    except ValueError as exc:
        raise UnscorablePrediction(f"prediction column {column!r} does not parse with the task's time_format "
                                   f"{fmt!r}: {str(exc).splitlines()[0]}") from None
    return reference, prediction.assign(**{column: times})


def score_prediction(task_dir: Path, variant: str, prediction_path: Path, pred_root: Path | None = None,
                     limits: InputLimits | None = None) -> Score:
    """Score one prediction file for one variant of the task in `task_dir`; the file must lie under
    `pred_root` (default: its own folder) through no link."""
    prediction_path = Path(prediction_path)
    limits = limits or InputLimits()
    root = pred_root or prediction_path.parent
    return _score(Path(task_dir), variant, lambda: _read_prediction(prediction_path, root, limits))


def score_prediction_text(task_dir: Path, variant: str, text: object, limits: InputLimits | None = None) -> Score:
    """Score a prediction's CSV text (str or bytes) held in memory, never written to disk: whatever
    `text` is (any length, a lone surrogate, NUL bytes, a path-like, not text at all), a number and,
    for a malformed one, the reason."""
    limits = limits or InputLimits()

    def read() -> pd.DataFrame:
        data = _prediction_bytes(text, limits)
        return _unscorable_unless_read(PREDICTION, lambda: read_csv_text_bytes(PREDICTION, data, limits))

    return _score(Path(task_dir), variant, read)


def _score(task_dir: Path, variant: str, read_prediction: Callable[[], pd.DataFrame]) -> Score:
    kind, targets = _task_kind(task_dir)
    rule = scoring_rule(kind, variant)
    reference, id_columns = _read_reference(task_dir / VERIFY_DIR / rule.reference_file, targets, rule)
    baseline = _baseline(task_dir, kind, variant)
    try:
        prediction = read_prediction()
        if rule.align_on_identifiers:
            reference, prediction = _parsed_time_keys(task_dir, reference, prediction)
        aligned = align_prediction(reference, prediction, id_columns, targets, rule.align_on_identifiers)
        per_target = [rule.metric.function(aligned[t].rename(t), aligned[f"{t}__pred"].rename(t)) for t in targets]
    except UnscorablePrediction as exc:
        return Score(task_dir.name, variant, rule.metric_name, 0.0, reason=str(exc), baseline=baseline,
                     solved_threshold=rule.metric.solved_threshold)
    except MemoryError:  # one oversized prediction scores 0; it must not end the run
        return Score(task_dir.name, variant, rule.metric_name, 0.0, reason="prediction does not fit in memory",
                     baseline=baseline, solved_threshold=rule.metric.solved_threshold)
    return Score(task_dir.name, variant, rule.metric_name, float(sum(per_target) / len(per_target)),
                 baseline=baseline, solved_threshold=rule.metric.solved_threshold)


def _baseline(task_dir: Path, kind: str, variant: str) -> float | None:
    """A time series' best recorded baseline R² for `variant` (None for tabular tasks or none recorded)."""
    if kind != TIME_SERIES_PROBLEM:
        return None
    best = best_recorded_baseline(_question(task_dir), variant)
    return None if best is None else float(best[1])


def _task_entries(tasks_root: Path) -> list[tuple[str, str]]:
    """(task_dir name, task kind) for each question_list.json entry."""
    entries = read_json_inside(Path(tasks_root) / QUESTION_LIST, tasks_root)
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise ValueError(f"{QUESTION_LIST} is not a list of task entries")
    out = []
    for entry in entries:
        name, kind = entry.get("file_path"), entry.get("task")
        if not isinstance(name, str) or not isinstance(kind, str):
            raise ValueError(f"{QUESTION_LIST}: an entry lacks a text file_path or task")
        # file_path becomes a path under both trees; a separator would escape them.
        if not name or Path(name).name != name or name in {".", ".."}:
            raise ValueError(f"{QUESTION_LIST}: file_path {name!r} is not a plain directory name")
        out.append((name, kind))
    names = [n for n, _ in out]
    if len(set(names)) != len(names):
        raise ValueError(f"{QUESTION_LIST}: duplicate file_path entries")
    return out


def score_tree(pred_dir: Path, tasks_root: Path, limits: InputLimits | None = None) -> ScoreReport:
    """Score every task of `tasks_root` for every variant against `<pred_dir>/<task>/<variant>/prediction.csv`.
    A task that cannot be scored (missing, linked out of the tree, broken metadata or reference) is
    skipped with its name and the reason; the others are scored."""
    scores, skipped = [], []
    for name, kind in _task_entries(tasks_root):
        try:
            scores += _score_task(Path(tasks_root), name, kind, Path(pred_dir), limits)
        except (OSError, ValueError) as exc:  # UnsafeInput is a ValueError
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            skipped.append((name, reason if reason.startswith(f"{name}: ") else f"{name}: {reason}"))
    return ScoreReport(tuple(sorted(scores, key=lambda s: (s.task, s.variant))), tuple(skipped))


def _score_task(tasks_root: Path, name: str, kind: str, pred_dir: Path, limits: InputLimits | None) -> list[Score]:
    task_dir = tasks_root / name
    if not os.path.lexists(task_dir):
        raise ValueError(f"{name}: listed in {QUESTION_LIST} but its folder is missing")
    # As verify: the task folder and its verify/ reached through no link (a folder linked outside the tree
    # would be scored against whatever it points at), holding no link or special file.
    refused = links_or_specials(task_dir, tasks_root) or links_or_specials(task_dir / VERIFY_DIR, tasks_root)
    if refused:
        raise ValueError(refused[0])
    metadata_kind, _ = _task_kind(task_dir)
    if metadata_kind != kind:
        raise ValueError(f"{name}: {QUESTION_LIST} says {kind!r} but {ALL_METADATA} says {metadata_kind!r}")
    return [score_prediction(task_dir, variant, pred_dir / name / variant / PREDICTION, pred_dir, limits)
            for variant in VARIANTS]


def format_report(report: ScoreReport) -> str:
    """A fixed-width table, one line per task and variant, then one summary line."""
    task_width = max([len("task"), *(len(printable(s.task)) for s in report.scores)])
    metric_width = max([len("metric"), *(len(s.metric) for s in report.scores)])
    lines = [f"{'task':<{task_width}}  var  {'metric':<{metric_width}}   score  solved"]
    for s in report.scores:
        solved = "yes" if s.solved else "no"
        line = (f"{printable(s.task):<{task_width}}  {s.variant:<3}  {s.metric:<{metric_width}}  {s.score:6.4f}  "
                f"{solved:<6}")
        if s.baseline is not None:
            line += f"  best baseline {s.baseline:.4f}: {s.baseline_label}"
        if s.reason is not None:
            line += f"  {printable(s.reason)}"
        lines.append(line.rstrip())
    parts = []
    for variant, summary in report.variants.items():
        if summary.n_scored:
            parts.append(
                f"{variant}: mean {summary.mean_score:.4f}, solved {summary.n_solved}/{summary.n_scored}"
                f" ({summary.solved_rate:.1%}), unscorable {summary.n_unscorable}"
                + (f", beats the best baseline {summary.n_beat_baseline}/{summary.n_with_baseline}"
                   f", within 5% of it {summary.n_within_5pct_of_baseline}/{summary.n_with_baseline}"
                   if summary.n_with_baseline else "")
            )
        else:
            parts.append(f"{variant}: no tasks")
    lines += [f"SKIPPED  {printable(task)}: {printable(reason)}" for task, reason in report.skipped]
    lines.append(f"{report.n_tasks} task(s) | " + " | ".join(parts)
                 + (f" | {len(report.skipped)} task(s) skipped" if report.skipped else ""))
    return "\n".join(lines)


def run_score(pred_dir: Path, tasks_root: Path, summary_path: Path | None = None,
              limits: InputLimits | None = None) -> ScoreReport:
    """Score, print the table (each zero score with its reason), and write the JSON summary."""
    summary_path = Path(pred_dir) / SCORE_SUMMARY if summary_path is None else Path(summary_path)
    if summary_path.exists() and not summary_path.is_file() or summary_path.is_symlink():
        raise ValueError(f"{summary_path} exists and is not a regular file; refusing to replace it")
    report = score_tree(pred_dir, tasks_root, limits)
    print(format_report(report))
    write_json(summary_path, report.to_json())
    print(f"summary written to {summary_path}")
    return report


def write_reference_predictions(tasks_root: Path, pred_dir: Path) -> None:
    """Copy each variant's reference into `<pred_dir>/<task>/<variant>/prediction.csv`.

    Scoring that folder must give 1.0 everywhere; anything less is a broken tree.
    """
    for name, kind in _task_entries(tasks_root):
        for variant in VARIANTS:
            source = Path(tasks_root) / name / VERIFY_DIR / scoring_rule(kind, variant).reference_file
            target = Path(pred_dir) / name / variant / PREDICTION
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
