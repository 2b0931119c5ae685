"""Path-in, path-out adapters around the pure stages, one per stage.

Each step reads its inputs from the dataset's work folder, calls a pure stage
function, writes the result back and returns an Outcome (paths and hashes, never
DataFrames), so the Prefect tasks in flows.py stay one-line wrappers and their
inputs are cheap to serialise. A stage that rejects the dataset returns a
failed Outcome carrying the one-line reason; later steps pass it through.
"""

from __future__ import annotations

import functools
import hashlib
import json
import shutil
import time
import traceback
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd
from pydantic import BaseModel, ConfigDict

from pipeline.core import names
from pipeline.core.crash_points import crash_point
from pipeline.core.curation import Pin
from pipeline.core.hashing import column_fingerprints, frame_digest, sha256_file
from pipeline.core.jsonio import read_json, write_json
from pipeline.core.records import (DatasetProfile, DatasetRecord, DatasetRejected, TaskPackage, TaskSpec,
                                   TimeSeriesSpec, is_time_series)
from pipeline.core.safe_io import InputLimits
from pipeline.core.seeding import rng_for
from pipeline.core.text import shorten
from pipeline.core.timing import collecting, timed
from pipeline.step_processes import OverBudget, within_budget

if TYPE_CHECKING:  # imported where called: a step's worker loads the stage it runs
    from task_design.config import DesignConfig

RECORD_JSON, TABLE_PARQUET, PROFILE_JSON, SPEC_JSON, PACKAGE_DIR, ENTRY_JSON = (
    "record.json", "table.parquet", "profile.json", "spec.json", "package", "entry.json")
DESIGN_USAGE_JSON = "design_usage.json"  # LLM calls, cache hits, tokens, cost (designers with settings only)
# The source step's column_fingerprints of the table: the build finds the same data under two refs by it.
CONTENT_JSON = "content.json"
UNITS_JSON = "units.json"  # the problem types the design step made tasks of, first one in this work folder
# What a second unit's work folder shares with the first: everything up to the design.
_UNIT_INPUTS = (RECORD_JSON, TABLE_PARQUET, PROFILE_JSON, "ref.txt")


UNEXPECTED_ERROR = "unexpected_error"  # the code of a step that raised anything but DatasetRejected


class Outcome(BaseModel):
    model_config = ConfigDict(frozen=True)

    ref: str
    work_dir: str
    stage: str
    ok: bool = True
    reason: str = ""
    # The rejection's stable code (pipeline.core.records.Rejection.key): what reports, caches and the golden
    # target file group by; "" where the rejecting stage names none.
    code: str = ""
    digest: str = ""  # content hash of what this stage wrote
    # The problem type of the task this Outcome builds, set once the design step has split a dataset
    # into its tasks (split_units); "" before. (ref, unit) names a unit of the build.
    unit: str = ""
    # Wall seconds per step this unit went through ({"design": 0.8, "finalize/reference run": 0.1, ...}),
    # for run_report.json's cost profile only. A dataset's steps before the split (source, profile,
    # design) are carried by its first unit alone, so sums over units count each dataset once.
    seconds: dict[str, float] = {}

    @property
    def uid(self) -> str:
        """The unit's name in reports and the build's maps: `ref (class)`, or the ref before the design."""
        return f"{self.ref} ({names.TASK_SUFFIX[self.unit]})" if self.unit else self.ref

    def failed(self, stage: str, reason: str, code: str = "") -> Outcome:
        return Outcome(ref=self.ref, work_dir=self.work_dir, stage=stage, ok=False, reason=reason, code=code,
                       unit=self.unit, seconds=self.seconds)

    def with_seconds(self, seconds: dict[str, float]) -> Outcome:
        """This Outcome with `seconds` added to its step timings (rounded: they are a report's figures)."""
        merged = dict(self.seconds)
        for name, s in seconds.items():
            merged[name] = round(merged.get(name, 0.0) + s, 4)
        return self.model_copy(update={"seconds": merged})


