"""One way to build: `build_one` takes one dataset through every stage; `build_generation` builds a whole tree.

Both run the same chain: the stages in data order (STAGES), each a step of
pipeline.steps called with `BuildJob.step_args`. `build_one` runs it in this
thread for one dataset (tests, benchmarks). `build_generation` runs each stage
as a wave over every dataset through a `run_wave` the caller supplies (flows.py
submits the wave's steps to Prefect), and adds what needs all datasets at once:
table and task-folder dedupe, the build cache, the guard, the root files, the
run report, the tree reports and publishing.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import shutil
import threading
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple
from collections.abc import Callable

from finalize.sandbox import forkserver_context
from pipeline import build_cache, steps
from pipeline.core import cache as core_cache, names
from pipeline.core.curation import CURATION_STAGE, WITHHELD_STAGE, Ledger
from pipeline.core.environment import code_version, fingerprint, fingerprint_digest, pin_blas_threads
from pipeline.core.jsonio import read_json, write_json
from pipeline.core.safe_io import InputLimits
from pipeline.core.text import shorten_cause
from pipeline.progress import held_notes, note, phase_seconds, plural
from pipeline.publish import (build_lock, build_manifest, check_generation, crash_point, new_generation, publish,
                              published_generation, sealed_path, write_question_list)
from pipeline.review.curation import stamp_curation, state_counts, task_review, tree_reviews
from pipeline.review.diff import write_diff_reports
from pipeline.review.task_index import write_task_index
from pipeline.review.reports import design_rows, read_json_or_none, write_tree_reports
from pipeline.run_report import build_report, step_timings, write_report_md
from pipeline.steps import Outcome
from sourcing.registry import open_source, parse_sources, source_kind
from sourcing.sources_file import resolve_spec
from task_design.config import DesignConfig
from task_design.llm_schema import LLMUsage
from task_design.registry import DESIGNER_SETTINGS, DESIGNERS

STAGES = ("source", "profile", "design", "postprocess", "finalize")
# The stages after the design run once per task (steps.split_units): a dataset may make two.
PER_TASK_STAGES = STAGES[STAGES.index("design") + 1:]
STEPS = {"source": steps.source_step, "profile": steps.profile_step, "design": steps.bounded_design_step,
         "postprocess": steps.postprocess_step, "finalize": steps.finalize_step}
# (stage, outcomes, the step arguments of one dataset) -> outcomes in the same order. A wave runs the
# stage's step on every outcome that is still ok and passes the failed ones through.
WaveRunner = Callable[[str, list[Outcome], Callable[[Outcome], dict]], list[Outcome]]


class Candidate(NamedTuple):
    """A dataset a source offers: the source's key and argument, and the dataset's ref."""

    source: str
    arg: str | None
    ref: str


@dataclass(frozen=True)
class BuildJob:
    """What every dataset of one build shares: the seed, the designer and the design configuration."""

    seed: int
    designer: str
    config_json: str
    design_digest: str
    settings_json: str = ""  # the designer's validated settings; "" for a designer without settings
    limits_json: str = ""  # the bounds on reading source files (DesignConfig.input_limits); "" for the defaults
    curation: Ledger = Ledger()  # the curators' decisions (pipeline.core.curation); empty without a ledger
    publish: str = "all"  # names.PUBLISH_MODES: every task, or only the approved ones whose digest still matches
    # Wall-clock seconds for one dataset's design (0: none); the operator's, and in no digest: it never changes a
    # task's bytes, only whether a stalled design is given up.
    design_budget_s: float = steps.DEFAULT_DESIGN_BUDGET_S

    @classmethod
    def make(cls, seed: int, designer: str = "heuristic", designer_settings: dict | None = None,
             config: DesignConfig | None = None, curation: Ledger | None = None, publish: str = "all",
             design_budget_s: float = steps.DEFAULT_DESIGN_BUDGET_S) -> BuildJob:
        if publish not in names.PUBLISH_MODES:
            raise ValueError(f"--publish {publish!r}: known: {', '.join(names.PUBLISH_MODES)}")
        if not design_budget_s >= 0:
            raise ValueError(f"--design-budget must be >= 0 seconds (0: none), got {design_budget_s}")
        config = config or DesignConfig()
        return cls(seed=seed, designer=designer, config_json=config.model_dump_json(),
                   design_digest=config.digest(), settings_json=designer_settings_json(designer, designer_settings),
                   limits_json=config.input_limits.model_dump_json(), curation=curation or Ledger(),
                   publish=publish, design_budget_s=float(design_budget_s))

    def seed_for(self, ref: str) -> int:
        """The dataset's seed: a curator's pin may give it its own."""
        pin = self.curation.pinned(ref)
        return pin.seed if pin is not None and pin.seed is not None else self.seed

    def step_args(self, stage: str, candidate: Candidate, tasks_root: Path) -> dict:
        """The keyword arguments of `stage`'s step for one dataset (after its `prev` Outcome)."""
        seed = self.seed_for(candidate.ref)
        if stage == "source":
            return {"source_key": candidate.source, "source_arg": candidate.arg, "limits_json": self.limits_json}
        if stage == "profile":
            return {}
        if stage == "design":
            pin = self.curation.pinned(candidate.ref)
            return {"seed": seed, "designer": self.designer, "config_json": self.config_json,
                    "settings_json": self.settings_json, "budget_s": self.design_budget_s,
                    **({"pin_json": pin.model_dump_json(exclude_defaults=True)} if pin is not None else {})}
        if stage == "postprocess":
            return {"seed": seed}
        if stage == "finalize":
            return {"tasks_root": str(tasks_root), "seed": seed, "design_digest": self.design_digest}
        raise ValueError(f"unknown stage {stage!r} (known: {', '.join(STAGES)})")


