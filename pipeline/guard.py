"""The build's last gate before publishing: a task whose reference a fresh interpreter does not reproduce is dropped.

It runs on the staging generation after every task is written (built or restored
from the build cache), so it sees exactly what would be published. The check
itself is tree review's (pipeline.review.verify.check_determinism); this module
only turns its errors into failed Outcomes and removes those task folders.
"""

from __future__ import annotations

import os
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from finalize.checks import errors
from finalize.schema import copy_schema_into
from pipeline.core.jsonio import read_json
from pipeline.review.verify import HASH_SEEDS, check_determinism
from pipeline.steps import ENTRY_JSON, Outcome


def guard_staging_tree(staging: Path, outcomes: list[Outcome], cores: int | None = None) -> list[Outcome]:
    """Drop every task whose reference is not deterministic across fresh interpreters (its folder
    removed, its Outcome failed with the reason) and copy the all_metadata schema into the tree.
    `cores`: how many fresh interpreters may run at once (default os.cpu_count())."""
    # The entry, not the spec: a task restored from the build cache has an entry but no spec.
    ok = {o.uid: staging / read_json(Path(o.work_dir) / ENTRY_JSON)["file_path"] for o in outcomes if o.ok}
    seconds: dict[str, float] = {}
    found = _check_on_all_cores(list(ok.values()), seconds, cores or os.cpu_count() or 1) if ok else {}
    out = []
    for o in outcomes:
        if o.ok and ok[o.uid].name in seconds:
            o = o.with_seconds({"guard": seconds[ok[o.uid].name]})
        bad = errors(found.get(ok[o.uid].name, [])) if o.ok else []
        if bad:
            shutil.rmtree(ok[o.uid], ignore_errors=True)
            o = o.failed("verify", "; ".join(p.message for p in bad), bad[0].code or "verify_failed")
        out.append(o)
    copy_schema_into(staging)
    return out


def _check_on_all_cores(task_dirs: list[Path], seconds: dict[str, float], cores: int) -> dict:
    """check_determinism over `cores` cores: it runs one fresh interpreter per hash seed, so the tasks
    are dealt round-robin into cores // len(HASH_SEEDS) shares checked at once (one share, the whole
    list, on 2 cores). Each task's verdict depends on its own runs only; the shares' results are keyed
    by task folder name and merged in share order, so the outcome never depends on the schedule."""
    shares = max(1, min(len(task_dirs), cores // len(HASH_SEEDS)))
    if shares == 1:
        return check_determinism(task_dirs, seconds=seconds)
    parts = [task_dirs[i::shares] for i in range(shares)]
    times: list[dict[str, float]] = [{} for _ in parts]
    with ThreadPoolExecutor(max_workers=shares) as pool:
        found = list(pool.map(lambda i: check_determinism(parts[i], seconds=times[i]), range(shares)))
    out: dict = {}
    for part, spent in zip(found, times):
        out.update(part)
        seconds.update(spent)
    return out
