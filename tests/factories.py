"""Tiny builders shared by the tests: records, tables, specs, datasets on disk, small task trees.

Each builder returns a fresh object (or writes fresh files under the folder it is handed);
`**overrides` replace or add columns / fields. Tests import builders from here, never from
another test module; fixtures over them live in the conftest.py files.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from finalize import sandbox
from pipeline.build import BuildJob, build_one
from pipeline.core import names
from pipeline.core.jsonio import read_json, write_json
from pipeline.core.records import DatasetRecord, DatasetRejected, DocumentedReading, Evidence, TaskPackage, TaskSpec
from pipeline.core.seeding import rng_for
from pipeline.publish import write_question_list
from pipeline.steps import ENTRY_JSON, Outcome
from sourcing.normalize import normalize_table
from task_design.config import DesignConfig
from task_design.heuristic import design
from task_design.profile import profile_table

REPO = Path(__file__).resolve().parents[1]
# DARE-bench's published example tasks, beside the main checkout (/work/shared/dare-examples);
# DARE_EXAMPLES in the environment points elsewhere (e.g. from a worktree).
DARE_EXAMPLES = Path(os.environ.get("DARE_EXAMPLES") or REPO.parent / "shared" / "dare-examples")
# The reason a test that compares with them gives when they are absent: where they are looked for (they are
# DARE-bench's data, not in this repository; docs/development.md#running-the-tests).
NO_DARE_EXAMPLES = (f"dare-examples not available: DARE-bench's published example tasks, looked for in "
                    f"{DARE_EXAMPLES} (set DARE_EXAMPLES to a folder of them; docs/development.md)")
REG, CLASS = "jacopoferretti_lung-capacity-of-kids_reg", "vishushekhar_pokemonunitedataset_class"
TS = "punyaslokaprusty_covid-19-tracking-in-usa_ts"
TABULAR_EXAMPLES = (REG, CLASS)
needs_sandbox = pytest.mark.skipif(not sandbox.isolation_possible(), reason="no namespaces here (not root, no userns)")


# ---------------------------------------------------------------- records, tables, specs

REF = "local/synthetic"


def build_record(ref: str = REF, **overrides) -> DatasetRecord:
    fields = dict(ref=ref, source="local", slug=ref.replace("/", "_").lower(), title="Synthetic data")
    fields.update(overrides)
    return DatasetRecord(**fields)


def reading(kind: DocumentedReading, text: str, **fields) -> Evidence:
    """A documented outcome's evidence (DatasetRecord.documented_outcomes) as sourcing.rdoc gives it."""
    return Evidence(kind=kind, text=text, **fields)


def build_table(n: int = 200, seed: int = 0, **overrides) -> pd.DataFrame:
    """A normalised, learnable classification table: float, int, categorical and missing-heavy features.

    `overrides` add or replace columns (a callable gets the row count); a value of None drops a column.
    """
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    columns: dict[str, object] = {
        "x": x,
        "visits": rng.integers(0, 40, size=n),
        "colour": rng.choice(["red", "green", "blue"], size=n),
        "sparse": np.where(rng.random(n) < 0.4, np.nan, rng.uniform(-5, 5, size=n)),
        "label": np.where(x + rng.normal(scale=1.0, size=n) > 0, "yes", "no"),
    }
    for name, value in overrides.items():
        if value is None:
            columns.pop(name, None)
        else:
            columns[name] = value(n) if callable(value) else value
    return normalize_table(pd.DataFrame(columns))


# The factories' tables carry deliberately weak or absent signals (a noise target is how a test
# reaches a rejection); the design-time learnability estimate is tested on its own
# (tests/task_design/test_learnable.py), so the other design tests leave it to the MM check.
UNIT_CONFIG = DesignConfig(learnable_margin=None)


# What a sidecar would say of the factories' outcome columns: a target needs evidence (a hint, the
# documentation, or its own description reading as an outcome), so the designed datasets document theirs.
OUTCOME_DESCRIPTIONS = {"label": "The outcome: whether the customer bought.", "price": "Sale price of the item.",
                        "wage": "Hourly wage, in dollars.", "grade": "Final grade of the course."}


def build_spec(table: pd.DataFrame, ref: str = REF, seed: int = 0, config: DesignConfig | None = None,
          **record_overrides) -> TaskSpec:
    """The heuristic designer's spec for `table`, seeded like the pipeline does it; the table's columns
    named in OUTCOME_DESCRIPTIONS are so described unless `column_descriptions` is given."""
    record_overrides.setdefault("column_descriptions", {c: d for c, d in OUTCOME_DESCRIPTIONS.items()
                                                        if c in table.columns})
    return design(build_record(ref, **record_overrides), profile_table(table), table,
                  rng_for(seed, ref, "design"), config or UNIT_CONFIG)