def _stage_step(stage: str):
    """Turn a rejection (or an unexpected error) into a failed Outcome with a one-line reason."""
    def wrap(fn):
        # wraps() gives the step its function's qualified name, by which pickle sends it to a worker
        # process (pipeline.step_processes).
        @functools.wraps(fn)
        def run(prev: Outcome, *args, **kwargs) -> Outcome:
            if not prev.ok:
                return prev
            with collecting() as seconds:  # the stage's own `timed` blocks add their parts
                started = time.perf_counter()
                try:
                    digest = fn(Path(prev.work_dir), *args, **kwargs)
                    done = Outcome(ref=prev.ref, work_dir=prev.work_dir, stage=stage, digest=digest, unit=prev.unit,
                                   seconds=prev.seconds)
                except DatasetRejected as exc:
                    done = prev.failed(stage, exc.reason, exc.code)
                except Exception as exc:  # a bug or a hostile dataset must not stop the build
                    last = traceback.format_exception_only(type(exc), exc)[-1].strip()
                    done = prev.failed(stage, shorten(f"unexpected error: {last}", 300), UNEXPECTED_ERROR)
                seconds[stage] = time.perf_counter() - started
            return done.with_seconds(seconds)
        return run
    return wrap


def start(ref: str, work_root: str) -> Outcome:
    """A work folder per dataset, named by a hash of its ref (refs may hold any character)."""
    work = Path(work_root) / hashlib.sha256(ref.encode()).hexdigest()[:20]
    work.mkdir(parents=True, exist_ok=True)
    (work / "ref.txt").write_text(ref, encoding="utf-8")
    return Outcome(ref=ref, work_dir=str(work), stage="start")


@_stage_step("source")
def source_step(work: Path, source_key: str, source_arg: str | None, limits_json: str = "") -> str:
    """`limits_json`: the build's InputLimits, for the sources that read untrusted files."""
    from sourcing.normalize import normalize_table
    from sourcing.registry import open_source
    from sourcing.split_time import DATE_COLUMN, join_split_time_index

    source = open_source(source_key, source_arg)
    if limits_json and hasattr(source, "limits"):
        source.limits = InputLimits.model_validate_json(limits_json)
    ref = read_ref(work)
    try:
        record = source.record(ref)
        raw = source.load_table(ref)
    except ValueError as exc:
        raise DatasetRejected(f"cannot load: {exc}", "cannot_load") from exc
    table = normalize_table(raw)
    record = _follow_renames(record, [str(c) for c in raw.columns], list(table.columns))
    table, split_index = join_split_time_index(table)
    if split_index is not None:
        record = record.model_copy(update={"column_descriptions": {
            DATE_COLUMN: split_index.description(), **record.column_descriptions}})
    if table.shape[1] == 0 or table.shape[0] == 0:
        raise DatasetRejected(f"empty table ({table.shape[0]} rows, {table.shape[1]} columns)", "empty_table")
    write_json(work / RECORD_JSON, record.model_dump(mode="json"))
    table.to_parquet(work / TABLE_PARQUET, index=False)
    write_json(work / CONTENT_JSON, column_fingerprints(table))
    return frame_digest(table)


def _follow_renames(record: DatasetRecord, before: list[str], after: list[str]) -> DatasetRecord:
    """Keep a column's description when normalisation renamed it (duplicates, `row_id`, spaces)."""
    docs = dict(record.column_descriptions)
    for old, new in zip(before, after):
        if old != new and old in record.column_descriptions and new not in docs:
            docs[new] = record.column_descriptions[old]
    return record.model_copy(update={"column_descriptions": docs}) if docs != record.column_descriptions else record


def read_ref(work: Path) -> str:
    return (work / "ref.txt").read_text(encoding="utf-8")


def load_table(work: Path) -> pd.DataFrame:
    return pd.read_parquet(work / TABLE_PARQUET)


def load_record(work: Path) -> DatasetRecord:
    return DatasetRecord.model_validate(read_json(work / RECORD_JSON))


@_stage_step("profile")
def profile_step(work: Path) -> str:
    from task_design.profile import profile_table

    write_json(work / PROFILE_JSON, profile_table(load_table(work)).model_dump(mode="json"))
    return sha256_file(work / PROFILE_JSON)


def load_profile(work: Path) -> DatasetProfile:
    return DatasetProfile.model_validate(read_json(work / PROFILE_JSON))


