"""Before `verify` reads a task folder it may have downloaded: refuse links, special files and inputs
past the limits, so the checks that follow only ever decode bounded, regular files inside the task.

A link in a tree is how a hostile tree reads (`val_v1.csv -> /proc/self/environ` copied into the
sandbox) or writes (`verify/simulated_pred_local.csv -> ~/.bashrc` under `--regenerate`) outside
it; a FIFO hangs a reader; a parquet bomb decodes to gigabytes. pipeline.core.safe_io holds the rules.
"""

from __future__ import annotations

from pathlib import Path

from finalize.checks import Problem
from pipeline.core import names
from pipeline.core.safe_io import InputLimits, UnsafeInput, check_table_file, links_or_specials, regular_file_inside

_TABLE_TYPES = {f".{ext}": ftype for ftype, ext in names.FILE_EXTENSIONS.items()}


def tree_input_problems(task_dir: Path, limits: InputLimits | None = None) -> list[Problem]:
    """One error per refused entry of the task folder, its source/ and its verify/ folders."""
    limits = limits or InputLimits()
    root = Path(task_dir).parent
    where = Path(task_dir).name
    reasons = links_or_specials(task_dir, root)
    for folder in (task_dir / names.SOURCE_DIR, task_dir / names.VERIFY_DIR):
        if not folder.is_symlink():  # a linked folder is already named by its parent's listing
            reasons += links_or_specials(folder, root)
    if reasons:
        return [Problem(where, r) for r in reasons]
    for folder in (task_dir / names.SOURCE_DIR, task_dir / names.VERIFY_DIR):
        for path in sorted(folder.iterdir()) if folder.is_dir() else ():
            if not path.is_file():
                continue
            try:
                if path.suffix.lower() in _TABLE_TYPES:
                    check_table_file(path, root, _TABLE_TYPES[path.suffix.lower()], limits)
                else:
                    regular_file_inside(path, root, limits.max_file_bytes)
            except UnsafeInput as exc:
                reasons.append(str(exc))
    return [Problem(where, r) for r in reasons]