def spec_where(table: pd.DataFrame, accept, ref: str = REF, config: DesignConfig | None = None,
                seeds=range(60), **record_overrides) -> TaskSpec:
    """The first seeded spec satisfying `accept(spec)`. The target follows the evidence, not the seed,
    so when no seed gives the wanted target, each column is then offered as the source's target hint."""
    hints = [record_overrides.pop("target_hint", None)] + (
        [] if "target_hint" in record_overrides else [str(c) for c in table.columns])
    for hint in hints:
        for seed in seeds:
            try:
                spec = build_spec(table, ref=ref, seed=seed, config=config, target_hint=hint, **record_overrides)
            except DatasetRejected:
                break
            if accept(spec):
                return spec
    raise AssertionError("no seed gave a spec with the wanted shape")


def write_task_by_hand(pkg: TaskPackage, root: Path) -> Path:
    """Write a task tree like finalize.layout.write_task, minus the reference run and the guard.

    simulated_pred_local.csv copies the ground truth, which is all check_tabular_task
    needs of it (row ids, no missing values). Used to plant defects cheaply.
    """
    from finalize.layout import question_block, write_data_files

    task_dir = root / pkg.spec.task_dir
    src, verify = task_dir / names.SOURCE_DIR, task_dir / names.VERIFY_DIR
    src.mkdir(parents=True)
    verify.mkdir()
    (src / names.METADATA_TXT).write_text("synthetic\n", encoding="utf-8")
    write_data_files(pkg, src)
    pkg.ground_truth.to_csv(verify / names.GROUND_TRUTH, index=False, lineterminator="\n")
    pkg.ground_truth.to_csv(verify / names.SIMULATED_PRED, index=False, lineterminator="\n")
    write_json(verify / names.ALL_METADATA, {"question": question_block(pkg.spec), "data_info": {}, "meta_data": {}})
    return task_dir


def good_table(n: int = 200, seed: int = 0) -> pd.DataFrame:  # 200: above the 40-row MM validation floor
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    return pd.DataFrame({
        "x": x,
        # every column is learnable from x, so whichever target the seeded designer draws passes
        # the MM-feasibility check (a pure-noise target is rightly rejected there)
        "z": np.clip(np.round(25 + 10 * x + rng.normal(size=n)), 0, 50).astype(int),
        "colour": np.where(x > 0.5, "red", np.where(x < -0.5, "blue", "green")),
        "y": 3 * x + rng.normal(size=n),
    })


# ---------------------------------------------------------------- datasets on disk, built through build_one