def designer_settings_json(designer: str, settings: dict | None) -> str:
    """Validated settings for the designer ("" if it has none); a relative cache folder is made absolute."""
    if designer not in DESIGNERS:
        raise ValueError(f"unknown designer {designer!r} (known: {', '.join(sorted(DESIGNERS))})")
    if designer not in DESIGNER_SETTINGS:
        if settings:
            raise ValueError(f"designer {designer!r} takes no settings")
        return ""
    parsed = DESIGNER_SETTINGS[designer].model_validate(settings or {})
    if hasattr(parsed, "cache_dir"):
        parsed = parsed.model_copy(update={"cache_dir": str(Path(parsed.cache_dir).resolve())})
    return parsed.model_dump_json()


def build_one(ref: str, source: str, arg: str | None, job: BuildJob, work_root: Path, tasks_root: Path,
              through: str = "finalize") -> list[Outcome]:
    """Take one dataset through every stage up to `through` (its tasks are written under `tasks_root`);
    returns one Outcome per task it makes (two when the designer finds a classification and a
    regression task, split_units), or the one failed Outcome with the stage and reason of a rejection."""
    candidate = Candidate(source, arg, ref)
    outcomes = [steps.start(ref, str(work_root))]
    for stage in STAGES[: STAGES.index(through) + 1]:
        outcomes = [STEPS[stage](o, **job.step_args(stage, candidate, tasks_root)) for o in outcomes]
        if stage == "design":
            outcomes = steps.split_units(outcomes)
    return outcomes


def list_candidates(sources: str, limit: int | None) -> list[Candidate]:
    """Every source's candidates in the sources' stable order, the first `limit` of them."""
    out = []
    for key, arg in parse_sources(sources):
        out += [Candidate(key, arg, ref) for ref in open_source(key, arg).candidates()]
    return out if limit is None else out[: max(0, limit)]


def build_inputs(seed: int, designer: str, designer_settings: dict | None, sources: str,
                 input_limits: dict | None, cache_dir: str | None, *, column_references: str = "dare",
                 ledger: Ledger | None = None, publish: str = "all",
                 design_budget_s: float = steps.DEFAULT_DESIGN_BUDGET_S) -> tuple[BuildJob, str, Path]:
    """What a build's parameters name: its BuildJob (with the curators' `ledger`, already checked against
    the sources by the caller), its sources spec (a sources file read) and its build cache folder; one
    reading for the flow and for the no-op check before Prefect."""
    sources = resolve_spec(sources)
    job = BuildJob.make(seed, designer, designer_settings,
                        DesignConfig(input_limits=InputLimits.model_validate(input_limits or {}),
                                     column_references=column_references),
                        curation=ledger, publish=publish, design_budget_s=design_budget_s)
    return job, sources, build_cache.cache_root(cache_dir)


class Laps:
    """Seconds per phase of a build, printed at the end: where a rerun spends its time."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self._clock = time.monotonic()

    def __call__(self, name: str) -> None:
        now = time.monotonic()
        self.seconds[name] = round(self.seconds.get(name, 0.0) + now - self._clock, 2)
        self._clock = now


@dataclass(frozen=True)
class Built:
    """Every candidate's Outcome, in candidate order, and the cache hits among them."""

    outcomes: list[Outcome]
    hits: dict[str, str]  # Outcome.uid -> task folder of a task restored from the build cache, not built
    keys: dict[str, str]  # Outcome.uid (and ref) -> build cache key
    deferred: set[str]  # hits not yet copied into the generation (build_generation copies them, if it publishes)
    # Units whose result came from the build cache, hits and rejections alike: they ran no step after the
    # source in this build (run_report.json's timings say so).
    restored: set[str] = frozenset()


