"""Each cross-cutting fact has one definition in the kernel: the cache root honours DAREGEN_CACHE everywhere
(the LLM cache too), one predicate says what is a time series, the code package list matches pyproject,
and SQLite names are quoted and read-only connections cannot write."""

from __future__ import annotations

import sqlite3
import tomllib
from pathlib import Path

import pytest

from pipeline.core import cache, names
from pipeline.core.environment import CODE_PACKAGES
from pipeline.core.records import TIME_SERIES_KIND, is_time_series
from pipeline.core.sqlite import connect_read_only, quote_identifier, table_names
from task_design.llm_schema import LLMSettings

ROOT = Path(__file__).resolve().parents[3]


def test_every_cache_folder_follows_daregen_cache(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path / "c"))
    assert cache.cache_root() == tmp_path / "c"
    assert LLMSettings().cache_dir == str(tmp_path / "c" / cache.LLM)
    assert cache.cache_root("given") == Path("given")  # an explicit folder wins
    monkeypatch.delenv(cache.CACHE_ENV)
    assert LLMSettings().cache_dir == str(ROOT / ".cache" / "daregen" / cache.LLM)


def test_the_default_cache_is_the_same_folder_from_any_working_directory(monkeypatch, tmp_path) -> None:
    """Not relative to where a command runs: the checkout's .cache/daregen, else the user's cache folder."""
    monkeypatch.delenv(cache.CACHE_ENV, raising=False)
    roots = set()
    for cwd in (ROOT, tmp_path):
        monkeypatch.chdir(cwd)
        roots.add(cache.cache_root())
    assert roots == {ROOT / ".cache" / "daregen"}
    installed = tmp_path / "site-packages"  # daregen installed from a wheel: no checkout around its code
    (installed / "pipeline" / "core").mkdir(parents=True)
    assert cache.default_cache_root(installed, {"HOME": "/home/ana"}) == Path("/home/ana/.cache/daregen")
    assert cache.default_cache_root(installed, {"HOME": "/home/ana", "XDG_CACHE_HOME": "/var/cache/ana"}) == \
        Path("/var/cache/ana/daregen")
    assert cache.default_cache_root(installed, {"HOME": "/home/ana", "XDG_CACHE_HOME": "rel"}) == \
        Path("/home/ana/.cache/daregen")  # a relative XDG_CACHE_HOME is ignored, as the spec says


@pytest.mark.parametrize("what, expected", [
    ({"question": {"problem_type": names.TIME_SERIES_PROBLEM}}, True),  # all_metadata.json
    ({"problem_type": "regression"}, False),  # a question
    ({"task": names.TIME_SERIES_PROBLEM, "file_path": "x_ts"}, True),  # a question_list.json entry
    ({"kind": TIME_SERIES_KIND}, True),  # spec.json
    ({"target": ["y"]}, False),  # a tabular TaskSpec's JSON has no kind
    ("classification", False),
])
def test_one_predicate_says_what_is_a_time_series(what, expected) -> None:
    assert is_time_series(what) is expected


def test_the_task_folder_name_has_one_spelling() -> None:
    assert names.task_dir_name("builtin_iris", "classification") == "builtin_iris_class"
    assert names.task_dir_name("builtin_air", names.TIME_SERIES_PROBLEM) == "builtin_air_ts"
    assert (names.TS_TRAIN_CSV, names.GROUND_TRUTH_V1, names.GROUND_TRUTH_V2) == (
        "train.csv", "ground_truth_v1.csv", "ground_truth_v2.csv")


def test_the_code_package_list_is_pyprojects_top_level_packages() -> None:
    packages = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    assert set(CODE_PACKAGES) == {p.split(".")[0] for p in packages}


def test_a_hostile_name_stays_one_identifier_and_a_read_only_connection_cannot_write(tmp_path) -> None:
    path = tmp_path / "a ?#b.sqlite"  # characters a bare `file:` URI would misread
    name = 'x"; DROP TABLE t; --'
    with sqlite3.connect(path) as con:
        con.execute(f"CREATE TABLE {quote_identifier(name)} (v INTEGER)")
        con.execute(f"INSERT INTO {quote_identifier(name)} VALUES (1)")
    con = connect_read_only(path)
    try:
        assert table_names(con) == [name]
        assert con.execute(f"SELECT v FROM {quote_identifier(name)}").fetchall() == [(1,)]
        with pytest.raises(sqlite3.DatabaseError):
            con.execute(f"INSERT INTO {quote_identifier(name)} VALUES (2)")
    finally:
        con.close()
