"""`daregen verify TREE`: re-execute every tabular reference in the sandbox and re-check the task.

Works on any DARE-layout tree, ours or the published DARE-bench evaluation set
(whose all_metadata.json has no `daregen` block and whose `simulated_pred_file`
names a file that was shipped as simulated_pred_local.csv). For each task:

1. the IF reference runs in finalize.sandbox, from the `question` block and the
   two source files it reads, never seeing verify/;
2. its predictions are compared with verify/simulated_pred_local.csv the way
   DARE-bench scores IF (classification: exact match; regression: numpy.allclose),
   row by row on row_id, so a mismatch names the row;
3. finalize.checks.check_tabular_task re-reads the files (range filter, ids, leaks),
   finalize.schema validates all_metadata.json against schemas/all_metadata.schema.json
   and finalize.mm_check checks the MM variant is learnable and not leaky;
4. with `determinism` (the CLI's default), check_determinism re-runs every reference
   in two fresh interpreters with different PYTHONHASHSEEDs; their predictions must be
   identical, and for daregen's own tasks identical to simulated_pred_local.csv.

Checks that judge the design rather than the files (MM feasibility, the instruction's
wording) are errors for daregen's tasks and warnings for foreign ones, which are
already published.

With `regenerate`, step 2 instead rewrites simulated_pred_local.csv for this
machine and records verify/environment.json next to it: IF ground truth is the
output of floating-point code, which DARE-bench documents as environment-specific.
Time-series tasks re-run pipeline.core.ts_reference (ground_truth_v2 from val_v1, ground_truth_v1
and val_v2) and finalize.timeseries.check_ts_task.
"""

from __future__ import annotations

import contextlib
import io
import os
import time
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from finalize.checks import Problem, agent_tables, check_instruction, check_tabular_task, errors
from finalize.dsagent.build import OUT_DIR, TASKS_DIR, evaluator_source
from finalize.dsagent.config import EVALUATOR_FILE, config_problem
from finalize.metadata_txt import metadata_descriptions
from finalize.mm_check import check_mm_feasibility
from finalize.runner import (REFERENCE_TIMEOUT_S, predictions_digest, reference_files, run_fresh_batch,
                             run_reference_sandboxed, run_references_batched)
from finalize.sandbox import SandboxResult, forkserver_context, starting_processes
from finalize.schema import check_metadata_schema
from finalize.task_files import TaskFiles
from pipeline.core import names
from pipeline.core.environment import runtime_fingerprint
from pipeline.core.hashing import content_hash
from pipeline.core.jsonio import dumps, read_json
from pipeline.core.metrics import canonical_labels
from pipeline.core.records import is_time_series
from pipeline.core.safe_io import (InputLimits, UnsafeInput, printable, read_bytes_inside, read_json_inside, regular_file_inside,
                                   write_text_inside)
from pipeline.core.text import shorten_cause
from pipeline.publish import UNHASHED
from pipeline.review.untrusted_tree import tree_input_problems

TABULAR = ("classification", "regression")
_EXAMPLES = 3  # mismatching rows quoted in a message
# Two seeds that differ from each other and from the fork server's (DETERMINISTIC_ENV pins 0).
HASH_SEEDS = (1, 2718)


@dataclass(frozen=True)
class TaskVerdict:
    task: str
    status: str  # pass | fail | skipped | regenerated
    problems: tuple[Problem, ...] = ()
    note: str = ""
    seconds: float = 0.0

    def line(self) -> str:
        head = f"{self.status.upper():<11} {printable(self.task)}  ({self.seconds:.1f}s)"
        details = [printable(p) for p in self.problems] + ([printable(self.note)] if self.note else [])
        return "\n".join([head, *(f"    {d}" for d in details)])


@dataclass(frozen=True)
class VerifyReport:
    verdicts: tuple[TaskVerdict, ...]
    seconds: float

    @property
    def failed(self) -> int:
        return sum(v.status == "fail" for v in self.verdicts)

    def summary(self) -> str:
        counts: dict[str, int] = {}
        for v in self.verdicts:
            counts[v.status] = counts.get(v.status, 0) + 1
        parts = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
        return f"verified {len(self.verdicts)} tasks in {self.seconds:.1f}s: {parts}"


