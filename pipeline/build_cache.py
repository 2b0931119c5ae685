"""The per-dataset build cache: a finished task folder, or a rejection, keyed by everything that decides its bytes.

A nightly rebuild where nothing upstream changed must not redo the expensive
stages (design, postprocess, the reference runs of finalize). After the source
step a dataset's key is known: the content of its normalised table and of its
record (the record's title, description and licence go into metadata.txt), its
ref (task names derive from it), the design configuration, the seed, the
designer and its settings, the curators' rejections and pin of it (not their
approvals: those change what is published, not what is built), the code that
builds tasks and the library versions ground truth is computed with. A hit is
checked against the content hashes its files were stored with, then copied into
the new generation (a mismatch discards it and rebuilds the dataset); a miss builds
it and stores it right after finalize, so a killed build resumes from every dataset
it had finished.

Entries are content-addressed folders `<cache>/tasks/<key>/` written to a temp
folder and renamed into place, so a kill never leaves half an entry. A dataset's
key holds its rejection before the design, or, after it, `<key>-units` lists its
tasks' problem types; each task's result sits under `unit_key(key, problem type)`.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from pathlib import Path

from pipeline.core import cache
from pipeline.core.environment import code_digest, fingerprint_digest, source_code_digest
from pipeline.core.hashing import sha256_file
from pipeline.core.jsonio import read_json, write_json
from pipeline.core.records import CHECK_FAILED_CODES
from pipeline.core.safe_io import UnsafeInput, read_json_inside
from pipeline.core.names import TASK_SUFFIX
from pipeline.core.text import shorten_cause
from pipeline.progress import note
from pipeline.steps import (CONTENT_JSON, DESIGN_TIMEOUT, ENTRY_JSON, RECORD_JSON, TABLE_PARQUET, UNEXPECTED_ERROR,
                            Outcome, finalize_step)

RESULT_JSON, TASK_DIR, VERIFIED, UNITS_DIR = "result.json", "task", "verified", "units"
SOURCED_FILES = (RECORD_JSON, TABLE_PARQUET, CONTENT_JSON)  # what a source step leaves in the work folder
# Rejections worth remembering: they follow from the dataset and the code alone. Of finalize's,
# only failed checks (records.CHECK_FAILED_CODES, e.g. MM infeasible): a reference run that timed out
# on a loaded machine must be retried. Build-level ones (a duplicate table, a task folder taken by
# another dataset) are never cached: they depend on the other datasets.
CACHED_REJECTION_STAGES = ("profile", "design", "postprocess")


def cacheable_rejection(stage: str, code: str) -> bool:
    """Whether a rejection at `stage` with `code` (Outcome.code) is kept in the cache."""
    if code == DESIGN_TIMEOUT:  # the machine's load as much as the dataset's: tried again next build
        return False
    return stage in CACHED_REJECTION_STAGES or (stage == "finalize" and code in CHECK_FAILED_CODES)


def cache_root(cache_dir: str | None = None) -> Path:
    return cache.cache_root(cache_dir).resolve() / cache.TASKS


def dataset_key(prev: Outcome, *, seed: int, designer: str, settings_json: str, design_digest: str,
                decisions_json: str = "") -> str:
    """Cache key of a dataset whose source step succeeded (prev.digest is its table's content hash).
    `decisions_json`: the curation ledger's rejections and pin of it (Ledger.decisions_json), so a
    changed pin rebuilds exactly the dataset it names; none leaves the key as it was without a ledger.
    Approvals are not in it: they change what is published, not what is built."""
    payload = {
        "ref": prev.ref,
        "table": prev.digest,
        "record": sha256_file(Path(prev.work_dir) / RECORD_JSON),
        "seed": seed,
        "designer": designer,
        "designer_settings": settings_json,
        "design_config": design_digest,
        "code": code_digest(),
        "environment": fingerprint_digest(),
    }
    if decisions_json:
        payload["curation"] = decisions_json
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:32]


def source_key(ref: str, content_version: str, limits_json: str) -> str:
    """Cache key of a source step's result for a ref of immutable data: `content_version` names the
    installed data (BuiltinSource.content_version), the rest is what else decides the step's output."""
    payload = {"ref": ref, "content": content_version, "limits": limits_json, "code": source_code_digest(),
               "environment": fingerprint_digest()}
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:32]


