"""The one interface every source adapter implements, and the filters they share.

A source lists candidate refs in a stable order, describes each one as a
DatasetRecord, and loads its table. Adapters are looked up by key in
sourcing.registry; they own network access and caches, nothing else does.

Networked sources (kaggle, openml) also take filters and a quota. They travel
inside the adapter's argument string as a query part, `TARGET?name=value&...`
(e.g. `openml:tag=uci?max_rows=5000&quota=3`), because the argument is what the
flow hands from task to task and what the registry caches adapters by: a plain,
hashable, serialisable string.
"""

from __future__ import annotations

import urllib.parse
from datetime import date
from typing import TYPE_CHECKING, Protocol
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict, field_validator, model_validator

from pipeline.core.licences import DEFAULT_LICENCES, canonical_licence

if TYPE_CHECKING:  # annotations only: the CLI reads a sources file with this module before pandas loads
    import pandas as pd

    from pipeline.core.records import DatasetRecord


class Source(Protocol):
    key: str

    def candidates(self) -> list[str]:
        """All refs this source offers, in a stable order."""

    def record(self, ref: str) -> DatasetRecord:
        """Metadata for one ref (title, description, column docs, licence)."""

    def load_table(self, ref: str) -> pd.DataFrame:
        """The raw table for one ref, before normalisation."""


# ------------------------------------------------------------------- filters


class SourceFilters(BaseModel):
    """What a candidate must satisfy to be built. An unset bound means no bound.

    Each filter is judged from what the source's listing says; a figure the
    listing lacks (Kaggle lists no row counts) is judged again on the loaded table.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    keywords: tuple[str, ...] = ()  # any of them in title, subtitle, description or tags
    tags: tuple[str, ...] = ()  # any of them among the dataset's tags
    licences: tuple[str, ...] = DEFAULT_LICENCES
    allow_unknown_licence: bool = False
    min_bytes: int | None = None
    max_bytes: int | None = None
    min_rows: int | None = None
    max_rows: int | None = None
    min_cols: int | None = None
    max_cols: int | None = None
    min_classes: int | None = None
    max_classes: int | None = None
    max_missing_values: int | None = None
    updated_after: date | None = None
    min_usability: float | None = None

    @field_validator("keywords", "tags", "licences", mode="before")
    @classmethod
    def _listify(cls, v):
        return (v,) if isinstance(v, str) else v

    @field_validator("licences")
    @classmethod
    def _known_licences(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        known = set(DEFAULT_LICENCES) | {"gpl"}
        bad = [x for x in v if x not in known]
        if bad:
            raise ValueError(f"unknown licence keys {bad}; known: {', '.join(sorted(known))}")
        return tuple(sorted(set(v)))

    @model_validator(mode="after")
    def _ranges(self) -> SourceFilters:
        for lo, hi in (("min_bytes", "max_bytes"), ("min_rows", "max_rows"), ("min_cols", "max_cols"),
                       ("min_classes", "max_classes")):
            a, b = getattr(self, lo), getattr(self, hi)
            if a is not None and b is not None and a > b:
                raise ValueError(f"{lo} ({a}) > {hi} ({b})")
        return self


class CandidateInfo(BaseModel):
    """What a source's listing says about one candidate (unknown figures are None)."""

    model_config = ConfigDict(frozen=True)

    ref: str
    title: str = ""
    text: str = ""  # subtitle, description: searched by keywords
    tags: tuple[str, ...] = ()
    licence: str = "unknown"  # as the source spells it
    bytes: int | None = None
    rows: int | None = None
    cols: int | None = None
    classes: int | None = None
    missing_values: int | None = None
    last_updated: str | None = None  # ISO date
    usability: float | None = None


class CandidateVerdict(BaseModel):
    """One candidate and each filter's verdict: `pass`, `fail: <why>` or `n/a: <why>`."""

    model_config = ConfigDict(frozen=True)

    ref: str
    title: str
    licence: str
    rows: int | None
    cols: int | None
    verdicts: dict[str, str]

    @property
    def ok(self) -> bool:
        return not any(v.startswith("fail") for v in self.verdicts.values())


def _range_verdict(value: int | float | None, lo, hi, what: str) -> str | None:
    if lo is None and hi is None:
        return None
    if value is None:
        return f"n/a: the listing gives no {what}; checked on the loaded table"
    if lo is not None and value < lo:
        return f"fail: {value} {what} < {lo}"
    if hi is not None and value > hi:
        return f"fail: {value} {what} > {hi}"
    return "pass"