def discover_tasks(tree: Path) -> list[Path]:
    """Task folders (those with verify/all_metadata.json) directly under `tree`, or `tree` itself."""
    if (tree / names.VERIFY_DIR / names.ALL_METADATA).is_file():
        return [tree]
    if not tree.is_dir():
        raise ValueError(f"{tree} is not a folder")
    # lexists, not is_file: a task whose metadata is a link or a FIFO is listed, then refused with its reason.
    return sorted(p for p in tree.iterdir() if os.path.lexists(p / names.VERIFY_DIR / names.ALL_METADATA))


def _simulated_pred_path(task_dir: Path, question: dict) -> Path:
    """verify/simulated_pred_local.csv; else the file `simulated_pred_file` names, if that exists."""
    path = task_dir / names.VERIFY_DIR / names.SIMULATED_PRED
    named = task_dir / names.VERIFY_DIR / Path(str(question.get("simulated_pred_file", ""))).name
    return path if path.exists() or not named.is_file() else named


def compare_predictions(reference: pd.DataFrame, recorded: pd.DataFrame, question: dict,
                        where: str, recorded_name: str) -> list[Problem]:
    """The re-run reference against the recorded IF ground truth, on row_id, one Problem per defect."""
    problems: list[Problem] = []
    targets = list(question["target"])
    missing = [c for c in (names.ROW_ID, *targets) if c not in recorded.columns]
    if missing:
        return [Problem(where, f"{recorded_name} lacks column(s) {missing}")]
    if recorded[names.ROW_ID].duplicated().any():
        return [Problem(where, f"{recorded_name} has duplicate {names.ROW_ID}s")]
    ref_ids, rec_ids = set(reference[names.ROW_ID].astype(str)), set(recorded[names.ROW_ID].astype(str))
    if ref_ids != rec_ids:
        only_ref, only_rec = sorted(ref_ids - rec_ids), sorted(rec_ids - ref_ids)
        problems.append(Problem(where, f"{recorded_name} row_ids differ from the reference's: "
                                       f"{len(only_ref)} missing (e.g. {only_ref[:_EXAMPLES]}), "
                                       f"{len(only_rec)} extra (e.g. {only_rec[:_EXAMPLES]})"))
    ref = reference.assign(_id=reference[names.ROW_ID].astype(str))
    rec = recorded.assign(_id=recorded[names.ROW_ID].astype(str))
    merged = ref.merge(rec, on="_id", suffixes=("_reference", "_recorded"))
    for t in targets:
        a, b = merged[f"{t}_reference"], merged[f"{t}_recorded"]
        if question["problem_type"] == "regression":
            x = pd.to_numeric(a, errors="coerce").to_numpy(dtype=float)
            y = pd.to_numeric(b, errors="coerce").to_numpy(dtype=float)
            if np.allclose(x, y):
                continue
            bad = ~np.isclose(x, y)
            rule = "numpy.allclose fails"
        else:
            ca, cb = canonical_labels(a.astype(str), b.astype(str))
            bad = ca.to_numpy() != cb.to_numpy()
            if not bad.any():
                continue
            rule = "exact match fails"
        rows = merged.loc[bad, "_id"].tolist()
        examples = "; ".join(f"row_id {i}: recorded {r!r}, reference {e!r}" for i, e, r in
                             zip(rows[:_EXAMPLES], a[bad].tolist()[:_EXAMPLES], b[bad].tolist()[:_EXAMPLES]))
        problems.append(Problem(where, f"{recorded_name} disagrees with the re-run reference on {t!r} "
                                       f"({rule}): {len(rows)} of {len(merged)} rows differ ({examples})"))
    return problems


def verify_task(task_dir: Path, regenerate: bool = False, timeout_s: float = REFERENCE_TIMEOUT_S,
                extra: tuple[Problem, ...] = (), limits: InputLimits | None = None) -> TaskVerdict:
    """`extra`: problems found for this task by tree-level checks (determinism). A tree may be hostile:
    whatever its files do, the task fails with its reason and the other tasks go on."""
    start = time.monotonic()
    try:
        return _verify_task(task_dir, regenerate, timeout_s, extra, limits or InputLimits(), start)
    except Exception as exc:  # noqa: BLE001 -- one task's defect, however odd, is that task's verdict
        return _failed(task_dir, start, exc)


