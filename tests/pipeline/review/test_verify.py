"""`daregen verify` passes honest trees (ours and DARE-bench's published tabular tasks), skips time series,
and names the task, the rule and the row when a task's IF ground truth or its noise is wrong."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from finalize import sandbox
from finalize.checks import errors
from finalize.runner import run_reference_sandboxed, run_references_batched
from pipeline.cli import main
from pipeline.core import names
from pipeline.core.if_workflow import filter_by_expected_ranges
from pipeline.core.jsonio import read_json, write_json
from pipeline.publish import build_manifest
from pipeline.review.verify import verify_task, verify_tree
from postprocess.formats import read_frame, write_frame
from tests.factories import CLASS, DARE_EXAMPLES, NO_DARE_EXAMPLES, REG, TS, our_task

pytestmark = [
    pytest.mark.skipif(not sandbox.isolation_possible(), reason="no namespaces here (not root, no userns)"),
    pytest.mark.skipif(not (DARE_EXAMPLES / REG).exists(), reason=NO_DARE_EXAMPLES),
]


def test_honest_tree_passes_and_time_series_is_skipped(honest_tree: Path, capsys) -> None:
    report = verify_tree(honest_tree, jobs=2)
    status = {v.task: v.status for v in report.verdicts}
    # The time-series verdict belongs to finalize.timeseries (being extended now); tabular ones are ours.
    assert {k: v for k, v in status.items() if k != TS} == {our_task(honest_tree).name: "pass", REG: "pass",
                                                            CLASS: "pass"}, report.verdicts
    assert TS in status
    main(["verify", str(honest_tree), "--jobs", "2", "--no-determinism"])
    out = capsys.readouterr().out
    assert "verified 4 tasks" in out and all(f"PASS        {t}" in out for t in (REG, CLASS, our_task(honest_tree).name))


@pytest.mark.parametrize("which", ["ours", CLASS])
def test_one_flipped_class_prediction_is_caught(tree: Path, which: str, capsys) -> None:
    task = our_task(tree) if which == "ours" else tree / which
    path = task / names.VERIFY_DIR / names.SIMULATED_PRED
    target = read_json(task / names.VERIFY_DIR / names.ALL_METADATA)["question"]["target"][0]
    sim = pd.read_csv(path, dtype=str, keep_default_na=False)
    labels = sorted(set(sim[target]))
    old = sim.loc[3, target]
    sim.loc[3, target] = next(label for label in labels if label != old) if len(labels) > 1 else old + "x"
    sim.to_csv(path, index=False, lineterminator="\n")
    verdict = verify_task(task)
    assert verdict.status == "fail"
    message = " ".join(p.message for p in errors(list(verdict.problems)))
    row_id = sim.loc[3, names.ROW_ID]
    assert "(exact match fails): 1 of" in message and f"row_id {row_id}: recorded {sim.loc[3, target]!r}" in message
    assert main(["verify", str(tree), "--jobs", "2", "--no-determinism"]) == 1
    assert f"FAIL        {task.name}" in capsys.readouterr().out


def test_one_perturbed_regression_prediction_is_caught(tree: Path) -> None:
    path = tree / REG / names.VERIFY_DIR / names.SIMULATED_PRED
    sim = pd.read_csv(path)
    sim.loc[0, "LungCap"] += 0.5
    sim.to_csv(path, index=False)
    verdict = verify_task(tree / REG)
    assert verdict.status == "fail"
    assert any("(numpy.allclose fails): 1 of" in p.message and "row_id 1:" in p.message for p in verdict.problems)


def test_a_noise_row_inside_the_ranges_is_caught(tree: Path) -> None:
    task = our_task(tree)
    q = read_json(task / names.VERIFY_DIR / names.ALL_METADATA)["question"]
    path = task / names.SOURCE_DIR / names.data_file(names.TRAIN_V1, q["save_file_type"])
    train = read_frame(path, q["save_file_type"])
    kept = filter_by_expected_ranges(train, q["expected_ranges"], q["column_type_inference"])
    clean_row = kept.iloc[0]
    noisy = next(i for i in train.index if not _inside(train.loc[[i]], q))
    for col in q["expected_ranges"]:  # the noise injector "forgot" to push this row out of range
        train.loc[noisy, col] = clean_row[col]
    write_frame(train, path, q["save_file_type"])
    verdict = verify_task(task)
    assert verdict.status == "fail"
    assert any("1 row(s) pass the range filter but are not clean rows" in p.message for p in verdict.problems), \
        verdict.problems


def _inside(row: pd.DataFrame, q: dict) -> bool:
    return len(filter_by_expected_ranges(row, q["expected_ranges"], q["column_type_inference"])) == 1


def test_regenerate_rewrites_ground_truth_and_records_the_environment(tree: Path) -> None:
    task = tree / CLASS
    (task / names.VERIFY_DIR / names.SIMULATED_PRED).unlink()
    assert verify_task(task).status == "fail"
    assert main(["verify", str(task), "--regenerate", "--no-determinism"]) == 0
    env = read_json(task / names.VERIFY_DIR / names.ENVIRONMENT)
    assert {"python", "platform", "blas", "packages"} <= env.keys()
    assert {"numpy", "scipy", "scikit-learn", "pandas"} <= env["packages"].keys()
    assert verify_task(task).status == "pass"


def test_a_tree_without_tasks_is_a_usage_error(tmp_path: Path, capsys) -> None:
    assert main(["verify", str(tmp_path)]) == 2
    assert "no question_list.json" in capsys.readouterr().err
    (tmp_path / "question_list.json").write_text("[]\n")
    assert main(["verify", str(tmp_path)]) == 2
    assert "no DARE-bench tasks" in capsys.readouterr().err


def test_a_tree_whose_question_list_was_deleted_is_refused(tree: Path) -> None:
    (tree / "question_list.json").unlink()
    with pytest.raises(ValueError, match="no question_list.json"):
        verify_tree(tree, determinism=False)


def _tabular(tree: Path) -> dict[str, tuple[Path, dict]]:
    tasks = [our_task(tree), tree / REG, tree / CLASS]
    return {f"k{i}": (t, read_json(t / names.VERIFY_DIR / names.ALL_METADATA)["question"]) for i, t in enumerate(tasks)}


def test_a_batch_gives_each_task_the_predictions_of_a_job_of_its_own(tree: Path) -> None:
    tasks = _tabular(tree)
    batched = run_references_batched(tasks)
    alone = {k: run_reference_sandboxed(t, question=q) for k, (t, q) in tasks.items()}
    assert all(r.ok for r in alone.values()), alone
    assert {k: r.value for k, r in batched.items()} == {k: r.value for k, r in alone.items()}
    assert batched["k0"].value != batched["k1"].value  # each task its own predictions, not a neighbour's


def test_a_task_that_fails_in_a_batch_fails_alone_with_its_own_reason(tree: Path, capsys) -> None:
    q = read_json(tree / REG / names.VERIFY_DIR / names.ALL_METADATA)["question"]
    path = tree / REG / names.SOURCE_DIR / names.data_file(names.TRAIN_V1_NO_ERR, q["save_file_type"])
    train = read_frame(path, q["save_file_type"])
    write_frame(train.drop(columns=[q["target"][0]]), path, q["save_file_type"])  # the reference cannot fit
    alone = verify_task(tree / REG)
    assert alone.status == "fail" and "reference solution" in alone.problems[0].message, alone
    report = verify_tree(tree, jobs=1, determinism=False)  # batches of two: REG shares its job with a task
    status = {v.task: v.status for v in report.verdicts}
    assert status[REG] == "fail" and status[CLASS] == status[our_task(tree).name] == "pass", report.verdicts
    assert next(v for v in report.verdicts if v.task == REG).problems == alone.problems
    batch = run_references_batched(_tabular(tree))
    assert not batch["k1"].ok and batch["k0"].ok and batch["k2"].ok


def test_batches_hold_every_task_once_the_slow_fits_first() -> None:
    """verify_tree's scheduling (results never depend on it): every task in exactly one batch of at most
    BATCH_TASKS, the iterative fits (MLPs) ahead of every other, costliest first, nothing queued behind a big one."""
    from pipeline.review.verify import BATCH_TASKS, _batches

    costs = {f"t{i:05d}": (i % 10 == 0, float((i * 37) % 101 + 1)) for i in range(100)}
    costs["t00099"] = (False, 5000.0)  # one large non-iterative task
    batches = _batches(list(costs), 2, costs)
    flat = [k for b in batches for k in b]
    assert sorted(flat) == sorted(costs) and all(1 <= len(b) <= BATCH_TASKS for b in batches)
    iterative = [k for k in flat if costs[k][0]]
    assert flat[:len(iterative)] == sorted(iterative, key=lambda k: -costs[k][1])
    assert [k for k in flat if not costs[k][0]][0] == "t00099"
    big = next(b for b in batches if "t00099" in b)
    assert big[-1] == "t00099"  # over an eighth of the total per job: nothing is queued behind it
    assert batches.index(big) < len(batches) // 2
    assert _batches(list(costs)[:10], 2) == [[f"t{i:05d}", f"t{i + 1:05d}", f"t{i + 2:05d}"] for i in (0, 3, 6)] \
        + [["t00009"]]  # without costs: the given order, equal sizes


def test_the_manifest_is_checked_on_the_tree_as_given_not_after_regenerate(tree: Path) -> None:
    """Regenerate rewrites simulated_pred_local.csv on purpose: the tree as given matches its manifest,
    so no file fails it; an edited file fails in one line naming it."""
    write_json(tree / names.MANIFEST, build_manifest(tree, {}))
    report = verify_tree(tree, regenerate=True, determinism=False, jobs=1)
    assert not [p for v in report.verdicts for p in v.problems if names.MANIFEST in p.message]
    write_json(tree / names.MANIFEST, build_manifest(tree, {}))  # the regenerated tree, as a build records it
    edited = tree / CLASS / names.VERIFY_DIR / names.SIMULATED_PRED
    edited.write_text(edited.read_text() + "\n")
    report = verify_tree(tree, determinism=False, jobs=1)
    [problem] = [p for v in report.verdicts for p in v.problems if names.MANIFEST in p.message]
    assert problem.where == f"{CLASS}/{names.VERIFY_DIR}/{names.SIMULATED_PRED}" and "\n" not in problem.message
