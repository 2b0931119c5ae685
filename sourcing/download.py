"""Safe downloads: a content-addressed cache, verified payloads, guarded extraction.

Everything a networked source fetches goes through `fetch_to_cache`:
- bytes land in `<cache>/downloads/blobs/<sha256[:2]>/<sha256>`; an index file per
  download key (e.g. `kaggle/owner/slug/3`, a pinned version) maps the key to
  its sha256, so a rebuild reads the same bytes without touching the network;
- a payload is checked before it is admitted: the server's declared length, a
  known checksum, and the archive itself (a zip's CRCs, a gzip stream's end);
  a truncated or corrupted one is fetched again a bounded number of times, then
  the dataset fails with a one-line reason (DownloadError is a ValueError, which
  pipeline.steps.source_step turns into a rejection);
- archives are extracted by `safe_extract`, which refuses absolute paths, `..`,
  links and devices (zip-slip) and enforces per-file and total size caps while
  copying, so a member that lies about its size is caught too;
- file types come from magic bytes (`sniff`), never from the extension.

The cache root is `$DAREGEN_CACHE`, else pipeline.core.cache.default_cache_root() (the LLM cache's parent).
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import json
import os
import re
import tarfile
import tempfile
import time
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from collections.abc import Callable, Iterable

import pandas as pd

from pipeline.core import cache
from pipeline.core.cache import cache_root
from pipeline.core.sqlite import connect_read_only, select_all

MiB = 1024 * 1024
MAX_DOWNLOAD_BYTES = 1024 * MiB
MAX_FILE_BYTES = 512 * MiB  # one extracted member
MAX_TOTAL_BYTES = 2048 * MiB  # everything extracted from one archive
MAX_MEMBERS = 10_000
DOWNLOAD_ATTEMPTS = 3

TABLE_KINDS = ("csv", "parquet", "arff", "sqlite")


class DownloadError(ValueError):
    """A download or archive that cannot be used; the message is the dataset's one-line reason."""


class _Retry(Exception):
    """A payload that may be fine on a second fetch (truncated, corrupted, checksum mismatch)."""


# ------------------------------------------------------------------ sniffing


def sniff(path: Path) -> str:
    """zip, gzip, tar, parquet, sqlite, arff, csv, text or binary, from the bytes alone."""
    with open(path, "rb") as handle:
        head = handle.read(65536)
        if head[:4] == b"PAR1":
            if path.stat().st_size < 8:
                return "binary"
            handle.seek(-4, os.SEEK_END)  # a truncated parquet file lacks its footer magic
            return "parquet" if handle.read(4) == b"PAR1" else "binary"
    if head[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        return "zip"
    if head[:2] == b"\x1f\x8b":
        return "gzip"
    if head[:16] == b"SQLite format 3\x00":
        return "sqlite"
    if len(head) > 262 and head[257:262] == b"ustar":
        return "tar"
    if b"\x00" in head:
        return "binary"
    text = head.decode("utf-8", errors="replace")
    if text.count("\ufffd") > len(text) // 100 + 1:
        text = head.decode("latin-1")
    lines = [ln for ln in text.splitlines() if ln.strip()]
    first = next((ln for ln in lines if not ln.lstrip().startswith("%")), "")
    if first.lstrip().lower().startswith("@relation"):
        return "arff"
    if lines and _delimiter(lines[:20]) is not None:
        return "csv"
    return "text"


def _delimiter(lines: list[str]) -> str | None:
    """The delimiter every sampled line agrees on (the last line may be cut by the sample)."""
    sample = lines[:-1] if len(lines) > 2 else lines
    for sep in (",", "\t", ";", "|"):
        # Parsed, not counted: a quoted text field may hold the delimiter.
        widths = {len(row) for row in csv.reader(io.StringIO("\n".join(sample)), delimiter=sep) if row}
        if len(widths) == 1 and widths != {1}:
            return sep
    if len(sample) == 1:
        return ","  # a one-column table is still a csv
    return None


def _drain_capped(stream, budget: list[int]) -> None:
    """Read `stream` to its end (which checks it), refusing once more than the budget is decompressed:
    deflate reaches 1,000:1, so a 1 GB download would otherwise be inflated to a terabyte before
    safe_extract's caps are ever reached."""
    while block := stream.read(MiB):
        budget[0] -= len(block)
        if budget[0] < 0:
            raise DownloadError(f"archive refused: it decompresses to over {MAX_TOTAL_BYTES} bytes")


def check_payload(path: Path, kind: str) -> None:
    """Raise _Retry if an archive is damaged (a truncated or corrupted transfer), DownloadError if it
    decompresses to more than safe_extract would ever extract (MAX_TOTAL_BYTES)."""
    budget = [MAX_TOTAL_BYTES]
    if kind == "zip":
        try:
            with zipfile.ZipFile(path) as archive:
                for info in archive.infolist():  # a member's CRC is checked when its read reaches the end
                    with archive.open(info) as member:
                        _drain_capped(member, budget)
        except (zipfile.BadZipFile, zlib.error, EOFError, OSError) as exc:
            raise _Retry(f"corrupted zip ({exc})") from None
    elif kind == "gzip":
        try:
            with gzip.open(path, "rb") as stream:
                _drain_capped(stream, budget)
        except (OSError, EOFError, zlib.error) as exc:
            raise _Retry(f"corrupted gzip ({exc})") from None
    elif kind == "tar":
        try:
            with tarfile.open(path) as archive:
                archive.getmembers()
        except (tarfile.TarError, EOFError) as exc:
            raise _Retry(f"corrupted tar ({exc})") from None


# -------------------------------------------------------------------- cache


@dataclass(frozen=True)
class CachedFile:
    path: Path
    sha256: str
    size: int
    kind: str


def _blob_path(root: Path, digest: str) -> Path:
    return root / cache.DOWNLOADS / "blobs" / digest[:2] / digest


def _index_path(root: Path, key: str) -> Path:
    return root / cache.DOWNLOADS / "index" / (hashlib.sha256(key.encode()).hexdigest() + ".json")


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(MiB), b""):
            h.update(block)
    return h.hexdigest()


