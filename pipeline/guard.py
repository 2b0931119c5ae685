"""The build's last gate before publishing: a task whose reference a fresh interpreter does not reproduce is dropped.

It runs on the staging generation after every task is written (built or restored
from the build cache), so it sees exactly what would be published. The check
itself is tree review's (pipeline.review.verify.check_determinism); this module
only turns its errors into failed Outcomes and removes those task folders.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from finalize.checks import errors
from finalize.schema import copy_schema_into
from pipeline.core.jsonio import read_json
from pipeline.review.verify import check_determinism
from pipeline.steps import ENTRY_JSON, Outcome


def guard_staging_tree(staging: Path, outcomes: list[Outcome]) -> list[Outcome]:
    """Drop every task whose reference is not deterministic across fresh interpreters (its folder
    removed, its Outcome failed with the reason) and copy the all_metadata schema into the tree."""
    # The entry, not the spec: a task restored from the build cache has an entry but no spec.
    ok = {o.uid: staging / read_json(Path(o.work_dir) / ENTRY_JSON)["file_path"] for o in outcomes if o.ok}
    seconds: dict[str, float] = {}
    found = check_determinism(list(ok.values()), seconds=seconds) if ok else {}
    out = []
    for o in outcomes:
        if o.ok and ok[o.uid].name in seconds:
            o = o.with_seconds({"guard": seconds[ok[o.uid].name]})
        bad = errors(found.get(ok[o.uid].name, [])) if o.ok else []
        if bad:
            shutil.rmtree(ok[o.uid], ignore_errors=True)
            o = o.failed("verify", "; ".join(p.message for p in bad))
        out.append(o)
    copy_schema_into(staging)
    return out
