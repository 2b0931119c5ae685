"""The gates after the choice refuse a target that is a ratio of two of its columns, and drop a column that
restates the target (per unit of another column, as its change from another column, as an index computed from
it) and a follow-up time beside a vital status; a column merely related to the target stays a feature. Each
decision names its rule id."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeline.core.records import DatasetRejected
from pipeline.core.seeding import rng_for
from sourcing.normalize import normalize_table
from task_design.heuristic import design
from task_design.profile import profile_table
from task_design.restated import (CHANGE_RULE, INDEX_RULE, RATE_OF_TARGET, RATE_RULE, RATIO_RULE, RATIO_TARGET,
                                  ratio_terms, restated_columns)
from tests.factories import UNIT_CONFIG, build_record

N = 400


def _design(table: pd.DataFrame, **doc):
    table = normalize_table(table)
    rec = build_record(**doc)
    return design(rec, profile_table(table), table, rng_for(0, rec.ref, "design"), UNIT_CONFIG)


def _crops(seed: int = 0) -> pd.DataFrame:
    """Crop rows as the Kaggle crop-yield table has them: `Yield` is `Production` / `Area`, printed rounded."""
    rng = np.random.default_rng(seed)
    area = np.round(rng.lognormal(8, 1.5, N))
    rain = rng.normal(1400, 300, N).round(1)
    fertilizer = np.round(area * rng.uniform(80, 160, N), 2)
    yield_ = np.exp(rng.normal(0, 0.5, N)) * (rain / 1400)
    production = np.round(area * yield_)
    return pd.DataFrame({"Crop": rng.choice(["Rice", "Wheat", "Maize", "Jute"], N), "Area": area,
                         "Production": production, "Annual_Rainfall": rain, "Fertilizer": fertilizer,
                         "Yield": np.round(production / area, 4)})


def test_a_target_that_is_a_ratio_of_two_columns_loses_both_terms() -> None:
    crops = _crops()
    terms = ratio_terms(crops, "Yield", [c for c in crops.columns if c != "Yield"])
    assert {c: (r.code, r.rule_id) for c, r in terms.items()} == {"Production": (RATIO_TARGET, RATIO_RULE),
                                                                  "Area": (RATIO_TARGET, RATIO_RULE)}
    assert "'Production' / 'Area'" in terms["Area"].detail
    # Production is no ratio of two columns: a product, whose pair the identity screen settles
    assert ratio_terms(crops, "Production", [c for c in crops.columns if c != "Production"]) == {}
    # through the designer: Yield stated as the target keeps neither term (the identity screen alone dropped
    # Production and kept Area, the ratio's scale)
    spec = _design(crops, title="Crop yields", description="The target variable is Yield.")
    assert spec.target == ("Yield",)
    assert {"Production", "Area"} <= set(spec.excluded_features) and "Area" not in spec.related_features


def test_a_column_per_unit_of_another_and_a_change_from_another_restate_the_target() -> None:
    """gt/towny: `density_2021` is the population per km², `pop_change_2016_2021_pct` its change since 2016."""
    rng = np.random.default_rng(1)
    area = np.round(rng.lognormal(5, 1.2, N), 2)
    pop_2016 = np.round(rng.lognormal(8, 1.3, N))
    pop_2021 = np.round(pop_2016 * rng.normal(1.04, 0.05, N))
    towns = pd.DataFrame({"land_area_km2": area, "population_2016": pop_2016, "population_2021": pop_2021,
                          "density_2021": np.round(pop_2021 / area, 2),
                          "pop_change_2016_2021_pct": np.round(pop_2021 / pop_2016 - 1, 4),
                          "latitude": rng.uniform(42, 50, N)})
    # as the design meets them: `land_area_km2` dropped by the identity screen (it computes the target with the
    # density), `population_2016` by the leak screen
    kept = ["density_2021", "pop_change_2016_2021_pct", "latitude"]
    record = build_record(column_descriptions={"land_area_km2": "The total area in square kilometers."})
    drops = restated_columns(record, towns, "population_2021", kept)
    assert {c: r.rule_id for c, r in drops.items()} == {"density_2021": RATE_RULE,
                                                               "pop_change_2016_2021_pct": CHANGE_RULE}
    assert all(r.code == RATE_OF_TARGET for r in drops.values())
    # with the area kept, density and area compute the target together: the identity screen's pair, not this one's
    assert restated_columns(record, towns, "population_2021", [*kept, "land_area_km2", "population_2016"]) == {}
    # the area is the population over the density too, but no quantity per unit: it stays
    assert restated_columns(record, towns, "population_2021", ["land_area_km2", "latitude"]) == {}


def _sub_index(c: np.ndarray, breaks: list[tuple[float, float, float, float]]) -> np.ndarray:
    """India's AQI sub-index: linear between the breakpoints (concentration low/high -> index low/high)."""
    out = np.zeros_like(c)
    for lo, hi, ilo, ihi in breaks:
        inside = (c >= lo) & (c <= hi)
        out[inside] = ilo + (c[inside] - lo) * (ihi - ilo) / (hi - lo)
    return np.round(out)


