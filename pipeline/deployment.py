"""Who may set what in a run of the served deployment `build-tasks/nightly` (docs/security.md).

Two kinds of people touch a deployment. The **operator** registers it (`daregen serve`, or `prefect
deploy` with a worker) on a server they run: they fix where trees and caches go, the curators' ledger,
LLM endpoints and key variables, the Dask scheduler, the input limits and which sources may be built
(`OperatorSettings`). **Whoever triggers a run** (the Prefect UI, `prefect deployment run`, the API, the
schedule) may choose only what cannot reach a secret, a path or a process of the server
(`RunParameters`): how many datasets (up to the operator's maximum, which is never "every candidate" unless
the operator says so), the seed, a designer by name, one of the allowed sources, and whether to publish all
tasks or only approved ones (unless the operator pins that too: then the limit is the operator's maximum,
so a trigger cannot publish a release of a subset of the approved tasks and rotate the full one away).

The operator's settings never travel as run parameters, which anyone who can trigger a run can set:
they live in the environment of the process that runs the flow (`OPERATOR_ENV`), which `daregen
serve` sets from its own flags, and which a worker's operator points at a TOML file on the server.
A run parameter outside `RUN_PARAMETERS` is refused before any work, in one line naming the setting
and where the operator sets it.
"""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from pipeline.core import names
from pipeline.core.text import printable, shorten

# The environment variable of the flow's process that holds the operator's settings: a JSON object
# (what `daregen serve` sets for the runs it starts), or the path of a TOML file with the same keys.
OPERATOR_ENV = "DAREGEN_OPERATOR_SETTINGS"
SERVE_FLAGS = {"out": "daregen serve --out", "curation": "daregen serve --curation",
               "cache_dir": "daregen serve --cache-dir", "sources": "daregen serve --sources/--allow-sources",
               "max_limit": "daregen serve --max-limit, else --limit", "publish": "daregen serve --pin-publish",
               "design_budget_s": "daregen serve --design-budget"}
# The operator's explicit "a run may build every candidate": never a default (a forgotten --max-limit would
# let any trigger build the whole corpus), and a word rather than TOML's missing null.
UNBOUNDED = "none"


class RunParameters(BaseModel):
    """What whoever triggers a run may choose: nothing here names a path, an endpoint, a key or a process.
    None is "the deployment's default" (the operator's first allowed source)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    limit: int | None = Field(None, ge=1)
    seed: int = Field(0, ge=0, lt=2**63)
    designer: str = "heuristic"
    sources: str | None = None
    publish: Literal[names.PUBLISH_MODES] = names.PUBLISH_MODES[0]


RUN_PARAMETERS = tuple(RunParameters.model_fields)


class OperatorSettings(BaseModel):
    """What the operator fixes when registering the deployment; a run can neither see nor change it.
    Paths are absolute (a run starts in whatever folder its process does)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    out: str = Field(description="the published tree (a symlink to its current generation)")
    sources: list[str] = Field(["builtin"], min_length=1,
                               description="the sources a run may build: specs or sources files; the first is the "
                                           "default")
    max_limit: Annotated[int, Field(ge=1)] | Literal[UNBOUNDED] = Field(description="the most candidate datasets one run may consider; "
                                                           f"{UNBOUNDED!r}: every candidate, said explicitly")
    publish: Literal[names.PUBLISH_MODES] | None = Field(None, description="the publish mode of every run (a run "
                                                                         "asking another is refused); unset: the run's")
    cache_dir: str | None = Field(None, description="the build cache (default $DAREGEN_CACHE of the serving process)")
    curation: str | None = Field(None, description="the curators' ledger every run honours, scheduled or triggered")
    designer_settings: dict | None = Field(None, description="the settings of a designer that has them (LLM model, "
                                                             "endpoint, key variable)")
    runner: Literal["local", "dask"] = "local"
    dask_address: str | None = Field(None, description="the scheduler of a Dask cluster the operator runs")
    dask_workers: int = Field(2, ge=1)
    input_limits: dict | None = Field(None, description="pipeline.core.safe_io.InputLimits fields")
    keep_generations: int = Field(3, ge=1)
    force: bool = Field(False, description="let `out` be a folder daregen did not write (moved aside)")
    column_references: Literal[names.COLUMN_REFERENCE_STYLES] = names.COLUMN_REFERENCE_STYLES[0]
    design_budget_s: float = Field(names.DESIGN_BUDGET_S, ge=0,
                                   description="wall-clock seconds one dataset's design may take (0: no bound); past "
                                               "them that dataset is rejected (design_timeout) and the run goes on")

    @field_validator("max_limit", mode="before")
    @classmethod
    def _bound(cls, value):
        """One message for both halves of the union (pydantic would name each of its branches)."""
        if value == UNBOUNDED or (isinstance(value, int) and not isinstance(value, bool) and value >= 1):
            return value
        raise ValueError(f"a number of datasets >= 1, or {UNBOUNDED!r} to let a run build every candidate, not "
                         f"{printable(shorten(str(value), 40))!r}")

    @field_validator("designer_settings")
    @classmethod
    def _designer_settings(cls, value: dict | None) -> dict | None:
        """Checked at registration against the settings model of the designer that takes them (a typo in the
        operator's file is one line then, not a failure of every run)."""
        if value:
            from task_design.registry import DESIGNER_SETTINGS

            for model in DESIGNER_SETTINGS.values():
                model.model_validate(value)
        return value

    @field_validator("out", "cache_dir", "curation")
    @classmethod
    def _absolute(cls, value: str | None) -> str | None:
        if value is not None and not os.path.isabs(value):
            raise ValueError(f"must be an absolute path, not {value!r}")
        return value


