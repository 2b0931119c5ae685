"""Time-ordered split, resampled CF grid and statsmodels baselines for a time-series task.

build_ts_package(record, spec, table, rng) -> TimeSeriesPackage, or DatasetRejected.
Nothing here is random except which CF keys are held out of val_v2 and their
order (drawn from `rng`); the split itself is by time, never random:
`prediction_starting_time` is the time point at `train_test_ratio` of the
distinct time points (snapped to the start of its bin when resampled); per
entity, train is everything before it and val everything from it on.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from pipeline.core.ts_reference import format_times, ground_truth_v2, joined_keys, parse_times, resampled_frame, round_trips
from pipeline.core import names
from pipeline.core.metrics import UnscorablePrediction, metric_for
from pipeline.core.records import DatasetRecord, DatasetRejected, TimeSeriesSpec
from task_design.config import DesignConfig
from task_design.timeseries import FALLBACK_RATIOS, series_floor_problem, time_text

FRAME_STEMS = (names.TS_TRAIN, names.VAL_V1, names.VAL_V2, names.TS_GROUND_TRUTH_V1, names.TS_GROUND_TRUTH_V2)
NAIVE_SOLVES = 0.99  # R² of the seasonal-naive CF baseline at which the task is too easy
# A later split is tried only after the design's failed, so its baselines are a second look at the
# same series, on a shorter horizon where chance fits better: on 60 white-noise series of 96 monthly
# points, a damped trend scored R² >= 0.2 at some later split for 2 and >= 0.3 for 1 (seed 12 of
# tests/postprocess/test_timeseries.py reaches 0.24 at 0.9). A rescued split must show a real signal.
RESCUE_R2 = 0.3
MAX_FITTED_ENTITIES = 25  # fitted baselines per task; further entities fall back to the naive forecast
MAX_FIT_LENGTH = 240  # most recent points a baseline model is fitted on
MAX_ETS_SEASON = 52  # a weekly series's yearly season (causaldata/avocado); hourly data has 24
PERIOD_STARTS = {"1M": "M", "1Q": "Q", "1Y": "Y"}


@dataclass(frozen=True)
class TimeSeriesPackage:
    record: DatasetRecord
    spec: TimeSeriesSpec
    frames: dict[str, pd.DataFrame]  # by stem: train, val_v1, val_v2, ground_truth_v1, ground_truth_v2
    prediction_starting_time: str
    baselines: dict[str, float]
    n_entities: int


def reference_question(spec: TimeSeriesSpec) -> dict:
    """The all_metadata `question` keys the reference reads."""
    return {"target": list(spec.target), "time_column": spec.time_column, "time_format": spec.time_format,
            "is_resampled": spec.is_resampled, "resample_rule": spec.resample_rule,
            "resample_aggregation": spec.resample_aggregation, "imputer_type": spec.imputer_type}


def series_rows(table: pd.DataFrame, spec: TimeSeriesSpec) -> tuple[pd.DataFrame, pd.Series]:
    """The source rows with the time column as text (rows without a time dropped), and their timestamps."""
    text = time_text(table, spec.model_dump())
    # Exogenous leaks (bounds or transforms of the target) leave every file, not just the feature list.
    frame = table.drop(columns=list(spec.dropped_columns)).assign(**{spec.time_column: text})[text.notna()]
    bad = [t for t in frame[spec.time_column].unique().tolist() if not round_trips(t, spec.time_format)]
    if bad:
        raise DatasetRejected(f"timestamps do not round-trip through {spec.time_format!r}, e.g. {bad[0]!r}",
                              "ts_timestamps_round_trip")
    times = parse_times(frame[spec.time_column], spec.time_format)
    if spec.max_rows and len(frame) > spec.max_rows:
        cut = times.sort_values(kind="stable").iloc[-spec.max_rows]
        keep = times >= cut
        frame, times = frame[keep], times[keep]
    return frame, times


def split_time(times: pd.Series, spec: TimeSeriesSpec) -> pd.Timestamp:
    distinct = np.sort(times.unique())
    start = pd.Timestamp(distinct[min(len(distinct) - 1, int(spec.train_test_ratio * len(distinct)))])
    if spec.is_resampled:
        # A bin must not hold both train and val rows, so the split is a bin boundary.
        start = start.to_period(PERIOD_STARTS[spec.resample_rule]).start_time
    if not (times < start).any() or not (times >= start).any():
        raise DatasetRejected("the time split leaves train or val empty", "ts_split_empty")
    return start


def _entity_keys(frame: pd.DataFrame, spec: TimeSeriesSpec) -> pd.Series:
    if not spec.entity_columns:
        return pd.Series("", index=frame.index)
    return joined_keys(frame[list(spec.entity_columns)])


class NothingForecastable(DatasetRejected):
    """Every reference baseline scores R² 0 at this split (the standard benchmarks below RESCUE_R2)."""


def build_ts_package(record: DatasetRecord, spec: TimeSeriesSpec, table: pd.DataFrame,
                     rng: np.random.Generator) -> TimeSeriesPackage:
    """The package at the design's split; when no reference forecaster beats the test period's mean
    there, at the later FALLBACK_RATIOS splits that keep the spec's size floors, first that works.
    A horizon of 30% of a long history asks for years ahead (70 quarters of fpp2/qcement, across
    2008): shorter horizons are what a forecaster would set, and the floors keep at least
    min_horizon steps. The package's spec records the split used."""
    frame, times = series_rows(table, spec)
    try:
        return _package(record, spec, frame, times, rng)
    except NothingForecastable as exc:
        first = exc
    default = DesignConfig()
    floors = DesignConfig(ts_min_train_points=spec.size_floors.get("min_train_points", default.ts_min_train_points),
                          ts_min_horizon=spec.size_floors.get("min_horizon", default.ts_min_horizon))
    known = frame[spec.target[0]].notna().to_numpy()
    keys = _entity_keys(frame, spec)
    for ratio in (r for r in FALLBACK_RATIOS if r > spec.train_test_ratio):
        if series_floor_problem(times[known], keys[known], spec.resample_rule, ratio, floors) is not None:
            continue
        try:
            pkg = _package(record, spec.model_copy(update={"train_test_ratio": ratio}), frame, times, rng)
        except NothingForecastable:
            continue
        if max(pkg.baselines.values()) >= RESCUE_R2:
            return pkg
    raise first