def _on(selected: Callable[[Outcome], bool], outcomes: list[Outcome],
        run: Callable[[list[Outcome]], list[Outcome]]) -> list[Outcome]:
    """`run` over the selected outcomes only; the others keep their place and value."""
    index = [i for i, o in enumerate(outcomes) if selected(o)]
    out = list(outcomes)
    for i, done in zip(index, run([outcomes[i] for i in index])):
        out[i] = done
    return out


class NeedsWork(Exception):
    """A stage would have to run: what `cached_waves` raises for a build the caches cannot answer alone."""


def _stage_wave(run_wave: WaveRunner, job: BuildJob, candidates: list[Candidate], staging: Path):
    """(stage, extra step arguments) -> a wave of `run_wave` over a batch of outcomes."""
    by_ref = {c.ref: c for c in candidates}

    def wave(stage: str, extra: Callable[[Outcome], dict] = lambda o: {}):
        return lambda batch: run_wave(stage, batch, lambda o: {
            **job.step_args(stage, by_ref[o.ref], staging), **extra(o)})
    return wave


def source_and_look_up(run_wave: WaveRunner, job: BuildJob, candidates: list[Candidate], staging: Path,
                       cache: Path, lap: Laps) -> tuple[list[Outcome], dict[str, str], dict[str, str], set[str]]:
    """Every candidate sourced (from the source cache when its data cannot change, else by the source
    wave), duplicate tables dropped, and looked up in the build cache: (outcomes, build cache keys,
    hits as {uid: task folder}, the units restored from the cache, hits and rejections alike).
    A dataset its curators rejected fails here, before its source step."""
    wave = _stage_wave(run_wave, job, candidates, staging)
    outcomes = curator_rejections([steps.start(c.ref, str(staging / ".work")) for c in candidates], job.curation)
    sources_cache = cache.parent / core_cache.SOURCES
    source_keys = immutable_source_keys(candidates, job.limits_json)

    def cached_source(o: Outcome) -> Outcome:
        started = time.perf_counter()
        hit = build_cache.lookup_source(sources_cache, source_keys[o.ref], o) if o.ref in source_keys else None
        # A source step served from the cache costs the copy: timed as "source", so each dataset has one.
        return hit.with_seconds({"source": time.perf_counter() - started}) if hit is not None else o

    outcomes = [cached_source(o) if o.ok else o for o in outcomes]  # a curator's rejection has nothing to read
    from_cache = sum(o.ok and o.stage != "start" for o in outcomes)
    if from_cache:  # the source wave then counts only the datasets it reads
        note(f"source: {from_cache} of {plural(len(outcomes), 'dataset')} read from the source cache")
    outcomes = _on(lambda o: o.stage == "start", outcomes, wave("source"))
    for o in outcomes:
        if o.ref in source_keys:
            build_cache.store_source(sources_cache, source_keys[o.ref], o)
    lap("source")
    outcomes = dedupe_tables(outcomes)
    keys = {o.ref: build_cache.dataset_key(o, seed=job.seed, designer=job.designer, settings_json=job.settings_json,
                                           design_digest=job.design_digest,
                                           decisions_json=job.curation.decisions_json(o.ref))
            for o in outcomes if o.ok}
    sourced = {o.ref for o in outcomes if o.ok}
    outcomes, hits = apply_cache(outcomes, cache, keys)
    restored = set(hits) | {o.uid for o in outcomes if not o.ok and o.ref in sourced}  # a cached rejection
    if restored:  # the waves that follow count only what they run
        note(f"build cache: {plural(len(hits), 'task')} and {plural(len(restored) - len(hits), 'rejection')} "
             "restored, not rebuilt")
    lap("cache lookup")
    return outcomes, keys, hits, restored