def _verify_task(task_dir: Path, regenerate: bool, timeout_s: float, extra: tuple[Problem, ...],
                 limits: InputLimits, start: float) -> TaskVerdict:
    prepared = _prepare(task_dir, extra, limits, start)
    if isinstance(prepared, TaskVerdict):
        return prepared
    result = run_reference_sandboxed(task_dir, timeout_s, prepared.question)
    return _finish(prepared, result, regenerate, None)


@dataclass(frozen=True)
class _Ready:
    """A tabular task whose files passed the cheap checks: its reference is to run next."""
    task_dir: Path
    meta: dict
    question: dict
    problems: tuple[Problem, ...]  # schema and tree-level (determinism) problems, reported first
    start: float

    def done(self, status: str, problems=(), note: str = "") -> TaskVerdict:
        return TaskVerdict(self.task_dir.name, status, tuple(problems), note, time.monotonic() - self.start)


def _prepare(task_dir: Path, extra: tuple[Problem, ...], limits: InputLimits, start: float) -> TaskVerdict | _Ready:
    """Everything before the reference runs: input safety, metadata, schema; a time-series task is
    verified whole here. A TaskVerdict when the task is decided, else the _Ready task."""
    where = task_dir.name
    done = lambda status, problems=(), note="": TaskVerdict(  # noqa: E731
        where, status, tuple(problems), note, time.monotonic() - start)
    unsafe = tree_input_problems(task_dir, limits)
    if unsafe:
        return done("fail", unsafe)
    try:
        meta = read_json_inside(task_dir / names.VERIFY_DIR / names.ALL_METADATA, task_dir.parent, limits)
    except UnsafeInput as exc:
        return done("fail", [Problem(where, f"unreadable {names.ALL_METADATA}: {exc}")])
    # Validated before any field is used: a list for `question` or `../../etc/passwd` for
    # save_file_type must fail this task on one line, not raise somewhere further down.
    schema_problems = check_metadata_schema(where, meta)
    if schema_problems:
        more = f" (and {len(schema_problems) - 1} more)" if len(schema_problems) > 1 else ""
        return done("fail", [Problem(where, schema_problems[0].message + more)])
    question = meta["question"]
    kind = question.get("problem_type")
    if is_time_series(question):
        from finalize.timeseries import verify_ts_task

        problems = schema_problems + verify_ts_task(task_dir, question) + list(extra)
        return done("fail" if errors(problems) else "pass", problems)
    if kind not in TABULAR:
        if schema_problems:
            return done("fail", schema_problems, note=f"{kind or 'unknown'} reference not re-run by verify yet")
        return done("skipped", note=f"{kind or 'unknown'} tasks are not supported by verify yet "
                                    f"(all_metadata.json is valid against the schema)")
    missing = [n for n, p in reference_files(task_dir, question).items() if not p.is_file()]
    if missing:
        return done("fail", [Problem(where, f"missing {', '.join(missing)}")])
    return _Ready(task_dir, meta, question, (*schema_problems, *extra), start)


def _file_checks(task: _Ready) -> list[Problem]:
    """The checks that read the task's files but not the reference's predictions (so they may run
    while the reference does): ids, range filter and leaks, the instruction, MM feasibility."""
    files = TaskFiles(task.task_dir, task.question["save_file_type"])  # train_v2, val_v2, ground truth read once
    problems = check_tabular_task(task.task_dir, files)
    problems += _instruction_problems(task.task_dir)
    problems += check_mm_feasibility(task.task_dir, task.question, "error" if "daregen" in task.meta else "warning",
                                     files)
    return problems


