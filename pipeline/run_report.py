"""The run report of a build: what was built, what was rejected and why, as JSON, Markdown and the CLI's summary.

`run_report.json` and `run_report.md` sit at the root of a generation, outside
the manifest (they hold timings). Rejections are bucketed by their code (`reason_buckets`; by
`reason_kind` only for a report written before every stage named one) wherever they are counted: the CLI summary, the corpus
report (pipeline.review.reports) and bench/bench_designers.py.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pipeline.commands import command
from pipeline.core import names
from pipeline.core.curation import CURATION_STAGE, WITHHELD_STAGE
from pipeline.core.jsonio import write_text
from pipeline.progress import plural
from pipeline.core.safe_io import md_cell, printable
from pipeline.core.text import ELLIPSIS, md_code
from pipeline.steps import Outcome
from task_design.llm_schema import usage_line


# Reasons that only say which gate spoke; the bucket keeps the next part too (`check failed: MM infeasible`),
# or every finalize rejection would read "check failed".
_WRAPPER_REASONS = ("check failed", "determinism")


# Said under every table of design rows (pipeline.review.reports.design_row): a shortened cell ends in "…", and its whole text is one file away.
DESIGN_ROWS_NOTE = (f"A cell ending in {ELLIPSIS} is shortened at a word boundary; the whole text is in the task's "
                    f"{names.VERIFY_DIR}/{names.ALL_METADATA} (daregen: target_evidence, excluded_targets, "
                    "design_attempts).")
EVIDENCE_KIND_COLUMN = "evidence kind"
UNRECORDED_KIND = "unrecorded"
# The evidence kinds that do not document the target: a reviewer reads these tasks first.
FALLBACK_KINDS = frozenset({"study_subject", "outcome_description", "outcome_name", "ranked_fallback", UNRECORDED_KIND})


def evidence_strength(kind: str) -> str:
    """"documented" when the source documents the target (its hint, a model, the column's own entry, a curator's
    pin, the LLM), "fallback" when it rests on the target's own description or name only (or is unrecorded)."""
    return "fallback" if (kind or UNRECORDED_KIND) in FALLBACK_KINDS else "documented"


def evidence_kind_rows(designs: list[dict[str, str]]) -> list[list[Any]]:
    """[kind, tasks, share, "documented" | "fallback"] per evidence kind of design rows, commonest first."""
    counts: dict[str, int] = {}
    for row in designs:
        kind = row.get(EVIDENCE_KIND_COLUMN) or UNRECORDED_KIND
        counts[kind] = counts.get(kind, 0) + 1
    return [[kind, n, f"{100 * n / len(designs):.0f}%", evidence_strength(kind)]
            for kind, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]


def reason_kind(reason: str) -> str:
    """`too few rows (24 < 30)` -> `too few rows`: quoted names, parentheses and numbers dropped, so
    the same reason for different datasets falls into one bucket; the reason's last number stays."""
    parts = str(reason).split(":")
    kept = parts[:1]
    while kept[-1].strip() in _WRAPPER_REASONS and len(kept) < len(parts):
        kept.append(parts[len(kept)])
    text = re.sub(r"'[^']{0,300}'|\([^)]{0,300}\)", "", ":".join(kept))
    # A number that ends the reason is what it claims ("every reference baseline scores R² 0"), not a count.
    text = re.sub(r"(?<![\d.])\d+(\.\d+)?(?![\d.])(?!\s*$)", "", text)
    return re.sub(r"\s+", " ", text).strip() or "(no reason given)"


def reason_buckets(rejections: list) -> list[tuple[str, int]]:
    """(bucket, rejections) per bucket, in order of first appearance. Rejections with the same code
    (Outcome.code: the check that failed) are one bucket whatever their wording, named as the first of them
    reads (reason_kind). Every stage codes its rejections; a row without a code (a report written before they
    did) is bucketed by reason_kind alone."""
    names: dict[str, str] = {}
    counts: dict[str, int] = {}
    for r in rejections:
        key = f"code {r['code']}" if r.get("code") else reason_kind(r.get("reason", ""))
        names.setdefault(key, reason_kind(r.get("reason", "")))
        counts[key] = counts.get(key, 0) + 1
    return [(names[key], n) for key, n in counts.items()]