def build_datasets(run_wave: WaveRunner, job: BuildJob, candidates: list[Candidate], staging: Path,
                   cache: Path, lap: Laps) -> Built:
    """Every candidate through the stage waves into `staging`, cache hits restored instead of built,
    then the guard. A cache hit never enters a wave: it is held apart in `Built.hits`."""
    wave = _stage_wave(run_wave, job, candidates, staging)
    outcomes, keys, hits, restored = source_and_look_up(run_wave, job, candidates, staging, cache, lap)

    def fresh(o: Outcome) -> bool:
        return o.uid not in hits

    outcomes = _on(fresh, outcomes, wave("profile"))
    outcomes = _on(fresh, outcomes, wave("design"))
    outcomes = steps.split_units(outcomes)  # from here on, one Outcome per task
    store_units(outcomes, cache, keys)
    store_rejections(outcomes, cache, keys, ("profile", "design"))
    outcomes = dedupe_task_dirs(outcomes, hits)
    outcomes = curator_rejections(outcomes, job.curation)  # a task of a dataset rejected by its problem type
    if any(o.ok and fresh(o) for o in outcomes):  # a task to build: the guard and the root files will run
        warm_root_phase()
    outcomes = _on(fresh, outcomes, wave("postprocess"))
    store_rejections(outcomes, cache, keys, ("postprocess",))
    # The generation's finalize also stores the finished task in the cache (build_cache.finalize_and_store).
    outcomes = _on(fresh, outcomes, wave("finalize", lambda o: {"cache_dir": str(cache), "key": keys[o.uid]}))
    lap("dataset steps")  # not "build": the summary's build time is the whole flow run
    # A cached task that already passed the guard once is not re-run in two fresh interpreters: that
    # would cost a no-op nightly rerun as much as building. Tasks the guard passes are marked so.
    verified = {o.uid for o in outcomes if o.uid in hits and build_cache.is_verified(cache, keys[o.uid])}
    # Only the hits the guard must see are copied now; the verified ones wait for build_generation,
    # which copies none of them when the tree is unchanged.
    restore_hits(outcomes, hits, keys, cache, staging, lambda uid: uid not in verified)
    lap("cache restore")
    to_check = sum(o.ok and o.uid not in verified for o in outcomes)
    if to_check:  # else not even imported: it loads scikit-learn (see write_root_files), seconds of a release
        from pipeline.guard import guard_staging_tree

        note(f"checking determinism: re-running {plural(to_check, 'reference solution')} in two fresh "
             "interpreters")
        outcomes = _on(lambda o: o.ok and o.uid not in verified, outcomes,
                       lambda batch: guard_staging_tree(staging, batch))
    else:  # what the guard does besides checking
        from finalize.schema import copy_schema_into

        copy_schema_into(staging)
    for o in outcomes:
        if o.ok and o.uid in keys:
            build_cache.mark_verified(cache, keys[o.uid])
    lap("guard")
    return Built(outcomes, hits, keys, deferred=verified, restored=restored)


# What the guard and the root files load in this process: scikit-learn comes with each of them.
ROOT_PHASE_MODULES = ("pipeline.guard", "finalize.dsagent.build", "finalize.timeseries")


def warm_root_phase() -> threading.Thread:
    """Start the sandbox's fork server and import the guard's and the root files' modules in a
    background thread, while the postprocess and finalize waves run. Those waves run in step worker
    processes (pipeline.step_processes) or Dask workers, so this process would otherwise start both
    only at the guard: the fork server imports pandas and scikit-learn and fits each model type once
    (finalize.warm_pool) before its first job forks, seconds during which nothing else runs. Nothing
    here writes a file; the guard and write_root_files import what they use as before."""
    def warm() -> None:
        try:
            forkserver_context()
            for module in ROOT_PHASE_MODULES:
                importlib.import_module(module)
        except Exception:  # noqa: BLE001 -- the guard's own call raises the same error where it is handled
            return

    thread = threading.Thread(target=warm, name="daregen-warm-root-phase", daemon=True)
    thread.start()
    return thread


def curator_rejections(outcomes: list[Outcome], ledger: Ledger) -> list[Outcome]:
    """Datasets (before their source step) and tasks (once split into units) a curator rejected, failed
    with the curator's reason; never cached, so lifting the rejection builds them again."""
    out = []
    for o in outcomes:
        reject = ledger.rejection(o.ref, o.unit or None) if o.ok else None
        if reject is not None and (reject.problem_type is None or o.unit):
            o = o.failed(CURATION_STAGE, f"curator rejection: {reject.reason}", "curator_rejection")
        out.append(o)
    return out


def withhold_unapproved(outcomes: list[Outcome], entries: list[dict],
                        staging: Path) -> tuple[list[Outcome], list[dict]]:
    """`--publish approved`: every built task that is not approved at its current design digest leaves
    the generation, failed at the `withheld` stage with why (unreviewed, pinned, changed since approval).
    `entries` are the ok outcomes' question-list entries, in order; returns both, the withheld gone."""
    out, kept = [], []
    entry_of = iter(entries)
    for o in outcomes:
        if o.ok:
            entry = next(entry_of)
            task_dir = staging / entry["file_path"]
            review = task_review(task_dir, entry=entry)
            if review is None or review.state != "approved":
                o = (o.failed(WITHHELD_STAGE, review.why_not_approved(), review.withheld_code) if review else
                     o.failed(WITHHELD_STAGE, "no readable all_metadata.json", "unreadable_metadata"))
                shutil.rmtree(task_dir, ignore_errors=True)
            else:
                kept.append(entry)
        out.append(o)
    return out, kept


