"""A desktop config says everything its evaluator depends on, as an agent reads it: which features are
numeric and which categorical, the tolerance numbers are compared with, a level as the data holds it, and
no derived feature asked for twice; a blind solver that follows the text of a real config scores 1.0,
and one that rounds is told beforehand that it will fail."""

from __future__ import annotations

import ast
import json
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.impute import SimpleImputer
from sklearn.linear_model import Ridge
from sklearn.model_selection import KFold, cross_val_score
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from sklearn.tree import DecisionTreeClassifier

from finalize.dsagent import categories, dare_variants
from finalize.dsagent.build import data_context
from finalize.dsagent.evaluator_template import SOLVED_THRESHOLD, evaluate
from finalize.reference_solution import read_table
from pipeline.core.jsonio import read_json
from pipeline.core.metrics import SCORING_SENTENCES
from pipeline.core.seeding import rng_for

SEEDS = range(40)  # each generator draws its questions by seed: enough seeds to meet every kind


@pytest.fixture(scope="module")
def contexts(small_tree: Path) -> list[tuple[Path, dict, categories.DataContext]]:
    out = []
    for task_dir in sorted(p.parent.parent for p in small_tree.glob("*/verify/all_metadata.json")):
        question = read_json(task_dir / "verify" / "all_metadata.json")["question"]
        out.append((task_dir, question, data_context(task_dir, question)))
    return out


def _generated(contexts, category: str) -> list[tuple[Path, categories.DataContext, object]]:
    tasks = []
    for task_dir, _, ctx in contexts:
        for seed in SEEDS:
            try:
                tasks.append((task_dir, ctx, categories.GENERATORS[category](ctx, rng_for(seed, ctx.task_dir,
                                                                                          f"t/{category}"))))
            except categories.DatasetRejected:
                continue
    return tasks


def _tolerances(check: dict) -> set[tuple[float, float]]:
    if check["kind"] == "answers":
        return {(a["rtol"], a["atol"]) for a in check["answers"].values()}
    return {(check["rtol"], check["atol"])}


@pytest.mark.parametrize("category", sorted(categories.GENERATORS))
def test_every_category_states_the_tolerance_its_evaluator_applies(contexts, category: str) -> None:
    generated = _generated(contexts, category)
    assert generated
    for _, _, task in generated:
        for rtol, atol in _tolerances(task.expected["check"]):
            if (rtol, atol) == (0.0, 0.0):  # counts
                assert "Counts must be exact" in task.instruction, task.instruction
            elif rtol == 0.0:  # a tolerance the question itself gives (Pearson within 0.01)
                assert f"within {atol:g}" in task.instruction
            else:
                assert categories._tolerance_text(rtol, atol) in task.instruction, task.instruction
                assert "not rounded" in task.instruction
        assert "only an empty cell is a missing value" in task.instruction or not any(
            f.endswith(".csv") for f in task.inputs)


def _crossval(contexts) -> list:
    tasks = []
    for task_dir, question, ctx in contexts:
        df = ctx.train.dropna(subset=[ctx.target])
        for seed in SEEDS:
            task = categories._cross_validation_task(ctx, rng_for(seed, ctx.task_dir, "t/cv"), df,
                                                     question["problem_type"] == "classification")
            tasks.append((task_dir, task))
    return tasks


def _backquoted(line: str) -> list[str]:
    return re.findall(r"`([^`]+)`", line)