def _package(record: DatasetRecord, spec: TimeSeriesSpec, frame: pd.DataFrame, times: pd.Series,
             rng: np.random.Generator) -> TimeSeriesPackage:
    target, ids = spec.target[0], list(spec.identifiers)
    start = split_time(times, spec)
    train_mask = times < start
    train = frame[train_mask].reset_index(drop=True)  # the raw history, in the source's row order
    future = frame[~train_mask & frame[target].notna()].assign(_t=times[~train_mask])
    future = future.sort_values(["_t", *spec.entity_columns], kind="stable").drop(columns="_t").reset_index(drop=True)
    if len(future) < 3 or future[target].nunique() < 2:
        raise DatasetRejected(f"constant or too short ground truth ({len(future)} val rows)",
                              "ts_ground_truth_too_short")
    future.insert(0, names.ROW_ID, np.arange(1, len(future) + 1))
    val_v1 = future.drop(columns=[target])
    gt_v1 = future[[names.ROW_ID, target]]
    grid = (resampled_frame(future, ids, target, spec.time_column, spec.time_format, spec.resample_rule,
                            spec.resample_aggregation) if spec.is_resampled else future[ids + [target]])
    keys = grid[ids].astype(str)
    if keys.duplicated().any():
        raise DatasetRejected("duplicate identifier keys in the CF ground truth", "ts_duplicate_keys")
    hidden = int(spec.v2_hidden_fraction * len(keys)) if len(keys) >= 10 else 0
    order = rng.permutation(len(keys))[hidden:]
    val_v2 = keys.iloc[order].reset_index(drop=True)
    gt_v2 = ground_truth_v2(reference_question(spec), future, val_v2)
    if gt_v2[target].nunique() < 2 or len(gt_v2) < 3:
        raise DatasetRejected(f"constant or too short CF ground truth ({len(gt_v2)} rows)",
                              "ts_cf_ground_truth_too_short")
    baselines = compute_baselines(spec, train, future, grid)
    if not shows_a_forecast(baselines):
        # Clipped R² of 0 everywhere (or, for the standard benchmarks, below RESCUE_R2): no reference
        # beats the mean, so scores cannot rank agents.
        later = " and every later one the size floors allow" if spec.train_test_ratio < max(FALLBACK_RATIOS) else ""
        raise NothingForecastable("every reference baseline (XF and CF) scores R² 0 (the standard benchmarks "
                                  f"below {RESCUE_R2}): nothing forecastable"
                                  f" (split at {spec.train_test_ratio}{later})")
    naive = baselines["v2/seasonal_naive"]
    if naive >= NAIVE_SOLVES:
        raise DatasetRejected(f"the seasonal-naive baseline already solves it (CF R² {naive:.4f} >= {NAIVE_SOLVES})",
                              "ts_naive_solves")
    return TimeSeriesPackage(
        record=record, spec=spec,
        frames={names.TS_TRAIN: train, names.VAL_V1: val_v1, names.VAL_V2: val_v2, names.TS_GROUND_TRUTH_V1: gt_v1,
                names.TS_GROUND_TRUTH_V2: gt_v2},
        prediction_starting_time=str(start), baselines=baselines,
        n_entities=int(_entity_keys(frame, spec).nunique()),
    )