@_stage_step("design")
def design_step(work: Path, seed: int, designer: str, config_json: str, settings_json: str = "",
                pin_json: str = "") -> str:
    """`pin_json`: a curator's Pin of this dataset (pipeline.core.curation), "" for none. Its dropped
    columns leave the work folder's table for every later stage; its target replaces the designer's."""
    from task_design.config import DesignConfig
    from task_design.pinned import without_columns

    crash_point("design-step")  # tests: a design that never ends, stopped by its budget or by SIGTERM
    record = load_record(work)
    profile = load_profile(work)
    config = DesignConfig.model_validate_json(config_json)
    table = load_table(work)
    pin = Pin.model_validate_json(pin_json) if pin_json else None
    if pin is not None and pin.drop:
        profile, table = without_columns(profile, table, pin.drop)
        table.to_parquet(work / TABLE_PARQUET, index=False)
        write_json(work / PROFILE_JSON, profile.model_dump(mode="json"))
    ts_spec = _design_series(record, profile, table, seed, config, pin)
    if ts_spec is not None:
        write_json(work / SPEC_JSON, ts_spec.model_dump(mode="json"))
        write_json(work / UNITS_JSON, [ts_spec.problem_type])
        return sha256_file(work / SPEC_JSON)
    spec, rest = _design_tabular(work, record, profile, table, seed, designer, config, settings_json, pin)
    return _write_units(work, record, profile, table, config, spec, rest)


DESIGN_TIMEOUT = "design_timeout"  # the code of a design stopped at its wall-clock budget
DEFAULT_DESIGN_BUDGET_S = names.DESIGN_BUDGET_S


def bounded_design_step(prev: Outcome, *args, budget_s: float = DEFAULT_DESIGN_BUDGET_S, **kwargs) -> Outcome:
    """design_step in a child process given `budget_s` wall-clock seconds (0: unbounded): past them the dataset
    is rejected (DESIGN_TIMEOUT, one line) and the build goes on. Not cached: a loaded machine may be the cause."""
    if not prev.ok or not budget_s:
        return design_step(prev, *args, **kwargs)
    try:
        return within_budget(budget_s, design_step, prev, *args, **kwargs)
    except OverBudget as exc:
        return prev.failed("design", f"design stopped: {exc}, the operator's design budget", DESIGN_TIMEOUT
                           ).with_seconds({"design": budget_s})
    except RuntimeError as exc:
        return prev.failed("design", f"design stopped: {exc}", UNEXPECTED_ERROR)


def _pinned_tabular(pin: Pin | None) -> bool:
    return pin is not None and pin.problem_type in ("classification", "regression")


def _design_series(record: DatasetRecord, profile: DatasetProfile, table: pd.DataFrame, seed: int,
                   config: DesignConfig, pin: Pin | None) -> TimeSeriesSpec | None:
    """The forecast of a table the source routed to the time-series path (docs/time-series.md) or whose rows are
    a regular series (one per month, per unit and year), whatever the designer; None for a table with no time
    axis after all, which goes on to the tabular designer, and for a pinned tabular problem type. A dated table
    whose card states a class label (task_design.time_tables.card_label) is a tabular task on it, unless pinned."""
    from task_design.time_tables import card_label, regular_time_index

    with timed("design/time index"):  # every table is asked whether its rows are a regular series
        regular = not _pinned_tabular(pin) and (is_time_series(record) or regular_time_index(table) is not None)
    if not regular or ((pin is None or not pin.target) and card_label(record, profile, table) is not None):
        return None
    from task_design.timeseries import NoTimeColumn, design_ts

    try:
        with timed("design/time series"):
            return design_ts(record, profile, table, rng_for(seed, record.ref, "design"), config,
                             pinned=pin.target[0] if pin is not None and pin.target else None)
    except NoTimeColumn:
        return None