def cached(key: str, root: Path | None = None) -> CachedFile | None:
    """The verified blob a download key points to, if any (a damaged blob counts as absent)."""
    root = root or cache_root()
    index = _index_path(root, key)
    if not index.exists():
        return None
    entry = json.loads(index.read_text(encoding="utf-8"))
    blob = _blob_path(root, entry["sha256"])
    if not blob.exists() or _sha256_file(blob) != entry["sha256"]:
        return None
    return CachedFile(blob, entry["sha256"], blob.stat().st_size, entry["kind"])


Stream = tuple[Iterable[bytes], int | None]  # chunks and the server's declared length (None if unknown)


def fetch_to_cache(key: str, open_stream: Callable[[], Stream], *, is_transient: Callable[[Exception], bool],
                   expected_sha256: str | None = None, attempts: int = DOWNLOAD_ATTEMPTS,
                   max_bytes: int = MAX_DOWNLOAD_BYTES, backoff_s: float = 0.5,
                   root: Path | None = None) -> CachedFile:
    """Download `key` once into the content-addressed cache; verified, re-fetched at most `attempts` times.

    `open_stream` starts one transfer. `is_transient` says which of its
    exceptions (timeouts, 5xx, ...) are worth another attempt.
    """
    root = root or cache_root()
    hit = cached(key, root)
    if hit is not None and (expected_sha256 is None or hit.sha256 == expected_sha256):
        return hit
    tmp_dir = root / cache.DOWNLOADS / "tmp"
    tmp_dir.mkdir(parents=True, exist_ok=True)
    reason = ""
    for attempt in range(attempts):
        if attempt:
            time.sleep(backoff_s * 2 ** (attempt - 1))
        fd, tmp_name = tempfile.mkstemp(dir=tmp_dir)
        tmp = Path(tmp_name)
        try:
            try:
                digest, size = _receive(open_stream, fd, max_bytes)
                kind = sniff(tmp)
                if expected_sha256 is not None and digest != expected_sha256:
                    raise _Retry(f"checksum mismatch (sha256 {digest[:12]}..., expected {expected_sha256[:12]}...)")
                check_payload(tmp, kind)
            except _Retry as exc:
                reason = str(exc)
                continue
            except DownloadError:
                raise
            except Exception as exc:
                if not is_transient(exc):
                    raise
                reason = _one_line(exc)
                continue
            blob = _blob_path(root, digest)
            blob.parent.mkdir(parents=True, exist_ok=True)
            os.replace(tmp, blob)
            index = _index_path(root, key)
            index.parent.mkdir(parents=True, exist_ok=True)
            index.write_text(json.dumps({"key": key, "sha256": digest, "kind": kind, "size": size},
                                        sort_keys=True), encoding="utf-8")
            return CachedFile(blob, digest, size, kind)
        finally:
            tmp.unlink(missing_ok=True)
    raise DownloadError(f"download failed after {attempts} attempts: {reason}")