def judge(info: CandidateInfo, filters: SourceFilters) -> CandidateVerdict:
    """Every filter's verdict on one candidate, in a fixed order (a pure function)."""
    v: dict[str, str] = {}
    licence = canonical_licence(info.licence)
    if licence == "unknown":
        v["licence"] = "pass" if filters.allow_unknown_licence else f"fail: unknown licence {info.licence!r}"
    else:
        v["licence"] = "pass" if licence in filters.licences else f"fail: {licence} not in the allow-list"
    haystack = " ".join([info.title, info.text, *info.tags]).lower()
    if filters.keywords:
        hit = [k for k in filters.keywords if k.lower() in haystack]
        v["keywords"] = "pass" if hit else f"fail: none of {list(filters.keywords)}"
    if filters.tags:
        have = {t.lower() for t in info.tags}
        v["tags"] = "pass" if have & {t.lower() for t in filters.tags} else f"fail: tags {sorted(have)}"
    for name, value, lo, hi, what in (
            ("size", info.bytes, filters.min_bytes, filters.max_bytes, "bytes"),
            ("rows", info.rows, filters.min_rows, filters.max_rows, "rows"),
            ("cols", info.cols, filters.min_cols, filters.max_cols, "columns"),
            ("classes", info.classes, filters.min_classes, filters.max_classes, "classes"),
            ("missing_values", info.missing_values, None, filters.max_missing_values, "missing values"),
            ("usability", info.usability, filters.min_usability, None, "usability")):
        verdict = _range_verdict(value, lo, hi, what)
        if verdict is not None:
            v[name] = verdict
    if filters.updated_after is not None:
        if not info.last_updated:
            v["updated_after"] = "n/a: the listing gives no update date"
        elif info.last_updated[:10] <= filters.updated_after.isoformat():
            v["updated_after"] = f"fail: last updated {info.last_updated[:10]}"
        else:
            v["updated_after"] = "pass"
    return CandidateVerdict(ref=info.ref, title=info.title, licence=info.licence, rows=info.rows, cols=info.cols,
                            verdicts=v)


def check_table(ref: str, table: pd.DataFrame, filters: SourceFilters) -> None:
    """Rows and columns bounds on the loaded table (listings often lack them); ValueError if outside."""
    info = CandidateInfo(ref=ref, licence="cc0", rows=int(table.shape[0]), cols=int(table.shape[1]))
    for name in ("rows", "cols"):
        verdict = judge(info, filters.model_copy(update={"keywords": (), "tags": ()})).verdicts.get(name, "pass")
        if verdict.startswith("fail"):
            raise ValueError(f"outside the source filters: {verdict[len('fail: '):]}")


# ------------------------------------------------------- argument encoding

_LIST_FIELDS = ("keywords", "tags", "licences")


def split_arg(arg: str | None) -> tuple[str, SourceFilters, int | None]:
    """`TARGET?field=value&...` -> (TARGET, filters, quota). Lists repeat the field or use `+`."""
    target, _, query = (arg or "").partition("?")
    fields: dict[str, object] = {}
    quota: int | None = None
    for pair in filter(None, query.split("&")):
        name, sep, raw = pair.partition("=")
        if not sep:
            raise ValueError(f"source filter {pair!r} needs a value: name=value")
        # A literal `+` separates list items; `%2B` and `%20` are a plus and a space inside one.
        items = [urllib.parse.unquote(x) for x in raw.split("+")]
        value = "+".join(items)
        if name == "quota":
            quota = int(value)
            if quota < 0:
                raise ValueError("quota must be >= 0")
        elif name in _LIST_FIELDS:
            previous = fields.get(name, ())
            fields[name] = (*previous, *[x for x in items if x])  # type: ignore[misc]
        elif name in SourceFilters.model_fields:
            fields[name] = value
        else:
            raise ValueError(f"unknown source filter {name!r}; known: quota, {', '.join(SourceFilters.model_fields)}")
    return target, SourceFilters.model_validate(fields), quota


def join_arg(target: str, filters: SourceFilters, quota: int | None) -> str:
    """The inverse of split_arg, canonical (fields in declaration order, defaults left out)."""
    pairs: list[tuple[str, str]] = []
    for name, value in filters.model_dump(exclude_defaults=True, mode="json").items():
        if name in _LIST_FIELDS:
            pairs += [(name, str(x)) for x in value]
        else:
            pairs.append((name, str(value).lower() if isinstance(value, bool) else str(value)))
    if quota is not None:
        pairs.append(("quota", str(quota)))
    query = urllib.parse.urlencode(pairs, quote_via=urllib.parse.quote)
    return f"{target}?{query}" if query else target


def passing(verdicts: Iterable[CandidateVerdict], quota: int | None) -> list[str]:
    """Refs of the candidates every filter passed, in listing order, at most `quota` of them."""
    refs = [v.ref for v in verdicts if v.ok]
    return refs if quota is None else refs[:quota]


def preview(source: Source) -> list[CandidateVerdict]:
    """Each candidate with each filter's verdict; a source without filters lists its candidates unjudged."""
    own = getattr(source, "preview", None)
    if callable(own):
        return own()
    return [CandidateVerdict(ref=ref, title=ref, licence="", rows=None, cols=None, verdicts={})
            for ref in source.candidates()]
