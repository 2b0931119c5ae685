"""Kaggle datasets as a source, through the official client (kaggle 2.x / kagglesdk).

`--sources kaggle:owner/slug[/version]` (one dataset) or `kaggle:search=terms`
(a search), each optionally followed by `?filter=value&quota=N` (sourcing.base).

- Refs are `kaggle/<owner>/<slug>/<version>`: the version is pinned when the
  candidate is listed, so a rebuild downloads (or reads from the cache) the
  same bytes, and DatasetRecord.version records it.
- Transport: kagglesdk's KaggleClient, the client the `kaggle` package itself
  wraps. We do not go through `kaggle.api.KaggleApi`: importing the `kaggle`
  package authenticates at import time, and KaggleApi's methods build their
  client with a hard-coded production endpoint, which would ignore
  KAGGLE_API_ENVIRONMENT (what the loopback tests use).
- Credentials are found as the client finds them: KAGGLE_API_TOKEN or
  ~/.kaggle/access_token, KAGGLE_USERNAME + KAGGLE_KEY (read here, as KaggleApi
  reads them), or ~/.kaggle/kaggle.json. They are handed to the client and
  never logged, printed or written anywhere.
- Column descriptions: the metadata's own column entries, then a features table or list in the
  description (sourcing.cards), fitted to the main table's header.
- Every call takes a slot of a module-level semaphore (Kaggle rate-limits per
  account) and is retried with exponential backoff on 429, 5xx, timeouts and
  dropped connections, a bounded number of times; then the dataset is rejected
  with a one-line reason.
"""

from __future__ import annotations

import logging
import os
import re
import threading
import time
from pathlib import Path
from typing import Any, TypeVar
from collections.abc import Callable

import pandas as pd

from pipeline.core import cache
from pipeline.core.cache import cache_root
from pipeline.core.records import DatasetRecord
from pipeline.core.text import shorten
from sourcing.base import CandidateInfo, CandidateVerdict, check_table, judge, passing, split_arg
from sourcing.cards import fit_card, read_card
from sourcing.download import CachedFile, fetch_to_cache, materialize, read_table_file, table_files

SOURCE_KEY = "kaggle"
ATTEMPTS = 4
MAX_SEARCH_PAGES = 5
PAGE_SIZE = 20

# Kaggle throttles per account; a build's thread pool must not multiply that.
_KAGGLE_CALLS = threading.BoundedSemaphore(int(os.environ.get("DAREGEN_KAGGLE_CONCURRENCY", "2")))

_LOG = logging.getLogger(__name__)
_DATASET = re.compile(r"^([A-Za-z0-9][\w.-]*)/([A-Za-z0-9][\w.-]*)(?:/(\d+))?$")
T = TypeVar("T")


def _backoff_base_s() -> float:
    # Read at call time: tests shorten it; production keeps Kaggle's own 1 s scale.
    return float(os.environ.get("DAREGEN_RETRY_BASE_S", "1.0"))


def _status(exc: Exception) -> int | None:
    response = getattr(exc, "response", None)
    return getattr(response, "status_code", None)


def is_transient(exc: Exception) -> bool:
    """429, 5xx, timeouts and broken connections are worth another try; 4xx and bad data are not."""
    import requests

    status = _status(exc)
    if isinstance(exc, requests.HTTPError) and status is not None:
        return status == 429 or status >= 500
    return isinstance(exc, (requests.ConnectionError, requests.Timeout, requests.exceptions.ChunkedEncodingError))


def _retry_after(exc: Exception) -> float | None:
    response = getattr(exc, "response", None)
    value = getattr(response, "headers", {}).get("Retry-After") if response is not None else None
    try:
        return min(float(value), 60.0) if value is not None else None
    except ValueError:
        return None


def describe_error(exc: Exception) -> str:
    status = _status(exc)
    if status is not None:
        return f"HTTP {status}"
    text = re.sub(r"\s+", " ", str(exc)).strip()
    return shorten(f"{type(exc).__name__}: {text}", 160)


def call_with_retry(what: str, fn: Callable[[], T]) -> T:
    """One Kaggle call under the concurrency limit, retried with exponential backoff on transient errors."""
    for attempt in range(ATTEMPTS):
        try:
            with _KAGGLE_CALLS:
                return fn()
        except Exception as exc:
            if not is_transient(exc) or attempt == ATTEMPTS - 1:
                tries = f" after {attempt + 1} attempts" if attempt else ""
                raise ValueError(f"kaggle {what} failed{tries}: {describe_error(exc)}") from None
            time.sleep(_retry_after(exc) or _backoff_base_s() * 2 ** attempt)
    raise AssertionError("unreachable")