# Every build_tasks parameter a run may not set, and where the operator sets it.
OPERATOR_ONLY = {key: SERVE_FLAGS.get(key, f"{OPERATOR_ENV}: {key}")
                 for key in ("out", "cache_dir", "curation", "designer_settings", "runner", "dask_address",
                             "dask_workers", "input_limits", "keep_generations", "force", "column_references",
                             "design_budget_s")}


class RefusedRun(ValueError):
    """A run of the served deployment that may not start: one line, naming the setting."""


def _one_line(exc: ValidationError, what: str) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"]) or "settings"
    return f"{what} {where!r}: {err['msg'].removeprefix('Value error, ')}"


def load_operator_settings(environ: dict | None = None) -> OperatorSettings:
    """The operator's settings from OPERATOR_ENV of this process (RefusedRun when unset or malformed)."""
    raw = (os.environ if environ is None else environ).get(OPERATOR_ENV, "").strip()
    if not raw:
        raise RefusedRun(f"this deployment was registered without operator settings ({OPERATOR_ENV} is unset in "
                         "the process that runs it): register it with `daregen serve`, or set it to the path of "
                         "the operator's TOML file (docs/service.md)")
    try:
        data = json.loads(raw) if raw.startswith("{") else read_operator_file(Path(raw))
    except ValueError as exc:
        raise RefusedRun(f"operator settings {printable(shorten(raw, 80))}: {printable(exc)}") from None
    return operator_settings(data)


def read_operator_file(path: Path) -> dict:
    """The operator's TOML file (OperatorSettings keys) as a dict; ValueError in one line."""
    try:
        return tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(f"{path}: {exc.strerror if isinstance(exc, OSError) else exc}") from None


def operator_settings(data: dict) -> OperatorSettings:
    """`data` validated as OperatorSettings; RefusedRun naming the first bad key."""
    try:
        return OperatorSettings.model_validate(data)
    except ValidationError as exc:
        raise RefusedRun(_one_line(exc, "operator setting")) from None


def refusal(key: str) -> str:
    """The one line that refuses run parameter `key`."""
    shown = printable(shorten(key, 60))
    where = OPERATOR_ONLY.get(key)
    who = (f"only the operator sets it, when registering the deployment ({where})" if where else
           "build-tasks has no such parameter")
    return f"run parameter {shown!r} refused: {who}; a run may set only {', '.join(RUN_PARAMETERS)}"


