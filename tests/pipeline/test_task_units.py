"""A dataset with a natural categorical and a natural numeric outcome makes two tasks, `_class` and `_reg`, each
built on its own (two tasks per dataset, as DARE-bench sets them); a dataset with one natural outcome still makes one, whose files are the ones a
one-task build made; the same seed gives the same tasks, through build_one and through the flow and its cache."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from pipeline.build import BuildJob, build_one
from pipeline.core.jsonio import read_json
from pipeline.core.seeding import rng_for
from pipeline.steps import ENTRY_JSON, SPEC_JSON, load_profile, load_record, load_table
from task_design.config import DesignConfig
from task_design.heuristic import design
from tests.factories import build_table, write_local_dataset

TWO_OUTCOMES = {"title": "Shop visits", "license": "CC0-1.0",
                "column_descriptions": {"label": "The outcome: did the customer buy.",
                                        "price": "Sale price, the response of the second study."}}


def _two_outcome_table(n: int = 200) -> pd.DataFrame:
    rng = np.random.default_rng(5)
    x = rng.normal(size=n)
    return build_table(n=n, price=lambda n: 50 + 10 * x + rng.normal(size=n))


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _build(root: Path, name: str, table: pd.DataFrame, **doc):
    data = write_local_dataset(root / "data", name, table, **doc)
    return build_one(f"local/{name}", "local", str(data), BuildJob.make(3), root / "work", root / "tasks")


def test_two_natural_outcomes_make_a_class_and_a_reg_task(tmp_path):
    outcomes = _build(tmp_path, "shop", _two_outcome_table(), **TWO_OUTCOMES)
    assert all(o.ok for o in outcomes), [(o.stage, o.reason) for o in outcomes]
    assert len({o.work_dir for o in outcomes}) == 2
    dirs = [read_json(Path(o.work_dir) / ENTRY_JSON)["file_path"] for o in outcomes]
    assert sorted(dirs) == ["local_shop_class", "local_shop_reg"]
    assert [o.uid for o in outcomes] == [f"local/shop ({d.rsplit('_', 1)[1]})" for d in dirs]
    targets = {read_json(tmp_path / "tasks" / d / "verify" / "all_metadata.json")["question"]["target"][0]
               for d in dirs}
    assert targets == {"label", "price"}


def test_the_first_task_is_the_one_task_design_and_the_same_seed_rebuilds_both(tmp_path):
    first = _build(tmp_path / "a", "shop", _two_outcome_table(), **TWO_OUTCOMES)
    work = Path(first[0].work_dir)
    alone = design(load_record(work), load_profile(work), load_table(work), rng_for(3, "local/shop", "design"),
                   DesignConfig())
    assert read_json(work / SPEC_JSON) == alone.model_dump(mode="json")
    again = _build(tmp_path / "b", "shop", _two_outcome_table(), **TWO_OUTCOMES)
    assert [o.uid for o in again] == [o.uid for o in first]
    for d in ("local_shop_class", "local_shop_reg"):
        assert _files(tmp_path / "a" / "tasks" / d) == _files(tmp_path / "b" / "tasks" / d)


def test_one_natural_outcome_makes_one_task(tmp_path):
    outcomes = _build(tmp_path, "visits", build_table(n=200), title="Visits", license="CC0-1.0",
                      target_hint="label")
    assert len(outcomes) == 1 and outcomes[0].ok, outcomes


def test_the_flow_builds_both_tasks_and_restores_both_from_its_cache(tmp_path):
    from flows import build_tasks

    write_local_dataset(tmp_path / "data", "shop", _two_outcome_table(), **TWO_OUTCOMES)
    cache = tmp_path / "cache"
    report = build_tasks(out=str(tmp_path / "out"), seed=3, sources=f"local:{tmp_path / 'data'}",
                         cache_dir=str(cache))
    assert sorted(report["tasks"]) == ["local_shop_class", "local_shop_reg"], report
    tree = {d: _files(tmp_path / "out" / d) for d in report["tasks"]}
    again = build_tasks(out=str(tmp_path / "out2"), seed=3, sources=f"local:{tmp_path / 'data'}",
                        cache_dir=str(cache))
    assert again["cached"] == 2 and sorted(again["tasks"]) == sorted(report["tasks"]), again
    assert {d: _files(tmp_path / "out2" / d) for d in again["tasks"]} == tree