def withheld(report: dict) -> list[dict]:
    """The built tasks `--publish approved` kept out of the tree: built, not rejected."""
    return [r for r in report.get("rejections") or [] if isinstance(r, dict) and r["stage"] == WITHHELD_STAGE]


def skipped(report: dict) -> list[dict]:
    """The rejections proper: every unit a stage or a curator turned down (withheld tasks are not)."""
    return [r for r in report.get("rejections") or [] if isinstance(r, dict) and r["stage"] != WITHHELD_STAGE]


def commonest(rows: list[dict], n: int | None = None) -> list[tuple[str, int]]:
    """The `n` (default: all) commonest buckets of `rows` (reason_buckets), most frequent first (ties by name)."""
    return sorted(reason_buckets(rows), key=lambda kv: (-kv[1], kv[0]))[:n]


def top_reasons(report: dict, n: int = 8) -> list[tuple[str, int]]:
    """The `n` commonest rejection buckets, most frequent first (ties by name); withheld tasks are no rejection."""
    return commonest(skipped(report), n)


def withheld_reasons(report: dict) -> list[tuple[str, int]]:
    """Why the withheld tasks were not approved (`changed since approval`, `unreviewed`, ...), commonest first."""
    return commonest(withheld(report))


def nothing_published(report: dict) -> str | None:
    """Why a build published nothing, in one line, or None when it published (or kept) a tree. Said first
    wherever the build is summed up: nothing that follows describes a tree this build wrote."""
    if report.get("unchanged") or report.get("published", report["built"] > 0):
        return None
    held = withheld(report)
    if held:
        why = ", ".join(f"{n} {reason}" for reason, n in withheld_reasons(report))
        return (f"nothing published: none of the {plural(len(held), 'built task')} is approved at its current "
                f"design digest, so --publish approved withheld every one ({why})")
    return f"nothing published: every one of the {plural(report['considered'], 'candidate dataset')} was skipped"


def rejection_line(r: dict) -> str:
    """A rejection, or a task `--publish approved` withheld (built, not rejected), in one log line."""
    if r["stage"] == WITHHELD_STAGE:
        return f"withheld {r['ref']} (--publish approved): {r['reason']}"
    return f"rejected {r['ref']} at {r['stage']}: {r['reason']}"


def counts_text(report: dict) -> str:
    """`rejected: 3; withheld: 3`: the one wording of a run's other outcomes, in the Prefect log and the summary
    artifact alike (the outcomes table's rows say the same): a task `--publish approved` withheld was built, not
    rejected."""
    return f"rejected: {len(skipped(report))}; withheld: {len(withheld(report))}"


def outcome_rows(report: dict) -> list[dict[str, str]]:
    """One row per task built and per dataset rejected, with the stage and reason, and whether this run built
    it or restored it from the build cache: a run's outcomes in one table (the Prefect artifact), also when
    every one came from the cache and no task run shows them. Text is printable (no escape byte)."""
    units = (report.get("timings") or {}).get("units") or []
    restored = {u["task_dir"] or u["unit"] for u in units if u.get("cached")}
    made = "kept (unchanged)" if report.get("unchanged") else "built"
    rows = [{"dataset or task": printable(t), "outcome": made, "stage": "", "reason": "",
             "from the build cache": "yes" if t in restored else "no"} for t in report.get("tasks") or []]
    rows += [{"dataset or task": printable(r["ref"]),
              "outcome": "withheld" if r["stage"] == WITHHELD_STAGE else "rejected", "stage": printable(r["stage"]),
              "reason": printable(r["reason"]), "from the build cache": "yes" if r["ref"] in restored else "no"}
             for r in report.get("rejections") or []]
    return rows


def by_type_text(report: dict) -> str:
    """`6 classification, 9 regression, 6 time_series_analysis`: every problem type the build made."""
    return ", ".join(f"{n} {kind}" for kind, n in report["by_type"].items()) or "none"


