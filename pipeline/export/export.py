"""`daregen export TREE --out DIR`: a training dataset a trainer loads with one call.

    DIR/
      README.md                 dataset card: YAML header (configs -> splits -> files), licence table, usage
      data/train-<sha>.parquet  one row per task variant (IF, MM, XF, CF) of the train families
      data/eval-<sha>.parquet   ... of the eval families
      sft/train-<sha>.jsonl     chat-format SFT solutions (IF: the instruction's steps; MM: a baseline)
      sft/eval-<sha>.jsonl
      tasks/<task_dir>/         copies of the task files, verify/ included: the reward reads its ground
                                truth there; never show verify/ to an agent
      tasks/question_list.json  the exported tasks' entries, so `daregen score PRED --tasks DIR/tasks` works
      export_report.json        families, family links, held-out overlaps, the split, dropped tasks and SFT
                                solutions, the split files, and every file the export wrote

Split files are named by their content (`<sha>`: the first 16 hex digits of their sha256): the
Hugging Face `datasets` cache keys a folder by its name and its files' paths, so two exports both
called `export/` with the same file names would share one cache entry and serve the first one's rows.

Every task folder (of the tree and of each `--holdout` tree) is admitted by pipeline.export.admit
before anything decodes it; a refused one is dropped with its name and the reason. The split is
planned by pipeline.export.families; the export refuses to write a plan with a family in both
splits or a training task from a held-out family. The folder is written beside DIR and renamed into
place, so a failed export leaves DIR as it was; an existing DIR is replaced only when every file in
it is one the previous export wrote (its `export_report.json` lists them).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.core import names
from pipeline.core.hashing import sha256_file
from pipeline.core.jsonio import write_json
from pipeline.core.safe_io import InputLimits, UnsafeInput, copy_file_inside, read_json_inside
from pipeline.core.text import md_cell
from pipeline.export.admit import AdmittedTask, DroppedTask, admit_tree, dropped_task
from pipeline.export.families import TREE, SplitPlan, TaskIdentity, check_report, identify, plan_split
from pipeline.export.sft import chat_record, check_solution, if_solution, mm_solution
from pipeline.review.reports import (
    VARIANT_LABELS,
    baselines_of,
    canonical_licence,
    licence_of,
    question_entries,
    task_dirs,
)
from pipeline.reward import reward_spec

SPLITS = ("train", "eval")
DATA_DIR, SFT_DIR, TASKS_DIR = "data", "sft", "tasks"
EXPORT_REPORT = "export_report.json"
CARD = "README.md"
DATA_SOURCE = "daregen"

_STR = pa.string()
ROW_SCHEMA = pa.schema([
    ("task_id", _STR), ("task_dir", _STR), ("variant", _STR), ("dare_variant", _STR), ("split", _STR),
    ("family", _STR), ("problem_type", _STR), ("metric", _STR), ("prompt", _STR),
    ("messages", pa.list_(pa.struct([("role", _STR), ("content", _STR)]))),
    ("files", pa.list_(pa.struct([("path", _STR), ("sha256", _STR)]))),
    ("reward_spec", pa.struct([
        ("task_dir", _STR), ("variant", _STR), ("ground_truth_path", _STR), ("ground_truth_sha256", _STR),
        ("metric", _STR), ("targets", pa.list_(_STR)), ("align_on", pa.list_(_STR)),
        ("ignore_extra_rows", pa.bool_()), ("tolerance", pa.struct([("rtol", pa.float64()), ("atol", pa.float64())])),
        ("solved_threshold", pa.float64())])),
    ("difficulty", pa.struct([
        ("baselines", pa.list_(pa.struct([("name", _STR), ("score", pa.float64())]))),
        ("mm_reference_score", pa.float64()), ("model_type", _STR)])),
    ("licence", _STR), ("licence_key", _STR), ("source_ref", _STR),
    # verl's RL dataset columns (data.prompt_key=messages; reward_model.ground_truth is the reward_spec JSON)
    ("data_source", _STR), ("ability", _STR),
    ("reward_model", pa.struct([("style", _STR), ("ground_truth", _STR)])),
    ("extra_info", pa.struct([("task_id", _STR), ("variant", _STR), ("split", _STR), ("index", pa.int64())])),
])


@dataclass
class ExportResult:
    out: Path | None  # None for --check
    plan: SplitPlan
    rows: dict[str, int]  # split -> rows
    sft: dict[str, int]  # split -> SFT records
    sft_dropped: list[dict]
    lines: list[str]
    dropped: list[DroppedTask] = field(default_factory=list)  # task folders refused before reading


# --------------------------------------------------------------------------- rows


def _mm_reference(meta: dict) -> float | None:
    scores = (meta.get("daregen") or {}).get("mm_baselines") or {}
    found = [v for k, v in sorted(scores.items()) if k.startswith("reference_")]
    return float(found[0]) if found else None


def task_rows(task_dir: Path, entry: dict, meta: dict, split: str, family: str, root: Path) -> list[dict]:
    """The parquet rows of one exported task (under `root`), one per variant its question list names."""
    q = meta["question"]
    kind = q["problem_type"]
    labels = VARIANT_LABELS[kind]
    rel_dir = task_dir.relative_to(root).as_posix()
    licence = licence_of(meta)
    rows = []
    for label, code in zip(labels, ("v1", "v2")):
        prompt = entry.get(f"question_{code}")
        if not prompt:
            continue
        spec = reward_spec(task_dir, label, kind, q["target"], root)
        needed = entry.get(f"needed_files_{code}") or q.get(f"needed_files_{code}") or []
        # Names from question_list.json: a path in one (`../../x`) would hash a file outside the task.
        bad = [n for n in needed if not isinstance(n, str) or Path(n).name != n or n in ("", ".", "..")
               or not (task_dir / names.SOURCE_DIR / n).is_file()]
        if bad:
            raise ValueError(f"needed_files_{code} names {bad[0]!r}, which is not a file of its source/ folder")
        files = [{"path": f"{rel_dir}/{names.SOURCE_DIR}/{n}",
                  "sha256": sha256_file(task_dir / names.SOURCE_DIR / n)} for n in needed]
        task_id = f"{task_dir.name}/{label}"
        rows.append({
            "task_id": task_id, "task_dir": rel_dir, "variant": label, "dare_variant": code, "split": split,
            "family": family, "problem_type": kind, "metric": spec["metric"], "prompt": prompt,
            "messages": [{"role": "user", "content": prompt}], "files": files, "reward_spec": spec,
            "difficulty": {"baselines": [{"name": k, "score": v} for k, v in baselines_of(meta).items()],
                           "mm_reference_score": _mm_reference(meta) if label == "MM" else None,
                           "model_type": str(q.get("model_type", ""))},
            "licence": licence, "licence_key": canonical_licence(licence),
            "source_ref": str((meta.get("daregen") or {}).get("ref") or (meta.get("data_info") or {}).get("ref", "")),
            "data_source": DATA_SOURCE, "ability": "data_science",
            "reward_model": {"style": "rule", "ground_truth": json.dumps(spec, sort_keys=True)},
            "extra_info": {"task_id": task_id, "variant": label, "split": split, "index": 0},
        })
    return rows


def parquet_bytes(rows: list[dict]) -> bytes:
    rows = sorted(rows, key=lambda r: r["task_id"])
    for i, row in enumerate(rows):
        row["extra_info"]["index"] = i
    buf = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows, schema=ROW_SCHEMA), buf, compression="zstd")
    return buf.getvalue()


def write_content_named(folder: Path, stem: str, suffix: str, data: bytes) -> str:
    """Write `data` as `<folder>/<stem>-<sha256[:16]><suffix>`; returns that name. Named by content, so
    no cache keyed by folder name and file paths (Hugging Face `datasets`) mistakes one export for another."""
    name = f"{stem}-{hashlib.sha256(data).hexdigest()[:16]}{suffix}"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(data)
    return name


# --------------------------------------------------------------------------- files


def copy_task(task: AdmittedTask, dest: Path, limits: InputLimits) -> None:
    """Copy the admitted task's files (never hard links: the copy must not be the tree's file, and a tree
    file with a second link would be refused by the next export) through no link, bounded."""
    root = task.task_dir.parent
    for path in task.files:
        target = dest / path.relative_to(task.task_dir)
        target.parent.mkdir(parents=True, exist_ok=True)
        copy_file_inside(path, root, target, limits.max_file_bytes)


def _files_in(folder: Path) -> list[str]:
    """Every non-folder entry below `folder` (links and special files included, never followed)."""
    out = []
    for current, dirs, files in os.walk(folder, followlinks=False):
        rel = Path(current).relative_to(folder)
        out += [(rel / n).as_posix() for n in files]
        out += [(rel / d).as_posix() for d in dirs if os.path.islink(os.path.join(current, d))]
    return sorted(out)


def check_replaceable(out: Path) -> None:
    """Refuse to replace `out` unless it is missing, empty, or holds only files a previous export wrote
    (listed in its export_report.json): re-exporting must never delete a file the user put there."""
    if not os.path.lexists(out):
        return
    if out.is_symlink() or not out.is_dir():
        raise ValueError(f"{out} exists and is not a folder; refusing to replace it")
    present = _files_in(out)
    if not present:
        return
    try:
        written = read_json_inside(out / EXPORT_REPORT, out).get("files")
    except (UnsafeInput, AttributeError):
        written = None
    if not isinstance(written, list):
        raise ValueError(f"{out} is not empty and holds no daregen export file list ({EXPORT_REPORT}); "
                         "refusing to overwrite it: move it or choose another --out")
    foreign = sorted(set(present) - set(written) - {EXPORT_REPORT})
    if foreign:
        raise ValueError(f"{out} holds {len(foreign)} file(s) the export did not write ("
                         f"{', '.join(foreign[:3])}{', ...' if len(foreign) > 3 else ''}); refusing to delete "
                         "them: move them out or choose another --out")


# --------------------------------------------------------------------------- card


def _yaml_configs(files: dict[str, str]) -> str:
    """The parquet splits only: `datasets` picks one builder per folder (parquet here), so the SFT JSONL
    files are loaded with the json builder instead (the card says how)."""
    lines = ["configs:", "- config_name: default", "  data_files:"]
    return "\n".join(lines + [f"  - split: {s}\n    path: {path}" for s, path in files.items()])


def no_eval_warning(result: ExportResult, eval_fraction: float) -> str | None:
    """Why an export has no eval split, in one line, or None when it has one."""
    if result.rows.get("eval"):
        return None
    if eval_fraction == 0:
        return "no eval split: --eval-fraction is 0, so every task is training data"
    families = len(set(result.plan.family_of.values()))
    return (f"no eval split: the tree's tasks come from {families} dataset famil{'y' if families == 1 else 'ies'}, "
            "no problem type has two, and a family is never split across train and eval; every task is training "
            "data (export a tree with more datasets for an eval split)")


def _no_eval_note(result: ExportResult) -> str:
    """The card's word on a missing eval split (the export's warning line says why)."""
    return "" if result.rows.get("eval") else "\n\n**This export has no eval split**: every task is in train."


def render_card(tree: Path, result: ExportResult, present: dict[str, dict[str, str]],
                licences: list[tuple[str, str, str]], holdouts: Sequence[Path], eval_fraction: float,
                seed: int) -> str:
    """README.md: YAML header for `datasets.load_dataset(DIR)`, then counts, licences and usage. Every
    string from the tree (its name, licences, held-out paths) goes in through md_cell: no HTML, no
    control characters, no table breaks."""
    tally = Counter((lic, key, split) for lic, key, split in licences)
    by_licence = sorted({(lic, key) for lic, key, _ in licences})
    table = ["| licence | key | train tasks | eval tasks |", "|---|---|---:|---:|"]
    table += [f"| {md_cell(lic)} | {md_cell(key)} | {tally[(lic, key, 'train')]} | {tally[(lic, key, 'eval')]} |"
              for lic, key in by_licence]
    held = ", ".join(md_cell(h) for h in holdouts) or "none"
    sft_files = ", ".join(f'"{s}": "path/to/this/folder/{path}"' for s, path in present["sft"].items())
    return f"""---
