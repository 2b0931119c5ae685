"""The rule report: every rule of the evidence registry (task_design.evidence) measured the way Snorkel's
LFAnalysis measures labelling functions: its coverage over the built-in corpus, its conflicts with other
rules, and its accuracy on the labelled lists.

    .venv/bin/python bench/rule_report.py [--limit N] [--out FILE.md]

Includes: the first N candidates of `daregen sources list` (all of them by default) and every dataset of the
labelled lists bench/intended_targets*.csv, read as the pipeline reads them (the source's record, its
table's column names after normalisation). A rule *fires* where its matcher matches the text it reads (a
column's name or own entry, the title, the description): the pattern's reach, not the decision it feeds,
which may also need the column's values (a design factor's balanced levels, a 0/1 calendar dummy).

- coverage: the datasets (and columns) it fires on. A rule firing on three datasets or fewer is a
  curator's decision, not a rule: such rules are listed at the end (a shipped curation ledger for them is a
  later step);
- conflicts: the columns (for the title and description, the datasets) where it and a rule with another
  verdict both fire (an outcome reading and a class-outcome reading agree; "an experiment" is context and
  conflicts with none), and how many of those it loses on priority;
- accuracy, per labelled list: of its firings on that list's columns, the share that agree with the label
  (an outcome verdict on a labelled outcome; any other verdict on a column that is not one). Rules that read
  the title or description have none, but a lookup table's (agreeing on a dataset with no question).
  bench/lists.toml says which lists rules were tuned on: their figures are in-sample.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.intended_targets import NO_QUESTION, Intended, labelled_lists, load_intended  # noqa: E402
from task_design.evidence import RULES, Rule, strongest  # noqa: E402

CURATOR_MAX = 3  # a rule firing on this many datasets or fewer is a curator's decision
OUTCOME_VERDICTS = frozenset({"outcome", "class_outcome", "study_subject"})
COLUMN_READS = frozenset({"name", "entry"})
# A verdict that sets the context other rules read in (the data is an experiment), not a role or a subject:
# it conflicts with none.
CONTEXT_VERDICTS = frozenset({"experiment"})
DATASET = ""  # a rule that reads the title or description fires on the dataset, not a column


@dataclass(frozen=True)
class Texts:
    """What the rules read of one dataset."""

    ref: str
    title: str
    description: str
    columns: dict[str, str]  # name -> its own entry ("" when none)


@dataclass
class RuleStats:
    rule: Rule
    datasets: set[str] = field(default_factory=set)
    columns: int = 0
    conflicts: Counter = field(default_factory=Counter)  # other rule id -> columns where both fire
    lost: int = 0  # conflicting columns where a higher-priority rule's verdict stands
    accuracy: dict[str, tuple[int, int]] = field(default_factory=dict)  # list -> (agree, fired)


def _text(r: Rule, texts: Texts, column: str) -> str:
    if r.reads == "name":
        return column
    if r.reads == "entry":
        return texts.columns[column]
    return texts.title if r.reads == "title" else f"{texts.title} {texts.description}"


def fired(texts: Texts) -> dict[str, list[Rule]]:
    """Column (DATASET for the title and description) -> the rules that fire on it."""
    out: dict[str, list[Rule]] = {}
    for r in RULES.values():
        targets = list(texts.columns) if r.reads in COLUMN_READS else [DATASET]
        for column in targets:
            if r.fires(_text(r, texts, column)):
                out.setdefault(column, []).append(r)
    return out


def _conflict(a: Rule, b: Rule) -> bool:
    if a.verdict in CONTEXT_VERDICTS or b.verdict in CONTEXT_VERDICTS:
        return False
    return a.verdict != b.verdict and not (a.verdict in OUTCOME_VERDICTS and b.verdict in OUTCOME_VERDICTS)


def _agrees(r: Rule, column: str, item: Intended) -> bool | None:
    """Whether a firing agrees with the label, or None when the label says nothing of it."""
    if r.reads not in COLUMN_READS:
        return (item.kind == NO_QUESTION) if r.verdict == "lookup_table" else None
    labelled = {o.casefold() for o in item.outcomes}
    return (column.casefold() in labelled) == (r.verdict in OUTCOME_VERDICTS)


def measure(corpus: Iterable[Texts], lists: dict[str, list[Intended]]) -> dict[str, RuleStats]:
    stats = {rid: RuleStats(r) for rid, r in RULES.items()}
    labels = {name: {item.ref: item for item in items} for name, items in lists.items()}
    for texts in corpus:
        for column, rules in fired(texts).items():
            for r in rules:
                s = stats[r.id]
                s.datasets.add(texts.ref)
                s.columns += column != DATASET
                rivals = [o for o in rules if _conflict(r, o)]
                s.conflicts.update(o.id for o in rivals)
                s.lost += bool(rivals) and strongest([r, *rivals]) is not r
                for name, items in labels.items():
                    if texts.ref in items and (agree := _agrees(r, column, items[texts.ref])) is not None:
                        a, f = s.accuracy.get(name, (0, 0))
                        s.accuracy[name] = (a + agree, f + 1)
    return stats


def roles() -> dict[str, str]:
    """List file name -> its status ("tuning" or "heldout"), as bench/lists.toml states it."""
    return {path.name: status for path, status in labelled_lists().items()}


def report(stats: dict[str, RuleStats], list_roles: dict[str, str], n_datasets: int) -> str:
    names = list(list_roles)
    short = {n: n.removeprefix("intended_targets").removesuffix(".csv").lstrip("_") or "1" for n in names}
    lines = [f"# Rule report: {len(stats)} rules over {n_datasets} datasets", "",
             "Lists: " + ", ".join(f"{short[n]} = {n} ({list_roles[n]})" for n in names) + ".", "",
             "| rule | verdict | priority | datasets | columns | conflicts (columns, with) | lost | "
             + " | ".join(f"acc. {short[n]}" for n in names) + " |",
             "|---|---|---|---|---|---|---|" + "---|" * len(names)]
    for s in sorted(stats.values(), key=lambda s: -s.rule.priority):
        top = ", ".join(f"{rid} {k}" for rid, k in s.conflicts.most_common(2))
        acc = [f"{a}/{f}" if f else "–" for a, f in (s.accuracy.get(n, (0, 0)) for n in names)]
        lines.append(f"| `{s.rule.id}` | {s.rule.verdict} | {s.rule.priority} | {len(s.datasets)} | {s.columns} | "
                     f"{sum(s.conflicts.values())}{f' ({top})' if top else ''} | {s.lost} | " + " | ".join(acc) + " |")
    few = [s for s in sorted(stats.values(), key=lambda s: (len(s.datasets), s.rule.id))
           if len(s.datasets) <= CURATOR_MAX]
    lines += ["", f"## Curator decisions: rules firing on {CURATOR_MAX} datasets or fewer", ""]
    lines += [f"- `{s.rule.id}`: {len(s.datasets)} ({', '.join(sorted(s.datasets)) or 'none'})" for s in few] or ["- none"]
    if all(role == "tuning" for role in list_roles.values()):
        lines += ["", "Every labelled list is a tuning list (bench/lists.toml): each accuracy above is "
                      "in-sample. A fresh held-out list is needed to measure a rule."]
    return "\n".join(lines) + "\n"


def corpus(limit: int | None, extra: Iterable[str]) -> Iterator[Texts]:
    """The built-in corpus's datasets as the pipeline reads them: the first `limit` candidates, then `extra`."""
    from pipeline.steps import _follow_renames
    from sourcing.builtin import BuiltinSource
    from sourcing.normalize import normalize_table

    source = BuiltinSource()
    refs = source.candidates()
    refs = list(dict.fromkeys([*(refs if limit is None else refs[:limit]), *(r for r in extra if r in set(refs))]))
    for ref in refs:
        try:
            record = source.record(ref)
            raw = source.load_table(ref)
        except ValueError:
            continue  # a dataset that does not load is no text a rule reads
        table = normalize_table(raw)
        record = _follow_renames(record, [str(c) for c in raw.columns], list(table.columns))
        yield Texts(ref, record.title, record.description,
                    {str(c): record.column_descriptions.get(str(c), "") for c in table.columns})


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--limit", type=int, default=None, help="the first N candidates only (default: all)")
    p.add_argument("--out", type=Path, default=None, help="write the report here too")
    args = p.parse_args(argv)
    list_roles = roles()
    lists = {path.name: load_intended(path) for path in labelled_lists()}
    texts = list(corpus(args.limit, (item.ref for items in lists.values() for item in items)))
    text = report(measure(texts, lists), list_roles, len(texts))
    sys.stdout.write(text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