def build_report(outcomes: list[Outcome], entries: list[dict], considered: int, seconds: float, seed: int,
                 sources: str, limit: int | None) -> dict:
    """The report's core: counts by problem type and file format, the task list and every rejection."""
    by_type: dict[str, int] = {}
    formats: dict[str, int] = {}
    for e in entries:
        by_type[e["task"]] = by_type.get(e["task"], 0) + 1
        ftype = e["needed_files_v1"][0].rsplit(".", 1)[-1]
        formats[ftype] = formats.get(ftype, 0) + 1
    rejections = [{"ref": o.uid, "stage": o.stage, "reason": o.reason, **({"code": o.code} if o.code else {})}
                  for o in outcomes if not o.ok]
    return {
        "considered": considered,
        "built": len(entries),
        "by_type": dict(sorted(by_type.items())),
        "by_format": dict(sorted(formats.items())),
        "tasks": sorted(e["file_path"] for e in entries),
        "rejections": rejections,
        "seconds": round(seconds, 2),
        "seed": seed,
        "sources": sources,
        "limit": limit,
    }


TIMINGS_NOTE = (
    "Wall seconds per step of each unit the build worked on, built or rejected (cache hits did no step). "
    "source, profile and design run once per dataset and sit on its first unit; a `stage/part` figure is "
    "a part of `stage` (finalize/reference run is inside finalize, design/learnability inside design: "
    "the design step designs both tasks of a dataset at once). guard: the unit's reference fits in "
    "the two fresh interpreters of the determinism check, summed (their start-ups are in phases.guard only). "
    "dsagent/*: DSAgentBench made from the finished task: its tasks made (dsagent/make tasks), their "
    "sandboxed validation job (dsagent/validation job), of which running the oracles and evaluating the "
    "oracle output and its perturbations. phases: the build's phases so far, as printed at its end.")


def step_timings(outcomes: list[Outcome], entries: list[dict], dsagent_seconds: dict[str, dict[str, float]],
                 phases: dict[str, float], cached: set[str] = frozenset()) -> dict:
    """run_report.json's `timings`: each unit's seconds per step, in candidate order (TIMINGS_NOTE).
    `cached` names the units restored from the build cache: they ran no step after the source here."""
    task_dirs = iter(e["file_path"] for e in entries)  # entries are the ok outcomes' entries, in order
    units = []
    for o in outcomes:
        task_dir = next(task_dirs) if o.ok else None
        seconds = {**o.seconds, **(dsagent_seconds.get(task_dir, {}) if task_dir else {})}
        if seconds or o.uid in cached:
            units.append({"unit": o.uid, "task_dir": task_dir, "ok": o.ok, "cached": o.uid in cached,
                          "seconds": {k: round(v, 4) for k, v in sorted(seconds.items())}})
    return {"note": TIMINGS_NOTE, "phases": dict(phases), "units": units}


def curation_line(report: dict) -> str:
    """Published tasks per curation state, and the tasks curators rejected and the build withheld."""
    counts = ", ".join(f"{n} {state}" for state, n in (report.get("curation") or {}).items())
    rejected = sum(r["stage"] == CURATION_STAGE for r in report["rejections"])
    return f"review: {counts or 'no task'}; {rejected} rejected by curators, {len(withheld(report))} withheld"


def write_report_md(root: Path, report: dict) -> None:
    headline = nothing_published(report)
    lines = ["# daregen run report", "", *([f"**{md_cell(headline)}**", ""] if headline else []),
             f"- built: {plural(report['built'], 'task')} ({by_type_text(report)})"
             + (f", and {plural(len(withheld(report)), 'task')} withheld (--publish approved)" if withheld(report)
                else ""),
             f"- considered: {report['considered']} datasets, rejected: {len(skipped(report))}",
             f"- reused from the build cache: {plural(report.get('cached', 0), 'task')}"
             + (" (withheld ones included)" if withheld(report) else ""),
             f"- time to this report: {report['seconds']:.1f} s (from listing the candidates; the start-up, "
             "the tree reports and publishing come on top)"]
    if "llm" in report:
        lines.append(f"- {usage_line(report['llm'])}")
    designs = report.get("designs") or []
    if designs:  # pipeline.review.reports.design_rows: each task's target and why
        lines += ["", "## Tasks per evidence kind", "",
                  "A fallback kind rests on the target column's own description only; every other kind is "
                  "documented by the source (docs/evidence-policy.md).", "",
                  "| evidence kind | tasks | share | rests on |", "|---|---:|---:|---|"]
        lines += [f"| {kind} | {n} | {share} | {rests} |" for kind, n, share, rests in evidence_kind_rows(designs)]
        lines += ["", "## Targets and their evidence", "", DESIGN_ROWS_NOTE, "",
                  "| " + " | ".join(designs[0]) + " |", "|" + "---|" * len(designs[0])]
        lines += ["| " + " | ".join(md_cell(str(v)) for v in row.values()) + " |"
                  for row in designs]
    if report.get("curation"):
        lines += ["", "## Review", "", curation_line(report)]
    for title, stages in (("Curator rejections", {CURATION_STAGE}),
                          ("Withheld (--publish approved)", {WITHHELD_STAGE}),
                          ("Rejections", None)):
        rows = [r for r in report["rejections"] if (r["stage"] in stages if stages else
                                                    r["stage"] not in (CURATION_STAGE, WITHHELD_STAGE))]
        if rows or stages is None:
            lines += ["", f"## {title}", "", "| dataset | stage | reason |", "|---|---|---|"]
            lines += [f"| {md_cell(r['ref'])} | {r['stage']} | {md_cell(r['reason'].replace('|', '/'))} |"
                      for r in rows]
    write_text(root / names.RUN_REPORT_MD, "\n".join(lines) + "\n")