def _receive(open_stream: Callable[[], Stream], fd: int, max_bytes: int) -> tuple[str, int]:
    h = hashlib.sha256()
    size = 0
    with os.fdopen(fd, "wb") as out:
        chunks, declared = open_stream()
        if declared is not None and declared > max_bytes:
            raise DownloadError(f"download too large ({declared} bytes > cap {max_bytes})")
        for chunk in chunks:
            size += len(chunk)
            if size > max_bytes:
                raise DownloadError(f"download too large (> cap {max_bytes} bytes)")
            h.update(chunk)
            out.write(chunk)
    if declared is not None and size != declared:
        raise _Retry(f"truncated download ({size} of {declared} bytes)")
    return h.hexdigest(), size


def _one_line(exc: Exception) -> str:
    text = re.sub(r"\s+", " ", str(exc)).strip()
    return f"{type(exc).__name__}: {text}"[:200]


# --------------------------------------------------------------- extraction


def _safe_member_path(name: str) -> PurePosixPath:
    normalized = name.replace("\\", "/")
    path = PurePosixPath(normalized)
    if normalized.startswith("/") or re.match(r"^[A-Za-z]:", normalized) or path.is_absolute():
        raise DownloadError(f"archive refused: absolute member path {name!r}")
    if ".." in path.parts:
        raise DownloadError(f"archive refused: member path escapes the folder {name!r}")
    return path


def _copy_capped(src, dest: Path, name: str, max_file_bytes: int, budget: list[int]) -> None:
    written = 0
    with open(dest, "wb") as out:
        for block in iter(lambda: src.read(MiB), b""):
            written += len(block)
            budget[0] -= len(block)
            if written > max_file_bytes:
                raise DownloadError(f"archive refused: member {name!r} is larger than {max_file_bytes} bytes")
            if budget[0] < 0:
                raise DownloadError("archive refused: extracted size exceeds the total cap")
            out.write(block)


def safe_extract(archive: Path, dest: Path, *, max_file_bytes: int = MAX_FILE_BYTES,
                 max_total_bytes: int = MAX_TOTAL_BYTES, max_members: int = MAX_MEMBERS) -> list[Path]:
    """Extract a zip or tar into `dest`; refuse the whole archive on any unsafe member. Returns the files."""
    kind = sniff(archive)
    dest.mkdir(parents=True, exist_ok=True)
    budget = [max_total_bytes]
    out: list[Path] = []
    if kind == "zip":
        try:
            with zipfile.ZipFile(archive) as zf:
                infos = zf.infolist()
                if len(infos) > max_members:
                    raise DownloadError(f"archive refused: {len(infos)} members > {max_members}")
                for info in infos:  # check every member before writing any
                    _safe_member_path(info.filename)
                    mode = (info.external_attr >> 16) & 0o170000
                    if mode == 0o120000:
                        raise DownloadError(f"archive refused: symlink member {info.filename!r}")
                for info in infos:
                    rel = _safe_member_path(info.filename)
                    target = dest.joinpath(*rel.parts)
                    if info.is_dir():
                        target.mkdir(parents=True, exist_ok=True)
                        continue
                    target.parent.mkdir(parents=True, exist_ok=True)
                    with zf.open(info) as src:  # the read raises BadZipFile on a CRC mismatch
                        _copy_capped(src, target, info.filename, max_file_bytes, budget)
                    out.append(target)
        except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
            raise DownloadError(f"corrupted zip ({exc})") from None
    elif kind == "tar" or kind == "gzip":
        try:
            with tarfile.open(archive) as tf:
                members = tf.getmembers()
                if len(members) > max_members:
                    raise DownloadError(f"archive refused: {len(members)} members > {max_members}")
                for m in members:
                    _safe_member_path(m.name)
                    if m.issym() or m.islnk():
                        raise DownloadError(f"archive refused: link member {m.name!r}")
                    if not (m.isfile() or m.isdir()):
                        raise DownloadError(f"archive refused: special file {m.name!r}")
                for m in members:
                    target = dest.joinpath(*_safe_member_path(m.name).parts)
                    if m.isdir():
                        target.mkdir(parents=True, exist_ok=True)
                        continue
                    target.parent.mkdir(parents=True, exist_ok=True)
                    src = tf.extractfile(m)
                    if src is None:
                        raise DownloadError(f"archive refused: unreadable member {m.name!r}")
                    with src:
                        _copy_capped(src, target, m.name, max_file_bytes, budget)
                    out.append(target)
        except tarfile.TarError as exc:
            raise DownloadError(f"corrupted tar ({exc})") from None
    else:
        raise DownloadError(f"not an archive (looks like {kind})")
    return sorted(out)