# ------------------------------------------------------------------ baselines


def _baseline_score(variant: str, y: np.ndarray, pred: np.ndarray) -> float:
    """The score `daregen score` gives the forecast on `variant` (clipped R²), rounded for the recorded
    block. A forecast with a gap (no history to forecast from) and a truth it is undefined on both score 0."""
    try:
        return round(metric_for(names.TIME_SERIES_PROBLEM, variant).function(y, pred), 4)
    except (UnscorablePrediction, ValueError):
        return 0.0


def seasonal_naive(history: np.ndarray, horizon: int, season: int) -> np.ndarray:
    if len(history) == 0:
        return np.full(horizon, np.nan)
    m = season if len(history) >= season else 1
    last = history[-m:]
    return np.array([last[h % m] for h in range(horizon)], dtype=float)


def _fit_forecast(history: np.ndarray, horizon: int, season: int, model: str, exog_train=None,
                  exog_future=None) -> np.ndarray:
    """ETS or SARIMAX forecast; the seasonal-naive one when the fit fails or the series is too short."""
    y = history[-MAX_FIT_LENGTH:]
    if len(y) < 8 or np.nanstd(y) == 0:
        return seasonal_naive(history, horizon, season)
    with warnings.catch_warnings():
        # statsmodels warns on convergence and frequency on nearly every short series.
        warnings.simplefilter("ignore")
        try:
            if model == "SARIMAX" and exog_train is not None:
                from statsmodels.tsa.statespace.sarimax import SARIMAX

                xt = exog_train[-MAX_FIT_LENGTH:]
                res = SARIMAX(y, exog=xt, order=(1, 0, 0), trend="c").fit(disp=False, maxiter=50)
                out = np.asarray(res.forecast(horizon, exog=exog_future), dtype=float)
            else:
                from statsmodels.tsa.holtwinters import ExponentialSmoothing

                seasonal = "add" if 1 < season <= MAX_ETS_SEASON and len(y) >= 2 * season + 2 else None
                res = ExponentialSmoothing(y, trend="add", damped_trend=True, seasonal=seasonal,
                                           seasonal_periods=season if seasonal else None).fit()
                out = np.asarray(res.forecast(horizon), dtype=float)
        except Exception:
            return seasonal_naive(history, horizon, season)
    return out if np.all(np.isfinite(out)) else seasonal_naive(history, horizon, season)


# Standard forecasting benchmarks (Hyndman & Athanasopoulos, Forecasting: Principles and Practice,
# ch. 5 and 8-9): each extrapolates the history alone, deterministically. The reference forecaster
# damps its trend, and seasonal naive repeats the last season, so both fall below the test period's
# mean on a series that keeps rising (statsmodels' co2 over 11 years of weekly data, AER's USMacroB
# gnp) or cycles (lynx's 10-year cycle, sunspots): all four score clipped R² 0 there while a drift,
# a trend line, an undamped Holt-Winters or an autoregression explains most of the test period.
# They count for the gate only from RESCUE_R2 on, as a rescued split does: on noise some of them beat
# the mean by chance. Of 300 white-noise series (96 monthly, 60 yearly, 120 quarterly points; seeds
# 0-99, split at 0.75) one of them scores > 0 on 50 and >= 0.3 on none; of 100 monthly random walks,
# >= 0.3 on 8, where seasonal naive or the reference alone scores > 0 on 10.
MAX_AR_LAGS = 12  # the autoregression's order is chosen by AIC up to this (a 10-year cycle needs ~10)
FOURIER_TERMS = 3  # harmonics for a season too long for one dummy per period (weekly data's 52)


