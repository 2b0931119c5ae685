"""A category task (EDA, feature engineering, chart, acquisition, evaluation) asks only about the columns the
task's design gave a role, its target and its features, never about an identifier the designer excluded, a
time series' time index or its entity column, though all of them stay in the data files the agent reads: the
distinct count of a time index is the row count, the log of an id means nothing (a blind solver found both).

Both tasks are designed by daregen's own designers from tables holding such columns, so what is tested is the
generators reading the roles the design recorded, not a list of names written here."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from finalize.dsagent import categories
from finalize.dsagent.build import data_context
from finalize.layout import BuildContext
from finalize.timeseries import write_ts_task
from pipeline.core.jsonio import read_json
from pipeline.core.records import DatasetRejected
from pipeline.core.seeding import rng_for
from postprocess.timeseries import build_ts_package
from sourcing.normalize import normalize_table
from task_design.profile import profile_table
from task_design.timeseries import design_ts
from tests.factories import build_local_task, build_record, build_table, needs_sandbox, task_folder

SEEDS = 12  # each generator draws its variant, columns and question count by seed


def _named(task) -> set[str]:
    """Every column name a task's instruction puts in backticks."""
    return set(re.findall(r"`([^`]+)`", task.instruction))


def _generate(task_dir: Path) -> tuple[categories.DataContext, dict[str, list]]:
    ctx = data_context(task_dir, read_json(task_dir / "verify" / "all_metadata.json")["question"])
    made: dict[str, list] = {}
    for category, gen in categories.GENERATORS.items():
        for seed in range(SEEDS):
            try:
                made.setdefault(category, []).append(gen(ctx, rng_for(seed, task_dir.name, f"test/{category}")))
            except DatasetRejected:
                pass
    return ctx, made


@pytest.fixture(scope="module")
def tabular(tmp_path_factory) -> Path:
    """A classification task whose table has a near-unique `customer_id`, which the designer excludes."""
    root = tmp_path_factory.mktemp("roles_tab")
    table = build_table(n=200, seed=4, customer_id=lambda n: np.arange(1001, 1001 + n))
    outcome = build_local_task(root, "visits", table, "csv", 5, title="Visits", license="CC0-1.0",
                               target_hint="label", column_descriptions={"customer_id": "customer identifier"})
    return task_folder(root, outcome)


@pytest.fixture(scope="module")
def panel(tmp_path_factory) -> Path:
    """A monthly sales panel of two stores: time column `month`, entity column `store`, exogenous `temperature`."""
    rng = np.random.default_rng(1)
    months = pd.date_range("2010-01-01", periods=72, freq="MS").strftime("%Y-%m-%d")
    t = np.arange(72)
    frames = []
    for k, store in enumerate(["north", "south"]):
        temperature = 15 + 8 * np.sin(2 * np.pi * t / 12) + rng.normal(0, 1, 72)
        sales = 100 + 20 * k + 0.8 * t + 0.5 * temperature + rng.normal(0, 2, 72)
        frames.append(pd.DataFrame({"month": months, "store": store, "sales": sales, "temperature": temperature}))
    table = normalize_table(pd.concat(frames, ignore_index=True))
    rec = build_record(kind_hint="time_series", column_descriptions={}, target_hint="sales")
    spec = design_ts(rec, profile_table(table), table, rng_for(0, rec.ref, "design"))
    assert (spec.time_column, spec.entity_columns) == ("month", ("store",))
    pkg = build_ts_package(rec, spec, table, rng_for(0, rec.ref, "postprocess"))
    tree = tmp_path_factory.mktemp("roles_ts") / "tree"
    write_ts_task(pkg, tree, BuildContext(seed=0, design_digest="d"))
    return tree / spec.task_dir


@needs_sandbox
def test_no_category_task_asks_about_an_identifier_the_designer_excluded(tabular: Path) -> None:
    meta = read_json(tabular / "verify" / "all_metadata.json")
    assert "customer_id" in meta["daregen"]["excluded_features"]
    ctx, made = _generate(tabular)
    assert "customer_id" in ctx.train.columns and "customer_id" in ctx.val.columns  # the data keeps it
    assert {"eda", "feature_engineering", "visualization"} <= set(made)
    for category, tasks in made.items():
        for task in tasks:
            assert "customer_id" not in _named(task), (category, task.instruction)
            assert _named(task) & set(ctx.train.columns) <= ctx.roles | {"row_id"}, (category, task.instruction)


def test_no_category_task_asks_about_a_time_index_or_an_entity_column(panel: Path) -> None:
    ctx, made = _generate(panel)
    assert {"month", "store"} <= set(ctx.train.columns) and not {"month", "store"} & ctx.roles
    assert {"eda", "feature_engineering", "visualization"} <= set(made)
    for category, tasks in made.items():
        for task in tasks:
            assert not {"month", "store"} & _named(task), (category, task.instruction)


def test_a_category_with_no_design_column_left_is_skipped_with_its_reason(panel: Path) -> None:
    """A univariate series offers its target alone: no pair of columns to plot, so no chart."""
    question = read_json(panel / "verify" / "all_metadata.json")["question"]
    ctx = data_context(panel, {**question, "related_features": [], "selected_features": []})
    assert ctx.roles == {"sales"}
    with pytest.raises(DatasetRejected, match="visualization: no column pair to plot"):
        categories.visualization_task(ctx, rng_for(0, panel.name, "test/visualization"))
