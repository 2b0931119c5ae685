"""A time index written over two or three columns, joined into one `date` column.

Many tables give the time of a row as a year column beside a month or quarter column (and
sometimes a day): statsmodels' macrodata (`year`, `quarter`), wooldridge/cement (`year`, `month`),
Stat2Data's HeatingOil and CO2Hawaii (`Year`, `Month`). No single column of these is a time axis:
the year repeats twelve times and the month recurs every year, so the time-series designer saw a
year series with rows "indexed within each time point" and 20 training years where there are 240
months. join_split_time_index writes the parts as one text column (`1983-04`, `1983-04-17`) that
every later stage reads like any other date, and keeps the parts themselves (the designers
reserve calendar parts: they are neither targets nor features of a forecast).

The join is made only when the parts are what they claim to be, so a survey with an interview
year and a birth month is never given a calendar: the columns are named as calendar parts, the
values are in range (a month 1..12 or a month name, a quarter 1..4 or `Q1`..`Q4`), each row is one
period of one series (the parts alone, or with one text column naming the series of a panel, are
unique), and the periods fill at least REGULAR_COVERAGE of the span from the first to the last.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

DATE_COLUMN = "date"
_YEAR = re.compile(r"^(year|yr|years|yyyy)$", re.I)
_MONTH = re.compile(r"^(month|mon|mo|mnth)$", re.I)
_QUARTER = re.compile(r"^(quarter|qtr|q)$", re.I)
_DAY = re.compile(r"^(day|dy|dd|day of month)$", re.I)
# A table that already has a column named as a time axis keeps it: the designers read that one.
_TIME_AXIS = re.compile(r"date|time|period", re.I)
_FULL_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
                "november", "december")
REGULAR_COVERAGE = 0.8
MAX_PANEL_SERIES = 400
MIN_PERIODS = 3


@dataclass(frozen=True)
class SplitTimeIndex:
    """The columns a row's time is written over, and what one row is (`month`, `quarter`, `day`)."""
    year: str
    part: str
    day: str | None
    unit: str

    def description(self) -> str:
        parts = [self.year, self.part] + ([self.day] if self.day else [])
        layout = "YYYY-MM-DD" if self.day else "YYYY-MM"
        first = " (a quarter is dated by its first month)" if self.unit == "quarter" else ""
        return (f"Time point of the observation, one row per {self.unit} of a series: the columns "
                f"{' and '.join(repr(p) for p in parts)} joined, written {layout}{first}.")


def _numeric(col: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(col) and not pd.api.types.is_bool_dtype(col)


def _integers_in(col: pd.Series, low: int, high: int) -> pd.Series | None:
    """The column as ints when every value is a whole number in [low, high], else None."""
    if not _numeric(col) or col.isna().any():
        return None
    v = col.astype(float)
    return v.astype(int) if np.equal(np.floor(v), v).all() and v.between(low, high).all() else None


def _year_values(col: pd.Series) -> pd.Series | None:
    return _integers_in(col, 1000, 2200)


def _month_values(col: pd.Series) -> pd.Series | None:
    if col.isna().any() or _numeric(col):
        return _integers_in(col, 1, 12)
    # "Jan", "Jan.", "January": a prefix of at least three letters of one month's name.
    text = col.astype(str).str.strip().str.lower().str.rstrip(".")
    if not text.map(lambda s: len(s) >= 3 and any(full.startswith(s) for full in _FULL_MONTHS)).all():
        return None
    return text.map(lambda s: next(i for i, full in enumerate(_FULL_MONTHS, 1) if full.startswith(s)))


def _quarter_values(col: pd.Series) -> pd.Series | None:
    if col.isna().any() or _numeric(col):
        return _integers_in(col, 1, 4)
    text = col.astype(str).str.strip().str.upper()
    return text.str[1].astype(int) if text.str.fullmatch(r"Q[1-4]").all() else None


def _day_values(col: pd.Series) -> pd.Series | None:
    return _integers_in(col, 1, 31)


def _one_period_per_row(table: pd.DataFrame, periods: pd.Series, parts: list[str]) -> bool:
    """The periods are unique, or unique within each series of a panel named by one text column."""
    if not periods.duplicated().any():
        return True
    for c in table.columns:
        col = table[c]
        if c in parts or _numeric(col) or col.isna().any():
            continue
        if 2 <= col.nunique() <= MAX_PANEL_SERIES and not pd.DataFrame(
                {"s": col.astype(str).to_numpy(), "p": periods.to_numpy()}).duplicated().any():
            return True
    return False


def find_split_time_index(table: pd.DataFrame) -> SplitTimeIndex | None:
    """The year column and its month or quarter column (and a day column) when together they index
    the rows as a regular series or panel of series, and no column already names a time axis."""
    if len(table) < MIN_PERIODS or any(_TIME_AXIS.search(str(c)) for c in table.columns):
        return None
    years = [c for c in table.columns if _YEAR.match(str(c)) and _year_values(table[c]) is not None]
    months = [c for c in table.columns if _MONTH.match(str(c)) and _month_values(table[c]) is not None]
    quarters = [c for c in table.columns if _QUARTER.match(str(c)) and _quarter_values(table[c]) is not None]
    days = [c for c in table.columns if _DAY.match(str(c)) and _day_values(table[c]) is not None]
    if len(years) != 1 or len(months) + len(quarters) != 1:
        return None
    year = years[0]
    if months:
        index = SplitTimeIndex(year, months[0], days[0] if len(days) == 1 else None,
                               "day" if len(days) == 1 else "month")
    else:
        index = SplitTimeIndex(year, quarters[0], None, "quarter")
    stamps = _timestamps(table, index)
    if stamps is None:
        return None
    if index.unit == "day":
        periods = (stamps - pd.Timestamp("1970-01-01")).dt.days
    else:
        per_year = 12 if index.unit == "month" else 4
        periods = stamps.dt.year * per_year + (stamps.dt.month - 1) * per_year // 12
    parts = [index.year, index.part] + ([index.day] if index.day else [])
    if not _one_period_per_row(table, periods, parts):
        return None
    distinct = periods.nunique()
    if distinct < MIN_PERIODS or distinct < REGULAR_COVERAGE * (periods.max() - periods.min() + 1):
        return None
    return index


def _timestamps(table: pd.DataFrame, index: SplitTimeIndex) -> pd.Series | None:
    """The first day of each row's period (its day, for a daily index); None when a day does not exist."""
    year = _year_values(table[index.year])
    if index.unit == "quarter":
        month = (_quarter_values(table[index.part]) - 1) * 3 + 1
    else:
        month = _month_values(table[index.part])
    day = _day_values(table[index.day]) if index.day else pd.Series(1, index=table.index)
    stamps = pd.to_datetime(pd.DataFrame({"year": year, "month": month, "day": day}), errors="coerce")
    return None if stamps.isna().any() else stamps


def join_split_time_index(table: pd.DataFrame) -> tuple[pd.DataFrame, SplitTimeIndex | None]:
    """`table` with a leading DATE_COLUMN joined from its split time index (find_split_time_index),
    and that index; else `table` unchanged and None."""
    index = find_split_time_index(table)
    if index is None:
        return table, None
    stamps = _timestamps(table, index)
    text = stamps.dt.strftime("%Y-%m-%d" if index.day else "%Y-%m").astype("object")
    return table.assign(**{DATE_COLUMN: text})[[DATE_COLUMN, *table.columns]], index
