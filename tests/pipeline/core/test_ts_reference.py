"""The kernel's shared series helpers."""

from __future__ import annotations

import pandas as pd

from pipeline.core.ts_reference import joined_keys


def test_joined_keys_are_each_rows_values_as_text_joined_by_the_unit_separator() -> None:
    # The row-wise `agg("\x1f".join, axis=1)` it replaces, value for value, on numbers, text and categories;
    # built column by column (a hundred candidate keys over AER/PSID7682's 4,165 rows took 127 s row by row).
    frame = pd.DataFrame({"state": ["NY", "CA", "NY"], "year": [1990, 1991, 1992], "rate": [1.5, 2.0, 7.25],
                          "kind": pd.Categorical(["a", "b", "a"])})
    assert list(joined_keys(frame)) == ["NY\x1f1990\x1f1.5\x1fa", "CA\x1f1991\x1f2.0\x1fb", "NY\x1f1992\x1f7.25\x1fa"]
    assert list(joined_keys(frame[["state"]])) == ["NY", "CA", "NY"]
    assert joined_keys(frame).index.equals(frame.index)