def _design_tabular(work: Path, record: DatasetRecord, profile: DatasetProfile, table: pd.DataFrame, seed: int,
                    designer: str, config: DesignConfig, settings_json: str,
                    pin: Pin | None) -> tuple[TaskSpec, list[TaskSpec]]:
    """The tabular task(s): a pin's, a pair designer's two, or the designer's one. The first task's choices are
    exactly a one-task build's (stage name "design"); a pair designer designs the second on the same roles, with
    its own rng (stage name "design-<problem type>"). A pinned target (or problem type) is the dataset's one
    task, whatever the designer. A designer with settings counts its LLM usage in design_usage.json, even when
    the dataset is rejected."""
    from task_design.llm_schema import LLMUsage
    from task_design.multi_target import with_documented_outcomes
    from task_design.pinned import design_pinned
    from task_design.registry import DESIGNER_SETTINGS, DESIGNERS, PAIR_DESIGNERS

    rng = rng_for(seed, record.ref, "design")
    pinned = pin is not None and (bool(pin.target) or _pinned_tabular(pin))
    extra: dict = {}
    if designer in DESIGNER_SETTINGS:
        extra = {"settings": DESIGNER_SETTINGS[designer].model_validate_json(settings_json or "{}"),
                 "usage": LLMUsage()}
    try:
        if pinned:
            spec, rest = design_pinned(record, profile, table, rng, config, pin), []
        elif designer in PAIR_DESIGNERS:
            rngs = {kind: rng_for(seed, record.ref, f"design-{kind}") for kind in ("classification", "regression")}
            spec, *rest = PAIR_DESIGNERS[designer](record, profile, table, rng, rngs, config)
        else:
            spec, rest = DESIGNERS[designer](record, profile, table, rng, config, **extra), []
    finally:
        if extra:
            write_json(work / DESIGN_USAGE_JSON, extra["usage"].as_dict())
    if not pinned:  # a target list where the source documents outcomes
        spec = with_documented_outcomes(spec, record)
    return spec, rest


def _write_units(work: Path, record: DatasetRecord, profile: DatasetProfile, table: pd.DataFrame,
                 config: DesignConfig, spec: TaskSpec, rest: list[TaskSpec]) -> str:
    """spec.json of the first task, and a sibling work folder for a second of another problem type (unit_work);
    the build's choice of feature references travels with each design to finalize, which writes the text. A panel
    too short to forecast, and a regular series whose card states the label predicted (time_tables.card_label),
    are validated on their last time points, never on a random draw of their rows."""
    from task_design.time_tables import card_label
    from task_design.timeseries import short_panel

    panel = short_panel(table, config)
    label = None if panel is not None else card_label(record, profile, table)
    time_column = panel.time_column if panel else label.time_column if label and label.column in spec.target else None
    spec, *rest = [s.model_copy(update={"column_references": config.column_references,
                                        "split_time_column": time_column})
                   for s in (spec, *rest)]
    write_json(work / SPEC_JSON, spec.model_dump(mode="json"))
    units = [spec.problem_type]
    second = next((s for s in rest if s.problem_type != spec.problem_type and s.target[0] not in spec.target), None)
    if second is not None:
        other = unit_work(work, second.problem_type)
        other.mkdir(exist_ok=True)
        for name in _UNIT_INPUTS:
            shutil.copyfile(work / name, other / name)
        write_json(other / SPEC_JSON, second.model_dump(mode="json"))
        units.append(second.problem_type)
    write_json(work / UNITS_JSON, units)
    return sha256_file(work / SPEC_JSON)


def unit_work(work: Path, problem_type: str) -> Path:
    """The work folder of a dataset's second task: a sibling keyed by (ref, problem type)."""
    return work.with_name(f"{work.name}-{names.TASK_SUFFIX[problem_type]}")


def split_units(outcomes: list[Outcome]) -> list[Outcome]:
    """After the design wave: each designed dataset becomes one Outcome per task (units.json, in
    order; time series and one-task datasets stay one), each going through the later stages alone."""
    out = []
    for o in outcomes:
        work = Path(o.work_dir)
        if not o.ok or o.unit or not (work / UNITS_JSON).is_file():
            out.append(o)
            continue
        first, *rest = read_json(work / UNITS_JSON)
        out.append(o.model_copy(update={"unit": first}))
        for kind in rest:
            other = unit_work(work, kind)
            out.append(Outcome(ref=o.ref, work_dir=str(other), stage=o.stage, digest=sha256_file(other / SPEC_JSON),
                               unit=kind))
    return out


def load_spec(work: Path) -> TaskSpec | TimeSeriesSpec:
    """The design's spec; spec.json's `kind` says which kind (TaskSpec has none)."""
    data = read_json(work / SPEC_JSON)
    return (TimeSeriesSpec if is_time_series(data) else TaskSpec).model_validate(data)


