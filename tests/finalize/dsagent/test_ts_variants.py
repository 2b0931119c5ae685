"""Time-series XF/CF desktop variants: DARE-bench's published covid task (a CSV series with an entity column)
as the fixture, with forecasting baselines recorded as daregen records them (DARE-bench records none).

The sandboxed build must accept each oracle and reject every perturbation; the evaluator is also exercised
directly on hand-made predictions, for the rules the perturbations do not cover (extra CF rows ignored,
other spellings of the same instant, scores relative to the best baseline)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema
import numpy as np
import pandas as pd
import pytest

from finalize.dsagent import evaluator_template, ts_variants, validate_job
from finalize.dsagent.build import OUT_DIR, SCHEMA_PATH, TASKS_DIR, write_dsagent
from finalize.dsagent.dare_variants import scoring_note
from finalize.dsagent.ts_variants import BAR_OF
from pipeline.core.metrics import SCORING_SENTENCES
from pipeline.core.jsonio import read_json, write_json
from pipeline.core.records import DatasetRejected
from tests.factories import DARE_EXAMPLES, NO_DARE_EXAMPLES, DSAGENT_SEED as SEED, needs_sandbox

EXAMPLES = DARE_EXAMPLES
COVID = "punyaslokaprusty_covid-19-tracking-in-usa_ts"
# As postprocess.timeseries.compute_baselines names them; the best of each variant is the bar.
BASELINES = {"v1/seasonal_naive": 0.2, "v1/Prophet": 0.4, "v2/seasonal_naive": 0.1, "v2/ExponentialSmoothing": 0.3}

pytestmark = pytest.mark.skipif(not (EXAMPLES / COVID).is_dir(), reason=NO_DARE_EXAMPLES)


def _copy_task(root: Path, baselines: dict | None) -> Path:
    tree = root / "tree"
    shutil.copytree(EXAMPLES / COVID, tree / COVID)
    shutil.copyfile(EXAMPLES / "question_list.json", tree / "question_list.json")
    meta_path = tree / COVID / "verify" / "all_metadata.json"
    meta = read_json(meta_path)
    if baselines is not None:
        meta["question"]["baselines"] = baselines
    write_json(meta_path, meta)
    return tree


@pytest.fixture(scope="module")
def ts_tree(tmp_path_factory) -> tuple[Path, dict]:
    tree = _copy_task(tmp_path_factory.mktemp("dsagent_ts"), BASELINES)
    return tree, write_dsagent(tree, SEED)


def _entry() -> dict:
    return next(e for e in read_json(EXAMPLES / "question_list.json") if e["file_path"] == COVID)


# ----------------------------------------------------------------------------- the sandboxed build


@needs_sandbox
def test_xf_and_cf_are_published_with_oracle_accepted_and_every_perturbation_rejected(ts_tree) -> None:
    tree, report = ts_tree
    validation = read_json(tree / OUT_DIR / "validation.json")
    for kind, perturbations in (("xf", ts_variants.XF_PERTURBATIONS), ("cf", ts_variants.CF_PERTURBATIONS)):
        record = validation[f"{COVID}__{kind}"]
        assert record["published"], record["reason"]
        assert record["oracle"] >= 0.95
        assert sorted(record["perturbations"]) == sorted(perturbations)
        assert all(score != "n/a" and score < 0.95 for score in record["perturbations"].values()), record
    assert not [r for r in report["rejections"] if r["task"].startswith(COVID + "/")
                and r["task"].endswith(("/xf", "/cf"))]


@needs_sandbox
def test_ts_configs_validate_and_never_place_hidden_files_in_the_vm(ts_tree) -> None:
    tree, _ = ts_tree
    schema = read_json(SCHEMA_PATH)
    entry = _entry()
    for kind, question_key, val_file in (("xf", "question_v1", "val_v1.csv"), ("cf", "question_v2", "val_v2.csv")):
        folder = tree / OUT_DIR / TASKS_DIR / f"{COVID}__{kind}"
        cfg = read_json(folder / "config.json")
        jsonschema.validate(cfg, schema, cls=jsonschema.Draft202012Validator)
        assert cfg["category"] == "modelling" and cfg["daregen"]["variant"] == kind
        vm = f"/home/user/dsagent/{COVID}__{kind}"
        # the task's own text, then how prediction.csv is scored
        expected = read_json(folder / "expected.json")
        assert cfg["instruction"].endswith(entry[question_key] + scoring_note(expected["check"], entry[question_key],
                                                                             BAR_OF))
        # DARE-bench's own text names no metric: the note does, and the bar the score is relative to
        assert SCORING_SENTENCES["r2"] in cfg["instruction"] and BAR_OF in cfg["instruction"]
        assert all(f"`{c}`" in cfg["instruction"].rsplit("Columns:", 1)[1]
                   for c in expected["check"]["id_columns"] + expected["check"]["targets"])
        assert f"`{vm}/prediction.csv`" in cfg["instruction"]
        placed = next(s for s in cfg["config"] if s["type"] == "download")["parameters"]["files"]
        assert sorted(f["path"].rsplit("/", 1)[1] for f in placed) == sorted(["metadata.txt", "train.csv", val_file])
        assert not any("verify" in f["url"] or "_hidden" in f["path"] for f in placed)
        expected = read_json(folder / "expected.json")
        # The bar is the best recorded baseline of the variant, not the ground truth's own R² of 1.
        assert expected["check"]["reference_metric"] == {"xf": 0.4, "cf": 0.3}[kind]
        truth = "ground_truth_v1.csv" if kind == "xf" else "ground_truth_v2.csv"
        assert (folder / "reference.csv").read_bytes() == (tree / COVID / "verify" / truth).read_bytes()
    cf = read_json(tree / OUT_DIR / TASKS_DIR / f"{COVID}__cf" / "expected.json")["check"]
    assert cf["id_columns"] == ["date", "states"] and cf["time_format"] == "%Y%m%d" and cf["ignore_extra_rows"]


def test_without_a_baseline_above_the_floor_the_variants_are_dropped_with_the_reason(tmp_path) -> None:
    task_dir = _copy_task(tmp_path, {"v1/seasonal_naive": 0.0, "v2/seasonal_naive": 0.01}) / COVID
    question = read_json(task_dir / "verify" / "all_metadata.json")["question"]
    tasks, rejected = ts_variants.ts_variants(task_dir, question, _entry())
    assert tasks == []
    assert "best v1 baseline R² is 0" in rejected[f"{COVID}/xf"]
    assert "best v2 baseline R² is 0.01" in rejected[f"{COVID}/cf"]
    with pytest.raises(DatasetRejected, match="no v1 baseline"):
        ts_variants.best_baseline({"baselines": {"v2/x": 0.5}}, "v1")
    assert ts_variants.best_baseline({"baselines": BASELINES}, "v2") == 0.3


# ----------------------------------------------------------------------------- the evaluator itself


def _score(tmp_path: Path, pred: pd.DataFrame, ref: pd.DataFrame, check: dict) -> float:
    pred.to_csv(tmp_path / "prediction.csv", index=False)
    ref.to_csv(tmp_path / "reference.csv", index=False)
    return evaluator_template.evaluate(tmp_path, {"check": {**check, "reference_file": "reference.csv"}}, tmp_path)


CF_CHECK = {"kind": "prediction", "file": "prediction.csv", "metric": "r2", "targets": ["y"],
            "id_columns": ["date", "shop"], "time_column": "date", "time_format": "%Y-%m-%d",
            "ignore_extra_rows": True, "reference_metric": 0.5}


def _cf_reference() -> pd.DataFrame:
    dates = [f"2021-03-{d:02d}" for d in range(1, 11)]
    return pd.DataFrame({"date": dates * 2, "shop": ["a"] * 10 + ["b"] * 10,
                         "y": np.r_[np.arange(10.0), np.arange(10.0) * 2 + 5]})


def test_cf_ignores_extra_rows_and_reads_times_with_the_tasks_format(tmp_path) -> None:
    ref = _cf_reference()
    extra = pd.DataFrame({"date": ["2021-04-01"], "shop": ["a"], "y": [1e6]})
    shuffled = pd.concat([ref, extra]).sample(frac=1.0, random_state=0)
    assert _score(tmp_path, shuffled, ref, CF_CHECK) == 1.0
    # The same instants in another text format, or a missing identifier column, score 0.
    other = ref.assign(date=pd.to_datetime(ref["date"]).dt.strftime("%d/%m/%Y"))
    assert _score(tmp_path, other, ref, CF_CHECK) == 0.0
    assert _score(tmp_path, ref.drop(columns=["shop"]), ref, CF_CHECK) == 0.0
    # A key of the ground truth with no prediction scores 0, as DARE-bench's CF does.
    assert _score(tmp_path, ref.iloc[1:], ref, CF_CHECK) == 0.0


def test_cf_compares_offsets_as_instants(tmp_path) -> None:
    ref = pd.DataFrame({"date": ["2020-08-20 00:00:00-04:00", "2020-08-21 00:00:00-04:00",
                                 "2020-08-22 00:00:00-04:00"], "y": [1.0, 2.0, 4.0]})
    check = {**CF_CHECK, "id_columns": ["date"], "time_format": "%Y-%m-%d %H:%M:%S%:z"}
    same_instants = ref.assign(date=["2020-08-20 04:00:00+00:00", "2020-08-21 04:00:00+00:00",
                                     "2020-08-22 04:00:00+00:00"])
    assert _score(tmp_path, same_instants, ref, check) == 1.0
    assert evaluator_template.parse_time("1998 Q3", "%Y Q%q").month == 7


def test_score_is_r2_relative_to_the_best_baseline(tmp_path) -> None:
    ref = pd.DataFrame({"row_id": range(1, 101), "y": np.sin(np.arange(100) / 7.0) * 10})
    noise = np.random.default_rng(0).normal(0.0, 1.0, 100)
    check = {"kind": "prediction", "file": "prediction.csv", "metric": "r2", "targets": ["y"],
             "id_columns": ["row_id"], "time_ordered": True}
    for scale in (2.0, 4.0, 6.0):
        pred = ref.assign(y=ref["y"] + scale * noise)
        r2 = 1 - ((ref["y"] - pred["y"]) ** 2).sum() / ((ref["y"] - ref["y"].mean()) ** 2).sum()
        for bar in (0.3, 0.6):
            got = _score(tmp_path, pred, ref, {**check, "reference_metric": bar})
            assert got == pytest.approx(min(1.0, max(0.0, r2) / bar), abs=1e-6)


def test_perturbations_of_a_forecast(tmp_path) -> None:
    """Shifting a smooth forecast's ids by one row barely moves R², so time-ordered ids are permuted (fixed
    seed); the time column is rewritten in another format; an identifier column is dropped."""
    ref = pd.DataFrame({"row_id": range(1, 41), "y": np.sin(np.arange(40) / 6.0)})
    check = {"kind": "prediction", "file": "prediction.csv", "metric": "r2", "targets": ["y"],
             "id_columns": ["row_id"], "time_ordered": True, "reference_metric": 0.4}
    ref.to_csv(tmp_path / "prediction.csv", index=False)
    validate_job.perturb(tmp_path, "prediction.csv", "shuffled_ids", check)
    got = pd.read_csv(tmp_path / "prediction.csv")
    assert sorted(got["row_id"]) == list(range(1, 41)) and got["row_id"].tolist() != list(range(1, 41))
    assert got["y"].tolist() == ref["y"].tolist()  # the values stay, the ids they belong to move
    ref.to_csv(tmp_path / "reference.csv", index=False)
    assert evaluator_template.evaluate(tmp_path, {"check": {**check, "reference_file": "reference.csv"}},
                                       tmp_path) < 0.95

    cf = _cf_reference()
    cf.to_csv(tmp_path / "prediction.csv", index=False)
    validate_job.perturb(tmp_path, "prediction.csv", "time_format", CF_CHECK)
    assert pd.read_csv(tmp_path / "prediction.csv")["date"].iloc[0] == "2021-03-01T00:00:00"
    cf.to_csv(tmp_path / "prediction.csv", index=False)
    validate_job.perturb(tmp_path, "prediction.csv", "missing_id_column", CF_CHECK)
    assert "date" not in pd.read_csv(tmp_path / "prediction.csv").columns


def test_cf_oracle_embeds_the_reference_and_reads_only_declared_hidden_inputs(tmp_path) -> None:
    task_dir = _copy_task(tmp_path, BASELINES) / COVID
    question = read_json(task_dir / "verify" / "all_metadata.json")["question"]
    tasks, rejected = ts_variants.ts_variants(task_dir, question, _entry())
    assert rejected == {} and [t.kind for t in tasks] == ["xf", "cf"]
    xf, cf = tasks
    assert "def ground_truth_v2(" in cf.oracle and "from __future__" not in cf.oracle
    assert set(cf.oracle_inputs) == {"_hidden/val_v1.csv", "_hidden/ground_truth_v1.csv"}
    assert set(xf.oracle_inputs) == {"_hidden/ground_truth_v1.csv"}
    assert not set(cf.inputs) & set(cf.oracle_inputs)
    json.dumps(cf.expected)  # expected.json is plain JSON


@needs_sandbox
def test_a_daregen_built_resampled_task_gets_validated_xf_and_cf(tmp_path) -> None:
    """daregen's own writer: a monthly-resampled mean over irregular daily events, so the CF oracle runs the
    resampling reference (bins, bfill/ffill, `time_format` text) and the evaluator aligns on parsed month
    ends. The baselines are set here, because what is under test is the oracle and the evaluator."""
    from finalize.layout import BuildContext
    from finalize.timeseries import write_ts_task
    from pipeline.core.seeding import rng_for
    from postprocess.timeseries import build_ts_package
    from sourcing.normalize import normalize_table
    from task_design.profile import profile_table
    from task_design.timeseries import design_ts
    from tests.factories import build_record

    rng = np.random.default_rng(1)
    days = sorted(f"{y}-{m:02d}-{d:02d}" for y in range(2008, 2014) for m in range(1, 13) for d in (3, 3, 19)
                  if not (m == 6 and y == 2013))
    # Six years clear the size floor (40 monthly training points); a rising trend over noise keeps a baseline
    # above the mean, since pure noise is rejected as unforecastable.
    months = np.array([12 * (int(d[:4]) - 2008) + int(d[5:7]) for d in days])
    price = 10 + 0.2 * months + rng.normal(0, 0.5, len(days))
    table = normalize_table(pd.DataFrame({"date": days, "price": price}))
    # pooled over the days with two events, a series only of a documented outcome: the source's hint
    rec = build_record(kind_hint="time_series", column_descriptions={}, target_hint="price")
    spec = design_ts(rec, profile_table(table), table, rng_for(0, rec.ref, "design"))
    pkg = build_ts_package(rec, spec, table, rng_for(0, rec.ref, "postprocess"))
    tree = tmp_path / "tree"
    entry = write_ts_task(pkg, tree, BuildContext(seed=0, design_digest="d"))
    write_json(tree / "question_list.json", [entry])
    meta_path = tree / spec.task_dir / "verify" / "all_metadata.json"
    meta = read_json(meta_path)
    assert meta["question"]["is_resampled"] and meta["question"]["resample_rule"] == "1M"
    meta["question"]["baselines"] = BASELINES
    write_json(meta_path, meta)
    write_dsagent(tree, SEED)
    validation = read_json(tree / OUT_DIR / "validation.json")
    for kind in ("xf", "cf"):
        record = validation[f"{spec.task_dir}__{kind}"]
        assert record["published"] and record["oracle"] == 1.0, record
        assert all(score != "n/a" and score < 0.95 for score in record["perturbations"].values()), record


@needs_sandbox
def test_ts_desktop_output_is_byte_identical_across_builds(ts_tree, tmp_path) -> None:
    first, _ = ts_tree
    second = _copy_task(tmp_path, BASELINES)
    write_dsagent(second, SEED)
    files = lambda root: {p.relative_to(root / OUT_DIR).as_posix(): p.read_bytes()  # noqa: E731
                          for p in sorted((root / OUT_DIR).rglob("*")) if p.is_file()}
    a, b = files(first), files(second)
    assert sorted(a) == sorted(b) and [k for k in a if a[k] != b[k]] == []
    assert any(k.endswith("__cf/oracle.py") for k in a)
