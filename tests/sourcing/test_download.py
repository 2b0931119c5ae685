"""Downloads are admitted only when complete and intact, archives never write outside their folder or past
their size caps, and a file's type comes from its bytes, never its name."""

from __future__ import annotations

import hashlib
import io
import sqlite3
import stat
import tarfile
import zipfile
from pathlib import Path

import pandas as pd
import pytest

from sourcing.download import (DownloadError, cached, fetch_to_cache, read_table_file, safe_extract, sniff,
                               table_files)
from tests.sourcing.loopback.kaggle_api import corrupt, zip_bytes

CSV = b"a,b,label\n1,2.5,x\n3,4.5,y\n5,6.5,x\n"


def _write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def _parquet_bytes() -> bytes:
    buf = io.BytesIO()
    pd.DataFrame({"a": [1, 2], "b": ["x", "y"]}).to_parquet(buf, index=False)
    return buf.getvalue()


def _tar_bytes(members: list[tarfile.TarInfo], payloads: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for info in members:
            data = payloads.get(info.name)
            if data is not None:
                info.size = len(data)
            tf.addfile(info, io.BytesIO(data) if data is not None else None)
    return buf.getvalue()


# ------------------------------------------------------------------ sniffing

def test_types_come_from_magic_bytes_not_extensions(tmp_path):
    db = tmp_path / "x.csv"
    con = sqlite3.connect(db)
    con.execute('CREATE TABLE "we""ird" (a INTEGER)')
    con.execute('INSERT INTO "we""ird" VALUES (7)')
    con.commit()
    con.close()
    cases = {
        "table.parquet": (CSV, "csv"),
        "data.csv": (_parquet_bytes(), "parquet"),
        "archive.csv": (zip_bytes({"a.csv": CSV}), "zip"),
        "data.zip": (b"\x1f\x8b" + b"\x00" * 20, "gzip"),
        "data.txt": (b"% comment\n@RELATION r\n@ATTRIBUTE a NUMERIC\n@DATA\n1\n", "arff"),
        "image.csv": (b"\x89PNG\r\n\x1a\n\x00\x00binary", "binary"),
        "cut.parquet": (_parquet_bytes()[:-10], "binary"),  # a truncated parquet file has no footer
        "notes.csv": (b"just one sentence, then; another with | and\nno table here at all\nreally\n", "text"),
    }
    for name, (data, kind) in cases.items():
        assert sniff(_write(tmp_path, name, data)) == kind, name
    assert sniff(db) == "sqlite"
    assert read_table_file(db).to_dict("list") == {"a": [7]}  # a quote in the table name is quoted safely
    assert read_table_file(_write(tmp_path, "semi.parquet", b"a;b\n1;2\n3;4\n")).shape == (2, 2)
    assert read_table_file(_write(tmp_path, "p.csv", _parquet_bytes())).shape == (2, 2)
    quoted = b'name,comment,n\n"a","fine, thanks",1\n"b","no",2\n"c","x, y, z",3\n'
    assert sniff(_write(tmp_path, "q.dat", quoted)) == "csv"  # delimiters inside quotes do not count
    assert read_table_file(tmp_path / "q.dat")["comment"].tolist() == ["fine, thanks", "no", "x, y, z"]
    with pytest.raises(DownloadError, match=r"holds no table \(looks like text\)"):
        read_table_file(tmp_path / "notes.csv")


# ---------------------------------------------------------------- extraction

@pytest.mark.parametrize("member", ["../evil.csv", "/etc/evil.csv", "a/../../evil.csv", "C:/evil.csv",
                                    "..\\evil.csv"])
def test_zip_slip_is_refused_and_nothing_is_written(tmp_path, member):
    archive = _write(tmp_path, "a.zip", zip_bytes({"good.csv": CSV, member: b"owned"}))
    dest = tmp_path / "out" / "deep"
    with pytest.raises(DownloadError, match="archive refused"):
        safe_extract(archive, dest)
    assert not list((tmp_path / "out").rglob("*.csv")), "no member may be written before the check"
    assert not list(tmp_path.rglob("evil.csv"))


def test_zip_symlink_member_is_refused(tmp_path):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        info = zipfile.ZipInfo("link.csv")
        info.external_attr = (stat.S_IFLNK | 0o777) << 16
        zf.writestr(info, "/etc/passwd")
    with pytest.raises(DownloadError, match="symlink member 'link.csv'"):
        safe_extract(_write(tmp_path, "l.zip", buf.getvalue()), tmp_path / "out")


@pytest.mark.parametrize("kind", ["symlink", "hardlink", "dotdot", "fifo"])
def test_tar_links_traversal_and_devices_are_refused(tmp_path, kind):
    info = tarfile.TarInfo("x.csv")
    payloads = {}
    if kind == "symlink":
        info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
    elif kind == "hardlink":
        info.type, info.linkname = tarfile.LNKTYPE, "../../outside"
    elif kind == "dotdot":
        info.name = "../x.csv"
        payloads["../x.csv"] = CSV
    else:
        info.type = tarfile.FIFOTYPE
    archive = _write(tmp_path, "a.tar.gz", _tar_bytes([info], payloads))
    with pytest.raises(DownloadError, match="archive refused"):
        safe_extract(archive, tmp_path / "out")
    assert not (tmp_path / "x.csv").exists()


def test_size_caps_per_file_and_total(tmp_path):
    archive = _write(tmp_path, "a.zip", zip_bytes({"a.csv": b"x" * 5000, "b.csv": b"y" * 5000}))
    with pytest.raises(DownloadError, match="member 'a.csv' is larger than 4000 bytes"):
        safe_extract(archive, tmp_path / "o1", max_file_bytes=4000)
    with pytest.raises(DownloadError, match="total cap"):
        safe_extract(archive, tmp_path / "o2", max_total_bytes=8000)
    files = safe_extract(archive, tmp_path / "o3")
    assert [f.name for f in files] == ["a.csv", "b.csv"]


def test_a_good_tar_extracts_and_the_largest_table_leads(tmp_path):
    a, b = tarfile.TarInfo("data/small.csv"), tarfile.TarInfo("data/big.bin")
    archive = _write(tmp_path, "t.tgz", _tar_bytes([a, b], {"data/small.csv": CSV,
                                                            "data/big.bin": CSV * 50}))
    files = safe_extract(archive, tmp_path / "out")
    assert [f.relative_to(tmp_path / "out").as_posix() for f in files] == ["data/big.bin", "data/small.csv"]
    assert [f.name for f in table_files(files)] == ["big.bin", "small.csv"]  # a csv whatever its name


# --------------------------------------------------------------- fetching

class _Server:
    """Plays a server's answers, one per attempt: (body, declared length) or an exception."""

    def __init__(self, *answers):
        self.answers = list(answers)
        self.calls = 0

    def __call__(self):
        self.calls += 1
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        body, declared = answer
        return [body[i:i + 7] for i in range(0, len(body), 7)], declared


def _transient(exc: Exception) -> bool:
    return isinstance(exc, TimeoutError)


def test_truncated_then_complete_download_is_admitted_once_and_content_addressed(tmp_path):
    good = zip_bytes({"a.csv": CSV})
    server = _Server((good[:40], len(good)), TimeoutError("read timed out"), (good, len(good)))
    blob = fetch_to_cache("k/a/1", server, is_transient=_transient, backoff_s=0, root=tmp_path)
    assert server.calls == 3
    assert blob.sha256 == hashlib.sha256(good).hexdigest() and blob.path.name == blob.sha256
    assert blob.kind == "zip" and blob.path.read_bytes() == good
    again = fetch_to_cache("k/a/1", _Server(), is_transient=_transient, root=tmp_path)  # no answer needed
    assert again == blob
    assert not list((tmp_path / "downloads" / "tmp").iterdir())


def test_persistent_faults_fail_with_a_clear_reason(tmp_path):
    good = zip_bytes({"a.csv": CSV})
    cases = [
        ((good[:30], len(good)),) * 3, r"after 3 attempts: truncated download \(30 of \d+ bytes\)$",
        ((corrupt(good), None),) * 3, r"after 3 attempts: corrupted zip",
        ((good, None),) * 3, r"after 3 attempts: checksum mismatch",
    ]
    for i in range(0, len(cases), 2):
        answers, reason = cases[i], cases[i + 1]
        expected = "0" * 64 if "checksum" in reason else None
        with pytest.raises(DownloadError, match=reason):
            fetch_to_cache(f"k/{i}", _Server(*answers), is_transient=_transient, expected_sha256=expected,
                           backoff_s=0, root=tmp_path)
        assert cached(f"k/{i}", tmp_path) is None
    with pytest.raises(DownloadError, match="too large"):
        fetch_to_cache("k/big", _Server((b"x" * 100, 100)), is_transient=_transient, max_bytes=50, root=tmp_path)
    with pytest.raises(PermissionError):  # not transient: no retry, the caller reports it
        fetch_to_cache("k/403", _Server(PermissionError("denied"), (good, None)), is_transient=_transient,
                       root=tmp_path)


def test_a_damaged_cached_blob_is_fetched_again(tmp_path):
    good = zip_bytes({"a.csv": CSV})
    blob = fetch_to_cache("k/x", _Server((good, None)), is_transient=_transient, root=tmp_path)
    blob.path.write_bytes(good[:-5])
    server = _Server((good, None))
    assert fetch_to_cache("k/x", server, is_transient=_transient, root=tmp_path).sha256 == blob.sha256
    assert server.calls == 1


@pytest.mark.parametrize("kind", ["zip", "gzip"])
def test_a_payload_that_decompresses_past_the_total_cap_is_refused_before_it_is_inflated(
        tmp_path, monkeypatch, kind):
    """Deflate reaches 1,000:1: checked without a cap, a 1 GB download would be inflated to a terabyte
    before extraction's caps were ever reached. Here the cap is 3 MiB and the payload 8 MiB of zeros."""
    import gzip

    from sourcing import download

    monkeypatch.setattr(download, "MAX_TOTAL_BYTES", 3 << 20)
    zeros = bytes(4 << 20)
    data = zip_bytes({"a.csv": zeros, "b.csv": zeros}) if kind == "zip" else gzip.compress(zeros + zeros)
    payload = _write(tmp_path, f"bomb.{kind}", data)
    assert sniff(payload) == kind and len(data) < 100_000
    with pytest.raises(DownloadError, match=f"decompresses to over {3 << 20} bytes"):
        download.check_payload(payload, kind)
    download.check_payload(_write(tmp_path, f"fine.{kind}", zip_bytes({"a.csv": b"x,y\n1,2\n"}) if kind == "zip"
                                  else gzip.compress(b"x,y\n1,2\n")), kind)  # a small one passes
