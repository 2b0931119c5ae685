"""The typed model of a task's verify/all_metadata.json, its one writer, and the JSON Schema made from it.

A task's metadata is four blocks: `question` (the task's design, one shape for tabular
tasks and one for time-series tasks), `data_info` (the catalogue record, with Kaggle's key
names), `meta_data` (the documentation) and `daregen` (our provenance; a published DARE-bench
task has none). Tabular and time-series finalize build these models and hand them to
`write_all_metadata`; `all_metadata_json_schema` turns the same models into the published
schema (schemas/all_metadata.schema.json), so the writer and the schema cannot disagree.

The models are strict and refuse unknown fields, so a writer cannot coerce a value or
misspell a key. A field with a default is optional in the published format and is written
only when the writer sets it (e.g. `join_path`, for relational sources only). The schema
still accepts keys it does not know: the published tasks carry more keys than we write.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.json_schema import GenerateJsonSchema

from pipeline.core import names
from pipeline.core.curation import Curation
from pipeline.core.environment import code_version
from pipeline.core.jsonio import to_jsonable, write_json
from pipeline.core.text import shorten
from pipeline.core.records import (CHECK_FAILED, CLASSIFICATION_MODELS, REGRESSION_MODELS, DatasetRecord,
                                   DatasetRejected, JoinStep, TargetEvidenceKind, TaskSpec, TimeSeriesSpec)

SCHEMA_ID = "https://github.com/daregen/daregen/schemas/all_metadata.schema.json"
SCHEMA_TITLE = "DARE-bench verify/all_metadata.json"
SCHEMA_DESCRIPTION = (
    "One task's metadata in the DARE-bench layout (see docs/dare-format.md). Accepts the published DARE-bench "
    "tasks (tabular and time series) and daregen's; the `daregen` block is daregen's own and optional. Unknown "
    "keys are allowed everywhere: the published format has grown keys over time and readers ignore what they do "
    "not know. Generated from pipeline/core/task_metadata.py (python -m finalize.schema); do not edit by hand.")

Names = list[str]
RelativePath = Annotated[str, Field(pattern=r"^\./")]  # relative to the tree root, e.g. ./<task>/verify/...
FileName = Annotated[str, Field(min_length=1, pattern=r"^[^/\\]+$")]  # a bare file name inside source/
NonEmpty = Annotated[str, Field(min_length=1)]
Count = Annotated[int, Field(ge=0)]
NeededFiles = Annotated[list[FileName], Field(min_length=1)]


class _Block(BaseModel):
    # Strict and closed for the writer; the schema made from it stays open (additionalProperties),
    # because published tasks carry keys this model does not name.
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True, protected_namespaces=(),
                              json_schema_extra={"additionalProperties": True})


class _Question(_Block):
    """The keys every DARE-bench question has, tabular or time series."""

    @classmethod
    def from_spec(cls, spec: BaseModel, **rest: Any) -> Self:
        """The question of a design: each key that names a field of the spec takes that field's value
        (tuples as lists); `rest` gives the keys the spec does not hold (file paths, baselines, ...)."""
        shared = {name: list(value) if isinstance(value, tuple) else value
                  for name in cls.model_fields if name in type(spec).model_fields
                  for value in [getattr(spec, name)]}
        return cls(**shared, **rest)

    target: Annotated[Names, Field(min_length=1)]
    related_features: Names
    selected_features: Names
    expected_ranges: dict[str, Annotated[list[Any], Field(min_length=1)]]
    column_type_inference: dict[str, str]
    model_type: NonEmpty
    imputer_type: NonEmpty
    random_state: int
    train_test_ratio: Annotated[float, Field(gt=0, lt=1)]
    save_file_type: Literal["csv", "sqlite", "parquet"]
    needed_files_v1: NeededFiles
    needed_files_v2: NeededFiles
    output_file: RelativePath


def _model_type_by_problem(schema: dict[str, Any]) -> None:
    schema["allOf"] = [
        {"if": {"properties": {"problem_type": {"const": problem}}},
         "then": {"properties": {"model_type": {"enum": list(models)}}}}
        for problem, models in (("classification", CLASSIFICATION_MODELS), ("regression", REGRESSION_MODELS))]
    schema["additionalProperties"] = True


class TabularQuestion(_Question):
    """The question block of a classification or regression task (the IF and MM variants)."""

    model_config = ConfigDict(json_schema_extra=_model_type_by_problem)

    problem_type: Literal["classification", "regression"]
    target_candidates: Names
    not_filtered_related_features: Names
    numerical_features: Names
    categorical_features: Names
    column_type_inference: dict[str, Literal["numerical", "categorical"]]
    model_type: Literal[CLASSIFICATION_MODELS + REGRESSION_MODELS]  # type: ignore[valid-type]
    imputer_type: Literal["mean", "median", "most_frequent"]
    train_err_split_save_file: RelativePath
    train_no_err_save_file: RelativePath
    val_no_err_save_file: RelativePath
    train_v2_save_file: RelativePath
    val_v2_save_file: RelativePath
    ground_truth_file: RelativePath
    simulated_pred_file: RelativePath
    join_path: list[JoinStep] | None = Field(
        None, description="Relational sources only: the joins the IF instruction asks for (daregen's own key).")


class TimeSeriesQuestion(_Question):
    """The question block of a `_ts` task (XF on val_v1, CF on val_v2)."""

    problem_type: Literal["time_series_analysis"]
    time_column: NonEmpty
    time_format: NonEmpty
    is_resampled: bool
    prediction_starting_time: NonEmpty
    train_save_file: RelativePath
    val_v1_save_file: RelativePath
    val_v2_save_file: RelativePath
    ground_truth_v1_file: RelativePath
    ground_truth_v2_file: RelativePath
    # published time-series tasks carry these tabular keys too (daregen's do not write them)
    train_err_split_save_file: RelativePath = ""
    train_no_err_save_file: RelativePath = ""
    val_no_err_save_file: RelativePath = ""
    simulated_pred_file: RelativePath = ""
    resample_rule: str | None = None
    resample_aggregation: Literal["mean", "sum"] | None = None
    entity_columns: Names = []
    not_filtered_related_features: Names = []
    contain_multiple_files: bool = False
    baselines: dict[str, float] = Field(
        {}, description="CF baseline scores of statsmodels forecasters (postprocess.timeseries), daregen's own key.")


Question = TabularQuestion | TimeSeriesQuestion


class DataInfo(_Block):
    """The source's catalogue record under DARE-bench's (Kaggle's) key names."""

    id: str | int = ""
    ref: NonEmpty
    title: str
    subtitle: str | None = None
    description: str | None = Field(None, description="The source's own description of the dataset.")
    url: str | None = None
    licenseName: str | None = Field(None, description="The licence as the source states it ('unknown' if none).")
    lastUpdated: str | None = Field(None, description="Null for the built-in corpus: an installed wheel records "
                                                      "no release date.")
    ownerName: str | None = None
    ownerRef: str | None = None
    currentVersionNumber: str | int | None = None
    usabilityRating: float | None = None
    tags: list[dict[str, Any]] = []
    source: str = ""

    @classmethod
    def of(cls, record: DatasetRecord) -> DataInfo:
        return cls(id=record.ref, ref=record.ref, title=record.title, subtitle=record.subtitle,
                   description=record.description, url=record.url, licenseName=record.license,
                   lastUpdated=record.last_updated, ownerName=record.owner, ownerRef=record.owner,
                   currentVersionNumber=record.version, usabilityRating=record.usability_rating,
                   tags=[{"ref": t, "name": t} for t in record.tags], source=record.source)


class Licence(_Block):
    name: str | None = None


class MetaData(_Block):
    """The dataset's documentation; `description` is the task's metadata.txt."""

    datasetId: str | int = ""
    datasetSlug: str = ""
    ownerUser: str | None = None
    usabilityRating: float | None = None
    title: str
    subtitle: str | None = None
    description: str
    keywords: Names = []
    licenses: list[Licence] = []

    @classmethod
    def of(cls, record: DatasetRecord, metadata_txt: str) -> MetaData:
        return cls(datasetId=record.ref, datasetSlug=record.slug, ownerUser=record.owner,
                   usabilityRating=record.usability_rating, title=record.title, subtitle=record.subtitle,
                   description=metadata_txt, keywords=list(record.tags), licenses=[Licence(name=record.license)])


class FeatureReference(_Block):
    """How question_v1 refers to one feature: by its metadata.txt description alone (as DARE-bench's
    questions do), by the words its undocumented name joins ("lot area" for `Lot_Area`), or with its
    column name, and why."""

    column: NonEmpty
    by: Literal["description", "name words", "name"]
    phrase: str = Field(description="The words question_v1 uses for the column (its backticked name included "
                                    "when `by` is name).")
    reason: NonEmpty
    name_in_question: str = Field("", description="Why the column's name appears in question_v1 as a word, in any "
                                                  "case (the reference names it, its description uses the word, "
                                                  "another reference or a category value contains it); empty when "
                                                  "it does not appear.")


class Provenance(_Block):
    """daregen's block: how the task was made. Absent from foreign (published DARE-bench) tasks."""

    model_config = ConfigDict(
        json_schema_extra={"description": "daregen's provenance block; absent from foreign (published DARE-bench) "
                                          "tasks.", "additionalProperties": True})

    ref: NonEmpty
    source: str = ""
    designer: str = ""
    seed: int
    design_config: str = ""
    code_version: str
    # tabular tasks only
    environment: str = ""
    noise_rows: Count = 0
    # time-series tasks only
    frequency: str = Field("", description="The raw series' pandas offset alias, or 'irregular'.")
    season_length: int = 0
    time_source: str = Field("", description="How the time column's text was made from the source column.")
    entities: Count = Field(1, description="How many series (1 unless a panel).")
    train_rows: Count = 0
    val_rows: Count = 0
    split_time_column: str = Field("", description="Tabular tasks of a panel too short to forecast, or of a dated "
                                                   "table whose card states the label: the time column whose last "
                                                   "time points are the validation rows (written only then; other "
                                                   "tasks' rows are split at random).")
    excluded_features: dict[str, str] = {}
    target_evidence: str = Field("", description="The evidence that decided the target: a source hint, the "
                                                 "documentation, the LLM or the ranked fallback (task_design.targets).")
    target_evidence_kind: TargetEvidenceKind | None = Field(
        None, description="The kind of that evidence (pipeline.core.records.TargetEvidenceKind): documented "
                          "(curator: pinned in the curation ledger; source_hint, model_formula, series_model, "
                          "documented_response, r_series), the LLM's "
                          "choice (llm), or the fallback (study_subject: the dataset's title or description names what "
                          "this one candidate measures; outcome_description: the column's own description reads "
                          "as a measured outcome; outcome_name: an undescribed column with a conventional outcome "
                          "name or the title's; ranked_fallback: time series only).")
    excluded_targets: dict[str, str] = Field({}, description="Every other column and why it is not the target: its "
                                                             "role, its type, or a failed attempt.")
    design_attempts: Names = Field([], description="Targets tried before the chosen one, each with the reason it "
                                                   "failed.")
    size_floors: dict[str, Count] = Field({}, description="The design config's size floors the task was built under.")
    v2_dropped_columns: Names = []
    feature_references: list[FeatureReference] = Field(
        [], description="Tabular tasks: how question_v1 refers to each feature it names (selected or filtered), "
                        "in the order of the columns of metadata.txt (pipeline.core.column_refs).")
    mm_baselines: dict[str, Annotated[float, Field(ge=0, le=1)]] = Field(
        {}, description="MM difficulty: trivial baseline, reference model and best single feature scores "
                        "(finalize.mm_check), rounded.")
    source_digest: str = Field("", description="The identity of the source: a hash of the table and the catalogue "
                                               "record the source gave (its folder's, database's or package's "
                                               "content, not only its ref); part of the design digest.")
    curation: Curation | None = Field(None, description="The task's review state under the build's curation "
                                                        "ledger (pipeline.core.curation), stamped when the tree "
                                                        "is assembled, after the build cache.")

    @classmethod
    def of(cls, spec: TaskSpec | TimeSeriesSpec, record: DatasetRecord, *, seed: int, design_config: str,
           train_rows: int, val_rows: int, **kind_fields: Any) -> Provenance:
        """The keys every daregen task records, plus `kind_fields` (those of its kind, named above)."""
        return cls(ref=spec.ref, source=record.source, designer=spec.designer, seed=seed, design_config=design_config,
                   code_version=code_version(), train_rows=train_rows, val_rows=val_rows,
                   excluded_features=dict(spec.excluded_features), target_evidence=spec.target_evidence,
                   target_evidence_kind=spec.target_evidence_kind,
                   excluded_targets=dict(spec.excluded_targets), size_floors=dict(spec.size_floors), **kind_fields)


class TaskMetadata(_Block):
    question: Question
    data_info: DataInfo
    meta_data: MetaData
    daregen: Provenance | None = None


@contextlib.contextmanager
def rejected_when_invalid() -> Iterator[None]:
    """Building the models refuses a value the published schema refuses: the dataset is rejected, as the
    schema check after writing would reject it, with the first violation's path."""
    try:
        yield
    except ValidationError as exc:
        first = exc.errors()[0]
        where = "/".join(map(str, first["loc"]))
        raise DatasetRejected(f"{CHECK_FAILED}all_metadata.json violates the schema at /{where}: "
                              f"{shorten(first['msg'], 200)} ({exc.error_count()} violation(s))",
                              "metadata_schema") from None


def as_json(block: _Block) -> dict[str, Any]:
    """A block as the plain JSON value it is written as: the fields its writer set, in the model's order."""
    return to_jsonable(block.model_dump(mode="python", exclude_unset=True))


def write_all_metadata(path: Path, metadata: TaskMetadata) -> dict[str, Any]:
    """The one writer of verify/all_metadata.json; returns what it wrote."""
    if path.name != names.ALL_METADATA:
        raise ValueError(f"all_metadata goes to {names.ALL_METADATA}, not {path.name}")
    value = as_json(metadata)
    write_json(path, value)
    return value


class _PublishedSchema(GenerateJsonSchema):
    """pydantic's JSON Schema without the titles it derives from Python names and without defaults:
    the published schema describes keys, not our class names or our writer's fallbacks."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False

    def generate(self, schema: Any, mode: Any = "validation") -> dict[str, Any]:
        return _strip(super().generate(schema, mode=mode))


def _strip(node: Any) -> Any:
    if isinstance(node, list):
        return [_strip(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if key in ("title", "default"):
            continue
        # `properties` and `$defs` map names to schemas: recurse into each schema, keep every name
        out[key] = ({k: _strip(v) for k, v in value.items()} if key in ("properties", "$defs", "patternProperties")
                    else _strip(value))
    return out


def _question_dispatch(kinds: list[dict[str, Any]]) -> dict[str, Any]:
    """`question` is checked against the tabular or the time-series block by its problem_type (if/then,
    not oneOf, so a violation is reported at its own path rather than as 'no branch matched')."""
    problems: list[str] = []
    branches = []
    for ref in kinds:
        model = {TabularQuestion.__name__: TabularQuestion, TimeSeriesQuestion.__name__: TimeSeriesQuestion}[
            ref["$ref"].rsplit("/", 1)[1]]
        values = list(model.model_fields["problem_type"].annotation.__args__)
        problems += values
        branches.append({"if": {"required": ["problem_type"], "properties": {"problem_type": {"enum": values}}},
                         "then": ref})
    return {"type": "object", "required": ["problem_type"], "properties": {"problem_type": {"enum": problems}},
            "allOf": branches}


def all_metadata_json_schema() -> dict[str, Any]:
    """The published JSON Schema (draft 2020-12) of all_metadata.json, made from TaskMetadata."""
    schema = TaskMetadata.model_json_schema(schema_generator=_PublishedSchema, ref_template="#/$defs/{model}")
    question = schema["properties"]["question"]
    schema["properties"]["question"] = _question_dispatch(question["anyOf"])
    daregen = schema["properties"]["daregen"]
    schema["properties"]["daregen"] = next(s for s in daregen["anyOf"] if "$ref" in s)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": SCHEMA_ID, "title": SCHEMA_TITLE,
            "description": SCHEMA_DESCRIPTION} | schema


def render_schema() -> str:
    """The schema file's text (2-space indent, the models' key order, a trailing newline)."""
    return json.dumps(all_metadata_json_schema(), indent=2, ensure_ascii=False) + "\n"