def _finish(task: _Ready, result: SandboxResult, regenerate: bool, checks) -> TaskVerdict:
    """The verdict from the reference's result; `checks`: _file_checks(task) already started (a
    future), or None to run them here, after any --regenerate write."""
    task_dir, question, where = task.task_dir, task.question, task.task_dir.name
    if not result.ok:
        return task.done("fail", [Problem(where, f"reference solution {result.reason}")])
    if not isinstance(result.value, str) or not result.value.strip():
        return task.done("fail", [Problem(where, "reference solution returned no predictions (missing output)")])
    problems: list[Problem] = list(task.problems)
    sim_path = _simulated_pred_path(task_dir, question)
    if regenerate:
        # Never through a link the tree planted (a `simulated_pred_local.csv -> ~/.bashrc` would
        # receive row ids the tree's author chose): refused, and written by temp file and rename.
        sim_path = task_dir / names.VERIFY_DIR / names.SIMULATED_PRED
        try:
            write_text_inside(sim_path, task_dir.parent, result.value)
            write_text_inside(task_dir / names.VERIFY_DIR / names.ENVIRONMENT, task_dir.parent,
                              dumps(runtime_fingerprint()))
        except UnsafeInput as exc:
            return task.done("fail", [Problem(where, str(exc))])
    elif not sim_path.is_file():
        problems.append(Problem(where, f"missing {names.VERIFY_DIR}/{names.SIMULATED_PRED}"))
    else:
        reference = pd.read_csv(io.StringIO(result.value), dtype=str, keep_default_na=False)
        recorded = pd.read_csv(sim_path, dtype=str, keep_default_na=False)
        problems += compare_predictions(reference, recorded, question, where, sim_path.name)
    problems += checks.result() if checks is not None else _file_checks(task)
    status = "fail" if errors(problems) else ("regenerated" if regenerate else "pass")
    return task.done(status, problems)


def _instruction_problems(task_dir: Path) -> list[Problem]:
    """check_instruction on the tree's question_list.json entry: an error for daregen's own
    tasks, a warning for foreign ones (DARE-bench names columns only by description)."""
    listing = task_dir.parent / names.QUESTION_LIST
    if not listing.is_file():
        return []
    entry = next((e for e in read_json_inside(listing, listing.parent) if e.get("file_path") == task_dir.name), None)
    if entry is None or not entry.get("question_v1"):
        return [Problem(task_dir.name, f"no question_v1 in {names.QUESTION_LIST}", "warning")]
    meta = read_json(task_dir / names.VERIFY_DIR / names.ALL_METADATA)
    txt = task_dir / names.SOURCE_DIR / names.METADATA_TXT
    descriptions = metadata_descriptions(txt.read_text(encoding="utf-8")) if txt.is_file() else {}
    ours = "daregen" in meta  # daregen's own wording is held to every fact; a foreign one to the loose checks
    tables = agent_tables(task_dir / names.SOURCE_DIR, meta["question"]["save_file_type"]) if ours else []
    return check_instruction(task_dir.name, entry["question_v1"], meta["question"], descriptions,
                             "error" if ours else "warning", strict=ours, tables=tables)


