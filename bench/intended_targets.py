"""The intended-target rate: does a built tree predict what each held-out dataset is documented to study?

`bench/intended_targets.csv` lists about ninety well-known datasets of the built-in corpus with
their documented outcomes (`ref`, `outcomes` separated by `|`, `kind`, `rows`, `justification`
quoting the dataset's help page). A dataset is

- *in the tree* when the build considered it: it has a task, or run_report.json lists its rejection;
- *yielding* when at least one task of the tree was built from it (`daregen.ref` of the task);
- a *hit* when one of its tasks predicts a documented outcome (any target column of the task);
- *large enough* when it has at least LARGE_ROWS rows or is a time series, i.e. when a floor of
  40 validation rows (or 40 training points per series) can be met at all.

A list may also hold datasets with no defensible question (`kind` `none`, `outcomes` empty): the
right answer is no task. Such a dataset is *abstained* when the build considered it and made no task
(a hit), *guessed* when it made one (a miss); it never enters the intended-target rate.

`bench/intended_targets_2.csv`, a second list labelled independently from the datasets' help pages
before the code it measures was tuned, has the same format, and so has `bench/intended_targets_3.csv`
(80 datasets drawn by bench/draw_heldout.py after list 2 had been used for tuning, labelled blind
from help pages and data only, and never used to tune a rule), `bench/intended_targets_4.csv`
(80 more, drawn the same way once list 3 had been read for what the designer missed, and labelled
blind before any rule was tuned), `bench/intended_targets_5.csv` (80 more, drawn by
`bench/draw_heldout.py 5` once list 4 had been built and measured, labelled blind the same way) and
`bench/intended_targets_6.csv` (80 more, drawn by `bench/draw_heldout.py 6` once list 5 had been built
and measured, labelled blind from help pages and data before any rule was tuned to it), and
`bench/intended_targets_7.csv` (80 more, drawn by `bench/draw_heldout.py 7` when every earlier list had
been used to write rules, labelled blind from help pages only: the one held-out list; bench/lists.toml
says which lists are tuning lists). INTENDED_LISTS names the lists a bench run reports when no list is
given; list 7 is measured only when named (`--list bench/intended_targets_7.csv`).

Everything here reads files and computes figures; nothing builds. bench_designers.py builds the
listed datasets (`--sources builtin:REF,...`) and prints these figures per designer.
"""

from __future__ import annotations

import csv
import json
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

INTENDED_CSV = Path(__file__).resolve().parent / "intended_targets.csv"
INTENDED_CSV_2 = Path(__file__).resolve().parent / "intended_targets_2.csv"
INTENDED_CSV_3 = Path(__file__).resolve().parent / "intended_targets_3.csv"
INTENDED_CSV_4 = Path(__file__).resolve().parent / "intended_targets_4.csv"
INTENDED_CSV_5 = Path(__file__).resolve().parent / "intended_targets_5.csv"
INTENDED_CSV_6 = Path(__file__).resolve().parent / "intended_targets_6.csv"
KINDS = ("classification", "regression", "time_series")
NO_QUESTION = "none"  # a dataset with no defensible question: no task is the right answer
INTENDED_LISTS = (INTENDED_CSV, INTENDED_CSV_2, INTENDED_CSV_3, INTENDED_CSV_4, INTENDED_CSV_5, INTENDED_CSV_6)
# Every labelled list and its status ("tuning" or "heldout"), with the reason: the one manifest of the lists.
LISTS_TOML = Path(__file__).resolve().parent / "lists.toml"
# With a 0.7 split, 200 rows give 60 validation rows: the 40-row floor survives missing targets.
LARGE_ROWS = 200
_COLUMNS = ["ref", "outcomes", "kind", "rows", "justification"]


@dataclass(frozen=True)
class Intended:
    """One listed dataset and what it is documented to study."""

    ref: str
    outcomes: tuple[str, ...]
    kind: str
    rows: int
    justification: str

    def __post_init__(self) -> None:
        if not self.ref:
            raise ValueError("<no ref>: a ref is required")
        if self.kind not in KINDS + (NO_QUESTION,):
            raise ValueError(f"{self.ref}: kind {self.kind!r} is not one of {', '.join(KINDS + (NO_QUESTION,))}")
        if self.kind == NO_QUESTION and self.outcomes:
            raise ValueError(f"{self.ref}: kind {NO_QUESTION!r} lists no outcome (got {'|'.join(self.outcomes)})")
        if self.kind != NO_QUESTION and (not self.outcomes or not all(self.outcomes)):
            raise ValueError(f"{self.ref}: a ref and at least one outcome are required")
        if not self.justification:
            raise ValueError(f"{self.ref}: the justification (a quote from the documentation) is missing")

    @property
    def large(self) -> bool:
        return self.kind == "time_series" or self.rows >= LARGE_ROWS

    @property
    def has_question(self) -> bool:
        return self.kind != NO_QUESTION


def available_lists() -> list[Path]:
    """The lists a bench run reports when none is named: those of INTENDED_LISTS that exist."""
    return [p for p in INTENDED_LISTS if p.is_file()]