def lookup_source(root: Path, key: str, prev: Outcome) -> Outcome | None:
    """The cached source step of `prev` (its record and table put back in its work folder), or None (a
    miss, or a malformed entry, one holding a link or a file that differs from the content hash it was stored
    with: discarded with a note, and the source read again)."""
    result = _read_result(root, key)
    if result is None:
        return None
    if not isinstance(result.get("ok"), bool) or not isinstance(result.get("reason"), str):
        _discard_malformed(root, key, "its result.json lacks ok or reason")
        return None
    if not result["ok"]:
        return prev.failed("source", result["reason"], str(result.get("code", "")))
    unsafe = next((n for n in SOURCED_FILES if (root / key / n).is_symlink() or not (root / key / n).is_file()), None)
    if unsafe is not None or not isinstance(result.get("digest"), str):
        _discard_malformed(root, key, f"{unsafe} is a link or missing" if unsafe else "its result.json lacks digest")
        return None
    stored, work = result.get("files"), Path(prev.work_dir)
    problem = _sourced_problem(root / key, stored)
    if not problem:  # the copy checked too: it catches an entry changed since its check
        for name in SOURCED_FILES:
            shutil.copyfile(root / key / name, work / name)
        problem = _sourced_problem(work, stored)
    if problem:
        for name in SOURCED_FILES:
            (work / name).unlink(missing_ok=True)
        _discard_malformed(root, key, problem)
        return None
    return Outcome(ref=prev.ref, work_dir=prev.work_dir, stage="source", digest=result["digest"])


def _sourced_problem(folder: Path, stored: object) -> str:
    """Why the source step's files in `folder` are not those stored with the hashes `stored` ("" when they are)."""
    if not isinstance(stored, dict) or set(stored) != set(SOURCED_FILES):
        return "the entry records no content hashes"
    return next((f"{n} does not match its content hash" for n in SOURCED_FILES
                 if sha256_file(folder / n) != stored[n]), "")


def store_source(root: Path, key: str, done: Outcome) -> None:
    """A finished source step under `key`. An unexpected error is not kept: it may be the machine's."""
    if not done.ok and done.code == UNEXPECTED_ERROR:
        return

    def fill(tmp: Path) -> None:
        if done.ok:
            for name in SOURCED_FILES:
                shutil.copyfile(Path(done.work_dir) / name, tmp / name)
        files = {name: sha256_file(tmp / name) for name in SOURCED_FILES} if done.ok else None
        write_json(tmp / RESULT_JSON, {"ok": done.ok, "reason": done.reason, "code": done.code, "digest": done.digest,
                                       "files": files})
    cache.commit_entry(root, key, fill)


def unit_key(key: str, unit: str) -> str:
    """Cache key of one task of a dataset (its problem type `unit`): a dataset may make two."""
    return hashlib.sha256(f"{key}:{unit}".encode()).hexdigest()[:32]


def store_units(root: Path, key: str, units: list[str]) -> None:
    """Which tasks (problem types, in order) the design made of the dataset under `key`."""
    cache.commit_entry(root, f"{key}-{UNITS_DIR}", lambda tmp: write_json(tmp / RESULT_JSON, {"units": units}))


def lookup_units(root: Path, key: str) -> list[str] | None:
    """The dataset's units when every one of them has a cached result (a task or a rejection), else None
    (a build killed between two units' finalize rebuilds the dataset; so does a malformed units entry,
    discarded with a note)."""
    units_key = f"{key}-{UNITS_DIR}"
    value = _read_result(root, units_key)
    if value is None:
        return None
    units = value.get("units")
    if (not isinstance(units, list) or not units or not all(isinstance(u, str) and u in TASK_SUFFIX for u in units)
            or len(set(units)) != len(units)):  # an unknown problem type would stop every build (steps.unit_work)
        _discard_malformed(root, units_key, "its units are not a list of problem types")
        return None
    return units if all(lookup(root, unit_key(key, u)) is not None for u in units) else None


def lookup(root: Path, key: str) -> dict | None:
    """The cached result ({"ok", "stage", "reason", "task_dir", "entry"}) or None: a miss, or a malformed
    entry (discarded with a note, so the dataset is rebuilt)."""
    value = _read_result(root, key)
    if value is None:
        return None
    if not isinstance(value.get("ok"), bool) or not all(isinstance(value.get(k), str) for k in ("stage", "reason")):
        _discard_malformed(root, key, "its result.json lacks ok, stage or reason")
        return None
    return value


