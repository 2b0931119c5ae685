"""The reward is `daregen score`'s number for every form of prediction: 1.0 for the ground truth, below 1.0
for a perturbed one, 0 with a reason for a malformed one, through verl's and TRL's real call signatures; a
completion is text, never a path, and no completion raises."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pipeline.review.score import score_prediction as score_file
from pipeline.core.jsonio import write_json
from pipeline.core.names import ALL_METADATA, GROUND_TRUTH, ROW_ID, SIMULATED_PRED, VERIFY_DIR
from pipeline.reward import (
    compute_score,
    make_trl_reward,
    reward_spec,
    score_prediction,
    score_prediction_file,
)
from tests.pipeline.export.builders import perturbations

N = 12


def _tabular_task(root: Path, kind: str) -> Path:
    """A task with only what scoring reads: metadata, the MM ground truth and the IF reference."""
    rng = np.random.default_rng(0)
    task = root / f"tiny_{kind}"
    (task / VERIFY_DIR).mkdir(parents=True)
    ids = np.arange(100, 100 + N)
    if kind == "classification":
        truth = rng.choice(["a", "b", "c"], size=N)
        reference = truth.copy()
        reference[:3] = "a"
    else:
        truth = rng.normal(10, 3, size=N).round(3)
        reference = truth + rng.normal(0, 0.5, size=N)
    pd.DataFrame({ROW_ID: ids, "y": truth}).to_csv(task / VERIFY_DIR / GROUND_TRUTH, index=False)
    pd.DataFrame({ROW_ID: ids, "y": reference}).to_csv(task / VERIFY_DIR / SIMULATED_PRED, index=False)
    write_json(task / VERIFY_DIR / ALL_METADATA, {"question": {"target": ["y"], "problem_type": kind}})
    return task


@pytest.fixture(params=["classification", "regression"])
def task(request, tmp_path: Path) -> Path:
    return _tabular_task(tmp_path, request.param)


def _truth(task: Path, variant: str) -> pd.DataFrame:
    name = SIMULATED_PRED if variant == "IF" else GROUND_TRUTH
    return pd.read_csv(task / VERIFY_DIR / name)


@pytest.mark.parametrize("variant", ["IF", "MM"])
def test_ground_truth_scores_one_in_every_form(task: Path, variant: str, tmp_path: Path) -> None:
    truth = _truth(task, variant)
    path = task / VERIFY_DIR / (SIMULATED_PRED if variant == "IF" else GROUND_TRUTH)
    for form in (path.read_text(), path.read_bytes(), truth):
        score = score_prediction(task, variant, form)
        assert (score.score, score.reason) == (1.0, None), (type(form).__name__, score)
    # A harness that wrote the file itself names it and the folder it must lie in.
    preds = tmp_path / "preds"
    preds.mkdir()
    (preds / "p.csv").write_bytes(path.read_bytes())
    assert score_prediction_file(task, variant, preds / "p.csv", preds).score == 1.0


@pytest.mark.parametrize("variant", ["IF", "MM"])
def test_a_completion_naming_the_ground_truth_scores_zero(task: Path, variant: str, tmp_path: Path,
                                                          monkeypatch) -> None:
    """The attack: a one-line completion equal to the path of the task's own reference, absolute or
    relative to the export, once scored that file (1.0 for every variant)."""
    path = task / VERIFY_DIR / (SIMULATED_PRED if variant == "IF" else GROUND_TRUTH)
    monkeypatch.chdir(tmp_path)
    spec = json.dumps(reward_spec(task, variant, task.name.split("_")[1], ["y"], relative_to=tmp_path))
    for form in (str(path), path, path.relative_to(tmp_path).as_posix(), f"./{path.relative_to(tmp_path)}"):
        score = score_prediction(task, variant, form)
        assert score.score == 0.0 and score.reason, (form, score)
        if isinstance(form, str):
            assert compute_score("daregen", form, spec, {}, export_dir=str(tmp_path)) == 0.0
            assert make_trl_reward(tmp_path)([None], [form], reward_spec=[spec]) == [0.0]
    # A harness path outside the predictions folder it names is refused too.
    outside = score_prediction_file(task, variant, path, tmp_path / "preds")
    assert outside.score == 0.0 and "outside" in outside.reason


HOSTILE_COMPLETIONS = {
    "336-char one line (ENAMETOOLONG as a path)": "x" * 336,
    "lone surrogate": "row_id,y\n100,\udc80\n",
    "NUL bytes": "row_id,y\n100,a\x00\n",
    "10^5 fields in one body row": "row_id,y\n" + ",".join(["1"] * 100_000) + "\n",
    "CR-only line breaks, 10 rows past max_rows": "row_id,y\r" + "".join(f"{i},a\r" for i in range(110)),
    "not text": 12345,
    "a message list": [{"role": "assistant"}],
}


@pytest.mark.parametrize("what", sorted(HOSTILE_COMPLETIONS))
def test_any_completion_gives_a_number_and_a_reason(tmp_path: Path, what: str) -> None:
    from pipeline.core.safe_io import InputLimits

    task = _tabular_task(tmp_path, "classification")
    completion = HOSTILE_COMPLETIONS[what]
    score = score_prediction(task, "IF", completion, InputLimits(max_rows=100))
    assert score.score == 0.0 and score.reason, (what, score)
    spec = json.dumps(reward_spec(task, "IF", "classification", ["y"], relative_to=tmp_path))
    assert compute_score("daregen", completion, spec, {}, export_dir=str(tmp_path)) == 0.0
    assert make_trl_reward(tmp_path)([None], [completion], reward_spec=[spec]) == [0.0]


def test_an_oversized_completion_is_refused_before_it_is_encoded_or_written(tmp_path: Path, monkeypatch) -> None:
    """A 2 GB text was written to disk before its size was checked; now nothing is written at all and the
    size is checked on the string itself (a 1 MB limit stands in for the 512 MB default)."""
    import tempfile

    from pipeline.core.safe_io import InputLimits

    task = _tabular_task(tmp_path, "classification")
    monkeypatch.setattr(tempfile, "mkstemp", lambda *a, **k: pytest.fail("a completion was written to disk"))
    monkeypatch.setattr(tempfile, "TemporaryDirectory", lambda *a, **k: pytest.fail("a completion was written"))
    big = "row_id,y\n" + "1,a\n" * 300_000
    score = score_prediction(task, "IF", big, InputLimits(max_file_bytes=1 << 20))
    assert score.score == 0.0 and "characters, over the 1048576-byte limit" in score.reason
    good = (task / VERIFY_DIR / SIMULATED_PRED).read_text()
    assert score_prediction(task, "IF", good).score == 1.0  # in memory, nothing written


@pytest.mark.parametrize("variant", ["IF", "MM"])
def test_perturbed_predictions_score_below_one_and_equal_the_scoring_path(task: Path, variant: str,
                                                                          tmp_path: Path) -> None:
    for what, frame in perturbations(_truth(task, variant), "y").items():
        reward = score_prediction(task, variant, frame)
        assert reward.score < 1.0, what
        path = tmp_path / f"{what}.csv"
        frame.to_csv(path, index=False)
        assert reward == score_file(task, "v1" if variant == "IF" else "v2", path), what


MALFORMED = {
    "missing row_id": "id,y\n100,a\n",
    "duplicate ids": None,  # built from the truth below
    "NaN": None,
    "wrong column name": None,
    "empty file": "",
}


@pytest.mark.parametrize("what", sorted(MALFORMED))
def test_malformed_predictions_score_zero_with_a_reason(tmp_path: Path, what: str) -> None:
    task = _tabular_task(tmp_path, "regression")
    truth = _truth(task, "MM")
    frames = {
        "duplicate ids": pd.concat([truth, truth.iloc[:1]]),
        "NaN": truth.assign(y=[np.nan] + truth["y"].tolist()[1:]),
        # two value columns under other names: no safe guess which one is the target
        "wrong column name": truth.rename(columns={"y": "target"}).assign(other=1.0),
    }
    prediction = frames.get(what, MALFORMED[what])
    score = score_prediction(task, "MM", prediction)
    assert score.score == 0.0 and score.reason, (what, score)
    assert score_prediction(task, "MM", None).reason  # no prediction at all


def test_unknown_variant_is_an_error(task: Path) -> None:
    with pytest.raises(ValueError, match="unknown variant"):
        score_prediction(task, "XX", "row_id,y\n")


def test_verl_and_trl_adapters_with_their_real_signatures(tmp_path: Path) -> None:
    task = _tabular_task(tmp_path, "classification")
    spec = reward_spec(task, "IF", "classification", ["y"], relative_to=tmp_path)
    good = (task / VERIFY_DIR / SIMULATED_PRED).read_text()
    bad = perturbations(_truth(task, "IF"), "y")["changed value"].to_csv(index=False)
    # verl's NaiveRewardManager: compute_score(data_source=, solution_str=, ground_truth=, extra_info=),
    # plus custom_reward_function.reward_kwargs merged in as keywords.
    ground_truth = json.dumps(spec)
    extra = {"task_id": "tiny/IF", "num_turns": None, "rollout_reward_scores": {}}
    assert compute_score(data_source="daregen", solution_str=good, ground_truth=ground_truth, extra_info=extra,
                         export_dir=str(tmp_path)) == 1.0
    assert compute_score(data_source="daregen", solution_str=bad, ground_truth=ground_truth,
                         extra_info={**extra, "export_dir": str(tmp_path)}) == 0.0
    # TRL's GRPOTrainer: reward_func(prompts=, completions=, completion_ids=, **dataset columns but prompt,
    # trainer_state=, log_extra=, log_metric=); conversational completions are message lists.
    reward = make_trl_reward(tmp_path)
    rewards = reward(prompts=[[{"role": "user", "content": "task"}]] * 3,
                     completions=[good, [{"role": "assistant", "content": bad}], ""],
                     completion_ids=[[1], [2], [3]], reward_spec=[spec] * 3, task_id=["tiny/IF"] * 3,
                     trainer_state=None, log_extra=lambda *a: None, log_metric=lambda *a: None)
    assert rewards == [1.0, 0.0, 0.0]


def test_a_stale_ground_truth_is_refused(tmp_path: Path) -> None:
    task = _tabular_task(tmp_path, "regression")
    spec = reward_spec(task, "MM", "regression", ["y"], relative_to=tmp_path)
    spec["ground_truth_sha256"] = "0" * 64
    with pytest.raises(ValueError, match="stale"):
        compute_score("daregen", "row_id,y\n", json.dumps(spec), {}, export_dir=str(tmp_path))


def test_a_rewritten_ground_truth_is_rescored_not_served_from_the_cache(tmp_path: Path) -> None:
    task = _tabular_task(tmp_path, "classification")
    text = (task / VERIFY_DIR / SIMULATED_PRED).read_text()
    assert score_prediction(task, "IF", text).score == 1.0
    assert score_prediction(task, "IF", text).score == 1.0  # served again
    changed = _truth(task, "IF")
    changed.loc[0, "y"] = "a new label"  # another size too: file timestamps can be coarser than this test
    changed.to_csv(task / VERIFY_DIR / SIMULATED_PRED, index=False)  # e.g. `daregen verify --regenerate`
    assert score_prediction(task, "IF", text).score == 0.0