pretty_name: daregen training export
license: other
tags:
- data-science
- agents
- dare-bench
- reinforcement-learning
{_yaml_configs(present["default"])}
---

# daregen training export

Tasks of {md_cell(tree.name)} in the DARE-bench layout, as a training dataset: one row per task variant
(IF, MM, XF, CF). Split by dataset family (same source item, same table content, or a near-duplicate
table), with eval fraction {eval_fraction} per problem type, seed {seed}; held-out trees: {held}.
No family has tasks in both splits, and no training task shares a family with a held-out tree
(`{EXPORT_REPORT}` lists every family link and overlap, and every task folder refused).{_no_eval_note(result)}

| split | rows | SFT solutions |
|---|---:|---:|
""" + "\n".join(f"| {s} | {result.rows.get(s, 0)} | {result.sft.get(s, 0)} |" for s in SPLITS) + f"""

- `data/<split>-<sha>.parquet`: `task_id`, `variant`, `prompt` and `messages`, `files` (paths under this folder
  and their sha256), `problem_type`, `metric`, `reward_spec` (ground-truth path and hash, alignment key,
  tolerance), `difficulty` (recorded baselines, MM reference score), licence, and verl's columns
  (`data_source`, `reward_model`, `extra_info`). Files are named by their content, so no cache confuses
  two exports.