def _blind_cv(task, source: Path) -> dict:
    """What an agent computes from the crossval instruction alone (nothing from expected.json)."""
    steps = task.instruction.split("\n")
    numeric_line = next(s for s in steps if "numeric features:" in s)
    categorical_line = next(s for s in steps if "categorical features:" in s)
    numeric = _backquoted(numeric_line.split(": mean imputation")[0])  # "numeric features: none" names none
    categorical = _backquoted(categorical_line.split(": most-frequent")[0])
    model_line = next(s for s in steps if "model: scikit-learn" in s)
    model_call = _backquoted(model_line)[0]
    seed = int(re.search(r"random_state=(\d+)", model_call).group(1))
    k = int(re.search(r"n_splits=(\d+)", next(s for s in steps if "KFold(" in s)).group(1))
    scoring = _backquoted(next(s for s in steps if "scoring" in s))[-1]
    target = re.search(r"predicting `([^`]+)`", task.instruction).group(1)
    # the intro's CSV rule (only an empty cell is missing); parquet and SQLite carry their own types
    df = pd.read_csv(source, keep_default_na=False, na_values=[""]) if str(source).endswith(".csv") \
        else read_table(source)
    df = df.dropna(subset=[target])
    blocks = []
    if numeric:
        blocks.append(("num", Pipeline([("i", SimpleImputer(strategy="mean")), ("s", StandardScaler())]), numeric))
    if categorical:
        blocks.append(("cat", Pipeline([("i", SimpleImputer(strategy="most_frequent")),
                                        ("o", OneHotEncoder(handle_unknown="ignore"))]), categorical))
    model = DecisionTreeClassifier(random_state=seed) if model_call.startswith("DecisionTree") else Ridge(
        random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scores = cross_val_score(Pipeline([("pre", ColumnTransformer(blocks)), ("model", model)]),
                                 df[numeric + categorical], df[target],
                                 cv=KFold(n_splits=k, shuffle=True, random_state=seed), scoring=scoring)
    return {"fold_scores": [float(s) for s in scores], "mean_score": float(scores.mean())}


def test_a_blind_solver_reproduces_crossval_from_the_text_and_rounding_is_announced_as_failing(
        contexts, tmp_path: Path) -> None:
    checked = 0
    for task_dir, task in _crossval(contexts)[::7]:
        question = read_json(task_dir / "verify" / "all_metadata.json")["question"]
        # the text names exactly the task's numeric and categorical features: nothing is left to typing
        steps = task.instruction.split("\n")
        assert _backquoted(next(s for s in steps if "numeric features:" in s).split(": mean")[0]) == \
            list(question["numerical_features"])
        source = task_dir / "source" / next(iter(task.inputs))
        answer = _blind_cv(task, source)
        (tmp_path / "cv.json").write_text(json.dumps(answer))
        assert evaluate(tmp_path, task.expected) == 1.0, task.name
        rounded = {k: (np.round(v, 3).tolist()) for k, v in answer.items()}
        (tmp_path / "cv.json").write_text(json.dumps(rounded))
        if rounded != answer:
            assert evaluate(tmp_path, task.expected) < SOLVED_THRESHOLD
            assert "full floating-point precision, not rounded" in task.instruction
        checked += 1
    assert checked >= 3


def test_feature_engineering_never_asks_for_the_same_feature_twice(contexts) -> None:
    repeats_left_out = 0
    for _, _, ctx in contexts:
        for seed in SEEDS:
            task = categories.feature_engineering_task(ctx, rng_for(seed, ctx.task_dir, "t/features"))
            definitions = [re.sub(r"^`feat_\d+` = ", "", s) for s in task.steps]
            assert len(set(definitions)) == len(definitions), task.steps
            columns = task.expected["check"]["columns"]
            assert columns == [f"feat_{i}" for i in range(1, len(columns) + 1)]
            # the generator's first draw is how many features it asks for; fewer columns means a repeat left out
            asked = int(rng_for(seed, ctx.task_dir, "t/features").integers(1, 7))
            repeats_left_out += len(columns) < asked
    assert repeats_left_out, "no seed drew a repeated feature: the test would prove nothing"


def test_an_indicator_level_is_written_as_the_data_holds_it(contexts) -> None:
    assert categories._level_text(np.int64(1)) == "1" and categories._level_text(np.float64(2.5)) == "2.5"
    assert categories._level_text(np.bool_(True)) == "True" and categories._level_text("a b") == "'a b'"
    # an agent that compares the column with the literal as written gets the expected indicator
    checked = 0
    for _, ctx, task in _generated(contexts, "feature_engineering"):
        check = task.expected["check"]
        for i, step in enumerate(task.steps):
            m = re.fullmatch(r"`(feat_\d+)` = 1 where `([^`]+)` is (.+), else 0 \(a one-hot column\)", step)
            if not m:
                continue
            got = (ctx.val[m.group(2)] == ast.literal_eval(m.group(3))).astype(int).tolist()
            j = check["columns"].index(m.group(1)) + 1
            assert got == [int(r[j]) for r in check["rows"]]
            checked += 1
    assert checked


def test_modelling_variants_say_how_prediction_csv_is_scored(small_tree: Path) -> None:
    entries = {e["file_path"]: e for e in read_json(small_tree / "question_list.json")}
    seen = set()
    for task_dir in sorted(p.parent.parent for p in small_tree.glob("*/verify/all_metadata.json")):
        question = read_json(task_dir / "verify" / "all_metadata.json")["question"]
        tasks, _ = dare_variants.dare_variants(task_dir, question, entries[task_dir.name])
        for task in tasks:
            metric = task.expected["check"]["metric"]
            # the metric is said once: daregen's own question states it, and the note does not repeat it
            assert task.instruction.count(SCORING_SENTENCES[metric]) == 1
            # the evaluator reads the predictions by the target's name: the text names that column
            check = task.expected["check"]
            assert f"holds `row_id`, `{check['targets'][0]}`, named exactly so" in task.instruction
            # a free-modelling score is relative to the reference model's, and the text says so
            assert ("divided by the reference model's" in task.instruction) == ("reference_metric" in check)
            seen.add(metric)
    assert seen >= {"exact_match", "macro_f1"} or seen >= {"allclose", "r2"}
    assert "not rounded" in SCORING_SENTENCES["allclose"]
