"""OpenML datasets as a source, through the official `openml` client.

`--sources openml:ID` (one dataset) or `openml:tag=NAME` (every active dataset
with that tag), each optionally followed by `?filter=value&quota=N`
(sourcing.base). Rows, columns, classes and missing-value bounds are passed to
`openml.datasets.list_datasets` (number_instances, number_features,
number_classes, number_missing_values) and judged again locally.

- Refs are `openml/<did>`. An OpenML dataset id names one immutable version (a
  new version gets a new id), so the ref is already pinned; DatasetRecord.version
  records OpenML's version number.
- `default_target_attribute` becomes DatasetRecord.target_hint: a hint the
  designer may ignore, never an order. The description's attribute list or features table gives the
  column descriptions (sourcing.cards, fitted to the feature names).
- The client's cache lives under the project cache: `$DAREGEN_CACHE/openml`
  (default `$DAREGEN_CACHE/openml`). The server is whatever `openml.config.server`
  says (the client's own config file or the tests' loopback URL).
- The client retries 5xx, 429 and checksum mismatches itself (its md5 check
  catches a truncated or corrupted ARFF); we bound those retries and turn what
  still fails into a one-line reason for that dataset.
"""

from __future__ import annotations

import logging
import re
import threading
from typing import Any

import pandas as pd

from pipeline.core import cache
from pipeline.core.cache import cache_root
from pipeline.core.records import DatasetRecord
from pipeline.core.text import shorten
from sourcing.base import CandidateInfo, CandidateVerdict, check_table, judge, passing, split_arg
from sourcing.cards import fit_card, read_card

SOURCE_KEY = "openml"
CLIENT_RETRIES = 3
MAX_LISTED = 1000

# openml's config and cache are process-global and its get_dataset is not
# thread-safe (it says so); the flow's thread pool goes through this lock.
_OPENML_LOCK = threading.RLock()
_LOG = logging.getLogger(__name__)


def described_columns(ref: str, description: str, features: list[str]) -> dict[str, str]:
    """The column entries of an OpenML description (its `### Attribute information` list or features
    table, read as a Markdown card by sourcing.cards), fitted to the dataset's feature names."""
    if not description.strip():
        return {}
    fields, notes = fit_card(read_card("description", description), "", features)
    for note in notes:
        _LOG.warning("%s: %s", ref, note)
    return fields.get("column_descriptions", {})


def _configure() -> Any:
    import openml

    openml.config.set_root_cache_directory(str((cache_root() / cache.OPENML).resolve()))
    # "human" waits 1 s, 2 s, ... between tries; "robot" waits up to a minute.
    openml.config.set_retry_policy("human", CLIENT_RETRIES)
    return openml


def _range(lo: int | None, hi: int | None) -> str | None:
    if lo is None and hi is None:
        return None
    return f"{lo if lo is not None else 0}..{hi if hi is not None else 2**31 - 1}"


def _one_line(exc: Exception) -> str:
    if type(exc).__name__ == "OpenMLHashException":
        # The client re-fetched already; its message ends in a long URL that says nothing more.
        return f"data file checksum mismatch (truncated or corrupted download) after {CLIENT_RETRIES} attempts"
    text = re.sub(r"\s+", " ", str(exc)).strip()
    # The client appends "Please contact the developers!" and the raw answer body to server errors.
    text = text.split(" Please contact the developers!")[0]
    return shorten(f"{type(exc).__name__}: {text}", 200)


def _int(value: Any) -> int | None:
    try:
        return int(float(value))
    except (TypeError, ValueError):
        return None