def drift_forecast(history: np.ndarray, horizon: int, season: int) -> np.ndarray:
    """The last value plus the average change per step (the random walk with drift)."""
    y = history[-MAX_FIT_LENGTH:]
    slope = (y[-1] - y[0]) / (len(y) - 1) if len(y) > 1 else 0.0
    return y[-1] + slope * np.arange(1, horizon + 1, dtype=float)


def trend_season_forecast(history: np.ndarray, horizon: int, season: int) -> np.ndarray:
    """Least squares on a linear trend and the season (a dummy per period up to 12 periods, else
    FOURIER_TERMS harmonics), when at least two full seasons are seen."""
    y = history[-MAX_FIT_LENGTH:]
    n = len(y)
    t = np.arange(n + horizon, dtype=float)
    columns = [np.ones(n + horizon), t]
    if 1 < season <= n // 2:
        if season <= 12:
            columns += [(t % season == k).astype(float) for k in range(1, season)]
        else:
            for k in range(1, FOURIER_TERMS + 1):
                columns += [np.sin(2 * np.pi * k * t / season), np.cos(2 * np.pi * k * t / season)]
    design = np.column_stack(columns)
    beta = np.linalg.lstsq(design[:n], y, rcond=None)[0]
    return design[n:] @ beta


def holt_winters_forecast(history: np.ndarray, horizon: int, season: int) -> np.ndarray:
    """Additive Holt-Winters with an undamped trend (the reference damps it)."""
    from statsmodels.tsa.holtwinters import ExponentialSmoothing

    y = history[-MAX_FIT_LENGTH:]
    seasonal = "add" if 1 < season <= MAX_ETS_SEASON and len(y) >= 2 * season + 2 else None
    res = ExponentialSmoothing(y, trend="add", damped_trend=False, seasonal=seasonal,
                               seasonal_periods=season if seasonal else None).fit()
    return np.asarray(res.forecast(horizon), dtype=float)


