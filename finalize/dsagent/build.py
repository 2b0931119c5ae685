"""Write dsagentbench/ into a built DARE task tree: desktop configs with validated evaluators.

    report = write_dsagent(tree, seed, DesktopSettings())

Reads only the tree on disk (each task folder's source/ and verify/, and
question_list.json). For every DARE task it makes the IF and MM desktop variants
(XF and CF for a time-series task) and two tasks of other capability categories
(the two that rank highest for the task by a hash of the seed, the task and the category,
so adding a dataset never changes another's tasks, and adding a category changes only
the tasks where the new one ranks in the top two). Each task's oracle and evaluator are then run in the sandbox,
one job per DARE task, and a task is published only when the evaluator accepts the oracle's output and
rejects every perturbation of it. Layout:

    dsagentbench/
      dsagent_config.schema.json
      index.json              every published task: id, name, category, difficulty, tags
      validation.json         every task's oracle and perturbation scores, and why a task was dropped
      tasks/<name>/           config.json, evaluator.py, expected.json, oracle.py, [reference.csv], [files/]
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import sys
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import jsonschema

from finalize.dsagent import categories, config, dare_variants, evaluator_template, ts_variants, validate_job
from finalize.dsagent.records import DesktopSettings, DesktopTask
from finalize.reference_solution import read_table
from finalize.sandbox import Limits, run_in_sandbox
from pipeline.core import metrics, names, ts_reference
from pipeline.core.cache import (commit_entry, copy_checked, discard_entry, files_problem, folder_files,
                                 is_folder_name)
from pipeline.core.curation import metadata_digest
from pipeline.core.environment import code_version, fingerprint_digest, pin_blas_threads
from pipeline.core.hashing import sha256_file
from pipeline.core.jsonio import dumps, read_json, write_json, write_text
from pipeline.core.metrics import SOLVED_THRESHOLD
from pipeline.core.records import DatasetRejected
from pipeline.core.safe_io import read_json_inside
from pipeline.core.seeding import derive_seed, rng_for
from pipeline.core.sqlite import connect_read_only, select_all, table_names
from pipeline.core.text import shorten_cause

OUT_DIR = "dsagentbench"
TASKS_DIR = "tasks"
SCHEMA_FILE = "dsagent_config.schema.json"
SCHEMA_PATH = Path(__file__).resolve().parents[2] / "schemas" / SCHEMA_FILE
CATEGORY_TASKS_PER_DATASET = 2
_STAGE = "dsagent"
# A validation record the machine gave (the sandboxed job itself failed, past its wall time on a loaded
# machine), not the task's inputs: never cached; the report lists such tasks (names.names.MACHINE_DROPPED).
MACHINE = "machine"


def load_schema() -> dict:
    schema = read_json(SCHEMA_PATH)
    jsonschema.Draft202012Validator.check_schema(schema)
    return schema


def schema_problems(cfg: dict, schema: dict) -> list[str]:
    validator = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())
    return [f"{'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}"[:200]
            for e in sorted(validator.iter_errors(cfg), key=lambda e: list(map(str, e.absolute_path)))]


def _train_v1_tables(src: Path, question: dict) -> dict | None:
    if question["save_file_type"] != "sqlite":
        return None
    path = src / names.data_file(names.TRAIN_V1, "sqlite")
    con = connect_read_only(path)
    try:
        tables = table_names(con)
    finally:
        con.close()
    if len(tables) < 2:
        return None
    import pandas as pd

    con = connect_read_only(path)
    try:
        frames = {t: pd.read_sql_query(select_all(con, t), con) for t in tables}
    finally:
        con.close()
    # A relational task's tables join along declared keys, not row_id: the generator makes its own database.
    return frames if all(names.ROW_ID in f.columns for f in frames.values()) else None


def tasks_for(tree: Path, task_dir: Path, entry: dict | None, seed: int) -> tuple[list[DesktopTask], dict[str, str]]:
    """Every desktop task made from one DARE task folder, and {key: reason} for those that could not be made."""
    meta = read_json(task_dir / names.VERIFY_DIR / names.ALL_METADATA)
    question = meta["question"]
    if entry is None:
        raise DatasetRejected("no question_list.json entry")
    if "prediction_starting_time" in question:  # time series: XF/CF, category tasks from train.csv and val_v1.csv
        try:
            tasks, rejected = ts_variants.ts_variants(task_dir, question, entry)
        except DatasetRejected as exc:
            tasks, rejected = [], {f"{task_dir.name}/{v}": str(exc) for v in ("xf", "cf")}
    else:
        tasks, rejected = dare_variants.dare_variants(task_dir, question, entry)
    ctx = data_context(task_dir, question)
    for category in chosen_categories(seed, task_dir.name, categories.GENERATORS):
        try:
            tasks.append(categories.GENERATORS[category](ctx, rng_for(seed, task_dir.name, f"{_STAGE}/{category}")))
        except DatasetRejected as exc:
            rejected[f"{task_dir.name}/{category}"] = str(exc)
    return tasks, rejected


def data_context(task_dir: Path, question: dict) -> categories.DataContext:
    """What the category generators may read of one DARE task folder: the clean training and validation
    files (a time-series task's train.csv and val_v1.csv) and DARE's multi-table train_v1.sqlite."""
    src = task_dir / names.SOURCE_DIR
    if "prediction_starting_time" in question:
        files = {names.TRAIN_V2: names.TS_TRAIN_CSV, names.VAL_V2: names.data_file(names.VAL_V1, "csv")}
        v1_tables = None
    else:
        ftype = question["save_file_type"]
        files = {stem: names.data_file(stem, ftype) for stem in (names.TRAIN_V1, names.TRAIN_V2, names.VAL_V2)}
        v1_tables = _train_v1_tables(src, question)
    return categories.DataContext(
        task_dir=task_dir.name, files=files, question=question, train=read_table(src / files[names.TRAIN_V2]),
        val=read_table(src / files[names.VAL_V2]), train_v1_tables=v1_tables)


def chosen_categories(seed: int, task: str, generators: Mapping[str, object],
                      k: int = CATEGORY_TASKS_PER_DATASET) -> list[str]:
    """The `k` categories of `generators` a task gets, best ranked first: rendezvous hashing. Each
    (task, category) pair has its own hash, independent of the other categories, so adding a category
    changes a task's picks only where the new one ranks in its top `k` (a share k/(n+1) of tasks)."""
    return sorted(generators, key=lambda c: (derive_seed(seed, task, f"{_STAGE}/rank/{c}"), c))[:k]


# The template imports daregen's metrics between these markers; a shipped evaluator carries their text.
_METRICS_BEGIN, _METRICS_END = "# ---- daregen metrics: begin", "# ---- daregen metrics: end ----"
_TIME_KEYS_BEGIN, _TIME_KEYS_END = "# ---- daregen time keys: begin", "# ---- daregen time keys: end ----"


def evaluator_source() -> str:
    """evaluator.py as each task ships it: the template, its metrics import replaced by the source text
    of pipeline/core/metrics.py's self-contained block and its time-keys import by that of
    pipeline/core/ts_reference.py's, so it runs without daregen and scores exactly as `daregen score` does."""
    text = Path(evaluator_template.__file__).read_text(encoding="utf-8")
    for (begin, end), block in (
            ((_METRICS_BEGIN, _METRICS_END),
             "# ---- DARE-bench metrics, copied from daregen's pipeline/core/metrics.py ----\n"
             + metrics.self_contained_source().strip() + "\n# ---- end of daregen's metrics ----"),
            ((_TIME_KEYS_BEGIN, _TIME_KEYS_END),
             "# ---- forecast time keys, copied from daregen's pipeline/core/ts_reference.py ----\n"
             + ts_reference.time_keys_source().strip() + "\n# ---- end of daregen's time keys ----")):
        start, stop = text.index(begin), text.index(end) + len(end)
        text = text[:start] + block + text[stop:]
    return text


def _write_task_files(folder: Path, task: DesktopTask, evaluator_source: str) -> None:
    folder.mkdir(parents=True)
    write_text(folder / config.EVALUATOR_FILE, evaluator_source)
    write_json(folder / config.EXPECTED_FILE, task.expected)
    write_text(folder / "oracle.py", task.oracle)
    if task.reference_csv is not None:
        write_text(folder / "reference.csv", task.reference_csv)
    for name, data in sorted(task.generated.items()):
        path = folder / categories.GENERATED_DIR / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def _tree_paths(task: DesktopTask) -> dict[str, str]:
    """VM file name -> path relative to the tree (generated files live in the task's own folder)."""
    prefix = f"{OUT_DIR}/{TASKS_DIR}/{task.name}/"
    return {name: prefix + rel if rel.startswith(categories.GENERATED_DIR + "/") else rel
            for name, rel in task.inputs.items()}


def _validate(tree: Path, tasks: list[DesktopTask], evaluator_source: str, settings: DesktopSettings) -> dict:
    files = {f"{t.name}/{name}": tree / rel for t in tasks
             for name, rel in {**_tree_paths(t), **t.oracle_inputs}.items()}
    payload = [{"name": t.name, "oracle": t.oracle, "output": t.output, "expected": t.expected,
                "reference_csv": t.reference_csv, "perturbations": list(t.perturbations)} for t in tasks]
    res = run_in_sandbox(validate_job.validate_batch, (evaluator_source, payload), files,
                         Limits(wall_s=settings.timeout_s), hide=(tree.resolve().parent,))
    if not res.ok:
        # The machine's verdict, not the task's (MACHINE): the job itself failed, past its wall time say.
        return {t.name: {"oracle": None, "perturbations": {}, "error": f"validation job {res.reason}"[:300],
                         MACHINE: True} for t in tasks}
    return res.value


def verdict(record: dict) -> str:
    """'' when the evaluator accepts the oracle and rejects every perturbation, else the one-line reason."""
    if record.get("error"):
        return record["error"]
    if record["oracle"] is None or record["oracle"] < SOLVED_THRESHOLD:
        return f"evaluator scores the oracle's output {record['oracle']} (< {SOLVED_THRESHOLD})"
    accepted = [name for name, score in sorted(record["perturbations"].items())
                if score is None or (score != validate_job.NOT_APPLICABLE and score >= SOLVED_THRESHOLD)]
    if all(score == validate_job.NOT_APPLICABLE for score in record["perturbations"].values()):
        return "no perturbation applies to this output"
    if accepted:
        return f"evaluator accepts a perturbed output ({', '.join(accepted)})"
    return ""


def write_dsagent(tree: Path, seed: int, settings: DesktopSettings | None = None,
                  cache_dir: Path | None = None, seconds: dict[str, dict[str, float]] | None = None,
                  jobs: int | None = None, on_note: Callable[[str], None] | None = None) -> dict:
    """Write `tree`/dsagentbench/ and return counts plus every dropped task with its one-line reason.

    With `cache_dir`, each DARE task's desktop tasks, their validation and verdicts are kept there under
    a hash of the task folder's bytes, its question-list entry, the seed, the settings and the code
    (task_cache_key); a later tree holding the same task folder copies them instead of validating again.
    `seconds`, if given, receives {DARE task folder: {step: seconds}} (the build's cost profile). `jobs`:
    how many sandboxed validation jobs run at once (default: one per core; they are CPU-bound). A cache
    entry that fails its check is discarded and its task rebuilt, said in one line to `on_note`
    (default: stderr)."""
    on_note = on_note or (lambda line: print(line, file=sys.stderr, flush=True))
    pin_blas_threads()  # the EDA answers (Series.corr) computed here, in worker threads: see the kernel's why
    seconds = {} if seconds is None else seconds
    jobs = max(1, jobs or os.cpu_count() or 1)
    settings = settings or DesktopSettings()
    tree = Path(tree)
    out = tree / OUT_DIR
    shutil.rmtree(out, ignore_errors=True)
    (out / TASKS_DIR).mkdir(parents=True)
    schema = load_schema()
    shutil.copyfile(SCHEMA_PATH, out / SCHEMA_FILE)  # byte-identical to the published schema
    evaluator = evaluator_source()
    ql_path = tree / names.QUESTION_LIST
    entries = {e["file_path"]: e for e in read_json(ql_path)} if ql_path.is_file() else {}
    task_dirs = sorted(p.parent.parent for p in tree.glob(f"*/{names.VERIFY_DIR}/{names.ALL_METADATA}"))
    rejections: dict[str, str] = {}
    validation: dict[str, dict] = {}
    index: list[dict] = []
    machine: list[str] = []
    # One DARE task at a time per worker, from its tasks to its verdicts: the Python that makes a task's
    # desktop tasks then overlaps other tasks' sandboxed validation jobs (separate processes), where it
    # used to run for every task before the first job started. At most `jobs` jobs run at once; the
    # parts are merged in task folder order, so the output never depends on the schedule.
    running = threading.BoundedSemaphore(jobs)

    def part_of(task_dir: Path) -> dict:
        key = task_cache_key(task_dir, entries.get(task_dir.name), seed, settings) if cache_dir else None
        part = (_cached_part(Path(cache_dir), key, out, task_dir.name, evaluator, on_note, settings)
                if key else None)
        if part is not None:
            return part
        spent = seconds.setdefault(task_dir.name, {})
        started = time.perf_counter()
        try:
            tasks, rejected = tasks_for(tree, task_dir, entries.get(task_dir.name), seed)
        except (DatasetRejected, OSError, ValueError, KeyError) as exc:
            return {"validation": {}, "index": [], "rejections": {f"{task_dir.name}/*": str(exc) if isinstance(
                exc, DatasetRejected) else f"{type(exc).__name__}: {exc}"[:300]}}
        finally:
            spent["dsagent/make tasks"] = time.perf_counter() - started
        for t in tasks:
            _write_task_files(out / TASKS_DIR / t.name, t, evaluator)
        with running:
            started = time.perf_counter()
            result = _validate(tree, tasks, evaluator, settings)
            spent["dsagent/validation job"] = time.perf_counter() - started
        for step in ("oracles", "evaluations"):  # measured inside the job (validate_job.validate_batch)
            spent[f"dsagent/{step}"] = sum(float((r.get("seconds") or {}).get(step, 0.0)) for r in result.values())
        part = _judge(task_dir, tasks, rejected, result, settings, schema, out)
        if key:
            _store_part(Path(cache_dir), key, part, out)
        return part

    # One more worker than jobs: one makes the next task's desktop tasks while the jobs run.
    with ThreadPoolExecutor(max_workers=max(1, min(len(task_dirs), jobs + 1))) as pool:
        for part in pool.map(part_of, task_dirs):
            _merge(part, validation, index, rejections, machine)
    index.sort(key=lambda r: r["name"])
    report = _summary(index, rejections, len(task_dirs))
    write_json(out / "validation.json", dict(sorted(validation.items())))
    write_text(out / "index.json", dumps({"summary": report, "tasks": index}))
    # Said to the build (its run report), not written into the tree: which drops a rebuild may not keep.
    return {**report, names.MACHINE_DROPPED: sorted(machine)}


def _judge(task_dir: Path, tasks: list[DesktopTask], rejected: dict[str, str], result: dict,
           settings: DesktopSettings, schema: dict, out: Path) -> dict:
    """One DARE task's verdicts: each desktop task's config written when its evaluator passed, its folder
    removed when not; returns its validation records, index rows and rejections."""
    part: dict = {"validation": {}, "index": [], "rejections": dict(rejected), names.MACHINE_DROPPED: []}
    meta = read_json(task_dir / names.VERIFY_DIR / names.ALL_METADATA)
    info = meta.get("data_info") or {}
    source = f"daregen:{task_dir.name} ({info.get('url') or info.get('ref') or 'unknown source'})"
    for t in tasks:
        record = result.get(t.name, {"oracle": None, "perturbations": {}, "error": "not validated"})
        reason = verdict(record)
        cfg = config.build_config(t, settings, _tree_paths(t), source)
        if not reason:
            problems = schema_problems(cfg, schema)
            reason = f"config fails the schema: {problems[0]}" if problems else ""
        part["validation"][t.name] = {"key": t.key, "id": cfg["id"], "oracle": record["oracle"],
                                      "perturbations": dict(sorted(record["perturbations"].items())),
                                      "published": not reason, "reason": reason}
        if record.get(MACHINE):
            part[names.MACHINE_DROPPED].append(t.key)
        if reason:
            part["rejections"][t.key] = reason
            shutil.rmtree(out / TASKS_DIR / t.name)
            continue
        write_json(out / TASKS_DIR / t.name / "config.json", cfg)
        part["index"].append({"id": cfg["id"], "name": t.name, "source_task": t.source_task, "category": t.category,
                              "difficulty": t.difficulty, "tags": cfg["tags"], "variant": t.kind})
    return part


def _merge(part: dict, validation: dict, index: list, rejections: dict, machine: list) -> None:
    validation.update(part["validation"])
    index.extend(part["index"])
    rejections.update(part["rejections"])
    machine.extend(part.get(names.MACHINE_DROPPED, ()))  # a cached part has none: such a part is never stored


# ------------------------------------------------------------------ the per-task cache

_PART_JSON, _FILES = "part.json", "tasks"


@functools.lru_cache(maxsize=1)
def _code_digest() -> str:
    """The code a desktop task's bytes and verdict follow from: finalize/ (generators, evaluator,
    sandbox), the kernel, the schema, and the library versions the oracles run with."""
    repo = Path(__file__).resolve().parents[2]
    h = hashlib.sha256(f"{code_version()}:{fingerprint_digest()}".encode())
    for path in sorted([*(repo / "finalize").rglob("*.py"), *(repo / "pipeline" / "core").rglob("*.py"), SCHEMA_PATH]):
        if "__pycache__" not in path.parts:
            h.update(path.relative_to(repo).as_posix().encode())
            h.update(path.read_bytes())
    return h.hexdigest()


def task_cache_key(task_dir: Path, entry: dict | None, seed: int, settings: DesktopSettings) -> str:
    """A hash of every byte the DARE task's desktop tasks are made from: its folder's files (names and
    bytes), its question-list entry, the seed, the desktop settings and the code. all_metadata.json
    counts without its curation state (metadata_digest; the code and machine fields are in the code
    digest): a desktop task never reads it, and an approval must not revalidate the task."""
    h = hashlib.sha256(json.dumps({"entry": entry, "seed": seed, "settings": settings.model_dump(mode="json"),
                                   "code": _code_digest(), "task_dir": task_dir.name}, sort_keys=True).encode())
    for path in sorted(p for p in task_dir.rglob("*") if p.is_file()):
        rel = path.relative_to(task_dir).as_posix()
        digest = (metadata_digest(read_json(path)) if rel == f"{names.VERIFY_DIR}/{names.ALL_METADATA}"
                  else sha256_file(path))
        h.update(rel.encode() + b"\0" + digest.encode())
    return h.hexdigest()[:32]


def _cached_part(cache_dir: Path, key: str, out: Path, task: str, evaluator: str,
                 on_note: Callable[[str], None], settings: DesktopSettings | None = None) -> dict | None:
    """The cached verdicts of the DARE task folder `task`, its published desktop tasks copied into `out`;
    None on a miss, and None after discarding an entry that fails its check (part_problem, then each
    copy against the hashes it was stored with), said in one line to `on_note`: the task is rebuilt."""
    entry = cache_dir / key
    if not os.path.lexists(entry / _PART_JSON):
        return None
    copied: list[Path] = []
    try:
        part = read_json_inside(entry / _PART_JSON, entry)
        problem = part_problem(entry, part, task, evaluator, settings)
        for row in part["index"] if not problem else ():
            dest = out / TASKS_DIR / row["name"]
            problem = copy_checked(entry / _FILES / row["name"], dest, part["files"][row["name"]])
            if problem:
                break
            copied.append(dest)
    except (ValueError, OSError) as exc:  # UnsafeInput, a file not UTF-8
        problem = shorten_cause(str(exc), 160)
    if not problem:
        return part
    for dest in copied:
        shutil.rmtree(dest, ignore_errors=True)
    on_note(f"dsagent cache: the cached desktop tasks of {task} failed their check ({problem}); rebuilding them")
    discard_entry(cache_dir, key)
    return None


def part_problem(entry: Path, part: object, task: str, evaluator: str, settings: DesktopSettings | None = None) -> str:
    """Why a cached part of the DARE task folder `task` must not be restored ("" when it may): it is not
    the shape _store_part writes; a row's name is not one plain folder name of a desktop task of `task`
    that its validation published; the entry's tasks/ holds other folders or links; a file differs from
    its content hash; or an evaluator.py is not the one this code renders, or a config.json not one
    build_config writes for that task under `settings` (config_problem: the evaluator it names, the files
    it places, the commands it runs; both checked even when an edit rewrote the hashes too)."""
    if (entry.is_symlink() or not isinstance(part, dict) or not isinstance(part.get("index"), list)
            or not all(isinstance(part.get(k), dict) for k in ("validation", "rejections"))):
        return "part.json is not a cached part"
    files = part.get("files")
    if not isinstance(files, dict):
        return "the entry records no content hashes"
    names_seen = []
    for row in part["index"]:
        name = row.get("name") if isinstance(row, dict) else None
        record = part["validation"].get(name) if isinstance(name, str) else None
        if (not is_folder_name(name) or not name.startswith(f"{task}__") or row.get("source_task") != task
                or not isinstance(record, dict) or record.get("published") is not True):
            return f"row {str(name)[:80]!r} is not one plain folder name of a published desktop task of {task}"
        names_seen.append(name)
    folder = entry / _FILES
    if folder.is_symlink() or not folder.is_dir():
        return f"{_FILES} is not a folder"
    held = sorted(os.listdir(folder))
    if held != sorted(names_seen) or sorted(files) != held:
        return f"{_FILES}/ holds {held[:3]}, not the rows' folders"
    for name in names_seen:
        if (folder / name).is_symlink() or not (folder / name).is_dir():
            return f"{name} is a link or not a folder"
        problem = (files_problem(files[name], folder_files(folder / name)) if isinstance(files[name], dict)
                   else "the entry records no content hashes")
        if problem:
            return f"{name}/{problem}"
        if (folder / name / config.EVALUATOR_FILE).read_text(encoding="utf-8") != evaluator:
            return f"{name}/{config.EVALUATOR_FILE} is not the evaluator this code renders"
        wrong, _ = config.config_problem(read_json_inside(folder / name / "config.json", entry), name, task, settings)
        if wrong:
            return f"{name}/config.json: {wrong}"
    return ""


def _store_part(cache_dir: Path, key: str, part: dict, out: Path) -> None:
    """Keep a DARE task's verdicts and published desktop tasks, written aside and renamed into place,
    with the content hash of each file as stored (checked on restore: _cached_part)."""
    if part.get(names.MACHINE_DROPPED):
        return

    def fill(tmp: Path) -> None:
        (tmp / _FILES).mkdir()
        for row in part["index"]:
            shutil.copytree(out / TASKS_DIR / row["name"], tmp / _FILES / row["name"])
        write_json(tmp / _PART_JSON, {**part, "files": {row["name"]: folder_files(tmp / _FILES / row["name"])
                                                          for row in part["index"]}})
    commit_entry(cache_dir, key, fill)


def _summary(index: list[dict], rejections: dict[str, str], n_dare: int) -> dict:
    def count(field: str) -> dict:
        out: dict[str, int] = {}
        for r in index:
            out[r[field]] = out.get(r[field], 0) + 1
        return dict(sorted(out.items()))

    modelled = {r["source_task"] for r in index if r["category"] == "modelling"}
    return {
        "dare_tasks": n_dare,
        "dare_tasks_with_config": len({r["source_task"] for r in index}),
        "dare_tasks_with_modelling_variant": len(modelled),
        "published": len(index),
        "category_tasks": sum(r["category"] != "modelling" for r in index),
        "by_category": count("category"),
        "by_difficulty": count("difficulty"),
        "rejections": [{"task": k, "reason": v} for k, v in sorted(rejections.items())],
    }