def immutable_source_keys(candidates: list[Candidate], limits_json: str) -> dict[str, str]:
    """ref -> source cache key, for the candidates of sources whose data cannot change under a ref
    (those with `content_version`, the built-in wheels); the others are read and hashed every build."""
    out = {}
    for c in candidates:
        version = getattr(open_source(c.source, c.arg), "content_version", None)
        if callable(version):
            out[c.ref] = build_cache.source_key(c.ref, version(c.ref), limits_json)
    return out


def restore_hits(outcomes: list[Outcome], hits: dict[str, str], keys: dict[str, str], cache: Path, staging: Path,
                 selected: Callable[[str], bool]) -> None:
    """Copy the selected cache hits that survived the task-folder check into the generation."""
    for o in outcomes:
        if o.ok and o.uid in hits and selected(o.uid):
            build_cache.restore(cache, keys[o.uid], hits[o.uid], staging)


# Two tables hold the same data when every column of the narrower one holds the values of a column
# of the wider one, the narrower keeps most of the wider's columns (a few columns taken from a large
# survey ask another question), and at least two of them are informative (column_fingerprint: flags,
# constants and row numbers coincide by chance).
TWIN_MIN_ROWS = 10
TWIN_MIN_COLUMN_SHARE = 0.75
TWIN_MIN_INFORMATIVE = 2


def same_data(a: dict, b: dict) -> bool:
    """Whether two tables' column_fingerprints hold the same data up to column names, column order,
    row order and a column the wider one adds (AER/Electricity1970's row names beside Ecdat/Electricity)."""
    if a["rows"] != b["rows"] or a["rows"] < TWIN_MIN_ROWS:
        return False
    narrow, wide = sorted((a["columns"], b["columns"]), key=len)
    if len(narrow) < TWIN_MIN_COLUMN_SHARE * len(wide):
        return False
    spare = Counter(digest for digest, _ in wide)
    for digest, _ in narrow:
        if spare[digest] == 0:
            return False
        spare[digest] -= 1
    return sum(informative for _, informative in narrow) >= TWIN_MIN_INFORMATIVE


def dedupe_tables(outcomes: list[Outcome]) -> list[Outcome]:
    """The same data reaching the build twice (two sources, two versions, two packages shipping one
    table under other column names) is built once: the first in candidate order (the sources'
    catalogue order) is kept, and the other is skipped naming its twin. Each sourced dataset's
    column_fingerprints were written once by its source step."""
    kept: list[tuple[str, dict]] = []
    out = []
    for o in outcomes:
        if o.ok:
            content = read_json(Path(o.work_dir) / steps.CONTENT_JSON)
            twin = next((ref for ref, other in kept if same_data(content, other)), None)
            if twin is not None:
                o = o.failed("source", f"duplicate of {twin}: the same values in {content['rows']} rows, up to "
                                       "column names, column order and row order", "duplicate")
            else:
                kept.append((o.ref, content))
        out.append(o)
    return out


def apply_cache(outcomes: list[Outcome], cache: Path, keys: dict[str, str]) -> tuple[list[Outcome], dict[str, str]]:
    """A dataset's cached rejection becomes its failed Outcome; a dataset whose every task is cached
    becomes its units (as split_units makes them), each a cached rejection or a hit returned as
    {uid: task folder} with its entry put in its work folder, where the build collects entries.
    A cached task whose files no longer match the content hashes it was stored with is discarded
    and its dataset rebuilt (said in a note). Adds the units' keys to `keys`."""
    out, hits = [], {}
    for o in outcomes:
        hit = build_cache.lookup(cache, keys[o.ref]) if o.ok else None
        units = build_cache.lookup_units(cache, keys[o.ref]) if o.ok and hit is None else None
        if hit is not None and not hit["ok"]:
            out.append(o.failed(hit["stage"], hit["reason"], hit.get("code", "")))
            continue
        bad = next(((u, p) for u in units or () if (p := build_cache.entry_problem(cache, build_cache.unit_key(
            keys[o.ref], u)))), None)
        if bad is not None:  # never published as is: the dataset is built again and stored afresh
            unit, problem = bad
            note(f"build cache: the cached {unit} task of {o.ref} failed its check ({problem}); rebuilding it",
                 once=True)  # the entry is gone: a flow after cached_build_before_start will not say it again
            build_cache.discard(cache, build_cache.unit_key(keys[o.ref], unit))
            units = None
        if not units:
            out.append(o)
            continue
        for i, unit in enumerate(units):
            work = Path(o.work_dir) if i == 0 else steps.unit_work(Path(o.work_dir), unit)
            work.mkdir(exist_ok=True)
            # The dataset's own steps (source) stay on its first unit only, as split_units leaves them.
            u = o.model_copy(update={"unit": unit, "work_dir": str(work), **({} if i == 0 else {"seconds": {}})})
            keys[u.uid] = build_cache.unit_key(keys[o.ref], unit)
            result = build_cache.lookup(cache, keys[u.uid])
            if not result["ok"]:
                u = u.failed(result["stage"], result["reason"], result.get("code", ""))
            else:
                hits[u.uid] = result["task_dir"]
                write_json(work / steps.ENTRY_JSON, result["entry"])
            out.append(u)
    return out, hits