def check_determinism(task_dirs: list[Path], compare_recorded: bool = True,
                      per_task_s: float = 60.0, limits: InputLimits | None = None,
                      seconds: dict[str, float] | None = None) -> dict[str, list[Problem]]:
    """Problems per task folder name: the tabular references run in two fresh sandboxed interpreters,
    one per seed of HASH_SEEDS (concurrently), must give byte-identical predictions; with
    `compare_recorded`, a daregen task's must also equal its simulated_pred_local.csv (written by a
    forked warm-pool job, so this also shows forking changed nothing). Tasks that are not tabular or
    lack their files are left to the per-task checks. `seconds`, if given, receives each task's
    reference seconds summed over both interpreters (the build's cost profile)."""
    tasks: dict[str, tuple[Path, dict]] = {}
    for i, task_dir in enumerate(task_dirs):
        # A task with links, oversized inputs or metadata off the schema is never copied into a job.
        if tree_input_problems(task_dir, limits):
            continue
        try:
            meta = read_json_inside(task_dir / names.VERIFY_DIR / names.ALL_METADATA, task_dir.parent, limits)
            if check_metadata_schema(task_dir.name, meta):
                continue
            q = meta["question"]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if q.get("problem_type") in TABULAR and all(p.is_file() for p in reference_files(task_dir, q).values()):
            tasks[f"t{i:05d}"] = (task_dir, q)
    if not tasks:
        return {}
    with ThreadPoolExecutor(max_workers=len(HASH_SEEDS)) as pool:
        runs = list(pool.map(lambda seed: run_fresh_batch(tasks, seed, per_task_s), HASH_SEEDS))
    out: dict[str, list[Problem]] = {}
    for key, (task_dir, q) in tasks.items():
        where = task_dir.name
        problems: list[Problem] = []
        reports = []
        for seed, run in zip(HASH_SEEDS, runs):
            if not run.ok:
                problems.append(Problem(where, f"determinism: fresh interpreter (PYTHONHASHSEED={seed}) "
                                               f"{run.reason}", code="determinism_run_failed"))
                continue
            report = run.value.get(key, {"ok": False, "error": "no result"})
            if seconds is not None:
                seconds[where] = seconds.get(where, 0.0) + float(report.get("seconds") or 0.0)
            if not report["ok"]:
                problems.append(Problem(where, f"determinism: reference failed in a fresh interpreter "
                                               f"(PYTHONHASHSEED={seed}): {report['error']}",
                                        code="determinism_reference_failed"))
            reports.append(report)
        digests = {r.get("digest") for r in reports if r["ok"]}
        if len(digests) > 1:
            problems.append(Problem(where, "determinism: the reference's predictions differ between fresh "
                                           f"interpreters with PYTHONHASHSEED={HASH_SEEDS[0]} and {HASH_SEEDS[1]}",
                                    code="nondeterministic"))
        sim = task_dir / names.VERIFY_DIR / names.SIMULATED_PRED
        if compare_recorded and len(digests) == 1 and sim.is_file() and \
                "daregen" in read_json(task_dir / names.VERIFY_DIR / names.ALL_METADATA):
            if predictions_digest(sim.read_text(encoding="utf-8")) not in digests:
                problems.append(Problem(where, f"determinism: {names.SIMULATED_PRED} (written by a forked "
                                               "warm-pool job) differs from a fresh interpreter's predictions",
                                        code="nondeterministic"))
        if problems:
            out[where] = problems
    return out


# Tasks per sandboxed job (finalize.runner.run_references_batched): enough to spread the ~0.3 s of
# setting up a job over several fits, few enough that `jobs` batches keep every core busy to the end.
BATCH_TASKS = 8
# Models whose fit iterates to convergence, for scheduling only (results never depend on it): on 98
# tasks of the built-in corpus an MLP took 3-99 s per MB of train_v1 and val_v1 (median 10-12), every
# other model 0.3-0.7 s per MB (at most 5.7). Their cost is not predictable from the size, so they
# are scheduled first.
_ITERATIVE_FITS = ("MLPClassifier", "MLPRegressor")
_ITERATIVE_WEIGHT = 15.0  # their median cost per MB against the others'


def reference_cost(task_dir: Path, question: dict) -> tuple[bool, float]:
    """A guess at the reference run's cost, to schedule batches: (an iterative fit?, bytes it reads
    weighted by the model); compared as a tuple, every iterative fit ranks above every other fit."""
    size = sum(p.stat().st_size for p in reference_files(task_dir, question).values() if p.is_file())
    iterative = question.get("model_type") in _ITERATIVE_FITS
    return iterative, size * (_ITERATIVE_WEIGHT if iterative else 1.0)


def _checks_cost(task_dir: Path, question: dict) -> float:
    """A guess at _file_checks' cost: the size of the MM files it fits on."""
    src = task_dir / names.SOURCE_DIR
    ftype = str(question.get("save_file_type"))
    paths = [src / names.data_file(stem, ftype) for stem in (names.TRAIN_V2, names.VAL_V2)]
    return float(sum(p.stat().st_size for p in paths if p.is_file()))