def autoregressive_forecast(history: np.ndarray, horizon: int, season: int) -> np.ndarray:
    """An AR(p) with a constant, p chosen by AIC up to MAX_AR_LAGS (a quarter of the history at most)."""
    from statsmodels.tsa.ar_model import AutoReg, ar_select_order

    y = history[-MAX_FIT_LENGTH:]
    lags = ar_select_order(y, maxlag=min(MAX_AR_LAGS, len(y) // 4), ic="aic", trend="c").ar_lags or 0
    res = AutoReg(y, lags=lags, trend="c").fit()
    return np.asarray(res.predict(start=len(y), end=len(y) + horizon - 1), dtype=float)


STANDARD_BASELINES = {"drift": drift_forecast, "trend_season": trend_season_forecast,
                      "holt_winters": holt_winters_forecast, "autoregressive": autoregressive_forecast}


def _standard_forecast(name: str, history: np.ndarray, horizon: int, season: int) -> np.ndarray:
    """STANDARD_BASELINES[name]; the seasonal-naive forecast when the history is too short or the fit fails."""
    if len(history) < 8 or np.nanstd(history) == 0:
        return seasonal_naive(history, horizon, season)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # statsmodels warns on convergence and frequency
        try:
            out = STANDARD_BASELINES[name](history, horizon, season)
        except Exception:
            return seasonal_naive(history, horizon, season)
    return out if len(out) == horizon and np.all(np.isfinite(out)) else seasonal_naive(history, horizon, season)


def shows_a_forecast(baselines: dict[str, float]) -> bool:
    """The gate: the reference forecaster or seasonal naive beats the test period's mean, or a standard
    benchmark explains at least RESCUE_R2 of it."""
    standard = {k: v for k, v in baselines.items() if k.split("/", 1)[-1] in STANDARD_BASELINES}
    return any(v > 0 for k, v in baselines.items() if k not in standard) or any(
        v >= RESCUE_R2 for v in standard.values())


def _array_key(x: np.ndarray | None) -> tuple | None:
    return None if x is None else (x.dtype.str, x.shape, x.tobytes())


def _per_entity(spec: TimeSeriesSpec, hist: pd.DataFrame, fut: pd.DataFrame, model: str,
                exog: list[str], memo: dict | None = None) -> dict[str, np.ndarray]:
    """Forecasts for the rows of `fut` (in its order), entity by entity: seasonal naive, the fitted
    `model` and the STANDARD_BASELINES, by name. `memo` keeps each fit's forecast by its exact inputs
    (method, history, horizon, season, exogenous values): a series that is not resampled is the same
    history for v1 and v2, so each model is fitted once for both, to the same forecast."""
    memo = {} if memo is None else memo

    def once(key: tuple, forecast):
        if key not in memo:
            memo[key] = forecast()
        return memo[key]

    target = spec.target[0]
    names_ = ["seasonal_naive", model, *STANDARD_BASELINES]
    out = {name: pd.Series(np.nan, index=fut.index) for name in names_}
    h_keys, f_keys = _entity_keys(hist, spec), _entity_keys(fut, spec)
    fallback = float(hist[target].mean()) if hist[target].notna().any() else 0.0
    for n, key in enumerate(sorted(f_keys.unique())):
        h = hist[h_keys == key].dropna(subset=[target])
        f = fut[f_keys == key]
        y = h[target].to_numpy(dtype=float)
        naive = seasonal_naive(y, len(f), spec.season_length) if len(y) else np.full(len(f), fallback)
        out["seasonal_naive"][f.index] = naive
        fitted = n < MAX_FITTED_ENTITIES and len(y)
        if fitted:
            x_h = h[exog].to_numpy(dtype=float) if exog else None
            x_f = f[exog].to_numpy(dtype=float) if exog else None
            out[model][f.index] = once((model, _array_key(y), len(f), spec.season_length, _array_key(x_h),
                                        _array_key(x_f)),
                                       lambda: _fit_forecast(y, len(f), spec.season_length, model, x_h, x_f))
        else:
            out[model][f.index] = naive
        for name in STANDARD_BASELINES:
            out[name][f.index] = once((name, _array_key(y), len(f), spec.season_length), lambda: _standard_forecast(
                name, y, len(f), spec.season_length)) if fitted else naive
    return {name: series.fillna(fallback).to_numpy() for name, series in out.items()}


def _sorted_by_time(frame: pd.DataFrame, spec: TimeSeriesSpec) -> pd.DataFrame:
    t = parse_times(frame[spec.time_column].astype(str), spec.time_format)
    return frame.assign(_t=t.to_numpy()).sort_values("_t", kind="stable").drop(columns="_t")


def compute_baselines(spec: TimeSeriesSpec, train: pd.DataFrame, future: pd.DataFrame,
                      grid: pd.DataFrame) -> dict[str, float]:
    """Seasonal naive, the reference forecaster and the STANDARD_BASELINES, scored with clipped R² on
    v1 (XF) and v2 (CF), by `v1/<name>` and `v2/<name>` in sorted order."""
    target, ids = spec.target[0], list(spec.identifiers)
    exog = [c for c in spec.selected_features if train[c].notna().all() and future[c].notna().all()]
    hist = _sorted_by_time(train, spec)
    if spec.is_resampled:
        hist_v2 = resampled_frame(hist.dropna(subset=[target]), ids, target, spec.time_column, spec.time_format,
                                  spec.resample_rule, spec.resample_aggregation)
    else:
        hist_v2 = hist
    grid_sorted = _sorted_by_time(grid, spec)
    memo: dict = {}
    v2 = _per_entity(spec, hist_v2.reset_index(drop=True), grid_sorted, "ExponentialSmoothing", [], memo)
    v1 = _per_entity(spec, hist.reset_index(drop=True), future, spec.model_type, exog, memo)
    y1 = future[target].to_numpy(dtype=float)
    y2 = grid_sorted[target].to_numpy(dtype=float)
    scores = {f"v1/{name}": _baseline_score("v1", y1, pred) for name, pred in v1.items()}
    scores.update({f"v2/{name}": _baseline_score("v2", y2, pred) for name, pred in v2.items()})
    return dict(sorted(scores.items()))


__all__ = ["FRAME_STEMS", "STANDARD_BASELINES", "TimeSeriesPackage", "build_ts_package", "compute_baselines",
           "format_times", "reference_question", "seasonal_naive", "series_rows", "shows_a_forecast", "split_time"]