def store_units(outcomes: list[Outcome], cache: Path, keys: dict[str, str]) -> None:
    """After split_units: each designed dataset's units into the cache, and their keys into `keys`."""
    units: dict[str, list[str]] = {}
    for o in outcomes:
        if o.ok and o.unit and o.uid not in keys:
            keys[o.uid] = build_cache.unit_key(keys[o.ref], o.unit)
            units.setdefault(o.ref, []).append(o.unit)
    for ref, kinds in units.items():
        build_cache.store_units(cache, keys[ref], kinds)


def store_rejections(outcomes: list[Outcome], cache: Path, keys: dict[str, str], stages: tuple[str, ...]) -> None:
    for o in outcomes:
        if (not o.ok and o.stage in stages and o.uid in keys
                and build_cache.cacheable_rejection(o.stage, o.code)):
            build_cache.store_rejection(cache, keys[o.uid], o.stage, o.reason, o.code)


def dedupe_task_dirs(outcomes: list[Outcome], hits: dict[str, str]) -> list[Outcome]:
    """Two tasks must never write the same task folder; the later unit loses, with a reason."""
    seen: dict[str, str] = {}
    out = []
    for o in outcomes:
        if o.ok:
            task_dir = hits.get(o.uid) or steps.load_spec(Path(o.work_dir)).task_dir
            if task_dir in seen:
                o = o.failed("design", f"task folder {task_dir} already taken by {seen[task_dir]}", "task_dir_taken")
            else:
                seen[task_dir] = o.uid
        out.append(o)
    return out


def write_root_files(staging: Path, entries: list[dict], job: BuildJob, sources: str,
                     limit: int | None, cache: Path | None = None,
                     dsagent_seconds: dict | None = None, digests: dict[str, str] | None = None) -> dict | None:
    """question_list.json, dsagentbench/, environment.json and the manifest (last: it hashes the rest);
    returns the DSAgentBench report (None when nothing was built). With `cache` (the build cache's
    folder), a DARE task whose folder was already validated is not validated again. `dsagent_seconds`
    receives the DSAgentBench steps' seconds per task folder; `digests` the design digests stamp_curation
    computed, which tasks.parquet records. An approved release (`job.publish` "approved") makes its desktop
    tasks afresh, without the cache."""
    # Imported here, not at the top: it loads scikit-learn, which no build needs before its design wave,
    # and `import flows` is on the way to a build's first progress line (so is finalize.timeseries).
    from finalize.dsagent.build import write_dsagent

    write_question_list(staging, entries)
    # An approved release never reads the DSAgentBench cache: its desktop tasks are made and validated
    # again from the approved task folders (which their design digests cover), so no cached byte outside
    # a curator's approval reaches it (docs/security.md).
    dsagent_cache = (cache.parent / core_cache.DSAGENT if cache is not None and job.publish != "approved"
                     else None)
    # desktop configs, validated
    dsagent_report = (write_dsagent(staging, job.seed, cache_dir=dsagent_cache, seconds=dsagent_seconds,
                                    on_note=note) if entries else None)
    write_json(staging / names.ENVIRONMENT, fingerprint())
    write_task_index(staging, digests)  # tasks.parquet, listed in the manifest
    write_json(staging / names.MANIFEST, build_manifest(staging, {
        "seed": job.seed, "sources": sources, "limit": limit, "designer": job.designer,
        "design_config": job.design_digest, "code_version": code_version(), "tasks": len(entries),
        # only when not `all`, so an `all` tree's manifest keeps its bytes; pruning reads it (publish_mode)
        **({"publish": job.publish} if job.publish != names.PUBLISH_MODES[0] else {})}))
    return dsagent_report