@_stage_step("postprocess")
def postprocess_step(work: Path, seed: int) -> str:
    from postprocess.package import build_package

    record, spec = load_record(work), load_spec(work)
    if is_time_series(spec):
        return _postprocess_ts(work, record, spec, seed)
    pkg = build_package(record, spec, load_table(work), rng_for(seed, record.ref, "postprocess"))
    out = work / PACKAGE_DIR
    out.mkdir(exist_ok=True)
    digests = []
    for stem, frame in {**pkg.frames, "ground_truth": pkg.ground_truth}.items():
        frame.to_parquet(out / f"{stem}.parquet", index=False)
        digests.append(frame_digest(frame))
    for i, t in enumerate(pkg.train_v1_tables, start=1):
        t.to_parquet(out / f"{names.SPLIT_TABLE_PREFIX}{i}.parquet", index=False)
    write_json(out / "counts.json", {"noise_rows": pkg.n_noise_rows, "tables": len(pkg.train_v1_tables)})
    return hashlib.sha256("".join(digests).encode()).hexdigest()


def _postprocess_ts(work: Path, record: DatasetRecord, spec: TimeSeriesSpec, seed: int) -> str:
    from postprocess.timeseries import build_ts_package

    pkg = build_ts_package(record, spec, load_table(work), rng_for(seed, record.ref, "postprocess"))
    out = work / PACKAGE_DIR
    out.mkdir(exist_ok=True)
    for stem, frame in pkg.frames.items():
        frame.to_parquet(out / f"{stem}.parquet", index=False)
    # The package's own spec: postprocess may move the split later (build_ts_package) and the
    # finalized task must describe the split its files were cut at.
    write_json(out / "ts.json", {"prediction_starting_time": pkg.prediction_starting_time,
                                 "baselines": pkg.baselines, "n_entities": pkg.n_entities,
                                 "spec": pkg.spec.model_dump(mode="json")})
    return hashlib.sha256("".join(frame_digest(f) for f in pkg.frames.values()).encode()).hexdigest()


def load_ts_package(work: Path):
    from postprocess.timeseries import FRAME_STEMS, TimeSeriesPackage

    out = work / PACKAGE_DIR
    meta = read_json(out / "ts.json")
    spec = TimeSeriesSpec.model_validate(meta["spec"]) if "spec" in meta else load_spec(work)
    return TimeSeriesPackage(record=load_record(work), spec=spec,
                             frames={s: pd.read_parquet(out / f"{s}.parquet") for s in FRAME_STEMS},
                             prediction_starting_time=meta["prediction_starting_time"],
                             baselines=meta["baselines"], n_entities=meta["n_entities"])


def load_package(work: Path) -> TaskPackage:
    out = work / PACKAGE_DIR
    counts = read_json(out / "counts.json")
    stems = (names.TRAIN_V1, names.TRAIN_V1_NO_ERR, names.VAL_V1, names.TRAIN_V2, names.VAL_V2)
    frames = {s: pd.read_parquet(out / f"{s}.parquet") for s in stems}
    tables = tuple(pd.read_parquet(out / f"{names.SPLIT_TABLE_PREFIX}{i}.parquet")
                   for i in range(1, counts["tables"] + 1))
    return TaskPackage(record=load_record(work), spec=load_spec(work), frames=frames, train_v1_tables=tables,
                       ground_truth=pd.read_parquet(out / "ground_truth.parquet"), n_noise_rows=counts["noise_rows"])


def source_digest(work: Path) -> str:
    """The identity of the source a task was made from: a hash of the normalised table (frame_digest,
    the values and the column names) and the catalogue record (title, description, licence, column
    documentation) its source step left in `work`. Two folders holding same-shaped files differ here."""
    payload = [frame_digest(pd.read_parquet(work / TABLE_PARQUET)), sha256_file(work / RECORD_JSON)]
    return hashlib.sha256(json.dumps(payload).encode()).hexdigest()


@_stage_step("finalize")
def finalize_step(work: Path, tasks_root: str, seed: int, design_digest: str) -> str:
    """The task folder written under `tasks_root`. Its review state is not written here: the build
    stamps it once the tree is assembled (pipeline.review.curation.stamp_curation), so an approval
    never changes what the build cache holds."""
    from finalize.layout import BuildContext, write_task

    ctx = BuildContext(seed=seed, design_digest=design_digest, source_digest=source_digest(work))
    if is_time_series(read_json(work / SPEC_JSON)):
        from finalize.timeseries import write_ts_task

        entry = write_ts_task(load_ts_package(work), Path(tasks_root), ctx)
        write_json(work / ENTRY_JSON, entry)
        return sha256_file(work / ENTRY_JSON)
    entry = write_task(load_package(work), Path(tasks_root), ctx)
    write_json(work / ENTRY_JSON, entry)
    return sha256_file(work / ENTRY_JSON)
