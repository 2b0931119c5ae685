"""The golden target file: which target every dataset of the 300-candidate build and of every labelled list gets.

One line per task (or per skipped dataset) in tests/golden/targets.tsv, sorted by ref: the lists it belongs to,
the problem type, the target(s), the kind of evidence that chose it, the features, and for a skipped dataset
the stage and a short, stable skip code. A rule change then shows its exact per-dataset effect in review, and
an unexplained one fails tests/bench/test_golden_targets.py.

It runs the design stage only (source, profile, design: pipeline.build.build_one through "design"), with the
build's defaults (heuristic designer, seed 0, default design config): no reference run, no postprocess or
finalize, so a dataset whose reference run fails later still shows its design here. The 300-candidate set is
`daregen build --limit 300`'s (pipeline.build.list_candidates("builtin", 300)); a dataset that build drops as a
copy of an earlier one (pipeline.build.dedupe_tables) names its twin in `duplicate_of`.

    # regenerate after an intended change (about 5 min on one core; --jobs 2 halves it)
    .venv/bin/python bench/golden_targets.py --write [--jobs 2]
    # compare the full set with the committed file (exit 1 and the diff on a change)
    .venv/bin/python bench/golden_targets.py --check [--jobs 2]
    # the fast subset `make test` checks (tests/bench/test_golden_targets.py)
    .venv/bin/python bench/golden_targets.py --check --subset ci

The skip code is the rejection's own (pipeline.core.records.Rejection.key, carried by the step's Outcome): a
search whose every candidate target failed is `tried:` with each attempt's gate. A rejection raised without a
code shows as `unknown`, which the test rejects.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.intended_targets import labelled_lists, load_intended  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "golden" / "targets.tsv"
LIMIT = 300
LIMIT_SET = f"limit{LIMIT}"
COLUMNS = ("ref", "sets", "stage", "code", "problem_type", "target", "evidence_kind", "features", "duplicate_of")
REGENERATE = ".venv/bin/python bench/golden_targets.py --write --jobs 2"
# The CI subset (--subset ci): every ref whose hash falls in one of CI_SHARE buckets, plus the first
# CI_PER_OUTCOME refs (in hash order) of each outcome of the committed file, so every skip code and evidence
# kind is checked in `make test` while the full set stays a bench command.
CI_SHARE = 8
CI_PER_OUTCOME = 2
UNKNOWN = "unknown"

def golden_sets() -> dict[str, list[str]]:
    """Every set the golden file covers, by name: the 300-candidate build's refs, then each labelled list's
    (every list bench/lists.toml names, held-out ones included: the file records, it tunes nothing)."""
    from pipeline.build import list_candidates

    sets = {LIMIT_SET: [c.ref for c in list_candidates("builtin", LIMIT)]}
    for path in labelled_lists():
        sets[path.stem] = [i.ref for i in load_intended(path)]
    return sets


def _design(ref: str, work_root: str) -> list[dict]:
    """One dataset through source, profile and design, as a build with the defaults takes it: its rows."""
    from pipeline import steps
    from pipeline.build import BuildJob, build_one

    root = Path(work_root)
    outcomes = build_one(ref, "builtin", None, BuildJob.make(0), root / "work", root / "tasks", through="design")
    rows = []
    for o in outcomes:
        row = dict.fromkeys(COLUMNS, "")
        row.update(ref=ref, stage=o.stage, work_dir=o.work_dir)
        if not o.ok:
            row["code"] = o.code or UNKNOWN
            row["reason"] = o.reason
        else:
            spec = steps.load_spec(Path(o.work_dir))
            row.update(problem_type=spec.problem_type, target=json.dumps(list(spec.target), ensure_ascii=False),
                       evidence_kind=spec.target_evidence_kind or "",
                       features=json.dumps(list(spec.related_features), ensure_ascii=False))
        rows.append(row)
    return rows


def _design_chunk(refs: list[str]) -> list[dict]:
    with tempfile.TemporaryDirectory(prefix="golden_") as tmp:
        rows = [row for ref in refs for row in _design(ref, tmp)]
        for row in rows:  # the work folders go with the temporary folder; content.json is read here
            work = Path(row.pop("work_dir"))
            content = work / "content.json"
            row["content"] = json.loads(content.read_text(encoding="utf-8")) if content.is_file() else None
        return rows


def _duplicates(order: list[str], rows: dict[str, list[dict]]) -> dict[str, str]:
    """ref -> the earlier ref whose table the 300-candidate build keeps in its place (pipeline.build.same_data)."""
    from pipeline.build import same_data

    kept: list[tuple[str, dict]] = []
    out = {}
    for ref in order:
        content = rows[ref][0].get("content")
        if content is None:
            continue
        twin = next((r for r, other in kept if same_data(content, other)), None)
        if twin is not None:
            out[ref] = twin
        else:
            kept.append((ref, content))
    return out


def design_rows(refs: list[str], jobs: int = 1) -> dict[str, list[dict]]:
    """ref -> its rows (one per task, or the one skip), designed in `jobs` processes."""
    chunks = [refs[i::jobs] for i in range(jobs)] if jobs > 1 else [refs]
    if jobs > 1:
        with ProcessPoolExecutor(jobs) as pool:
            results = list(pool.map(_design_chunk, chunks))
    else:
        results = [_design_chunk(refs)]
    out: dict[str, list[dict]] = {}
    for rows in results:
        for row in rows:
            out.setdefault(row["ref"], []).append(row)
    return out


def golden_lines(sets: dict[str, list[str]], rows: dict[str, list[dict]]) -> list[str]:
    """The file's lines: a header, then one per row sorted by (ref, problem type), every field tab-free."""
    member: dict[str, list[str]] = {}
    for name, refs in sets.items():
        for ref in refs:
            member.setdefault(ref, []).append(name)
    twins = _duplicates([r for r in sets.get(LIMIT_SET, []) if r in rows], rows)
    lines = []
    for ref in sorted(rows):
        for row in sorted(rows[ref], key=lambda r: r["problem_type"]):
            fields = {**row, "sets": ",".join(member.get(ref, [])), "duplicate_of": twins.get(ref, "")}
            lines.append("\t".join(str(fields[c]).replace("\t", " ").replace("\n", " ") for c in COLUMNS))
    return ["\t".join(COLUMNS)] + lines


