"""The golden target file (tests/golden/targets.tsv, bench/golden_targets.py) says which target, problem type,
evidence kind and features every dataset of the 300-candidate build and of every labelled list gets, or the
stage and code of its skip; any change to a design decision that the file does not record fails here with
its per-dataset diff and the command that regenerates the file.

`make test` designs a deterministic subset (bench.golden_targets.ci_subset: a hash share of the refs and the
first two of every outcome, about 170 datasets, about a minute); the full check is
`bench/golden_targets.py --check`."""

from __future__ import annotations

from bench import golden_targets as golden


def test_the_golden_file_covers_every_set_sorted_with_a_known_code_for_every_skip() -> None:
    lines = golden.GOLDEN.read_text(encoding="utf-8").splitlines()
    assert lines[0].split("\t") == list(golden.COLUMNS)
    body = lines[1:]
    assert body == sorted(body, key=lambda line: line.split("\t", 1)[0])
    assert all(len(line.split("\t")) == len(golden.COLUMNS) for line in body)
    refs = {line.split("\t", 1)[0] for line in body}
    sets = golden.golden_sets()
    assert len(sets[golden.LIMIT_SET]) == golden.LIMIT
    assert refs == {ref for members in sets.values() for ref in members}
    assert golden.unknown_codes(body) == []


def test_the_ci_subset_designs_as_the_golden_file_says() -> None:
    refs = golden.ci_subset(golden.read_golden())
    changes = golden.check(refs, golden.golden_sets())
    assert not changes, (f"{len(changes)} golden line(s) changed; if intended, regenerate with\n  {golden.REGENERATE}\n"
                         "and explain each change in the commit message:\n" + "\n".join(changes))


def test_skip_codes_name_the_gate_and_each_failed_attempt() -> None:
    assert golden.skip_code("too few rows (24 < 30)") == "too_few_rows"
    assert golden.skip_code("below the size floor: 70 rows give 21 MM validation rows at the smallest split "
                            "(need 40)") == "size_floor"
    assert golden.skip_code("duplicate of r/a/b: the same values in 9 rows") == "duplicate"
    two = ("documented outcome 'y' (model_formula) not learnable: nothing to learn: out-of-fold R² 0.01 ...; "
           "documented outcome 'z' (model_formula) not usable: one feature only ('x' beside 'z'): its best answer")
    assert golden.skip_code(two) == "tried:not_learnable+one_feature"
    assert golden.skip_code("a reason nobody wrote a pattern for") == "unknown"


def test_a_changed_decision_shows_as_its_datasets_old_and_new_lines() -> None:
    old = {"r/a": ["r/a\tlimit300\tdesign\t\tregression\t[\"y\"]"], "r/b": ["r/b\tlimit300\tdesign\tsize_floor"]}
    new = {"r/a": ["r/a\tlimit300\tdesign\t\tregression\t[\"z\"]"], "r/b": ["r/b\tlimit300\tdesign\tsize_floor"]}
    assert golden.diff(old, new) == ["- r/a\tlimit300\tdesign\t\tregression\t[\"y\"]",
                                     "+ r/a\tlimit300\tdesign\t\tregression\t[\"z\"]"]
    assert golden.diff(old, old) == []
