"""Which task folders an export may read: each is checked before anything decodes it, and a bad one is
dropped with its name and the reason while the rest go on.

A tree handed to `daregen export` (and every `--holdout` tree) may come from anywhere. A task is admitted
when its folder holds no link (symbolic, or a hard link: the same file as one elsewhere), no FIFO or
device, only data files within the read limits (a parquet's declared decoded size, a CSV's rows and
fields counted on the body), and an `all_metadata.json` whose question block the export can use.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pipeline.core import names
from pipeline.core.safe_io import InputLimits, UnsafeInput, read_json_inside, regular_files_below
from pipeline.review.reports import LINKED_TASK, VARIANT_LABELS, linked_task_dirs, task_dirs
from pipeline.review.untrusted_tree import tree_input_problems


@dataclass(frozen=True)
class AdmittedTask:
    task_dir: Path
    meta: dict  # all_metadata.json, its question block checked
    files: tuple[Path, ...]  # every file of the folder, regular and singly linked


@dataclass(frozen=True)
class DroppedTask:
    tree: str
    task_dir: str
    reason: str

    def to_json(self) -> dict[str, str]:
        return {"tree": self.tree, "task_dir": self.task_dir, "reason": self.reason}


def checked_metadata(meta: object) -> dict:
    """`meta` if its question block names a known problem type and its targets as a list of column names
    (a bare string such as "los" would be read as the targets 'l', 'o', 's'); ValueError otherwise."""
    if not isinstance(meta, dict):
        raise ValueError(f"{names.ALL_METADATA} is a {type(meta).__name__}, not an object")
    question = meta.get("question")
    if not isinstance(question, dict):
        raise ValueError(f"{names.ALL_METADATA} has no question block")
    if question.get("problem_type") not in VARIANT_LABELS:
        raise ValueError(f"question.problem_type {question.get('problem_type')!r} is not one of "
                         f"{sorted(VARIANT_LABELS)}")
    targets = question.get("target")
    if not isinstance(targets, list) or not targets or not all(isinstance(t, str) and t for t in targets):
        raise ValueError(f"question.target must be a non-empty list of column names, got {targets!r}")
    return meta


def admit_task(task_dir: Path, limits: InputLimits) -> AdmittedTask:
    """The task, checked; UnsafeInput or ValueError with the one-line reason otherwise."""
    root = Path(task_dir).parent
    problems = tree_input_problems(task_dir, limits)
    if problems:
        raise UnsafeInput(problems[0].message)
    files = regular_files_below(task_dir, root)  # deeper folders than tree_input_problems looks at
    meta = read_json_inside(task_dir / names.VERIFY_DIR / names.ALL_METADATA, root, limits)
    return AdmittedTask(Path(task_dir), checked_metadata(meta), tuple(files))


def dropped_task(tree: str, task_dir: str, exc: BaseException) -> DroppedTask:
    """`task_dir` of `tree` refused, with the first line of `exc` as the reason."""
    return DroppedTask(tree, task_dir, str(exc).splitlines()[0] if str(exc) else type(exc).__name__)


def admit_tree(tree: Path, label: str, limits: InputLimits) -> tuple[list[AdmittedTask], list[DroppedTask]]:
    """Every task of `tree` that passes the checks, and one DroppedTask (with the reason) per other."""
    admitted, dropped = [], []
    for task_dir in task_dirs(tree):
        try:
            admitted.append(admit_task(task_dir, limits))
        except (OSError, ValueError) as exc:  # UnsafeInput is a ValueError
            dropped.append(dropped_task(label, task_dir.name, exc))
    # a task folder that is a link is no task of the tree (task_dirs leaves it out): dropped by name, never read
    dropped += [DroppedTask(label, name, LINKED_TASK) for name in linked_task_dirs(tree)]
    return admitted, dropped
