"""Readings of the documentation that name an outcome the ranked fallback missed, each from a real help page:
a measure taken after the treatment beside its pre-treatment twin (mediation/jobs' `depress2`), the column a
dataset is named after (wooldridge/return's `return` above `salary`), an outcome recorded only for some units
(carData/SLID's `wages`, missing for those not working), and an undescribed `death` (causaldata/nhefs)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeline.core.records import DatasetRejected
from pipeline.core.seeding import rng_for
from sourcing.normalize import normalize_table
from task_design.config import DesignConfig
from task_design.heuristic import design_frame, ranked_targets, try_targets
from task_design.profile import profile_table
from task_design.targets import has_evidence, post_treatment_twin, rank_targets
from tests.factories import build_record, build_spec

N = 200


def _ranked(columns: dict, **record):
    table = normalize_table(pd.DataFrame(columns))
    rec, profile = build_record(**record), profile_table(table)
    frame = design_frame(rec, profile, table, DesignConfig(min_rows=3, min_mm_val_rows=1))
    return ranked_targets(rec, profile, frame, list(frame.problem_types), rng_for(0, rec.ref, "design")), frame


def _jobs(n: int = N) -> tuple[dict, dict]:
    rng = np.random.default_rng(7)
    before = rng.normal(2, 0.5, n)
    cols = {"treat": rng.choice([0, 1], n), "age": rng.integers(18, 65, n).astype(float),
            "job_seek": rng.normal(3, 1, n), "depress1": before,
            "depress2": 0.6 * before + rng.normal(0, 0.3, n)}
    docs = {"treat": "Indicator variable for whether participant was randomly selected for the training program.",
            "age": "Age in years.", "job_seek": "A continuous scale measuring job-search self-efficacy.",
            "depress1": "Measure of depressive symptoms pre-treatment.",
            "depress2": "Measure of depressive symptoms post-treatment."}
    return cols, docs


def test_a_measure_after_the_treatment_beside_its_pre_treatment_twin_is_the_outcome() -> None:
    cols, docs = _jobs()
    ranked, frame = _ranked(cols, column_descriptions=docs, title="JOBS II data")
    assert frame.roles["depress1"].role == "covariate"  # the baseline, as task_design.roles reads it
    first = ranked[0]
    assert (first.column, first.kind) == ("depress2", "outcome_description") and "'depress1'" in first.evidence
    assert post_treatment_twin("depress2", build_record(column_descriptions=docs)) == "depress1"


def test_post_treatment_wording_alone_or_beside_another_measure_is_no_reading() -> None:
    # Without the same measure before the treatment, "post-treatment" is the design's wording, not the outcome's;
    # a pre-treatment column of another measure is no twin.
    cols, docs = _jobs()
    alone = {**docs, "depress1": "Level of economic hardship pre-treatment."}
    ranked, _ = _ranked(cols, column_descriptions=alone, title="JOBS II data")
    assert not any(has_evidence(r) for r in ranked)
    assert post_treatment_twin("depress2", build_record(column_descriptions=alone)) is None


def test_the_column_a_dataset_is_named_after_ranks_above_a_higher_scoring_word() -> None:
    # wooldridge/return: `salary` ("salary, 1990") scores higher by its word, but the dataset is "return".
    rng = np.random.default_rng(3)
    cols = {"return": rng.normal(size=N), "salary": rng.normal(900, 200, N), "sales": rng.normal(size=N),
            "roe": rng.normal(size=N)}
    docs = {"return": "cumulative return, 1990-1994", "salary": "salary, 1990 (thousands)",
            "sales": "firm sales, 1990", "roe": "return on equity, 1990"}
    ranked, _ = _ranked(cols, column_descriptions=docs, title="return")
    assert ranked[0].column == "return" and has_evidence(ranked[0])
    assert ranked[1].column == "salary"  # still an outcome reading, tried after it
    # Under another title the word decides, as before.
    other, _ = _ranked(cols, column_descriptions=docs, title="CEO pay")
    assert other[0].column == "salary"


def _wages_table(n: int = 400, missing: float = 0.44) -> pd.DataFrame:
    rng = np.random.default_rng(11)
    education = rng.integers(8, 20, n).astype(float)
    age = rng.integers(18, 65, n).astype(float)
    wages = 2 + 0.8 * education + 0.1 * age + rng.normal(0, 1, n)
    wages[rng.random(n) < missing] = np.nan
    return pd.DataFrame({"wages": wages, "education": education, "age": age,
                         "language": rng.choice(["English", "French", "Other"], n)})


SLID_DOCS = {"wages": "Composite hourly wage rate from all jobs.", "education": "Number of years of schooling.",
             "age": "in years.", "language": "A factor with levels: English, French, Other."}


def test_an_outcome_missing_for_many_units_is_a_target_with_its_own_outcome_reading() -> None:
    table = _wages_table()
    assert table["wages"].isna().mean() > DesignConfig().max_target_missing
    spec = build_spec(table, config=DesignConfig(), column_descriptions=SLID_DOCS,
                      title="Survey of Labour and Income Dynamics")
    assert spec.target == ("wages",) and spec.target_evidence_kind == "outcome_description"


def test_a_sparse_column_without_that_evidence_is_no_target_and_changes_no_ranking() -> None:
    table = _wages_table().rename(columns={"wages": "amount"})
    undescribed = {**{c: d for c, d in SLID_DOCS.items() if c != "wages"}, "amount": "hourly figure from all jobs."}
    with pytest.raises(DatasetRejected, match="no target with evidence"):
        build_spec(table, config=DesignConfig(), column_descriptions=undescribed, title="Survey of Labour")
    # The ranking, and the draws it takes, are those of the other columns alone.
    rec, profile = build_record(column_descriptions=undescribed, title="Survey of Labour"), profile_table(table)
    frame = design_frame(rec, profile, table, DesignConfig())
    assert set(frame.sparse_targets) == {"amount"}
    rng_a, rng_b = rng_for(0, rec.ref, "design"), rng_for(0, rec.ref, "design")
    ranked = ranked_targets(rec, profile, frame, list(frame.problem_types), rng_a)
    plain = rank_targets(rec, profile, frame.roles, [c for c in frame.problem_types if c != "amount"], rng_b)
    assert ranked == plain and rng_a.random() == rng_b.random()
    # Its exclusion reads as it always did: how much it misses.
    tried = pytest.raises(DatasetRejected)
    rng = rng_for(0, rec.ref, "design")
    with tried:
        try_targets(rec, profile, table, rng, DesignConfig(), frame, ranked)
    spec = build_spec(table.assign(label=(table["education"] > 13).map({True: "yes", False: "no"})),
                      config=DesignConfig(), column_descriptions={**undescribed, "label": "The outcome"},
                      title="Survey of Labour")
    assert spec.target == ("label",) and spec.excluded_targets["amount"].endswith("% missing")
    # Beyond max_evidenced_target_missing, no evidence makes it a candidate.
    sparser = _wages_table(missing=0.7).rename(columns={"wages": "amount"})
    frame = design_frame(rec, profile_table(sparser), sparser, DesignConfig())
    assert "amount" not in frame.problem_types


def test_an_undescribed_death_column_reads_as_an_outcome_by_its_name() -> None:
    rng = np.random.default_rng(5)
    cols = {"age": rng.integers(25, 75, N).astype(float), "smokeintensity": rng.integers(1, 60, N).astype(float),
            "death": rng.choice([0, 1], N), "sbp": rng.normal(130, 15, N)}
    ranked, _ = _ranked(cols, column_descriptions={}, title="NHEFS follow-up study")
    first = next(r for r in ranked if has_evidence(r))
    assert (first.column, first.kind) == ("death", "outcome_name")


def test_the_moment_of_a_diagnosis_is_no_outcome_reading_and_the_diagnosis_itself_is() -> None:
    # boot/aids: counts of reported cases cross-classified by the quarter of diagnosis and the reporting delay;
    # `delay`, "the time delay between diagnosis and reporting", is a factor of the table, not its outcome.
    rng = np.random.default_rng(3)
    cols = {"delay": rng.choice([0.0, 2.0, 5.0, 8.0, 11.0, 14.0], N),
            "y": rng.poisson(20, N).astype(float), "region": rng.choice(["a", "b", "c"], N)}
    docs = {"delay": "The time delay (in months) between diagnosis and reporting.",
            "y": "The number of AIDS cases reported.", "region": "The health region."}
    ranked, _ = _ranked(cols, column_descriptions=docs, title="Delay in AIDS Reporting in England and Wales")
    by_column = {r.column: r for r in ranked}
    assert "says 'diagnos'" not in by_column["delay"].evidence
    assert ranked[0].column == "y"
    for anchor in ("Age at diagnosis.", "Years since diagnosis.", "Date of diagnosis.", "Time from diagnosis to death."):
        ranked, _ = _ranked(cols, column_descriptions={**docs, "delay": anchor}, title="Cancer registry")
        assert "says 'diagnos'" not in next(r for r in ranked if r.column == "delay").evidence
    ranked, _ = _ranked({**cols, "dx": rng.choice(["benign", "malignant"], N)},
                        column_descriptions={**docs, "dx": "Final diagnosis: benign or malignant."}, title="Biopsies")
    assert "says 'diagnos'" in next(r for r in ranked if r.column == "dx").evidence
