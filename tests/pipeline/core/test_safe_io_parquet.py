"""A parquet file from someone else is bounded before pyarrow decodes it, in row groups too (each costs a
decode of its own: 20,000 one-row groups, a 33 MB file, took 35 s and 1.8 GB to read), and
read_parquet_inside decodes only the bytes it checked."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.core.safe_io import InputLimits, UnsafeInput, check_table_file, read_parquet_inside


def test_too_many_row_groups_are_refused_before_decoding(tmp_path: Path) -> None:
    path = tmp_path / "groups.parquet"
    pq.write_table(pa.table({"x": list(range(1_001))}), path, row_group_size=1)
    with pytest.raises(UnsafeInput, match=r"^groups.parquet has 1001 row groups, over the limit of 1000 "
                                          r"\(max_row_groups\)$"):
        check_table_file(path, tmp_path, "parquet")
    assert read_parquet_inside(path, tmp_path, InputLimits(max_row_groups=1_001)).num_rows == 1_001


def test_read_parquet_inside_returns_the_checked_table(tmp_path: Path) -> None:
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"x": [1, 2], "y": ["a", "b"]}), path)
    assert read_parquet_inside(path, tmp_path).to_pydict() == {"x": [1, 2], "y": ["a", "b"]}
    (tmp_path / "link.parquet").symlink_to(path)
    with pytest.raises(UnsafeInput, match="link.parquet is a symbolic link, which is refused"):
        read_parquet_inside(tmp_path / "link.parquet", tmp_path)
    (tmp_path / "bad.parquet").write_bytes(b"PAR1 not really PAR1")
    with pytest.raises(UnsafeInput, match="^bad.parquet is not a readable parquet file: "):
        read_parquet_inside(tmp_path / "bad.parquet", tmp_path)