def _batches(keys: list[str], jobs: int, costs: dict[str, tuple[bool, float]] | None = None) -> list[list[str]]:
    """Keys in batches of at most BATCH_TASKS. With `costs` (reference_cost per key): costliest first,
    a batch also closed once it holds an eighth of the total per job, so the slow fits (MLPs) run
    early and apart and the last batches, which decide how long one core waits for the other, are light.
    Without, in the given order (equal sizes)."""
    size = max(1, min(BATCH_TASKS, -(-len(keys) // (2 * jobs))))
    if costs is None:
        return [keys[i:i + size] for i in range(0, len(keys), size)]
    share = sum(costs[k][1] for k in keys) / (4 * jobs)
    batches: list[list[str]] = []
    current, held = [], 0.0
    for key in sorted(keys, key=lambda k: (not costs[k][0], -costs[k][1], k)):
        current.append(key)
        held += costs[key][1]
        if len(current) == size or held >= share:
            batches.append(current)
            current, held = [], 0.0
    return batches + ([current] if current else [])


def _failed(task_dir: Path, start: float, exc: BaseException) -> TaskVerdict:
    message = shorten_cause(exc, 300)
    return TaskVerdict(task_dir.name, "fail", (Problem(task_dir.name, f"{type(exc).__name__}: {message}"),),
                       seconds=time.monotonic() - start)


def verify_tree(tree: Path, regenerate: bool = False, jobs: int = 2, timeout_s: float = REFERENCE_TIMEOUT_S,
                on_verdict=None, determinism: bool = True, limits: InputLimits | None = None) -> VerifyReport:
    """Verify every task under `tree`; `determinism` first re-runs all references in two fresh
    interpreters (check_determinism). Then, `jobs` at a time: the cheap checks of each task
    (_prepare), the tabular references in batches of tasks of this tree, one sandboxed job per batch
    (run_references_batched: a task the batch did not answer is rerun alone), and alongside them the
    file checks that do not need the predictions (_file_checks). Verdicts are the same as
    verify_task's, task by task, in the tree's order."""
    tasks = discover_tasks(tree)
    if tasks != [tree] and not (tree / names.QUESTION_LIST).is_file():  # a whole tree lists its tasks
        raise ValueError(f"{tree}: no {names.QUESTION_LIST} (not a DARE-layout tree)")
    if not tasks:
        raise ValueError(f"no DARE-bench tasks (folders with {names.VERIFY_DIR}/{names.ALL_METADATA}) under {tree}")
    if jobs < 1:
        raise ValueError("--jobs must be >= 1")
    start = time.monotonic()
    # Before a --regenerate run rewrites simulated_pred_local.csv: compare only the two fresh runs then.
    extra = check_determinism(tasks, compare_recorded=not regenerate, limits=limits) if determinism else {}
    limits = limits or InputLimits()
    # Before --regenerate rewrites simulated_pred_local.csv: the tree as given must match its manifest.
    manifest = manifest_verdicts(tree, limits) if tasks != [tree] else []

    def prepare(t: Path) -> TaskVerdict | _Ready:
        began = time.monotonic()
        try:
            return _prepare(t, tuple(extra.get(t.name, ())), limits, began)
        except Exception as exc:  # noqa: BLE001 -- as in verify_task
            return _failed(t, began, exc)

    verdicts = []
    with ThreadPoolExecutor(max_workers=jobs) as threads, ThreadPoolExecutor(max_workers=jobs) as run_pool, \
            _checks_pool(jobs) as checks_pool:
        prepared = list(threads.map(prepare, tasks))
        ready = {f"t{i:05d}": p for i, p in enumerate(prepared) if isinstance(p, _Ready)}
        runs = {}
        costs = {k: reference_cost(r.task_dir, r.question) for k, r in ready.items()}
        for keys in _batches(list(ready), jobs, costs):
            fut = run_pool.submit(run_references_batched,
                                  {k: (ready[k].task_dir, ready[k].question) for k in keys}, timeout_s)
            runs.update({k: fut for k in keys})
        # With --regenerate the checks wait for the rewritten simulated_pred_local.csv (in _finish).
        # Costliest first, as the batches: a big task's checks must not be the last thing running.
        checks = {}
        if not regenerate:
            with starting_processes():  # the pool starts its workers in submit
                by_cost = sorted(ready, key=lambda k: (-_checks_cost(ready[k].task_dir, ready[k].question), k))
                checks = {k: _submit_checks(checks_pool, threads, ready[k]) for k in by_cost}
        for i, p in enumerate(prepared):
            key = f"t{i:05d}"
            if key in ready:
                try:
                    p = _finish(ready[key], runs[key].result()[key], regenerate, checks.get(key))
                except Exception as exc:  # noqa: BLE001 -- as in verify_task
                    p = _failed(ready[key].task_dir, ready[key].start, exc)
            verdicts.append(p)
            if on_verdict is not None:
                on_verdict(p)
    if tasks != [tree]:
        for p in [*_listed_but_missing(tree, tasks, limits), *desktop_evaluator_verdicts(tree, limits), *manifest]:
            verdicts.append(p)
            if on_verdict is not None:
                on_verdict(p)
    return VerifyReport(tuple(verdicts), time.monotonic() - start)


def _listed_but_missing(tree: Path, tasks: list[Path], limits: InputLimits) -> list[TaskVerdict]:
    """A failing verdict per question_list.json entry without its task folder (a tree that promises
    tasks it does not hold must not pass), or one for the list itself when it cannot be read."""
    try:
        entries = read_json_inside(tree / names.QUESTION_LIST, tree, limits)
    except ValueError as exc:  # UnsafeInput: a link, a FIFO, past the limits, not JSON
        return [TaskVerdict(names.QUESTION_LIST, "fail", (Problem(names.QUESTION_LIST, str(exc)),))]
    if not isinstance(entries, list):
        return [TaskVerdict(names.QUESTION_LIST, "fail", (Problem(names.QUESTION_LIST, "is not a list"),))]
    present = {t.name for t in tasks}
    listed = [e.get("file_path") if isinstance(e, dict) else None for e in entries]
    return [TaskVerdict(str(name), "fail", (Problem(str(name), f"listed in {names.QUESTION_LIST} but the tree has no "
                                                                f"such task folder with {names.VERIFY_DIR}/"
                                                                f"{names.ALL_METADATA}"),))
            for name in listed if name not in present]


def desktop_evaluator_verdicts(tree: Path, limits: InputLimits) -> list[TaskVerdict]:
    """A failing verdict per published desktop task (dsagentbench/tasks/<name>/) that is not a folder,
    whose evaluator.py is not, byte for byte, the one this daregen renders (finalize.dsagent.build.
    evaluator_source), or whose config.json is not one build_config could have written for it
    (config_problem: the evaluator it names, the files it places, the commands it runs), or places its
    files from another base than the tree's other tasks: a harness runs what config.json names on its
    host, so an edited one must not pass. A tree without dsagentbench/ has none."""
    folder = tree / OUT_DIR / TASKS_DIR
    if not os.path.lexists(folder):
        return []
    rel = f"{OUT_DIR}/{TASKS_DIR}"
    if folder.is_symlink() or not folder.is_dir():
        return [TaskVerdict(rel, "fail", (Problem(rel, "is a link or not a folder"),))]
    expected = evaluator_source().encode("utf-8")
    failed, bases = {}, {}
    for name in sorted(os.listdir(folder)):
        where = f"{rel}/{name}"
        try:
            if (folder / name).is_symlink() or not (folder / name).is_dir():
                raise UnsafeInput("is a link or not a folder")
            where = f"{rel}/{name}/{EVALUATOR_FILE}"
            if read_bytes_inside(folder / name / EVALUATOR_FILE, tree, limits.max_json_bytes) != expected:
                raise UnsafeInput("differs from the evaluator.py this daregen renders")
            where = f"{rel}/{name}/config.json"
            cfg = read_json_inside(folder / name / "config.json", tree, limits)
            made = cfg.get("daregen") if isinstance(cfg, dict) else None
            source = made.get("source_task") if isinstance(made, dict) else None
            # the task it was made from is a DARE task folder of this tree (a forged config naming `etc` or
            # `.ssh` as its task placed the host's /etc or ~/.ssh files)
            own = (isinstance(source, str) and "/" not in source and source not in ("", ".", "..")
                   and name.startswith(f"{source}__") and not (tree / source).is_symlink()
                   and (tree / source / names.VERIFY_DIR / names.ALL_METADATA).is_file())
            problem, base = (config_problem(cfg, name, source) if own
                             else ("its daregen.source_task is not a task folder of this tree", ""))
            if problem:
                raise UnsafeInput(problem)
            bases[name] = base
        except ValueError as exc:  # UnsafeInput: missing, a link, a FIFO, past the limit, not JSON
            failed[name] = (where, str(exc))
    counts = {b: list(bases.values()).count(b) for b in bases.values()}
    usual = [b for b, n in counts.items() if n == max(counts.values())]
    for name, base in bases.items():
        if len(usual) > 1 or base != usual[0]:
            failed[name] = (f"{rel}/{name}/config.json", f"places its files from {base[:80]!r}, "
                                                         f"not the base of the tree's other desktop tasks")
    return [TaskVerdict(f"{rel}/{name}", "fail", (Problem(*failed[name]),)) for name in sorted(failed)]


def manifest_verdicts(tree: Path, limits: InputLimits) -> list[TaskVerdict]:
    """A failing verdict per file the tree's manifest.json lists whose content hash (pipeline.core.hashing,
    what the build recorded) differs or that is missing, and per file under a top-level entry the manifest
    covers that it does not list (the user's own files beside them are not the build's). A tree without
    a manifest (the published DARE-bench set) has none."""
    if not os.path.lexists(tree / names.MANIFEST):
        return []
    try:
        files = read_json_inside(tree / names.MANIFEST, tree, limits).get("files")
        if not isinstance(files, dict):
            raise UnsafeInput("lists no files")
    except (ValueError, AttributeError) as exc:
        return [TaskVerdict(names.MANIFEST, "fail", (Problem(names.MANIFEST, shorten_cause(exc, 200)),))]
    problems = []
    for rel, digest in sorted(files.items()):
        try:
            if content_hash(regular_file_inside(tree / rel, tree)) != digest:
                problems.append(Problem(rel, f"differs from its hash in {names.MANIFEST}"))
        except Exception as exc:  # noqa: BLE001 -- UnsafeInput, OSError, an unreadable table: that file fails
            problems.append(Problem(str(rel)[:200], shorten_cause(exc, 200)))
    covered = {str(rel).split("/", 1)[0] for rel in files}
    for top in sorted(covered):
        if os.path.isdir(tree / top) and not os.path.islink(tree / top):
            for path in sorted((tree / top).rglob("*")):
                rel = path.relative_to(tree).as_posix()
                if rel not in files and rel not in UNHASHED and not path.is_dir():
                    problems.append(Problem(rel, f"is not listed in {names.MANIFEST}"))
    return [TaskVerdict(p.where, "fail", (p,)) for p in problems]


@contextlib.contextmanager
def _checks_pool(jobs: int):
    """`jobs` worker processes for _file_checks, forked from the sandbox's fork server (pandas and
    scikit-learn imported; the checks are mostly Python under the GIL, so threads would share one
    core). They run our own checks on the task's files, as this process would, unsandboxed: they read
    verify/, which the sandboxed reference must never see."""
    with ProcessPoolExecutor(max_workers=jobs, mp_context=forkserver_context()) as pool:
        yield pool


def _submit_checks(processes: ProcessPoolExecutor, threads: ThreadPoolExecutor, task: _Ready) -> Future:
    """_file_checks(task) in a worker process; should the pool break (a worker killed), in a thread here."""
    outer: Future = Future()

    def settle(fut: Future) -> None:
        exc = fut.exception()
        if isinstance(exc, BrokenProcessPool):
            again = threads.submit(_file_checks, task)
            again.add_done_callback(lambda f: outer.set_exception(f.exception()) if f.exception()
                                    else outer.set_result(f.result()))
        elif exc is not None:
            outer.set_exception(exc)
        else:
            outer.set_result(fut.result())
    try:
        processes.submit(_file_checks, task).add_done_callback(settle)
    except BrokenProcessPool:
        return threads.submit(_file_checks, task)
    return outer
