"""The CSV limits count what pandas will decode, the body included: every row's fields and every row,
whatever the line endings and quoting, so no file within the limits costs pandas more than they allow."""

from __future__ import annotations

import csv
import io
import random

import pytest

from pipeline.core import safe_io
from pipeline.core.safe_io import InputLimits, UnsafeInput, csv_row_widths, read_csv_text_bytes

FIELDS = ["a", "", '"x,y"', '"p\nq"', '"r""s"', '"\r"', "12"]


def _widths(data: bytes) -> list[int]:
    return [int(w) for batch in csv_row_widths(data) for w in batch]


def _csv_module_widths(data: bytes) -> list[int]:
    return [max(1, len(row)) for row in csv.reader(io.StringIO(data.decode(), newline=""))]


@pytest.mark.parametrize("stray_quotes", [False, True])
def test_row_widths_agree_with_the_csv_module_across_chunk_boundaries(monkeypatch, stray_quotes: bool) -> None:
    rng = random.Random(1)
    fields = FIELDS + (['1"2'] if stray_quotes else [])  # a quote inside a field is text, not a toggle
    for _ in range(300):
        rows = [",".join(rng.choice(fields) for _ in range(rng.randint(1, 5))) + rng.choice(["\n", "\r\n", "\r", ""])
                for _ in range(rng.randint(0, 6))]
        data = "".join(rows).encode()
        for chunk in (1, 3, 1 << 22):
            monkeypatch.setattr(safe_io, "_CSV_CHUNK", chunk)
            assert _widths(data) == _csv_module_widths(data), (data, chunk)


def test_one_wide_body_row_is_refused_though_the_header_is_narrow() -> None:
    data = b"row_id,y\n" + b",".join([b"1"] * 1_000_000) + b"\n"
    with pytest.raises(UnsafeInput, match="row 1 has 1000000 fields, over the limit of 2000"):
        read_csv_text_bytes("p.csv", data)


def test_a_wide_row_hidden_behind_a_stray_quote_is_still_counted() -> None:
    """A quote in the middle of a field is text to pandas; a parity count would think the rest quoted."""
    data = b"row_id,y\n1,a\"b\n" + b",".join([b"1"] * 5000) + b"\n"
    with pytest.raises(UnsafeInput, match="5000 fields"):
        read_csv_text_bytes("p.csv", data)


@pytest.mark.parametrize("ending", [b"\n", b"\r\n", b"\r"])
def test_rows_are_counted_on_any_line_ending(ending: bytes) -> None:
    data = b"row_id,y" + ending + b"".join(b"%d,a" % i + ending for i in range(11))
    limits = InputLimits(max_rows=10)
    with pytest.raises(UnsafeInput, match="max_rows"):
        read_csv_text_bytes("p.csv", data, limits)
    assert len(read_csv_text_bytes("p.csv", data, InputLimits(max_rows=11))) == 11


def test_cells_are_counted_on_the_body() -> None:
    data = b"a,b\n" + b"1,2,3,4,5,6,7,8\n" * 10
    with pytest.raises(UnsafeInput, match="max_cells"):
        read_csv_text_bytes("p.csv", data, InputLimits(max_cells=50))


def test_quoted_commas_and_line_breaks_are_text_not_fields() -> None:
    data = b'row_id,y\n1,"' + b",\n" * 3000 + b'"\n'
    frame = read_csv_text_bytes("p.csv", data, InputLimits(max_rows=1))
    assert frame.shape == (1, 2)