def read_golden(path: Path = GOLDEN) -> dict[str, list[str]]:
    """ref -> its lines of the committed file."""
    out: dict[str, list[str]] = {}
    for line in path.read_text(encoding="utf-8").splitlines()[1:]:
        out.setdefault(line.split("\t", 1)[0], []).append(line)
    return out


def _hash(ref: str) -> str:
    return hashlib.sha256(ref.encode()).hexdigest()


def ci_subset(golden: dict[str, list[str]]) -> list[str]:
    """The refs `make test` checks, chosen from the committed file alone (deterministic): a hash share of all,
    and the first CI_PER_OUTCOME of each outcome (skip code, or problem type and evidence kind)."""
    chosen = {ref for ref in golden if int(_hash(ref), 16) % CI_SHARE == 0}
    by_outcome: dict[str, list[str]] = {}
    for ref, lines in golden.items():
        for line in lines:
            f = dict(zip(COLUMNS, line.split("\t")))
            by_outcome.setdefault(f["code"] or f"{f['problem_type']}/{f['evidence_kind']}", []).append(ref)
    for refs in by_outcome.values():
        chosen.update(sorted(set(refs), key=_hash)[:CI_PER_OUTCOME])
    return sorted(chosen)


def diff(expected: dict[str, list[str]], actual: dict[str, list[str]]) -> list[str]:
    """Per dataset whose lines differ: `- old` and `+ new` lines, refs sorted."""
    out = []
    for ref in sorted(set(expected) | set(actual)):
        old, new = expected.get(ref, []), actual.get(ref, [])
        if old != new:
            out += [f"- {line}" for line in old if line not in new] + [f"+ {line}" for line in new if line not in old]
    return out


def check(refs: list[str], sets: dict[str, list[str]], jobs: int = 1) -> list[str]:
    """The diff between the committed lines of `refs` and a fresh design of them ([] when equal). The
    duplicate column is compared only on a full run: it depends on the whole 300-candidate set."""
    expected = read_golden()
    rows = design_rows(refs, jobs)
    actual: dict[str, list[str]] = {}
    for line in golden_lines(sets, rows)[1:]:
        actual.setdefault(line.split("\t", 1)[0], []).append(line)
    if not set(refs) >= set(expected):
        expected = {r: [_without_twin(line) for line in expected.get(r, [])] for r in refs}
        actual = {r: [_without_twin(line) for line in lines] for r, lines in actual.items()}
    return diff(expected, actual)


def _without_twin(line: str) -> str:
    return "\t".join(line.split("\t")[:COLUMNS.index("duplicate_of")])


def unknown_codes(lines: list[str]) -> list[str]:
    """The lines of a skip raised without a code."""
    at = COLUMNS.index("code")
    return [line for line in lines if line.split("\t")[at] == UNKNOWN]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--write", action="store_true", help=f"regenerate {GOLDEN.relative_to(ROOT)}")
    what.add_argument("--check", action="store_true", help="compare with the committed file")
    p.add_argument("--subset", choices=("all", "ci"), default="all")
    p.add_argument("--jobs", type=int, default=1, help="processes (default 1)")
    args = p.parse_args(argv)
    sets = golden_sets()
    every = list(dict.fromkeys(ref for refs in sets.values() for ref in refs))
    if args.write:
        rows = design_rows(every, args.jobs)
        lines = golden_lines(sets, rows)
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN.write_text("\n".join(lines) + "\n", encoding="utf-8")
        for line in unknown_codes(lines[1:]):
            ref = line.split("\t", 1)[0]
            print(f"a skip without a code for {ref}: {rows[ref][0].get('reason', '')[:200]}", file=sys.stderr)
        print(f"wrote {len(lines) - 1} lines for {len(rows)} datasets to {GOLDEN.relative_to(ROOT)}")
        return 0
    refs = ci_subset(read_golden()) if args.subset == "ci" else every
    changes = check(refs, sets, args.jobs)
    if changes:
        print(f"{len(changes)} golden line(s) changed over {len(refs)} datasets; if intended, regenerate with\n"
              f"  {REGENERATE}\nand explain each change in the commit message:")
        print("\n".join(changes))
        return 1
    print(f"golden targets unchanged over {len(refs)} datasets")
    return 0


if __name__ == "__main__":
    sys.exit(main())