def _make_client() -> Any:
    import requests
    from kagglesdk import KaggleClient

    class _TimeoutAdapter(requests.adapters.HTTPAdapter):
        # kagglesdk sends without a timeout; a stalled server would hang the build.
        def send(self, request, **kwargs):
            if kwargs.get("timeout") is None:
                kwargs["timeout"] = float(os.environ.get("DAREGEN_KAGGLE_TIMEOUT_S", "60"))
            return super().send(request, **kwargs)

    client = KaggleClient(username=os.environ.get("KAGGLE_USERNAME") or None,
                          password=os.environ.get("KAGGLE_KEY") or None)
    http = client.http_client()
    http._init_session()  # the session exists only after this; kagglesdk offers no public hook
    session = http._session
    for prefix in ("http://", "https://"):
        session.mount(prefix, _TimeoutAdapter(max_retries=0))
    return client


def _slug(owner: str, name: str) -> str:
    return re.sub(r"[^a-z0-9._-]+", "-", f"kaggle_{owner}_{name}".lower())


def _iso(value: Any) -> str | None:
    if value is None:
        return None
    return value.date().isoformat() if hasattr(value, "date") else str(value)[:10]


class KaggleSource:
    key = SOURCE_KEY

    def __init__(self, arg: str | None):
        target, self.filters, self.quota = split_arg(arg)
        target = target.strip()
        if target.startswith("search="):
            self.search: str | None = target[len("search="):].strip()
            self.dataset = None
            if not self.search:
                raise ValueError("kaggle:search= needs search terms")
        else:
            m = _DATASET.match(target)
            if not m:
                raise ValueError("kaggle source: expected kaggle:owner/slug[/version] or kaggle:search=terms, "
                                 f"got {target!r}")
            self.search, self.dataset = None, (m.group(1), m.group(2), m.group(3))
        self._client: Any = None
        self._lock = threading.Lock()
        self._datasets: dict[tuple[str, str], Any] = {}
        self._metadata: dict[tuple[str, str], Any] = {}
        self._files: dict[str, list[Path]] = {}
        self._verdicts: list[CandidateVerdict] | None = None

    # ------------------------------------------------------------ client calls

    def _kaggle(self) -> Any:
        with self._lock:
            if self._client is None:
                self._client = _make_client()
            return self._client

    def _get_dataset(self, owner: str, name: str) -> Any:
        if (owner, name) not in self._datasets:
            from kagglesdk.datasets.types.dataset_api_service import ApiGetDatasetRequest

            request = ApiGetDatasetRequest()
            request.owner_slug, request.dataset_slug = owner, name
            api = self._kaggle().datasets.dataset_api_client
            self._datasets[(owner, name)] = call_with_retry(f"GetDataset {owner}/{name}",
                                                            lambda: api.get_dataset(request))
        return self._datasets[(owner, name)]

    def _get_metadata(self, owner: str, name: str) -> Any:
        if (owner, name) not in self._metadata:
            from kagglesdk.datasets.types.dataset_api_service import ApiGetDatasetMetadataRequest

            request = ApiGetDatasetMetadataRequest()
            request.owner_slug, request.dataset_slug = owner, name
            api = self._kaggle().datasets.dataset_api_client
            response = call_with_retry(f"GetDatasetMetadata {owner}/{name}",
                                       lambda: api.get_dataset_metadata(request))
            if response.error_message:
                raise ValueError(f"kaggle metadata for {owner}/{name}: {response.error_message}")
            self._metadata[(owner, name)] = response.info
        return self._metadata[(owner, name)]

    def _search(self) -> list[Any]:
        from kagglesdk.datasets.types.dataset_api_service import ApiListDatasetsRequest

        api = self._kaggle().datasets.dataset_api_client
        found: list[Any] = []
        token = ""
        for page in range(MAX_SEARCH_PAGES):
            request = ApiListDatasetsRequest()
            request.search = self.search or ""
            request.page_size = PAGE_SIZE
            request.page_token = token
            if self.filters.min_bytes is not None:
                request.min_size = self.filters.min_bytes
            if self.filters.max_bytes is not None:
                request.max_size = self.filters.max_bytes
            response = call_with_retry(f"ListDatasets page {page + 1}", lambda: api.list_datasets(request))
            found += list(response.datasets or [])
            token = response.next_page_token or ""
            if not token:
                break
        return found

    # ------------------------------------------------------------------ refs

    @staticmethod
    def _parse_ref(ref: str) -> tuple[str, str, int]:
        parts = ref.split("/")
        if len(parts) != 4 or parts[0] != SOURCE_KEY or not parts[3].isdigit():
            raise ValueError(f"not a pinned kaggle ref: {ref!r}")
        return parts[1], parts[2], int(parts[3])

    @staticmethod
    def _info(ref: str, ds: Any) -> CandidateInfo:
        return CandidateInfo(
            ref=ref, title=ds.title or ref, text=" ".join(filter(None, [ds.subtitle, ds.description])),
            tags=tuple(t.name for t in (ds.tags or []) if t.name), licence=ds.license_name or "unknown",
            bytes=ds.total_bytes or None, last_updated=_iso(ds.last_updated),
            usability=ds.usability_rating if ds.usability_rating else None)

    def preview(self) -> list[CandidateVerdict]:
        if self._verdicts is None:
            if self.dataset is not None:
                owner, name, version = self.dataset
                ds = self._get_dataset(owner, name)
                ref = f"{SOURCE_KEY}/{owner}/{name}/{version or ds.current_version_number}"
                verdicts = [judge(self._info(ref, ds), self.filters)]
            else:
                verdicts = []
                for ds in self._search():
                    owner, _, name = (ds.ref or "").partition("/")
                    if not owner or not name:
                        continue
                    self._datasets[(owner, name)] = ds
                    ref = f"{SOURCE_KEY}/{owner}/{name}/{ds.current_version_number}"
                    verdicts.append(judge(self._info(ref, ds), self.filters))
            self._verdicts = verdicts
        return self._verdicts

    def candidates(self) -> list[str]:
        if self.dataset is not None:
            # A dataset named explicitly stays a candidate whatever the filters say,
            # so a failing filter shows up in the run report as its rejection.
            return [v.ref for v in self.preview()]
        return passing(self.preview(), self.quota)

    # ----------------------------------------------------------------- data

    def _download(self, owner: str, name: str, version: int) -> CachedFile:
        from kagglesdk.datasets.types.dataset_api_service import ApiDownloadDatasetRequest

        def open_stream():
            request = ApiDownloadDatasetRequest()
            request.owner_slug, request.dataset_slug = owner, name
            request.dataset_version_number = version
            # download_dataset follows the redirect to the blob URL and streams it.
            response = self._kaggle().datasets.dataset_api_client.download_dataset(request)
            declared = response.headers.get("Content-Length")
            return response.iter_content(1 << 20), int(declared) if declared else None

        key = f"{SOURCE_KEY}/{owner}/{name}/{version}"
        try:
            with _KAGGLE_CALLS:
                return fetch_to_cache(key, open_stream, is_transient=is_transient, backoff_s=_backoff_base_s())
        except ValueError:
            raise
        except Exception as exc:
            raise ValueError(f"kaggle download of {owner}/{name} v{version} failed: {describe_error(exc)}") from None

    def _table_files(self, ref: str) -> list[Path]:
        if ref not in self._files:
            owner, name, version = self._parse_ref(ref)
            blob = self._download(owner, name, version)
            workdir = cache_root() / cache.KAGGLE / "extracted" / blob.sha256[:16]
            files = table_files(materialize(blob, workdir))
            if not files:
                raise ValueError(f"kaggle {owner}/{name} v{version}: no csv/parquet/arff/sqlite file in the download")
            self._files[ref] = files
        return self._files[ref]

    def record(self, ref: str) -> DatasetRecord:
        owner, name, version = self._parse_ref(ref)
        ds = self._get_dataset(owner, name)
        failed = {k: v for k, v in judge(self._info(ref, ds), self.filters).verdicts.items() if v.startswith("fail")}
        if failed:
            raise ValueError("filtered out: " + "; ".join(f"{k} {v[len('fail: '):]}" for k, v in failed.items()))
        info = self._get_metadata(owner, name)
        main = self._table_files(ref)[0]
        docs: dict[str, str] = {}
        about = ""
        # The main table's own column docs win over another file's same-named column.
        for f in sorted(info.data or [], key=lambda f: f.name == main.name):
            for col in f.columns or []:
                if col.name and col.description:
                    docs[col.name] = col.description.strip()
            if f.name == main.name and f.description:
                about = f.description.strip()
        docs = {**self._described_in_text(ref, info.description or "", main), **docs}
        licences = [lic.name for lic in (info.licenses or []) if lic.name]
        return DatasetRecord(
            ref=ref, source=self.key, slug=_slug(owner, name),
            title=info.title or ds.title or name, subtitle=info.subtitle or ds.subtitle or "",
            description=info.description or ds.description or "", about_file=about,
            column_descriptions=docs, license=licences[0] if licences else (ds.license_name or "unknown"),
            url=f"https://www.kaggle.com/datasets/{owner}/{name}/versions/{version}",
            owner=ds.owner_name or owner, version=str(version),
            tags=tuple(sorted({*(info.keywords or []), *(t.name for t in (ds.tags or []) if t.name)})),
            usability_rating=info.usability_rating or ds.usability_rating or None,
            last_updated=_iso(ds.last_updated))

    @staticmethod
    def _described_in_text(ref: str, description: str, main: Path) -> dict[str, str]:
        """Column entries of the description's features table or list (sourcing.cards), fitted to the main
        table's header; none when the header cannot be read from the file alone (an arff, a database)."""
        from sourcing.local import header_columns

        columns = header_columns(main, main.parent) if main.suffix.lower() in (".csv", ".parquet") else None
        if not description.strip() or columns is None:
            return {}
        fields, notes = fit_card(read_card("description", description), main.name, columns)
        for note in notes:
            _LOG.warning("%s: %s", ref, note)
        return fields.get("column_descriptions", {})

    def load_table(self, ref: str) -> pd.DataFrame:
        main = self._table_files(ref)[0]
        table = read_table_file(main)
        check_table(ref, table, self.filters)
        return table