def checked_run(given: dict, operator: OperatorSettings, job_variables: dict | None = None) -> RunParameters:
    """The parameters a run was triggered with (the deployment's registered ones and the trigger's), checked
    against what a run may set and the operator's bounds; RefusedRun (one line) for the first that is not.
    `job_variables` the run carries would change the process that runs it: they are the operator's too."""
    for key in given:
        if key not in RUN_PARAMETERS:
            raise RefusedRun(refusal(key))
    if job_variables:
        raise RefusedRun(f"job variables {sorted(map(printable, job_variables))} refused: the process a run gets "
                         "is the operator's (the work pool's base job template, or `daregen serve`)")
    try:
        run = RunParameters.model_validate(given)
    except ValidationError as exc:
        raise RefusedRun(_one_line(exc, "run parameter")) from None
    sources = run.sources if run.sources is not None else operator.sources[0]
    if sources not in operator.sources:
        raise RefusedRun(f"run parameter 'sources' refused: {printable(shorten(sources, 80))!r} is not one the "
                         f"operator allows ({', '.join(map(repr, operator.sources))}; {SERVE_FLAGS['sources']})")
    if operator.publish is not None and "publish" in given and run.publish != operator.publish:
        raise RefusedRun(f"run parameter 'publish' refused: the operator pins it to {operator.publish!r} "
                         f"({SERVE_FLAGS['publish']}); a run may not publish {printable(shorten(run.publish, 20))!r}")
    if operator.publish is not None and sources != operator.sources[0]:  # nor a subset through a narrower source
        raise RefusedRun(f"run parameter 'sources' refused: the operator pins publish to {operator.publish!r} and "
                         f"with it the sources to {operator.sources[0]!r} ({SERVE_FLAGS['publish']}); a run may not "
                         f"ask {printable(shorten(sources, 80))!r}")
    if operator.publish is not None:  # a pinned release covers the operator's candidates, not a trigger's subset
        pinned_limit = None if operator.max_limit == UNBOUNDED else operator.max_limit
        if "limit" in given and run.limit != pinned_limit:
            raise RefusedRun(f"run parameter 'limit' refused: the operator pins publish to {operator.publish!r} and "
                             f"with it the limit to {operator.max_limit} ({SERVE_FLAGS['max_limit']}, with "
                             f"{SERVE_FLAGS['publish']}); a run may not ask {run.limit if run.limit is not None else 'every candidate'}")
        run = run.model_copy(update={"limit": pinned_limit})
    elif operator.max_limit != UNBOUNDED and (run.limit is None or run.limit > operator.max_limit):
        raise RefusedRun(f"run parameter 'limit' refused: {run.limit if run.limit is not None else 'every candidate'}"
                         f" is above the operator's maximum {operator.max_limit} ({SERVE_FLAGS['max_limit']})")
    from task_design.designers import DESIGNER_MODULES
    from task_design.registry import DESIGNER_SETTINGS

    if run.designer not in DESIGNER_MODULES:
        raise RefusedRun(f"run parameter 'designer' refused: unknown designer {printable(shorten(run.designer, 60))!r}"
                         f" (known: {', '.join(sorted(DESIGNER_MODULES))})")
    if run.designer in DESIGNER_SETTINGS and not operator.designer_settings:
        raise RefusedRun(f"run parameter 'designer' refused: {run.designer!r} needs settings (a model, an endpoint) "
                         f"that only the operator gives ({OPERATOR_ONLY['designer_settings']})")
    return run.model_copy(update={"sources": sources, "publish": operator.publish or run.publish})


def allowed_designers(operator: OperatorSettings) -> list[str]:
    """The designers a run may name: every one that needs no settings, and one that does if the operator gave them."""
    from task_design.designers import DESIGNER_MODULES
    from task_design.registry import DESIGNER_SETTINGS

    return sorted(d for d in DESIGNER_MODULES if d not in DESIGNER_SETTINGS or operator.designer_settings)


def run_schema(schema: dict, operator: OperatorSettings) -> dict:
    """The deployment's parameter schema (Prefect's, of flows.build_tasks) cut to what a run may set and bounded
    by `operator`: the UI's run form offers only those, and Prefect refuses a value out of bounds when the run
    is created, in one line. A parameter the schema does not list still reaches the flow, which refuses it
    naming who sets it (checked_run): the schema is a convenience, since a trigger can switch its check off."""
    properties = {k: dict(v) for k, v in schema["properties"].items() if k in RUN_PARAMETERS}
    limit = {k: v for k, v in properties["limit"].items() if k not in ("anyOf", "default")}
    if operator.publish is not None:  # pinned: the operator's limit only (checked_run)
        only = None if operator.max_limit == UNBOUNDED else operator.max_limit
        properties["limit"] = {**limit, "type": "null"} if only is None else {**limit, "type": "integer",
                                                                             "minimum": only, "maximum": only}
        properties["limit"]["default"] = only
    elif operator.max_limit != UNBOUNDED:  # a number, at most the maximum ("every candidate", null, would exceed it)
        properties["limit"] = {**limit, "type": "integer", "minimum": 1, "maximum": operator.max_limit}
    else:
        properties["limit"] = {**limit, "anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}]}
    properties["sources"] = {**properties["sources"], "enum": list(operator.sources), "default": operator.sources[0]}
    properties["designer"] = {**properties["designer"], "enum": allowed_designers(operator)}
    pinned = [operator.publish] if operator.publish else list(names.PUBLISH_MODES)
    properties["publish"] = {**properties["publish"], "enum": pinned, "default": pinned[0]}
    properties["seed"] = {**properties["seed"], "minimum": 0}
    return {**schema, "properties": properties}


def build_parameters(run: RunParameters, operator: OperatorSettings) -> dict:
    """Every parameter of flows.build_tasks for a served run: the run's safe choices and the operator's rest."""
    from task_design.registry import DESIGNER_SETTINGS

    settings = operator.model_dump()
    settings.pop("max_limit")
    settings.pop("publish")  # checked_run gave the run the operator's pinned mode
    settings["sources"] = run.sources
    if run.designer not in DESIGNER_SETTINGS:
        settings["designer_settings"] = None  # the operator's LLM settings go to the designer they configure
    return {**settings, "limit": run.limit, "seed": run.seed, "designer": run.designer, "publish": run.publish}