def inputs_key(job: BuildJob, sources: str, limit: int | None, outcomes: list[Outcome], keys: dict[str, str]) -> str:
    """A hash of everything that decides a generation's bytes, reports included (timings aside): each
    task's build cache key (itself a hash of its table, record, code and library versions), each
    rejection, the approvals of the built datasets, the build's settings, and the code of the root
    files and reports. Two builds with the
    same key publish the same tree: determinism is the product."""
    if any(o.ok and o.uid not in keys for o in outcomes):
        return ""  # a task the cache cannot name: never taken for unchanged
    units = [[o.uid, keys[o.uid]] if o.ok else [o.uid, o.stage, o.reason] for o in outcomes]
    payload = {"units": units, "seed": job.seed, "designer": job.designer, "settings": job.settings_json,
               "design": job.design_digest, "limits": job.limits_json, "sources": sources, "limit": limit,
               "code": build_cache.code_digest(), "environment": fingerprint_digest()}
    if job.publish != "all":
        payload["publish"] = job.publish
    approvals = job.curation.approvals_json(sorted({o.ref for o in outcomes if o.ok}))
    if approvals != "[]":  # stamped into the tree after the cache (stamp_curation): they decide its bytes
        payload["approvals"] = approvals
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()




def unchanged(published: Path, key: str) -> bool:
    """The published generation was built from the same inputs (`inputs_key`) and is whole."""
    report = read_json_or_none(published / names.RUN_REPORT_JSON)
    if not key or not isinstance(report, dict) or report.get("inputs_key") != key:
        return False
    # A desktop task the machine dropped (a sandbox job past its wall time on a loaded machine), not its
    # inputs: such a tree is rebuilt, never kept as is.
    if (report.get("dsagentbench") or {}).get(names.MACHINE_DROPPED):
        return False
    try:
        return not check_generation(published)
    except (OSError, ValueError, KeyError, TypeError):  # a damaged manifest or question list: rebuild
        return False


def _report_or_warn(what: str, write: Callable, *args) -> None:
    """A report is a view of the tree, not part of it: its failure (a licence matplotlib cannot draw,
    say) is a warning, never a lost build."""
    try:
        write(*args)
    except Exception as exc:  # noqa: BLE001 -- see the docstring
        reason = shorten_cause(exc, 200)
        note(f"warning: {what} not written ({type(exc).__name__}: {reason})")


def unchanged_report(outcomes: list[Outcome], entries: list[dict], usages: list[dict], hits: dict[str, str],
                     restored: set[str], previous: Path, job: BuildJob, key: str, sources: str, limit: int | None,
                     considered: int, started: float, lap: Laps) -> dict:
    """The run report of a build whose tree is the published generation `previous` (nothing written)."""
    report = build_report(outcomes, entries, considered, time.monotonic() - started, job.seed, sources, limit)
    kept = read_json(previous / names.RUN_REPORT_JSON)
    report.update({k: kept[k] for k in ("dsagentbench", "time_series", "designs", "curation") if k in kept})
    report["timings"] = step_timings(outcomes, entries, {}, lap.seconds, restored)
    report.update(cached=sum(o.ok and o.uid in hits for o in outcomes), inputs_key=key, published=False,
                  unchanged=True, generation=previous.name)
    if job.settings_json:
        report["llm"] = LLMUsage.total(usages)
    note(f"unchanged: the inputs of every task are those of the published generation {previous.name}; "
         "nothing published")
    note(f"seconds by phase: {phase_seconds(lap.seconds)}")
    return report


CACHED_BUILD_NOTE = "every candidate was answered by the caches: built in this process, without Prefect's flow"


def cached_waves(stage: str, outcomes: list[Outcome], args: Callable[[Outcome], dict]) -> list[Outcome]:
    """A WaveRunner for a build the caches answer: the source step of an offline source runs here, in this
    thread (a local folder's files are read and hashed every build: their bytes may have changed under the
    same ref), and any other step, or a source that downloads, raises NeedsWork."""
    todo = [o for o in outcomes if o.ok]  # a wave passes a failed outcome through, as flows._wave does
    if not todo:
        return outcomes
    if stage != "source" or any(source_kind(args(o)["source_key"]).needs_network for o in todo):
        raise NeedsWork(stage)
    return [steps.source_step(o, **args(o)) if o.ok else o for o in outcomes]


def cached_build_before_start(job: BuildJob, out: Path, *, sources: str, limit: int | None, cache: Path,
                              keep: int, started: float) -> dict | None:
    """The build without Prefect when nothing but the caches has to answer: every candidate's source step
    cached or offline (run here), every task a cache hit. Then no stage has a step to run, and the build's own
    work (the guard of an unverified hit, stamping the review states, the root files, the reports, publishing
    or the no-op) is this process's anyway: Prefect's server, flow and worker processes would only add their
    start-up, most of the cost of releasing the approved tasks of an unchanged build. Returns the run report,
    or None as soon as a stage would have to run (nothing published, no note printed: the flow then builds)."""
    out = Path(os.path.abspath(out))
    with build_lock(out):
        staging = new_generation(out)
        try:
            with held_notes() as lines:  # the flow repeats them when it has work to do: printed only here
                report = build_generation(cached_waves, job, staging, out, sources=sources, limit=limit,
                                          cache=cache, keep=keep, started=started)
        except NeedsWork:
            shutil.rmtree(staging, ignore_errors=True)
            return None
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
    for line in lines:
        note(line)
    note(CACHED_BUILD_NOTE)
    return report