def outcome_line(report: dict, out: Path, tree: Path | None) -> str:
    """What became of `out`, in the words every summary uses (the CLI, the Prefect log, the artifact):
    `tree` is the published generation, None when nothing was published."""
    if report.get("unchanged"):
        return (f"unchanged: {out} -> {tree} was built from the same inputs; nothing published, "
                "no file rewritten")
    if tree is not None:
        return f"published at {out} -> {tree}"
    return f"nothing published, {out} unchanged"


# What a user runs on a tree after building it (daregen's arguments, OUT for the tree), with what each is for.
NEXT_COMMANDS = ((("verify", "OUT"), "re-run every reference in the sandbox and re-check the tree"),
                 (("score", "PRED_DIR", "--tasks", "OUT"), "score an agent's predictions"),
                 (("diff", "OLD_TREE", "OUT"), "what changed since another build, for a curator"),
                 (("export", "OUT", "--out", "EXPORT_DIR"), "training data: the train/eval split, rewards, SFT"))


def next_commands(out: Path) -> list[tuple[str, str]]:
    """NEXT_COMMANDS for the tree `out`, each spelled to run as printed (pipeline.commands)."""
    return [(command(*(out if w == "OUT" else w for w in words)), what) for words, what in NEXT_COMMANDS]


STALE_STATE = "changed since approval"  # a task whose approval no longer matches its design digest


def review_lines(report: dict, out: Path, ours: bool) -> list[str]:
    """The summary's word on review state, when the ledger approves any task of the build: how many approvals
    still hold and how many went stale (the task changed since it was approved: a reseed, new data, new code), and
    where to read what changed (the tree's diff.md) and each task's state. `ours`: `out` is this build's tree."""
    counts = report.get("curation") or {}
    stale = counts.get(STALE_STATE, 0) + sum(r.get("code") == STALE_STATE.replace(" ", "_") for r in withheld(report))
    approved = counts.get("approved", 0)
    if not (stale or approved):
        return []
    lines = [f"  review: {approved} approved, {stale} {STALE_STATE}"
             + (f" ({'its approval is' if stale == 1 else 'their approvals are'} stale: review again, then "
                "approve)" if stale else "")]
    if ours and (out / names.DIFF_MD).is_file():
        lines.append(f"    what changed since the previous generation: {out / names.DIFF_MD}")
    if ours:
        lines.append(f"    each task's review state: {command('curate', 'status', out)}")
    return lines