def _read_result(root: Path, key: str) -> dict | None:
    """result.json of the entry `key` as a JSON object; None on a miss, and None after discarding an
    entry whose result.json cannot be read as one (a link, a FIFO, not JSON, too large)."""
    path = root / key / RESULT_JSON
    if not os.path.lexists(path):
        return None
    try:
        if (root / key).is_symlink():
            raise UnsafeInput(f"{key} is a link")
        value = read_json_inside(path, root / key)
    except (UnsafeInput, OSError) as exc:
        _discard_malformed(root, key, shorten_cause(str(exc), 160))
        return None
    if not isinstance(value, dict):
        _discard_malformed(root, key, "its result.json is not a JSON object")
        return None
    return value


def _discard_malformed(root: Path, key: str, why: str) -> None:
    # once: a no-Prefect probe that discards it holds its other notes back, and the flow after it will not
    # find the entry again to say so
    note(f"build cache: entry {key} is malformed ({why}); discarded, rebuilding its dataset", once=True)
    discard(root, key)


def store_task(root: Path, key: str, task_folder: Path, entry: dict) -> None:
    """The finished task under `key`, with the content hash of each of its files as stored: a hit is
    checked against them before it is published (entry_problem)."""
    def fill(tmp: Path) -> None:
        shutil.copytree(task_folder, tmp / TASK_DIR)
        write_json(tmp / RESULT_JSON, {"ok": True, "stage": "finalize", "reason": "",
                                       "task_dir": task_folder.name, "entry": entry,
                                       "files": cache.folder_files(tmp / TASK_DIR)})
    cache.commit_entry(root, key, fill)


def entry_problem(root: Path, key: str) -> str:
    """Why the cached task under `key` must not be published ("" when its files are those stored):
    a file changed, added or missing since it was stored, a link or a special file in it, or an entry
    that records no hashes."""
    result = lookup(root, key)
    if result is None or not result.get("ok"):
        return ""
    folder, entry = result.get("task_dir"), result.get("entry")
    if not cache.is_folder_name(folder) or not isinstance(entry, dict) or entry.get("file_path") != folder:
        # The build deletes and writes `staging / task_dir`: an absolute path or `..` there is any folder.
        return f"its task folder {str(folder)[:80]!r} is not one plain folder name, the one its question list entry names"
    return cache.stored_folder_problem(root / key / TASK_DIR, result.get("files"))


def discard(root: Path, key: str) -> None:
    """Remove an entry that failed its check, so the rebuild stores a good one under the same key."""
    cache.discard_entry(root, key)


def store_rejection(root: Path, key: str, stage: str, reason: str, code: str = "") -> None:
    cache.commit_entry(root, key, lambda tmp: write_json(tmp / RESULT_JSON, {
        "ok": False, "stage": stage, "reason": reason, "code": code, "task_dir": "", "entry": None}))


def is_verified(root: Path, key: str) -> bool:
    return (root / key / VERIFIED).is_file()


def mark_verified(root: Path, key: str) -> None:
    """The task passed the build's last gate (the fresh-interpreter determinism check) once; a
    later hit need not pay for it again. A marker beside the entry, since entries are immutable."""
    if (root / key).is_dir() and not is_verified(root, key):
        (root / key / VERIFIED).touch()


def restore(root: Path, key: str, task_dir: str, tasks_root: Path) -> None:
    """Copy the cached task into the generation, and check the copy against the hashes it was stored
    with (the entry was checked at lookup; this catches one changed during the build)."""
    if not cache.is_folder_name(task_dir):  # entry_problem refuses it first; never delete a folder outside the tree
        raise RuntimeError(f"build cache entry {key}: task folder {str(task_dir)[:80]!r} is not one folder name")
    dest = tasks_root / task_dir
    if dest.exists():
        shutil.rmtree(dest)
    problem = cache.copy_checked(root / key / TASK_DIR, dest, (lookup(root, key) or {}).get("files") or {})
    if problem:
        discard(root, key)
        raise RuntimeError(f"build cache entry of {task_dir} changed during the build ({problem}); "
                           "it was removed: run the build again")


def finalize_and_store(prev: Outcome, tasks_root: str, seed: int, design_digest: str, cache_dir: str,
                       key: str) -> Outcome:
    """The finalize step, then the finished task into the cache at once (so a kill loses no finished work)."""
    done = finalize_step(prev, tasks_root, seed, design_digest)
    started = time.perf_counter()
    if not done.ok and cacheable_rejection(done.stage, done.code):
        store_rejection(Path(cache_dir), key, done.stage, done.reason, done.code)
    if done.ok:
        entry = read_json(Path(done.work_dir) / ENTRY_JSON)
        store_task(Path(cache_dir), key, Path(tasks_root) / entry["file_path"], entry)
    return done.with_seconds({"cache store": time.perf_counter() - started})