def build_generation(run_wave: WaveRunner, job: BuildJob, staging: Path, out: Path, *, sources: str,
                     limit: int | None, cache: Path, keep: int, started: float) -> dict:
    """Build the first `limit` candidates of `sources` into the partial generation `staging` and publish
    it at `out` if it holds any task (an empty build never replaces a published tree); returns the run
    report, also written at the generation's root."""
    pin_blas_threads()  # before any thread starts: values computed here (the EDA answers) stay the sandbox's
    lap = Laps()
    candidates = list_candidates(sources, limit)
    note(f"{plural(len(candidates), 'candidate dataset')} from {sources}")
    built = build_datasets(run_wave, job, candidates, staging, cache, lap)
    outcomes = built.outcomes
    entries = [read_json(Path(o.work_dir) / steps.ENTRY_JSON) for o in outcomes if o.ok]
    usages = [read_json(p) for o in outcomes if (p := Path(o.work_dir) / steps.DESIGN_USAGE_JSON).exists()]
    shutil.rmtree(staging / ".work", ignore_errors=True)  # absent when no candidate was considered
    key = inputs_key(job, sources, limit, outcomes, built.keys)
    previous = published_generation(out)
    if entries and previous is not None and unchanged(previous, key):
        # Nothing that decides the tree's bytes changed: the published generation is this build's tree.
        # Keep it and write nothing, so no published file is rewritten (the nightly no-op).
        shutil.rmtree(staging)
        lap("unchanged check")
        return unchanged_report(outcomes, entries, usages, built.hits, built.restored, previous, job, key, sources,
                                limit, len(candidates), started, lap)
    restore_hits(outcomes, built.hits, built.keys, cache, staging, lambda uid: uid in built.deferred)
    lap("cache restore")
    # decisions change what is published, not what is built
    digests = stamp_curation(staging, entries, job.curation)
    if job.publish == "approved":
        outcomes, entries = withhold_unapproved(outcomes, entries, staging)
    from finalize.timeseries import ts_counts  # loads scikit-learn: see write_root_files

    dsagent_seconds: dict[str, dict[str, float]] = {}
    dsagent_report = write_root_files(staging, entries, job, sources, limit, cache, dsagent_seconds, digests)
    lap("root files")
    report = build_report(outcomes, entries, len(candidates), time.monotonic() - started, job.seed, sources, limit)
    report["timings"] = step_timings(outcomes, entries, dsagent_seconds, lap.seconds, built.restored)
    # Every task restored from the cache, published or withheld: the count the "build cache: N tasks
    # restored" line printed, so the two never disagree.
    report["cached"] = sum(o.uid in built.hits for o in outcomes)
    report["dsagentbench"] = dsagent_report  # counts and dropped desktop tasks with reasons
    report["time_series"] = ts_counts(staging, entries)  # tasks, panels, resampled (finalize/timeseries.py)
    report["designs"] = design_rows(staging, digests)  # each task's target, evidence and rejected candidates
    report["curation"] = state_counts(tree_reviews(staging, digests=digests))  # tasks per review state
    if job.settings_json:
        report["llm"] = LLMUsage.total(usages)
    report["inputs_key"] = key  # a rerun with the same key keeps this generation (unchanged)
    report["published"] = bool(entries)
    if entries:
        report["generation"] = sealed_path(staging).name
    write_json(staging / names.RUN_REPORT_JSON, report)
    write_report_md(staging, report)
    if not entries:  # its reasons stay readable beside the output, at the path the CLI prints
        kept = staging.parent / f"unpublished-{names.RUN_REPORT_MD}"
        shutil.copyfile(staging / names.RUN_REPORT_MD, kept)
        report["run_report_md"] = str(kept)
        shutil.rmtree(staging)
        return report
    _report_or_warn("tree reports", write_tree_reports, staging)  # after the run report: it charts rejections
    lap("tree reports")
    problems = check_generation(staging)
    if problems:
        raise RuntimeError(f"generation {staging.name} not published: {'; '.join(problems[:5])}")
    if previous is not None:
        _report_or_warn("diff reports", lambda: write_diff_reports(previous, staging, staging,
                                                                new_name=str(sealed_path(staging))))
    lap("check and diff")
    crash_point("publish")
    publish(staging, out, keep)
    lap("publish")
    note(f"seconds by phase: {phase_seconds(lap.seconds)}")
    return report
