"""Each task's review state in a tree: what `curate status`, `diff`, the reports and `--publish approved` read.

A task's state is the one its all_metadata.json records (daregen.curation, stamped by the build from
its ledger once the tree is assembled: `stamp_curation`), or, given a ledger, the one that ledger
gives the task's design digest now (pipeline.core.curation.design_digest of the task's files and
question list entry as they are): an approval made after the build counts without a rebuild, and a
file changed after the build reads "changed since approval" under any ledger.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pipeline.core import names
from pipeline.core.curation import CURATION_STATES, Approve, Ledger, design_digest
from pipeline.core.environment import code_version, fingerprint, fingerprint_digest
from pipeline.core.jsonio import write_json
from pipeline.core.records import is_time_series
from pipeline.review.reports import question_entries, read_json_or_none, task_dirs

# A task of a tree whose dataset (or task) the ledger now rejects: not a curation state a build records (a
# rejected dataset is never built), only what `curate status --curation` says of an older tree.
REJECTED = "rejected"


@dataclass(frozen=True)
class TaskReview:
    task_dir: str
    ref: str
    problem_type: str
    digest: str
    state: str
    approved_digest: str = ""
    reviewer: str = ""
    note: str = ""  # a rejection's reason

    def why_not_approved(self) -> str:
        """One line for a task that is not approved: what a curator has to do."""
        if self.state == REJECTED:
            return f"rejected by a curator: {self.note}"
        if self.state == "changed since approval":
            return f"changed since approval (design digest {self.digest}, approved {self.approved_digest})"
        return f"{self.state}, not approved (design digest {self.digest})"

    @property
    def withheld_code(self) -> str:
        """The code of a withheld task (Outcome.code): its review state, `changed_since_approval`, `unreviewed`."""
        return self.state.replace(" ", "_")


def task_review(task_dir: Path, ledger: Ledger | None = None, entry: dict | None = None,
                digest: str | None = None) -> TaskReview | None:
    """The task folder's review state (None when it has no readable all_metadata.json); `entry` is its
    question_list.json entry, part of its design digest (by default, the one its tree lists). `digest`: its
    design digest as the build computed it over these very files (stamp_curation), not hashed again."""
    meta = read_json_or_none(task_dir / names.VERIFY_DIR / names.ALL_METADATA)
    if entry is None:
        entry = question_entries(task_dir.parent).get(task_dir.name)
    if not isinstance(meta, dict):
        return None
    provenance = meta.get("daregen") if isinstance(meta.get("daregen"), dict) else {}
    question = meta.get("question") if isinstance(meta.get("question"), dict) else {}
    ref, problem_type = str(provenance.get("ref") or task_dir.name), str(question.get("problem_type") or "")
    digest = digest if digest is not None else design_digest(task_dir, meta, entry)
    if ledger is not None and (reject := ledger.rejection(ref, problem_type)) is not None:
        # Rejected after this tree was built: the next build drops it, whatever approval it had.
        return TaskReview(task_dir.name, ref, problem_type, digest, REJECTED, reviewer="", note=reject.reason)
    recorded = provenance.get("curation") if isinstance(provenance.get("curation"), dict) else {}
    if ledger is None and recorded.get("design_digest") != digest and recorded.get("state") == "approved":
        # the tree's files are not those the build stamped: its recorded approval no longer covers them
        return TaskReview(task_dir.name, ref, problem_type, digest, "changed since approval",
                          str(recorded.get("approved_digest") or ""), str(recorded.get("reviewer") or ""))
    if ledger is not None:
        c = ledger.state(ref, problem_type, digest)
        return TaskReview(task_dir.name, ref, problem_type, digest, c.state, c.approved_digest, c.reviewer)
    state = recorded.get("state") if recorded.get("state") in CURATION_STATES else "unreviewed"
    return TaskReview(task_dir.name, ref, problem_type, digest, state, str(recorded.get("approved_digest") or ""),
                      str(recorded.get("reviewer") or ""))


def tree_reviews(tree: Path, ledger: Ledger | None = None, digests: Mapping[str, str] | None = None) -> list[TaskReview]:
    """Every task of the tree with its review state, in task folder order; `digests`: the design digests the
    build computed (stamp_curation), by task folder."""
    entries, digests = question_entries(Path(tree)), digests or {}
    return [r for d in task_dirs(Path(tree))
            if (r := task_review(d, ledger, entries.get(d.name), digests.get(d.name))) is not None]


def unmatched_approvals(reviews: list[TaskReview], ledger: Ledger) -> list[Approve]:
    """The approvals of `ledger` that name no task of a tree (its `reviews`): a digest no tree has, typed
    by hand or left from a task since removed. (An approval of a task the tree holds at another digest
    reads "changed since approval" on that task.)"""
    named = {(r.ref, r.problem_type) for r in reviews}
    return [a for a in ledger.approve if not any(ref == a.ref and a.problem_type in (None, pt) for ref, pt in named)]


def approval_text(a: Approve) -> str:
    return f"{a.ref}" + (f" ({a.problem_type})" if a.problem_type else "") + f" approved at {a.digest}"


def stamp_curation(tree: Path, entries: list[dict], ledger: Ledger) -> dict[str, str]:
    """Record each task's review state under `ledger` in its all_metadata.json (daregen.curation), at
    its design digest over the assembled task folder and its question list `entries`. Run by the build
    after the build cache, so approving a task republishes it without rebuilding it. The fields the
    digest leaves out are written afresh first (stamp_machine_fields): no cached byte outside the digest
    ships. Returns the digests by task folder: the stamp changes no digested byte (daregen.curation is not
    digested), so the build's later readers of the tree (tasks.parquet, the run report's designs and review
    counts) take them instead of hashing every file of every task again."""
    digests: dict[str, str] = {}
    for entry in entries:
        task_dir = Path(tree) / entry["file_path"]
        path = task_dir / names.VERIFY_DIR / names.ALL_METADATA
        meta = read_json_or_none(path)
        if not isinstance(meta, dict) or not isinstance(meta.get("daregen"), dict):
            continue  # a foreign task records no provenance, hence no state
        stamp_machine_fields(task_dir, meta)
        problem_type = str((meta.get("question") or {}).get("problem_type") or "")
        digest = digests[entry["file_path"]] = design_digest(task_dir, meta, entry)
        state = ledger.state(str(meta["daregen"].get("ref")), problem_type, digest)
        meta["daregen"]["curation"] = state.model_dump(mode="json", exclude_defaults=True)
        write_json(path, meta)
    return digests


def stamp_machine_fields(task_dir: Path, meta: dict) -> None:
    """Set what says which code and machine built the task (daregen.code_version, daregen.environment,
    verify/environment.json: the fields the design digest leaves out) to this build's values, as finalize
    writes them, in `meta` and on disk. The build cache keys a task by the code and the library versions,
    so a task served from it gets the bytes it had when built; an edited cache entry gets them back."""
    provenance = meta["daregen"]
    provenance["code_version"] = code_version()
    env_path = task_dir / names.VERIFY_DIR / names.ENVIRONMENT
    if is_time_series(meta):  # finalize.timeseries records no library versions
        provenance.pop("environment", None)
        if os.path.lexists(env_path):
            env_path.unlink()
        return
    env = fingerprint()
    write_json(env_path, env)  # a fresh file renamed into place: a link there is replaced, never followed
    provenance["environment"] = fingerprint_digest(env)


def state_counts(reviews: list[TaskReview]) -> dict[str, int]:
    """Tasks per curation state, every state listed (0 included), in CURATION_STATES order."""
    return {s: sum(r.state == s for r in reviews) for s in CURATION_STATES}