def write_local_dataset(folder: Path, name: str, table: pd.DataFrame, source_format: str = "csv", **doc) -> Path:
    """`<name>.csv` (or `.parquet`) and its sidecar `<name>.json` (sourcing/local.py's convention) in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    if source_format == "parquet":  # a format that tells the string "None" from a missing value
        table.to_parquet(folder / f"{name}.parquet", index=False)
    else:
        table.to_csv(folder / f"{name}.csv", index=False)
    write_json(folder / f"{name}.json", doc)
    return folder


def build_local_task(root: Path, name: str, table: pd.DataFrame, file_type: str, seed: int,
                     source_format: str = "csv", **doc) -> Outcome:
    """One local CSV (or parquet) taken through every stage (pipeline.build.build_one) into `root/tasks`,
    in one file format; the Outcome of its first task, which must be ok."""
    data = write_local_dataset(root / f"data_{name}", name, table, source_format, **doc)
    job = BuildJob.make(seed, config=DesignConfig(file_types=(file_type,)))
    outcome = build_one(f"local/{name}", "local", str(data), job, root / "work", root / "tasks")[0]
    assert outcome.ok, f"{outcome.stage}: {outcome.reason}"
    return outcome


def task_folder(root: Path, outcome: Outcome) -> Path:
    """The task folder build_local_task wrote for `outcome`."""
    return root / "tasks" / read_json(Path(outcome.work_dir) / ENTRY_JSON)["file_path"]


def build_checked_task(root: Path, file_type: str, seed: int = 3) -> Path:
    """A learnable synthetic task (target `label`, hinted) in one file format; returns its folder."""
    # The hint picks `label`, the learnable column: the other candidates are noise that the MM
    # feasibility check rightly refuses. 200 rows: above the 40-row MM validation floor.
    outcome = build_local_task(root, "synthetic", build_table(n=200), file_type, seed, title="Synthetic visits",
                               license="CC0-1.0", target_hint="label",
                               column_descriptions={"x": "a standard normal score"})
    return task_folder(root, outcome)


def our_task(tree: Path) -> Path:
    """Our task in a tree that otherwise holds the published examples REG, CLASS and TS."""
    return next(p for p in tree.iterdir() if p.is_dir() and p.name not in (REG, CLASS, TS))


DSAGENT_SEED = 5
# (file type, table seed): three tasks, one per format; the sqlite one has a multi-table train_v1.
DSAGENT_DATASETS = (("csv", 1), ("parquet", 2), ("sqlite", 3))


def build_small_tree(root: Path) -> Path:
    """A small DARE tree (a csv, a parquet and a sqlite task, no Prefect) with its question list."""
    entries = []
    for file_type, table_seed in DSAGENT_DATASETS:
        outcome = build_local_task(root, f"synthetic{table_seed}", build_table(n=160, seed=table_seed), file_type,
                                   DSAGENT_SEED, title=f"Synthetic visits {table_seed}", license="CC0-1.0")
        entries.append(read_json(Path(outcome.work_dir) / ENTRY_JSON))
    write_question_list(root / "tasks", entries)
    return root / "tasks"


def write_datasets(folder: Path, n: int = 4, seed: int = 0) -> list[str]:
    """`n` small datasets (alternately regression and classification, with a target hint) plus
    `d0_copy`, the same table as d0 under another name (sorted after it). Returns the refs written."""
    folder.mkdir(parents=True, exist_ok=True)
    refs = []
    for i in range(n):
        rng = np.random.default_rng(seed * 100 + i)
        x = rng.normal(size=150)
        frame = pd.DataFrame({"x": x, "z": rng.integers(0, 40, size=150),
                              "colour": rng.choice(["red", "green", "blue"], size=150)})
        # learnable but not a one-column lookup: the MM check rejects both pure noise and a leak
        noisy = x + 0.3 * (frame["colour"] == "red") + 0.5 * rng.normal(size=150)
        frame["y"] = 2 * x + rng.normal(size=150) if i % 2 == 0 else np.where(noisy > 0, "high", "low")
        frame.to_csv(folder / f"d{i}.csv", index=False)
        (folder / f"d{i}.json").write_text(json.dumps({"title": f"Data {i}", "target_hint": "y"}), encoding="utf-8")
        refs.append(f"local/d{i}")
    (folder / "d0_copy.csv").write_bytes((folder / "d0.csv").read_bytes())
    return refs


# ---------------------------------------------------------------- hand-written task folders (tree reports, diff)

CC0 = "CC0: Public Domain"
QUESTION_V1 = "Load `train_v1.csv`. Fit a LogisticRegression model with random_state 0 and predict `label`."


def write_task_folder(root: Path, task_dir: str, *, problem_type: str = "classification", target: str = "label",
                      model: str = "LogisticRegression", licence: str | None = CC0, rows: int = 5,
                      features: tuple[str, ...] = ("x", "colour"), truth: list[str] | None = None,
                      question_v1: str = QUESTION_V1, question_v2: str = "Predict `label` as well as you can.",
                      baselines: dict | None = None, mm_baselines: dict | None = None,
                      daregen: dict | None = None) -> dict:
    """A minimal task folder in the DARE layout (csv files, all_metadata.json); returns its question_list entry.
    `daregen` adds keys to its daregen block (target_evidence, excluded_targets, val_rows, ...).

    `truth` gives the ground-truth labels of the val rows (default: `rows` labels cycling a/b).
    """
    src, verify = root / task_dir / names.SOURCE_DIR, root / task_dir / names.VERIFY_DIR
    src.mkdir(parents=True)
    verify.mkdir()
    (src / names.METADATA_TXT).write_text(f"{task_dir}\n", encoding="utf-8")
    header = ",".join((*features, target))
    body = "".join(f"{i}.5,red,{'ab'[i % 2]}\n" for i in range(rows))
    (src / "train_v2.csv").write_text(f"{header}\n{body}", encoding="utf-8")
    (src / "val_v2.csv").write_text(f"row_id,{','.join(features)}\n" + "".join(f"{i},{i}.5,red\n" for i in range(3)),
                                    encoding="utf-8")
    truth = truth if truth is not None else ["a", "b", "a"]
    (verify / names.GROUND_TRUTH).write_text(f"row_id,{target}\n" + "".join(f"{i},{v}\n" for i, v in enumerate(truth)),
                                             encoding="utf-8")
    meta = {
        "question": {"target": [target], "problem_type": problem_type, "model_type": model,
                     "selected_features": list(features), "save_file_type": "csv", "random_state": 0,
                     "expected_ranges": {"x": [0.0, 9.5], "colour": ["red"]},
                     "needed_files_v1": ["train_v1.csv", "val_v1.csv", "metadata.txt"],
                     "needed_files_v2": ["train_v2.csv", "val_v2.csv", "metadata.txt"]},
        "data_info": {"licenseName": licence} if licence is not None else {},
        "meta_data": {"title": task_dir},
        "daregen": {"seed": 0},
    }
    if baselines is not None:  # where time-series tasks record theirs (finalize/timeseries.py)
        meta["question"]["baselines"] = baselines
    if mm_baselines is not None:
        meta["daregen"]["mm_baselines"] = mm_baselines
    meta["daregen"].update(daregen or {})
    (verify / names.ALL_METADATA).write_text(json.dumps(meta, indent=4, sort_keys=True) + "\n", encoding="utf-8")
    return {"file_path": task_dir, "task": problem_type, "question_v1": question_v1, "question_v2": question_v2,
            "needed_files_v1": meta["question"]["needed_files_v1"],
            "needed_files_v2": meta["question"]["needed_files_v2"]}


def write_question_list_by_hand(root: Path, entries: list[dict]) -> None:
    """question_list.json as a foreign tree may write it (indent 4, not pipeline.core.jsonio's layout)."""
    (root / names.QUESTION_LIST).write_text(json.dumps(sorted(entries, key=lambda e: e["file_path"]), indent=4)
                                            + "\n", encoding="utf-8")


# ---------------------------------------------------------------- a relational SQLite database
# A small relational SQLite database for the sqlite source's tests, written from scratch.
#
# Tables (fact table `order`, a SQL keyword):
# - `order`.customer_id -> customers.customer_id   declared FOREIGN KEY
# - `order`.product_id  -> products.id             no declaration: found by name matching only
# - `order`."store key" -> `x"; DROP TABLE t; --`."store key"   declared, hostile table name
# - customers.region_id -> regions.region_id       declared (a two-step join path)
# - `t`: a bystander the hostile name would drop if it were ever spliced into SQL unquoted.
# The hostile table's columns are a keyword (`group`) and a name with quotes and spaces.

HOSTILE_TABLE = 'x"; DROP TABLE t; --'
HOSTILE_COLUMN = 'floor "area"; DROP TABLE t; --'
FACT = "order"


def q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def build_shop_db(path: Path, n_orders: int = 240, seed: int = 0, sidecar: dict | None = None) -> Path:
    """The database at `path`; `sidecar` is written beside it as `<stem>.json` (sourcing/local.py's convention)."""
    rng = np.random.default_rng(seed)
    if sidecar is not None:
        write_json(path.with_suffix(".json"), sidecar)
    path.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(path)
    try:
        con.execute("CREATE TABLE regions (region_id INTEGER PRIMARY KEY, region_name TEXT, climate TEXT)")
        con.executemany("INSERT INTO regions VALUES (?, ?, ?)",
                        [(1, "north", "cold"), (2, "south", "warm"), (3, "east", "mild"), (4, "west", "mild")])
        con.execute("CREATE TABLE customers (customer_id INTEGER PRIMARY KEY, "
                    "region_id INTEGER REFERENCES regions(region_id), segment TEXT, age INTEGER)")
        con.executemany("INSERT INTO customers VALUES (?, ?, ?, ?)", [
            (i, int(rng.integers(1, 5)), str(rng.choice(["retail", "business", "student"])), int(rng.integers(18, 80)))
            for i in range(1, 41)])
        con.execute("CREATE TABLE products (id INTEGER PRIMARY KEY, category TEXT, list_price REAL)")
        con.executemany("INSERT INTO products VALUES (?, ?, ?)", [
            (i, str(rng.choice(["toys", "books", "garden"])), round(float(rng.uniform(2, 80)), 2))
            for i in range(1, 13)])
        con.execute(f"CREATE TABLE {q(HOSTILE_TABLE)} ({q('store key')} INTEGER PRIMARY KEY, {q('group')} TEXT, "
                    f"{q(HOSTILE_COLUMN)} REAL)")
        con.executemany(f"INSERT INTO {q(HOSTILE_TABLE)} VALUES (?, ?, ?)", [
            (i, ["mall", "street", "outlet"][i % 3], float(100 * i + 20)) for i in range(1, 6)])
        con.execute("CREATE TABLE t (x INTEGER)")
        con.execute("INSERT INTO t VALUES (1)")
        con.execute(f"CREATE TABLE {q(FACT)} ({q('order id')} INTEGER PRIMARY KEY, "
                    "customer_id INTEGER REFERENCES customers(customer_id), product_id INTEGER, "
                    f"{q('store key')} INTEGER REFERENCES {q(HOSTILE_TABLE)}({q('store key')}), "
                    f"quantity INTEGER, {q('discount %')} REAL, channel TEXT, returned TEXT)")
        ages = dict(con.execute("SELECT customer_id, age FROM customers").fetchall())
        prices = dict(con.execute("SELECT id, list_price FROM products").fetchall())
        rows = []
        for i in range(1, n_orders + 1):
            cust, prod, store = int(rng.integers(1, 41)), int(rng.integers(1, 13)), int(rng.integers(1, 6))
            qty, disc = int(rng.integers(1, 10)), round(float(rng.uniform(0, 0.5)), 3)
            # `returned` is learnable from the fact and from two dimension tables (age, list_price)
            score = (ages[cust] - 50) / 15 + (prices[prod] - 40) / 20 + (disc - 0.25) * 6 + rng.normal(scale=0.4)
            rows.append((i, cust, prod, store, qty, disc, str(rng.choice(["web", "phone", "shop"])),
                         "yes" if score > 0 else "no"))
        con.executemany(f"INSERT INTO {q(FACT)} VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
        con.commit()
    finally:
        con.close()
    return path


def build_patients_db(path: Path, n: int = 220, seed: int = 0) -> Path:
    """A single-table database, as most SQLite files people hold are: `patients`, with a learnable
    `readmitted` outcome and a `patient_id` primary key (a key, never a feature or a target)."""
    rng = np.random.default_rng(seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(path)
    try:
        con.execute("CREATE TABLE patients (patient_id INTEGER PRIMARY KEY, age INTEGER, bmi REAL, "
                    "smoker TEXT, ward TEXT, stay_days INTEGER, readmitted TEXT)")
        rows = []
        for i in range(1, n + 1):
            age, bmi, smoker = int(rng.integers(20, 90)), round(float(rng.normal(27, 4)), 1), str(rng.choice(["yes", "no"]))
            stay = int(rng.integers(1, 15))
            score = (age - 55) / 12 + (bmi - 27) / 4 + (smoker == "yes") + (stay - 7) / 4 + rng.normal(scale=0.5)
            rows.append((i, age, bmi, smoker, str(rng.choice(["a", "b", "c"])), stay, "yes" if score > 0.5 else "no"))
        con.executemany("INSERT INTO patients VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
        con.commit()
    finally:
        con.close()
    return path


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# ---------------------------------------------------------------- a multi-target task (DARE-bench's target lists)

MULTI_TARGETS = ("size", "shape", "tone")


def write_multi_target_task(root: Path, model_type: str = "LogisticRegression", n: int = 90, seed: int = 0,
                            task_dir: str = "synthetic_multi_class") -> Path:
    """A classification task folder whose `target` lists three columns (MULTI_TARGETS), as 7 of
    DARE-bench's 68 eval classification tasks have: csv source files and all_metadata.json only
    (no instruction, no ground truth); the level `None` of `tone` is a string, not a missing value."""
    rng = np.random.default_rng(seed)
    x, z = rng.normal(size=n), rng.normal(size=n)
    frame = pd.DataFrame({
        names.ROW_ID: np.arange(n), "x": np.round(x, 6), "z": np.round(z, 6),
        "colour": rng.choice(["red", "blue"], size=n),
        "size": np.where(x > 0, "big", "small"), "shape": np.where(z > 0, "round", "square"),
        "tone": np.where(x + z > 0, "None", "loud"),
    })
    src, verify = root / task_dir / names.SOURCE_DIR, root / task_dir / names.VERIFY_DIR
    src.mkdir(parents=True)
    verify.mkdir()
    cut = int(n * 0.7)
    frame.iloc[:cut].drop(columns=names.ROW_ID).to_csv(src / "train_v1_no_err.csv", index=False, lineterminator="\n")
    frame.iloc[cut:].drop(columns=list(MULTI_TARGETS)).to_csv(src / "val_v1.csv", index=False, lineterminator="\n")
    question = {"target": list(MULTI_TARGETS), "problem_type": "classification", "model_type": model_type,
                "selected_features": ["x", "z", "colour"], "numerical_features": ["x", "z"],
                "categorical_features": ["colour"], "save_file_type": "csv", "random_state": 0,
                "imputer_type": "mean",
                "column_type_inference": {"x": "numerical", "z": "numerical", "colour": "categorical"}}
    write_json(verify / names.ALL_METADATA, {"question": question, "data_info": {}, "meta_data": {}})
    return root / task_dir