class OpenMLSource:
    key = SOURCE_KEY

    def __init__(self, arg: str | None):
        target, self.filters, self.quota = split_arg(arg)
        target = target.strip()
        self.did: int | None = None
        self.tag: str | None = None
        if target.isdigit():
            self.did = int(target)
        elif target.startswith("tag=") and target[4:].strip():
            self.tag = target[4:].strip()
        else:
            raise ValueError(f"openml source: expected openml:ID or openml:tag=NAME, got {target!r}")
        self._described: dict[int, Any] = {}
        self._listing: dict[int, dict] = {}
        self._verdicts: list[CandidateVerdict] | None = None

    def _list(self) -> dict[int, dict]:
        f = self.filters
        kwargs = {k: v for k, v in {
            "number_instances": _range(f.min_rows, f.max_rows),
            "number_features": _range(f.min_cols, f.max_cols),
            "number_classes": _range(f.min_classes, f.max_classes),
            "number_missing_values": _range(0, f.max_missing_values) if f.max_missing_values is not None else None,
        }.items() if v is not None}
        with _OPENML_LOCK:
            openml = _configure()
            try:
                if self.did is not None:
                    listed = openml.datasets.list_datasets(data_id=[self.did], output_format="dataframe",
                                                           status="all")
                else:
                    listed = openml.datasets.list_datasets(tag=self.tag, size=MAX_LISTED, output_format="dataframe",
                                                           **kwargs)
            except openml.exceptions.OpenMLServerNoResult:
                listed = None
            except Exception as exc:
                raise ValueError(f"openml listing failed: {_one_line(exc)}") from None
        if listed is None or len(listed) == 0:
            return {}
        rows = {int(row["did"]): row.to_dict() for _, row in listed.iterrows()}
        return dict(sorted(rows.items()))

    def _describe(self, did: int) -> Any:
        """The dataset's description and feature list (no data), cached per instance."""
        if did not in self._described:
            with _OPENML_LOCK:
                openml = _configure()
                try:
                    self._described[did] = openml.datasets.get_dataset(
                        did, download_data=False, download_qualities=False, download_features_meta_data=True)
                except Exception as exc:
                    raise ValueError(f"openml dataset {did}: {_one_line(exc)}") from None
        return self._described[did]

    def _info(self, did: int, row: dict) -> CandidateInfo:
        ds = self._describe(did)
        tags = ds.tag if isinstance(ds.tag, list) else [ds.tag] if ds.tag else []
        return CandidateInfo(
            ref=f"{SOURCE_KEY}/{did}", title=ds.name or str(did), text=ds.description or "",
            tags=tuple(str(t) for t in tags), licence=ds.licence or "unknown",
            rows=_int(row.get("NumberOfInstances")), cols=_int(row.get("NumberOfFeatures")),
            classes=_int(row.get("NumberOfClasses")), missing_values=_int(row.get("NumberOfMissingValues")),
            last_updated=(ds.upload_date or "")[:10] or None)

    def preview(self) -> list[CandidateVerdict]:
        if self._verdicts is None:
            self._listing = self._list()
            if self.did is not None and self.did not in self._listing:
                self._listing[self.did] = {}
            verdicts = []
            for did, row in self._listing.items():
                if self.tag is not None and row.get("status", "active") != "active":
                    continue
                try:
                    verdicts.append(judge(self._info(did, row), self.filters))
                except ValueError as exc:
                    verdicts.append(CandidateVerdict(ref=f"{SOURCE_KEY}/{did}", title=str(row.get("name", did)),
                                                     licence="", rows=None, cols=None,
                                                     verdicts={"metadata": f"fail: {exc}"}))
            self._verdicts = verdicts
        return self._verdicts

    def candidates(self) -> list[str]:
        if self.did is not None:
            # Named explicitly: a failing filter becomes its rejection in the report.
            return [f"{SOURCE_KEY}/{self.did}"]
        return passing(self.preview(), self.quota)

    @staticmethod
    def _did(ref: str) -> int:
        prefix, _, did = ref.partition("/")
        if prefix != SOURCE_KEY or not did.isdigit():
            raise ValueError(f"not an openml ref: {ref!r}")
        return int(did)

    def record(self, ref: str) -> DatasetRecord:
        did = self._did(ref)
        if self.did is not None:
            verdict = next((v for v in self.preview() if v.ref == ref), None)
            failed = {k: v for k, v in (verdict.verdicts if verdict else {}).items() if v.startswith("fail")}
            if "metadata" in failed:  # the description could not be fetched: that is the reason, not a filter
                raise ValueError(failed["metadata"][len("fail: "):])
            if failed:
                raise ValueError("filtered out: " + "; ".join(f"{k} {v[len('fail: '):]}" for k, v in failed.items()))
        ds = self._describe(did)
        features = list(getattr(ds, "features", None) or {})
        feature_list = ", ".join(f"{ds.features[i].name} ({ds.features[i].data_type})" for i in sorted(features))
        tags = ds.tag if isinstance(ds.tag, list) else [ds.tag] if ds.tag else []
        target = ds.default_target_attribute
        # A comma-separated default target names several targets: the designer takes one as its hint,
        # and task_design.multi_target may predict them all as one task's target list.
        outcomes = tuple(t.strip() for t in (target or "").split(",") if t.strip()) if target and "," in target else ()
        hint = outcomes[0] if outcomes else target or None
        return DatasetRecord(
            ref=ref, source=self.key, slug=f"openml_{did}", title=ds.name or str(did),
            description=ds.description or "",
            about_file=f"Features: {feature_list}." if feature_list else "",
            column_descriptions=described_columns(ref, ds.description or "",
                                                  [ds.features[i].name for i in sorted(features)]),
            license=ds.licence or "unknown", url=f"https://www.openml.org/d/{did}",
            owner=ds.creator if isinstance(ds.creator, str) else ", ".join(ds.creator or []),
            version=str(ds.version), tags=tuple(sorted(str(t) for t in tags)),
            last_updated=(ds.upload_date or "")[:10] or None, target_hint=hint, outcome_columns=outcomes)

    def load_table(self, ref: str) -> pd.DataFrame:
        did = self._did(ref)
        with _OPENML_LOCK:
            openml = _configure()
            try:
                ds = openml.datasets.get_dataset(did, download_data=True, download_qualities=False,
                                                 download_features_meta_data=True)
                table, _, _, _ = ds.get_data(dataset_format="dataframe")
            except Exception as exc:
                raise ValueError(f"openml data for {did}: {_one_line(exc)}") from None
        ignored = ds.ignore_attribute if isinstance(ds.ignore_attribute, list) else \
            [ds.ignore_attribute] if ds.ignore_attribute else []
        # OpenML marks row ids and bookkeeping columns as ignore/row-id attributes:
        # they are not data, and a task built on them would leak the row order.
        drop = [c for c in [*ignored, ds.row_id_attribute] if c and c in table.columns]
        table = table.drop(columns=drop)
        check_table(ref, table, self.filters)
        return table
