"""`daregen export TREE --out DIR`: a training dataset a trainer loads with one call.

    DIR/
      README.md                 dataset card: YAML header (configs -> splits -> files), licence table, usage
      data/train.parquet        one row per task variant (IF, MM, XF, CF) of the train families
      data/eval.parquet         ... of the eval families
      sft/train.jsonl           chat-format SFT solutions (IF: the instruction's steps; MM: a baseline)
      sft/eval.jsonl
      tasks/<task_dir>/         the task files (hard links where possible, else copies), verify/ included:
                                the reward reads its ground truth there; never show verify/ to an agent
      tasks/question_list.json  the exported tasks' entries, so `daregen score PRED --tasks DIR/tasks` works
      export_report.json        families, family links, held-out overlaps, the split, dropped SFT solutions

The split is planned by pipeline.export.families; the export refuses to write a plan
with a family in both splits or a training task from a held-out family. The folder is
written beside DIR and renamed into place, so a failed export leaves DIR as it was.
"""

from __future__ import annotations

import json
import os
import shutil
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.core import names
from pipeline.core.hashing import sha256_file
from pipeline.core.jsonio import read_json, write_json
from pipeline.export.families import SplitPlan, check_report, plan_tree_split
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


def write_parquet(rows: list[dict], path: Path) -> None:
    rows = sorted(rows, key=lambda r: r["task_id"])
    for i, row in enumerate(rows):
        row["extra_info"]["index"] = i
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=ROW_SCHEMA), path, compression="zstd")


# --------------------------------------------------------------------------- files


