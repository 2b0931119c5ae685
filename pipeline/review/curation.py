"""Each task's review state in a tree: what `curate status`, `diff`, the reports and `--publish approved` read.

A task's state is the one its all_metadata.json records (daregen.curation, written at build time
from the build's ledger), or, given a ledger, the one that ledger gives the task's design digest
now (pipeline.core.curation.design_digest of the same file): an approval made after the build
counts without a rebuild.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pipeline.core import names
from pipeline.core.curation import CURATION_STATES, Ledger, design_digest
from pipeline.review.reports import read_json_or_none, task_dirs


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


def task_review(task_dir: Path, ledger: Ledger | None = None) -> TaskReview | None:
    """The task folder's review state (None when it has no readable all_metadata.json)."""
    meta = read_json_or_none(task_dir / names.VERIFY_DIR / names.ALL_METADATA)
    if not isinstance(meta, dict):
        return None
    provenance = meta.get("daregen") if isinstance(meta.get("daregen"), dict) else {}
    question = meta.get("question") if isinstance(meta.get("question"), dict) else {}
    ref, problem_type = str(provenance.get("ref") or task_dir.name), str(question.get("problem_type") or "")
    digest = design_digest(meta)
    if ledger is not None and (reject := ledger.rejection(ref, problem_type)) is not None:
        # Rejected after this tree was built: the next build drops it, whatever approval it had.
        return TaskReview(task_dir.name, ref, problem_type, digest, REJECTED, reviewer="", note=reject.reason)
    if ledger is not None:
        c = ledger.state(ref, problem_type, digest)
        return TaskReview(task_dir.name, ref, problem_type, digest, c.state, c.approved_digest, c.reviewer)
    recorded = provenance.get("curation") if isinstance(provenance.get("curation"), dict) else {}
    state = recorded.get("state") if recorded.get("state") in CURATION_STATES else "unreviewed"
    return TaskReview(task_dir.name, ref, problem_type, digest, state, str(recorded.get("approved_digest") or ""),
                      str(recorded.get("reviewer") or ""))


def tree_reviews(tree: Path, ledger: Ledger | None = None) -> list[TaskReview]:
    """Every task of the tree with its review state, in task folder order."""
    return [r for d in task_dirs(Path(tree)) if (r := task_review(d, ledger)) is not None]


def state_counts(reviews: list[TaskReview]) -> dict[str, int]:
    """Tasks per curation state, every state listed (0 included), in CURATION_STATES order."""
    return {s: sum(r.state == s for r in reviews) for s in CURATION_STATES}