def gunzip(path: Path, dest: Path, max_bytes: int = MAX_FILE_BYTES) -> Path:
    """A gzip file's content (one file, not a tar) into `dest`, size-capped."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    try:
        with gzip.open(path, "rb") as src:
            _copy_capped(src, dest, path.name, max_bytes, [max_bytes])
    except (OSError, EOFError) as exc:
        raise DownloadError(f"corrupted gzip ({exc})") from None
    return dest


def materialize(blob: CachedFile, workdir: Path) -> list[Path]:
    """The files a downloaded blob stands for: an archive's members, a gzip's content, or the blob itself."""
    if blob.kind in ("zip", "tar") or (blob.kind == "gzip" and tarfile.is_tarfile(blob.path)):
        return safe_extract(blob.path, workdir / "extracted")
    if blob.kind == "gzip":
        return [gunzip(blob.path, workdir / "extracted" / "data")]
    return [blob.path]


# ------------------------------------------------------------------- tables


def table_files(files: Iterable[Path]) -> list[Path]:
    """The files that hold a table, largest first (ties by name): the dataset's main table leads."""
    found = [f for f in files if sniff(f) in TABLE_KINDS]
    return sorted(found, key=lambda f: (-f.stat().st_size, f.as_posix()))


def read_table_file(path: Path, workdir: Path | None = None) -> pd.DataFrame:
    """A table from a file whose type is sniffed (csv, parquet, arff, sqlite, or one of them gzipped)."""
    kind = sniff(path)
    try:
        if kind == "csv":
            with open(path, "rb") as handle:
                head = handle.read(65536).decode("utf-8", errors="replace")
            sep = _delimiter([ln for ln in head.splitlines() if ln.strip()][:20]) or ","
            return pd.read_csv(path, sep=sep, low_memory=False)
        if kind == "parquet":
            return pd.read_parquet(path)
        if kind == "arff":
            return read_arff(path)
        if kind == "sqlite":
            return _read_single_sqlite_table(path)
    except DownloadError:
        raise
    except Exception as exc:  # a malformed file is this dataset's rejection, not a crash
        raise DownloadError(f"cannot read {path.name} as {kind}: {_one_line(exc)}") from exc
    if kind == "gzip":
        inner = gunzip(path, (workdir or path.parent) / (path.name + ".unzipped"))
        return read_table_file(inner, workdir)
    raise DownloadError(f"{path.name} holds no table (looks like {kind})")


def read_arff(path: Path) -> pd.DataFrame:
    import arff  # liac-arff, installed with openml

    with open(path, encoding="utf-8", errors="replace") as handle:
        data = arff.load(handle)
    return pd.DataFrame(data["data"], columns=[name for name, _ in data["attributes"]])


def _read_single_sqlite_table(path: Path) -> pd.DataFrame:
    # Read-only URI: a downloaded database is never modified, and a hostile one
    # cannot make us write beside it.
    con = connect_read_only(path)
    try:
        names = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table' "
                                           "AND name NOT LIKE 'sqlite_%' ORDER BY name")]
        if len(names) != 1:
            raise DownloadError(f"{path.name}: a database with {len(names)} tables; use the sqlite source for it")
        return pd.read_sql_query(select_all(con, names[0]), con)
    finally:
        con.close()