def labelled_lists(manifest: Path = LISTS_TOML) -> dict[Path, str]:
    """Every labelled list bench/lists.toml names, in its order -> its status ("tuning" or "heldout"). A list
    file of bench/ the manifest does not name is a ValueError: each list's status is stated, never assumed."""
    data = tomllib.loads(manifest.read_text(encoding="utf-8"))
    lists = {manifest.parent / entry["file"]: entry["status"] for entry in data["list"]}
    unnamed = sorted(p.name for p in manifest.parent.glob("intended_targets*.csv") if p not in lists)
    if unnamed:
        raise ValueError(f"{manifest.name} names no status for {', '.join(unnamed)}")
    return lists


def load_intended(path: Path = INTENDED_CSV) -> list[Intended]:
    """The held-out list, in file order; a malformed row or a repeated ref is a ValueError."""
    with open(path, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        if reader.fieldnames != _COLUMNS:
            raise ValueError(f"{path}: columns must be {_COLUMNS}, got {reader.fieldnames}")
        out = [Intended(row["ref"].strip(), tuple(o.strip() for o in row["outcomes"].split("|") if o.strip()),
                        row["kind"].strip(), int(row["rows"]), row["justification"].strip()) for row in reader]
    seen: set[str] = set()
    for item in out:
        if item.ref in seen:
            raise ValueError(f"{path}: {item.ref} is listed twice")
        seen.add(item.ref)
    return out


def sources_spec(items: list[Intended]) -> str:
    """`builtin:REF,builtin:REF,...`: builds exactly the listed datasets, in list order."""
    return ",".join(f"builtin:{item.ref}" for item in items)


# ------------------------------------------------------------------ a tree


@dataclass(frozen=True)
class TreeTask:
    task_dir: str
    ref: str
    target: tuple[str, ...]
    designer: str = ""  # daregen.designer: "heuristic", "llm (...)", "heuristic (llm fallback: ...)"


@dataclass(frozen=True)
class TreeContents:
    """What a built tree says about its datasets: its tasks, and why the other candidates were rejected."""

    tasks: tuple[TreeTask, ...]
    rejections: dict[str, str]  # ref -> "stage: reason"

    @property
    def considered(self) -> set[str]:
        return {t.ref for t in self.tasks} | set(self.rejections)


def read_tree(tree: Path) -> TreeContents:
    """Tasks from `<task>/verify/all_metadata.json`, rejections from `run_report.json` (absent in a foreign tree)."""
    tasks = []
    for meta_path in sorted(Path(tree).glob("*/verify/all_metadata.json")):
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        ref = (meta.get("daregen") or {}).get("ref") or (meta.get("data_info") or {}).get("ref")
        if ref:
            tasks.append(TreeTask(meta_path.parent.parent.name, ref, tuple(meta["question"]["target"]),
                                  str((meta.get("daregen") or {}).get("designer", ""))))
    rejections: dict[str, str] = {}
    report = Path(tree) / "run_report.json"
    if report.is_file():
        for r in json.loads(report.read_text(encoding="utf-8")).get("rejections", []):
            # A unit rejected after design names its kind (`ref (class)`, `ref (ts)`): the dataset is `ref`.
            ref = re.sub(r" \((class|reg|ts)\)$", "", r["ref"])
            rejections.setdefault(ref, f"{r.get('stage', '?')}: {r.get('reason', '')}")
    return TreeContents(tuple(tasks), rejections)


# ----------------------------------------------------------------- scoring


@dataclass(frozen=True)
class Verdict:
    item: Intended
    # "hit", "miss", "no task", "not in tree"; for a dataset with no question: "abstained" (no task,
    # right), "guessed" (a task, wrong), "not in tree"
    status: str
    targets: tuple[str, ...] = ()  # every target its tasks chose (miss, hit)
    task_dirs: tuple[str, ...] = ()
    reason: str = ""  # why no task (no task)


@dataclass(frozen=True)
class HeldoutScore:
    verdicts: tuple[Verdict, ...]
    # Tasks of listed datasets whose LLM answer was unusable, so the heuristic designed them:
    # an LLM figure means little when most of its tasks are these.
    llm_fallbacks: int = 0

    def _count(self, *statuses: str, large: bool | None = None) -> int:
        return sum(v.status in statuses and (large is None or v.item.large == large) for v in self.verdicts)

    @property
    def listed(self) -> int:
        """Listed datasets with a question (the intended-target rate's population)."""
        return sum(v.item.has_question for v in self.verdicts)

    @property
    def large_listed(self) -> int:
        return sum(v.item.large and v.item.has_question for v in self.verdicts)

    @property
    def no_question_listed(self) -> int:
        return sum(not v.item.has_question for v in self.verdicts)

    @property
    def abstained(self) -> int:
        """Datasets with no defensible question that the build considered and made no task for."""
        return self._count("abstained")

    @property
    def guessed(self) -> int:
        """Datasets with no defensible question that got a task anyway."""
        return self._count("guessed")

    @property
    def in_tree(self) -> int:
        return self._count("hit", "miss", "no task")

    @property
    def yielding(self) -> int:
        return self._count("hit", "miss")

    @property
    def large_yielding(self) -> int:
        return self._count("hit", "miss", large=True)

    @property
    def hits(self) -> int:
        return self._count("hit")

    @property
    def rate(self) -> float:
        """Share of the yielding datasets with a task that predicts a documented outcome."""
        return self.hits / self.yielding if self.yielding else 0.0

    def by_status(self, status: str) -> list[Verdict]:
        return [v for v in self.verdicts if v.status == status]


def score_tree(items: list[Intended], contents: TreeContents) -> HeldoutScore:
    """One verdict per listed dataset, in list order."""
    tasks_of: dict[str, list[TreeTask]] = {}
    for task in contents.tasks:
        tasks_of.setdefault(task.ref, []).append(task)
    considered = contents.considered
    verdicts = []
    for item in items:
        tasks = tasks_of.get(item.ref, [])
        if not item.has_question:
            status = "guessed" if tasks else "abstained" if item.ref in considered else "not in tree"
            verdicts.append(Verdict(item, status, tuple(dict.fromkeys(t for task in tasks for t in task.target)),
                                    tuple(t.task_dir for t in tasks), contents.rejections.get(item.ref, "")))
            continue
        if not tasks:
            status = "no task" if item.ref in considered else "not in tree"
            verdicts.append(Verdict(item, status, reason=contents.rejections.get(item.ref, "")))
            continue
        targets = tuple(dict.fromkeys(t for task in tasks for t in task.target))
        hit = any(set(task.target) & set(item.outcomes) for task in tasks)
        verdicts.append(Verdict(item, "hit" if hit else "miss", targets, tuple(t.task_dir for t in tasks)))
    listed = {item.ref for item in items}
    fallbacks = sum(t.ref in listed and "llm fallback" in t.designer for t in contents.tasks)
    return HeldoutScore(tuple(verdicts), fallbacks)


# ---------------------------------------------------------------- printing


def _share(k: int, n: int) -> str:
    return f"{k}/{n} ({k / n:.0%})" if n else f"{k}/0"


def summary_table(scores: dict[str, HeldoutScore]) -> str:
    """One line per designer (or tree): listed, in tree, yielding (all and large enough), intended-target rate."""
    lines = [f"{'designer':<14}{'listed':>8}{'in tree':>9}{'with task':>11}{'large w/ task':>15}"
             f"{'documented outcome / with task':>33}{'no question: no task':>22}"]
    for name, s in scores.items():
        skipped = _share(s.abstained, s.no_question_listed) if s.no_question_listed else "-"
        lines.append(f"{name:<14}{s.listed:>8}{s.in_tree:>9}{s.yielding:>11}"
                     f"{f'{s.large_yielding}/{s.large_listed}':>15}{_share(s.hits, s.yielding):>33}{skipped:>22}")
    return "\n".join(lines)


def details(name: str, score: HeldoutScore, reason_chars: int = 200) -> str:
    """The misses (ref, chosen target, documented outcomes) and the datasets that yielded no task, with why."""
    hits = score.by_status("hit")
    kinds = [f"{kind} {sum(v.item.kind == kind for v in hits)}/"
             f"{sum(v.item.kind == kind and v.status in ('hit', 'miss') for v in score.verdicts)}" for kind in KINDS]
    lines = [f"\n{name}: documented outcome / with task, by documented kind: " + ", ".join(kinds)]
    if score.llm_fallbacks:
        lines.append(f"{name}: {score.llm_fallbacks} task(s) designed by the heuristic after an unusable LLM answer")
    lines += [f"\n{name}: {len(hits)} dataset(s) with a task predicting a documented outcome: "
             + ", ".join(f"{v.item.ref} ({'|'.join(v.targets)})" for v in hits)]
    misses = score.by_status("miss")
    lines.append(f"\n{name}: {len(misses)} task(s) predicting something else than the documented outcome")
    for v in misses:
        lines.append(f"  {v.item.ref:<40} chose {'|'.join(v.targets):<24} documented {'|'.join(v.item.outcomes)}")
    empty = score.by_status("no task")
    lines.append(f"\n{name}: {len(empty)} listed dataset(s) with no task")
    for v in empty:
        size = "large" if v.item.large else f"{v.item.rows} rows"
        lines.append(f"  {v.item.ref:<40} {size:<9} {v.reason[:reason_chars]}")
    if score.no_question_listed:
        guessed = score.by_status("guessed")
        lines.append(f"\n{name}: {score.abstained}/{score.no_question_listed} dataset(s) with no defensible question "
                     f"skipped; {len(guessed)} got a task anyway")
        for v in guessed:
            lines.append(f"  {v.item.ref:<40} chose {'|'.join(v.targets)}")
    absent = score.by_status("not in tree")
    if absent:
        lines.append(f"\n{name}: {len(absent)} listed dataset(s) the build did not consider: "
                     + ", ".join(v.item.ref for v in absent))
    return "\n".join(lines)