- `sft/<split>-<sha>.jsonl`: system/user/assistant messages, a Python solution in the assistant turn; IF
  solutions reproduce the reference predictions exactly, MM solutions carry their measured `score`.
- `tasks/`: the task files. `verify/` holds the ground truth the reward reads: never show it to an agent.

```python
from datasets import load_dataset
rl = load_dataset("path/to/this/folder")                       # {", ".join(present["default"]) or "no split"}
sft = load_dataset("json", data_files={{{sft_files}}})
```

Rewards: `from pipeline.reward import score_prediction, compute_score, make_trl_reward` (daregen).
They score the prediction CSV text that the agent's code wrote and never execute code themselves; run
model-written code in a sandbox (daregen's `finalize.sandbox.run_in_sandbox`).

## Licences

Each task keeps its source dataset's licence.

""" + "\n".join(table) + "\n"


# --------------------------------------------------------------------------- export


def has_sft(q: dict) -> bool:
    """Whether a task's question (all_metadata.json's) gets SFT solutions: tabular tasks only."""
    return q.get("problem_type") in ("classification", "regression")


def _sft_for(task_dir: Path, q: dict, entry: dict, split: str, family: str) -> tuple[list[dict], list[dict]]:
    if not has_sft(q):
        return [], []
    kept, dropped = [], []
    for make, code in ((if_solution, "v1"), (mm_solution, "v2")):
        label = "IF" if code == "v1" else "MM"
        if not entry.get(f"question_{code}"):
            continue
        try:
            checked = check_solution(task_dir, make(task_dir, q))
        except ValueError as exc:
            dropped.append({"task_id": f"{task_dir.name}/{label}", "reason": str(exc)})
            continue
        if checked.reason:
            dropped.append({"task_id": f"{task_dir.name}/{label}", "reason": checked.reason})
            continue
        kept.append(chat_record(checked, entry[f"question_{code}"],
                                {"task_id": f"{task_dir.name}/{label}", "split": split, "family": family}))
    return kept, dropped


def plan_export(tree: Path, holdouts: Sequence[Path], eval_fraction: float, seed: int,
                limits: InputLimits) -> tuple[SplitPlan, list[AdmittedTask], list[DroppedTask]]:
    """The split of the tree's admitted tasks against every held-out tree's admitted tasks, with the
    task folders refused on the way (pipeline.export.admit); ValueError when the tree has none left."""
    if not task_dirs(tree):
        raise ValueError(f"{tree}: no tasks (no <task>/verify/all_metadata.json)")
    admitted, dropped = admit_tree(tree, TREE, limits)
    admitted, ids = _identified(admitted, TREE, dropped)
    held_ids = []
    for h in holdouts:
        label = f"holdout:{Path(h)}"
        ok, lost = admit_tree(Path(h), label, limits)
        dropped += lost
        held_ids += _identified(ok, label, dropped)[1]
    if not admitted:
        raise ValueError(f"{tree}: no task passed the checks, e.g. {dropped[0].task_dir}: {dropped[0].reason}")
    plan = plan_split(ids, held_ids, eval_fraction, seed)
    return plan, admitted, dropped


def _identified(tasks: list[AdmittedTask], label: str,
                dropped: list[DroppedTask]) -> tuple[list[AdmittedTask], list[TaskIdentity]]:
    """The tasks whose tables could be read and their identities; one the reading refuses (split tables
    that do not join one row to one) is added to `dropped` with its reason, and the others go on."""
    kept, ids = [], []
    for task in tasks:
        try:
            ids.append(identify(task.task_dir, label, task.meta))
        except (OSError, ValueError) as exc:
            dropped.append(dropped_task(label, task.task_dir.name, exc))
            continue
        kept.append(task)
    return kept, ids


def export_tree(tree: Path, out: Path | None, holdouts: Sequence[Path] = (), eval_fraction: float = 0.1,
                seed: int = 0, check_only: bool = False, jobs: int = 2,
                on_line: Callable[[str], None] = lambda _: None, limits: InputLimits | None = None) -> ExportResult:
    """Plan the split; with `check_only` report it, else write the export to `out`. Raises ValueError
    on contamination (the export is never written then) or a bad argument. A task folder of the tree
    or of a held-out tree that fails the checks of pipeline.export.admit is dropped with its reason."""
    tree, limits = Path(tree), limits or InputLimits()
    plan, admitted, dropped = plan_export(tree, holdouts, eval_fraction, seed, limits)
    lines = [f"dropped  {d.tree}::{d.task_dir}: {d.reason}" for d in dropped] + check_report(plan)
    problems = plan.problems()
    if check_only or problems:
        for line in lines:
            on_line(line)
        if problems:
            raise ValueError(f"refusing to export: {len(problems)} contamination problem(s), e.g. {problems[0]}")
        return ExportResult(None, plan, {}, {}, [], lines, dropped)
    if out is None:
        raise ValueError("--out is required unless --check")
    out = Path(out)
    check_replaceable(out)
    staging = out.parent / f".{out.name}.partial"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    try:
        result = _write_export(tree, admitted, staging, plan, holdouts, eval_fraction, seed, jobs, limits,
                               dropped, on_line)
        result.lines = lines + result.lines
        check_replaceable(out)  # again: a file put there while the export ran is kept too
        if out.exists():
            shutil.rmtree(out)
        os.replace(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    result.out = out
    return result


def _write_export(tree: Path, admitted: Sequence[AdmittedTask], staging: Path, plan: SplitPlan,
                  holdouts: Sequence[Path], eval_fraction: float, seed: int, jobs: int, limits: InputLimits,
                  dropped: list[DroppedTask], on_line: Callable[[str], None]) -> ExportResult:
    entries = question_entries(tree)
    rows: dict[str, list[dict]] = {s: [] for s in SPLITS}
    licences: list[tuple[str, str, str]] = []
    work = []
    for task in admitted:
        name, meta = task.task_dir.name, task.meta
        if name not in plan.split or name not in entries:
            continue
        split, family = plan.split[name], plan.family_of[name]
        dest = staging / TASKS_DIR / name
        copy_task(task, dest, limits)
        try:
            rows[split] += task_rows(dest, entries[name], meta, split, family, staging)
        except (OSError, ValueError) as exc:  # a broken entry or reference: this task only
            dropped.append(dropped_task(TREE, name, exc))
            shutil.rmtree(dest)
            continue
        licences.append((licence_of(meta), canonical_licence(licence_of(meta)), split))
        work.append((dest, meta["question"], entries[name], split, family))
    write_json(staging / TASKS_DIR / names.QUESTION_LIST, [entries[w[0].name] for w in work])

    sft: dict[str, list[dict]] = {s: [] for s in SPLITS}
    sft_dropped: list[dict] = []
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for (dest, q, _, split, _), (kept, lost) in zip(work, pool.map(lambda w: _sft_for(*w), work)):
            sft[split] += kept
            sft_dropped += lost
            if not kept and not lost and not has_sft(q):
                on_line(f"sft      {dest.name}: none: SFT solutions are written for classification and regression "
                        f"tasks (IF and MM), not for a {q.get('problem_type')} task")
                continue
            on_line(f"sft      {dest.name}: {len(kept)} kept" + (f", dropped: {lost}" if lost else ""))

    present: dict[str, dict[str, str]] = {"default": {}, "sft": {}}
    for split in SPLITS:
        if rows[split]:
            name = write_content_named(staging / DATA_DIR, split, ".parquet", parquet_bytes(rows[split]))
            present["default"][split] = f"{DATA_DIR}/{name}"
        if sft[split]:
            records = sorted(sft[split], key=lambda r: r["task_id"])
            text = "".join(json.dumps(r, sort_keys=True, ensure_ascii=False) + "\n" for r in records)
            name = write_content_named(staging / SFT_DIR, split, ".jsonl", text.encode("utf-8"))
            present["sft"][split] = f"{SFT_DIR}/{name}"
    result = ExportResult(None, plan, {s: len(rows[s]) for s in SPLITS}, {s: len(sft[s]) for s in SPLITS},
                          sorted(sft_dropped, key=lambda d: d["task_id"]), [], dropped)
    (staging / CARD).write_text(render_card(tree, result, present, licences, holdouts, eval_fraction, seed),
                                encoding="utf-8")
    write_json(staging / EXPORT_REPORT, {
        "tree": tree.name, "holdouts": [str(h) for h in holdouts], "eval_fraction": eval_fraction, "seed": seed,
        "rows": result.rows, "sft": result.sft, "sft_dropped": result.sft_dropped,
        "dropped_tasks": [d.to_json() for d in dropped],
        "data_files": present["default"], "sft_files": present["sft"],
        "split": dict(sorted(plan.split.items())), "family_of": dict(sorted(plan.family_of.items())),
        "families": [{"family": f.family_id, "members": list(f.members)} for f in plan.families],
        "links": [{"a": lk.a, "b": lk.b, "reason": lk.reason} for lk in plan.links],
        "holdout_overlaps": plan.holdout_overlaps,
        "files": _files_in(staging),  # what a later export into the same folder may delete
    })
    result.lines.append(f"exported {sum(result.rows.values())} rows (train {result.rows['train']}, eval "
                        f"{result.rows['eval']}), {sum(result.sft.values())} SFT solutions, "
                        f"{len(result.sft_dropped)} dropped" + (f"; {len(dropped)} task folder(s) refused"
                                                                 if dropped else ""))
    if (warning := no_eval_warning(result, eval_fraction)) is not None:
        result.lines.append(f"warning: {warning}")
    return result


def split_files(export_dir: Path) -> dict[str, Path]:
    """split -> its parquet file in an export (the names carry a content digest; the report maps them)."""
    report = read_json_inside(Path(export_dir) / EXPORT_REPORT, Path(export_dir))
    return {split: Path(export_dir) / rel for split, rel in (report.get("data_files") or {}).items()}