def test_an_index_computed_from_the_target_is_dropped_and_a_related_column_is_not() -> None:
    """An air quality index is the largest of its pollutants' sub-indices: where PM2.5 is the worst, the AQI
    is PM2.5's sub-index; a noisy column that rises with PM2.5 is no index of it."""
    rng = np.random.default_rng(2)
    pm25 = np.round(rng.lognormal(3.8, 0.6, N).clip(1, 250), 1)
    pm10 = np.round((pm25 * rng.uniform(1.0, 2.2, N)).clip(1, 430), 1)
    no2 = np.round(rng.lognormal(3.0, 0.5, N).clip(1, 280), 1)
    pm25_index = _sub_index(pm25, [(0, 30, 0, 50), (30, 60, 51, 100), (60, 90, 101, 200), (90, 120, 201, 300),
                                   (120, 250, 301, 400)])
    pm10_index = _sub_index(pm10, [(0, 50, 0, 50), (50, 100, 51, 100), (100, 250, 101, 200), (250, 350, 201, 300),
                                   (350, 430, 301, 400)])
    no2_index = _sub_index(no2, [(0, 40, 0, 50), (40, 80, 51, 100), (80, 180, 101, 200), (180, 280, 201, 300)])
    air = pd.DataFrame({"PM2.5": pm25, "PM10": pm10, "NO2": no2,
                        "AQI": np.maximum.reduce([pm25_index, pm10_index, no2_index]),
                        "visibility_km": np.round(20 - 0.05 * pm25 + rng.normal(0, 2, N), 2)})
    drops = restated_columns(build_record(), air, "PM2.5", [c for c in air.columns if c != "PM2.5"])
    assert {c: r.rule_id for c, r in drops.items()} == {"AQI": INDEX_RULE}


def test_a_count_piled_at_zero_is_no_index_of_the_target() -> None:
    rng = np.random.default_rng(3)
    y = rng.normal(50, 10, N)
    frame = pd.DataFrame({"y": y, "visits": np.where(rng.random(N) < 0.6, 0, rng.poisson(3, N) + (y > 55)),
                          "x": y + rng.normal(0, 8, N)})
    assert restated_columns(build_record(), frame, "y", ["visits", "x"]) == {}


def test_a_follow_up_time_is_no_feature_of_a_vital_status() -> None:
    """SEER's breast cancer table: `Survival Months` beside `Status` (Alive/Dead), among other statuses
    (`Estrogen Status`): a survival study, refused as censored rather than a task that reads the status off
    the follow-up time."""
    rng = np.random.default_rng(4)
    size = rng.integers(1, 100, N)
    dead = rng.random(N) < 0.05 + 0.004 * size
    seer = pd.DataFrame({"Age": rng.integers(30, 70, N), "Tumor Size": size,
                         "Estrogen Status": rng.choice(["Positive", "Negative"], N),
                         "Progesterone Status": rng.choice(["Positive", "Negative"], N),
                         "Regional Node Examined": rng.integers(1, 40, N),
                         "Survival Months": np.where(dead, rng.integers(1, 60, N), rng.integers(40, 107, N)),
                         "Status": np.where(dead, "Dead", "Alive")})
    with pytest.raises(DatasetRejected, match="censored duration 'Survival Months'"):
        _design(seer, title="Breast Cancer (SEER)", description="Female breast cancer patients, 2006-2010.")


def test_an_age_at_the_first_survey_is_no_follow_up_time_of_a_vital_status() -> None:
    """mosaicData/Whickham: `outcome` (Alive/Dead twenty years later) beside `smoker` and `age`, "age (in years)
    at the time of the first survey": a baseline covariate, not the time its status censors."""
    rng = np.random.default_rng(5)
    age = rng.integers(18, 85, N)
    smoker = rng.choice(["Yes", "No"], N)
    dead = rng.random(N) < (age - 18) / 80
    table = pd.DataFrame({"outcome": np.where(dead, "Dead", "Alive"), "smoker": smoker, "age": age})
    spec = _design(table, title="Data from the Whickham survey",
                   column_descriptions={"outcome": "survival status after 20 years: a factor with levels Alive Dead",
                                        "smoker": "smoking status at baseline: a factor with levels No Yes",
                                        "age": "age (in years) at the time of the first survey"})
    assert spec.target == ("outcome",) and "age" in spec.related_features
