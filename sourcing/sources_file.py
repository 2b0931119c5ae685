"""A sources file (`sources.toml`): which sources a build uses, their filters and quotas.

    [filters]                      # optional: defaults for every [[source]] below
    licences = ["cc0", "cc-by", "cc-by-sa"]
    max_rows = 200000

    [[source]]
    key = "kaggle"                 # a key of sourcing.registry.SOURCES
    arg = "search=house prices"    # what `--sources key:arg` would say
    quota = 5                      # at most this many candidates pass
    min_usability = 0.7            # any SourceFilters field, overriding [filters]

    [[source]]
    key = "openml"
    arg = "tag=uci"
    min_rows = 500

Each entry becomes one `--sources` item, `key:arg?filters&quota=N`
(sourcing.base.join_arg), so a file and a spec string reach the flow the same way.
Filters and quotas apply to the sources that list candidates with metadata
(those the registry marks `filtered`: kaggle, openml); the others take none.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from pydantic import BaseModel, ConfigDict, field_validator

from sourcing.base import SourceFilters, join_arg
from sourcing.registry import SOURCES, names_a_file, open_source, parse_sources, source_kind


def _filtered(key: str | None) -> bool:
    return key in SOURCES and SOURCES[key].filtered


class SourceEntry(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    key: str
    arg: str | None = None
    quota: int | None = None
    filters: SourceFilters = SourceFilters()

    @field_validator("quota")
    @classmethod
    def _quota(cls, v: int | None) -> int | None:
        if v is not None and v < 0:
            raise ValueError("quota must be >= 0")
        return v

    @field_validator("arg")
    @classmethod
    def _arg(cls, v: str | None) -> str | None:
        if v is not None and ("?" in v or "," in v):
            raise ValueError(f"arg {v!r}: put filters in the table, not in the argument (no '?' or ',')")
        return v

    def spec_item(self) -> str:
        """This entry as one `--sources` item."""
        source_kind(self.key)
        filtered = self.quota is not None or self.filters != SourceFilters()
        if not _filtered(self.key):
            if filtered:
                raise ValueError(f"source {self.key!r} takes no filters or quota "
                                 f"(only {', '.join(k for k in SOURCES if _filtered(k))} do)")
            return f"{self.key}:{self.arg}" if self.arg else self.key
        return f"{self.key}:{join_arg(self.arg or '', self.filters, self.quota)}"


def parse_sources_file(path: str | Path) -> list[SourceEntry]:
    """The entries of a sources file, in file order; ValueError with the file and entry on any mistake."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(f"{path}: {exc}") from None
    unknown = set(data) - {"filters", "source"}
    if unknown:
        raise ValueError(f"{path}: unknown sections {sorted(unknown)} (expected [filters] and [[source]])")
    defaults = data.get("filters", {})
    sources = data.get("source", [])
    if not isinstance(defaults, dict) or not isinstance(sources, list) or not sources:
        raise ValueError(f"{path}: needs at least one [[source]] table")
    entries = []
    for i, raw in enumerate(sources, 1):
        raw = dict(raw)
        head = {k: raw.pop(k) for k in ("key", "arg", "quota") if k in raw}
        # [filters] are defaults for the sources that filter; a builtin entry beside them is not an error.
        merged = {**defaults, **raw} if _filtered(head.get("key")) else raw
        try:
            entries.append(SourceEntry(**head, filters=SourceFilters.model_validate(merged)))
        except ValueError as exc:
            first = str(exc).splitlines()
            detail = " ".join(line.strip() for line in first[1:3]) if len(first) > 1 else str(exc)
            raise ValueError(f"{path}: [[source]] #{i}: {detail}") from None
    return entries


def spec_from_file(path: str | Path) -> str:
    """The `--sources` spec equivalent to a sources file."""
    return ",".join(entry.spec_item() for entry in parse_sources_file(path))


def spec_and_file(spec: str, sources_file: str | None) -> str:
    """A spec followed by a sources file's entries (if a file is given), as one spec."""
    return ",".join(p for p in (spec, spec_from_file(sources_file) if sources_file else "") if p)


def resolve_spec(sources: str) -> str:
    """A sources spec, or the path of a sources file, as a spec: a deployment's `sources` parameter
    may name a file curators edit."""
    return spec_from_file(sources) if names_a_file(sources) else sources


def preview_lines(spec: str | None, sources_file: str | None, limit: int | None = 50) -> list[str]:
    """`daregen sources list`: every source's candidates, pass or skip, with the verdicts that are not a pass."""
    from sourcing.base import preview

    if spec is None:
        spec = "" if sources_file else "builtin"
    lines: list[str] = []
    for key, arg in parse_sources(spec_and_file(spec, sources_file)):
        verdicts = preview(open_source(key, arg))
        passed = sum(v.ok for v in verdicts)
        lines.append(f"{key}:{arg}" if arg else key)
        lines.append(f"  {passed} of {len(verdicts)} candidates pass the filters")
        shown = verdicts if limit is None else verdicts[:limit]
        for v in shown:
            size = " ".join(f"{n}={x}" for n, x in (("rows", v.rows), ("cols", v.cols)) if x is not None)
            facts = ", ".join(x for x in (v.licence, size) if x)
            title = f"  {v.title}" if v.title and v.title != v.ref else ""  # builtin and local titles are their refs
            lines.append(f"  {'pass' if v.ok else 'skip'}  {v.ref}{title}" + (f"  ({facts})" if facts else ""))
            lines += [f"          {name}: {verdict}" for name, verdict in v.verdicts.items() if verdict != "pass"]
        if len(shown) < len(verdicts):
            lines.append(f"  ... {len(verdicts) - len(shown)} more (--limit)")
    return lines