def summary_table(report: dict, out: Path, startup_s: float | None = None, flow_s: float | None = None) -> str:
    """What `daregen build` prints at the end: what became of `out`, counts by type and format, the
    commonest rejection reasons, where the reports are and what to run next. `startup_s` (imports and
    Prefect's start) and `flow_s` (the flow run) are the CLI's clocks; report["seconds"] is the flow's
    own, from listing the candidates to the run report."""
    verb = "kept" if report.get("unchanged") else "built"
    headline = nothing_published(report)
    if headline:  # first, so nothing after it reads as a tree this build wrote
        lines = [f"{printable(headline)}; {out} is unchanged"]
    else:
        lines = [f"{verb} {plural(report['built'], 'task')} ({by_type_text(report)}) from "
                 f"{plural(report['considered'], 'candidate dataset')} -> {out}"]
    if report.get("unchanged"):
        lines.append(f"  unchanged: the published generation {report.get('generation')} was built from the same "
                     "inputs; nothing published, no file rewritten")
    if startup_s is not None and flow_s is not None:
        lines.append(f"  time: {startup_s + flow_s:.0f} s since daregen started = start-up {startup_s:.0f} s (imports, "
                     f"Prefect's server, the sources' catalogues) + build {flow_s:.0f} s (the flow run: the phases above, "
                     f"{report['seconds']:.0f} s of them to the run report)")
    else:
        lines.append(f"  time to the run report: {report['seconds']:.0f} s (from listing the candidates)")
    if report["built"]:
        lines += ["", f"  {'problem type':<22}{'tasks':>6}"]
        lines += [f"  {kind:<22}{n:>6}" for kind, n in report["by_type"].items()]
        lines += ["", f"  {'file type':<22}{'tasks':>6}"]
        lines += [f"  {ftype:<22}{n:>6}" for ftype, n in report["by_format"].items()]
    lines.append("")
    # What `out` shows is this build's tree only when it published or kept one; otherwise the files there
    # are an earlier build's, and neither they nor the commands to run on them belong in this summary.
    ours = headline is None
    lines += review_lines(report, out, ours)
    held = withheld(report)
    if held:
        lines.append(f"  {plural(len(held), 'built task')} withheld by --publish approved (not approved at "
                     "its current design digest):")
        lines += [f"    {n:>4}  {printable(reason)}" for reason, n in withheld_reasons(report)]
    reasons = top_reasons(report)
    if reasons:
        lines.append(f"  {plural(len(skipped(report)), 'dataset')} skipped; most common reasons:")
        lines += [f"    {n:>4}  {printable(reason)}" for reason, n in reasons]
    if "llm" in report:
        lines.append(f"  {usage_line(report['llm'])}")
    # A build that published nothing keeps its report beside the output (run_report_md).
    reports = [(str(report.get("run_report_md", out / names.RUN_REPORT_MD)),
                "every task's target and every skipped dataset's reason")]
    reports += [(str(out / name), what) for name, what in (
        (names.QUESTION_LIST, "the tasks and their instructions"),
        (names.CORPUS_REPORT_HTML, "the corpus: types, licences, difficulty, rejections"))
        if ours and (out / name).is_file()]
    width = max(len(path) for path, _ in reports)
    lines += ["", "reports:"] + [f"  {path:<{width}}  {what}" for path, what in reports]
    if ours and (out / names.QUESTION_LIST).is_file():
        lines += ["next:"] + [f"  {cmd:<48}  {what}" for cmd, what in next_commands(out)]
    return "\n".join(lines)


def summary_markdown(report: dict, out: Path, tree: Path | None, reports: dict[str, Path]) -> str:
    """The build summary a served run attaches to its Prefect flow run (an artifact): counts, where the
    tree and its reports are, and the commonest rejection reasons. `tree` is the published generation
    (None when nothing was published); `reports` maps a title to an existing report file."""
    headline = nothing_published(report)
    lines = ["# daregen build", "", *([f"**{md_cell(headline)}**", ""] if headline else []),
             f"- **built:** {plural(report['built'], 'task')} ({by_type_text(report)}) from "
             f"{plural(report['considered'], 'candidate dataset')}; "
             f"{counts_text(report)}; "
             f"reused from the build cache: {report.get('cached', 0)}",
             f"- seed {report['seed']}, sources {md_cell(report['sources'])}, limit {report['limit']}, "
             f"{report['seconds']:.0f} s"]
    if report.get("unchanged"):
        lines.append(f"- **unchanged:** the same inputs as the published {md_code(out)} -> {md_code(tree)}; "
                     "nothing published")
    elif tree is not None:
        lines.append(f"- **published:** {md_code(out)} -> {md_code(tree)}")
    else:
        lines.append(f"- **nothing published:** {md_code(out)} is unchanged")
    if report.get("curation"):
        lines.append(f"- {curation_line(report)}")
    lines += [f"- {title}: {md_code(path)}" for title, path in reports.items()]
    reasons = top_reasons(report)
    if reasons:
        lines += ["", "## Top rejection reasons", "", "| datasets | reason |", "|---:|---|"]
        lines += [f"| {n} | {md_cell(reason)} |" for reason, n in reasons]
    return "\n".join(lines) + "\n"