def link_or_copy_tree(src: Path, dest: Path) -> None:
    """Hard-link every file of `src` under `dest` (a copy across devices): exports are self-contained and cheap."""
    for path in sorted(src.rglob("*")):
        target = dest / path.relative_to(src)
        if path.is_dir():
            target.mkdir(parents=True, exist_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(path, target)
        except OSError:
            shutil.copy2(path, target)


# --------------------------------------------------------------------------- card


def _yaml_configs(splits: list[str]) -> str:
    """The parquet splits only: `datasets` picks one builder per folder (parquet here), so the SFT JSONL
    files are loaded with the json builder instead (the card says how)."""
    lines = ["configs:", "- config_name: default", "  data_files:"]
    return "\n".join(lines + [f"  - split: {s}\n    path: {DATA_DIR}/{s}.parquet" for s in splits])


def render_card(tree: Path, result: ExportResult, present: dict[str, list[str]], licences: list[tuple[str, str, str]],
                holdouts: Sequence[Path], eval_fraction: float, seed: int) -> str:
    """README.md: YAML header for `datasets.load_dataset(DIR)`, then counts, licences and usage."""
    tally = Counter((lic, key, split) for lic, key, split in licences)
    by_licence = sorted({(lic, key) for lic, key, _ in licences})
    table = ["| licence | key | train tasks | eval tasks |", "|---|---|---:|---:|"]
    table += [f"| {lic.replace('|', '/')} | {key} | {tally[(lic, key, 'train')]} | {tally[(lic, key, 'eval')]} |"
              for lic, key in by_licence]
    held = ", ".join(f"`{h}`" for h in holdouts) or "none"
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

Tasks of `{tree.name}` in the DARE-bench layout, as a training dataset: one row per task variant
(IF, MM, XF, CF). Split by dataset family (same source item, same table content, or a near-duplicate
table), with eval fraction {eval_fraction} per problem type, seed {seed}; held-out trees: {held}.
No family has tasks in both splits, and no training task shares a family with a held-out tree
(`{EXPORT_REPORT}` lists every family link and overlap).

| split | rows | SFT solutions |
|---|---:|---:|
""" + "\n".join(f"| {s} | {result.rows.get(s, 0)} | {result.sft.get(s, 0)} |" for s in SPLITS) + f"""

- `data/<split>.parquet`: `task_id`, `variant`, `prompt` and `messages`, `files` (paths under this folder and
  their sha256), `problem_type`, `metric`, `reward_spec` (ground-truth path and hash, alignment key,
  tolerance), `difficulty` (recorded baselines, MM reference score), licence, and verl's columns
  (`data_source`, `reward_model`, `extra_info`).
- `sft/<split>.jsonl`: system/user/assistant messages, a Python solution in the assistant turn; IF
  solutions reproduce the reference predictions exactly, MM solutions carry their measured `score`.
- `tasks/`: the task files. `verify/` holds the ground truth the reward reads: never show it to an agent.

```python
from datasets import load_dataset
rl = load_dataset("path/to/this/folder")                       # train, eval
sft = load_dataset("json", data_files={{"train": "path/to/this/folder/sft/train.jsonl"}})
```

Rewards: `from pipeline.reward import score_prediction, compute_score, make_trl_reward` (daregen).
They score the prediction CSV that the agent's code wrote and never execute code themselves; run
model-written code in a sandbox (daregen's `finalize.sandbox.run_in_sandbox`).

## Licences

Each task keeps its source dataset's licence.

""" + "\n".join(table) + "\n"


# --------------------------------------------------------------------------- export


def _sft_for(task_dir: Path, q: dict, entry: dict, split: str, family: str) -> tuple[list[dict], list[dict]]:
    if q.get("problem_type") not in ("classification", "regression"):
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


def export_tree(tree: Path, out: Path | None, holdouts: Sequence[Path] = (), eval_fraction: float = 0.1,
                seed: int = 0, check_only: bool = False, jobs: int = 2,
                on_line: Callable[[str], None] = lambda _: None) -> ExportResult:
    """Plan the split; with `check_only` report it, else write the export to `out`. Raises ValueError
    on contamination (the export is never written then) or a bad argument."""
    tree = Path(tree)
    if not task_dirs(tree):
        raise ValueError(f"{tree}: no tasks (no <task>/verify/all_metadata.json)")
    plan = plan_tree_split(tree, [Path(h) for h in holdouts], eval_fraction, seed)
    lines = check_report(plan)
    problems = plan.problems()
    if check_only or problems:
        for line in lines:
            on_line(line)
        if problems:
            raise ValueError(f"refusing to export: {len(problems)} contamination problem(s), e.g. {problems[0]}")
        return ExportResult(None, plan, {}, {}, [], lines)
    if out is None:
        raise ValueError("--out is required unless --check")
    out = Path(out)
    if out.exists() and any(out.iterdir()) and not (out / EXPORT_REPORT).is_file():
        raise ValueError(f"{out} exists, is not empty and is not a daregen export; refusing to overwrite it")
    staging = out.parent / f".{out.name}.partial"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    try:
        result = _write_export(tree, staging, plan, holdouts, eval_fraction, seed, jobs, on_line)
        result.lines = lines + result.lines
        if out.exists():
            shutil.rmtree(out)
        os.replace(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    result.out = out
    return result


def _write_export(tree: Path, staging: Path, plan: SplitPlan, holdouts: Sequence[Path], eval_fraction: float,
                  seed: int, jobs: int, on_line: Callable[[str], None]) -> ExportResult:
    entries = question_entries(tree)
    rows: dict[str, list[dict]] = {s: [] for s in SPLITS}
    licences: list[tuple[str, str, str]] = []
    work = []
    for src_dir in task_dirs(tree):
        name = src_dir.name
        if name not in plan.split or name not in entries:
            continue
        split, family = plan.split[name], plan.family_of[name]
        dest = staging / TASKS_DIR / name
        link_or_copy_tree(src_dir, dest)
        meta = read_json(dest / names.VERIFY_DIR / names.ALL_METADATA)
        rows[split] += task_rows(dest, entries[name], meta, split, family, staging)
        licences.append((licence_of(meta), canonical_licence(licence_of(meta)), split))
        work.append((dest, meta["question"], entries[name], split, family))
    write_json(staging / TASKS_DIR / names.QUESTION_LIST, [entries[w[0].name] for w in work])

    sft: dict[str, list[dict]] = {s: [] for s in SPLITS}
    dropped: list[dict] = []
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for (dest, _, _, split, _), (kept, lost) in zip(work, pool.map(lambda w: _sft_for(*w), work)):
            sft[split] += kept
            dropped += lost
            on_line(f"sft      {dest.name}: {len(kept)} kept" + (f", dropped: {lost}" if lost else ""))

    present: dict[str, list[str]] = {"default": [], "sft": []}
    for split in SPLITS:
        if rows[split]:
            write_parquet(rows[split], staging / DATA_DIR / f"{split}.parquet")
            present["default"].append(split)
        if sft[split]:
            path = staging / SFT_DIR / f"{split}.jsonl"
            path.parent.mkdir(parents=True, exist_ok=True)
            records = sorted(sft[split], key=lambda r: r["task_id"])
            path.write_text("".join(json.dumps(r, sort_keys=True, ensure_ascii=False) + "\n" for r in records),
                            encoding="utf-8")
            present["sft"].append(split)
    result = ExportResult(None, plan, {s: len(rows[s]) for s in SPLITS}, {s: len(sft[s]) for s in SPLITS},
                          sorted(dropped, key=lambda d: d["task_id"]), [])
    write_json(staging / EXPORT_REPORT, {
        "tree": tree.name, "holdouts": [str(h) for h in holdouts], "eval_fraction": eval_fraction, "seed": seed,
        "rows": result.rows, "sft": result.sft, "sft_dropped": result.sft_dropped,
        "split": dict(sorted(plan.split.items())), "family_of": dict(sorted(plan.family_of.items())),
        "families": [{"family": f.family_id, "members": list(f.members)} for f in plan.families],
        "links": [{"a": lk.a, "b": lk.b, "reason": lk.reason} for lk in plan.links],
        "holdout_overlaps": plan.holdout_overlaps,
    })
    (staging / CARD).write_text(render_card(tree, result, present, licences, holdouts, eval_fraction, seed),
                                encoding="utf-8")
    result.lines.append(f"exported {sum(result.rows.values())} rows (train {result.rows['train']}, eval "
                        f"{result.rows['eval']}), {sum(result.sft.values())} SFT solutions, "
                        f"{len(result.sft_dropped)} dropped")
    return result
