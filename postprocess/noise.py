"""IF noise injection, as DARE-bench does it, with a registry of noise kinds (NoiseSpec.kind).

`out_of_range_rows`: synthetic rows, about `NoiseSpec.fraction` of the clean training rows, each a
copy of a clean row with one or two feature values pushed outside `expected_ranges`: numbers
below the minimum or above the maximum, random strings for categoricals. Filtering by the ranges
while keeping missing values (the kernel's one filter, pipeline.core.if_workflow, which the
reference, the oracles, the SFT solutions and the checks all run) therefore removes exactly the
noise rows and recovers the clean rows. A generated category is accepted only when that filter's
rule (canonical text, pipeline.core.if_workflow.canonical) calls it out of range, so injection and
filter cannot disagree on `3` and `3.0`.
"""

from __future__ import annotations

import string
from collections.abc import Callable

import numpy as np
import pandas as pd

from pipeline.core.if_workflow import allowed_levels, canonical
from pipeline.core.names import CSV_NA_STRINGS
from pipeline.core.records import TaskSpec

_ALPHABET = np.array(list(string.ascii_lowercase + string.digits))


def _out_of_range_number(lo: float, hi: float, is_int: bool, rng: np.random.Generator) -> float | int:
    span = float(hi - lo) if hi > lo else max(abs(float(hi)), 1.0)
    delta = span * float(rng.uniform(0.1, 1.0))
    if is_int:
        delta = max(1, int(round(delta)))
        return int(lo - delta) if rng.random() < 0.5 else int(hi + delta)
    value = round(float(lo) - delta, 3) if rng.random() < 0.5 else round(float(hi) + delta, 3)
    if lo <= value <= hi:  # rounding pulled it back in (out_of_range's bounds test); step clearly outside
        value = float(hi) + span + 1.0
    return value


def _out_of_range_string(levels: set[str], rng: np.random.Generator) -> str:
    """A random word the range filter drops: its canonical text is no allowed level (out_of_range's
    rule for a category), and it is no spelling a CSV reader might take for missing or a number."""
    while True:
        value = "".join(rng.choice(_ALPHABET, size=int(rng.integers(5, 9))).tolist())
        if value not in CSV_NA_STRINGS and not value.isdigit() and canonical(value) not in levels:
            return value


def inject_out_of_range_rows(clean: pd.DataFrame, spec: TaskSpec, rng: np.random.Generator,
                             alterable: list[str] | None = None) -> pd.DataFrame:
    """Return clean rows (in their order) with noise rows interleaved at random positions. `clean` is not modified.

    `alterable` limits which ranged columns noise may alter (relational tasks keep it off
    shared dimension rows); by default every ranged column may be altered."""
    ranged = list(spec.expected_ranges) if alterable is None else list(alterable)
    n_noise = max(1, int(round(spec.noise.fraction * len(clean))))
    base = clean.iloc[rng.integers(0, len(clean), size=n_noise)].reset_index(drop=True)
    columns = {c: base[c].tolist() for c in base.columns}
    for i in range(n_noise):
        n_bad = int(rng.integers(1, min(2, len(ranged)) + 1))
        for col in [ranged[j] for j in rng.choice(len(ranged), size=n_bad, replace=False)]:
            allowed = spec.expected_ranges[col]
            if spec.column_type_inference[col] == "numerical":
                is_int = pd.api.types.is_integer_dtype(clean[col])
                columns[col][i] = _out_of_range_number(allowed[0], allowed[1], is_int, rng)
            else:
                columns[col][i] = _out_of_range_string(allowed_levels(allowed), rng)
    noise = pd.DataFrame(columns, columns=clean.columns)
    for col in clean.columns:  # keep the clean dtypes (ints stay ints)
        if noise[col].dtype != clean[col].dtype and pd.api.types.is_numeric_dtype(clean[col]):
            noise[col] = noise[col].astype(clean[col].dtype)
    # Noise rows go to random positions, but the clean rows keep their order: filtering train_v1
    # must give back train_v1_no_err row for row, not just as a multiset, or an agent following
    # the IF steps would fit order-sensitive models (MLP's minibatches, tree tie-breaks, LinearSVC's
    # coordinate order) on a permutation of the reference's rows and miss its exact predictions.
    combined = pd.concat([clean, noise], ignore_index=True)
    is_noise = np.zeros(len(combined), dtype=bool)
    is_noise[rng.choice(len(combined), size=n_noise, replace=False)] = True
    order = np.empty(len(combined), dtype=np.int64)
    order[~is_noise] = np.arange(len(clean))
    order[is_noise] = len(clean) + rng.permutation(n_noise)
    return combined.iloc[order].reset_index(drop=True)


# Noise kinds by NoiseSpec.kind: how train_v1 gets its noise rows from the clean rows.
NOISE_KINDS: dict[str, Callable[..., pd.DataFrame]] = {"out_of_range_rows": inject_out_of_range_rows}


def inject_noise(clean: pd.DataFrame, spec: TaskSpec, rng: np.random.Generator,
                 alterable: list[str] | None = None) -> pd.DataFrame:
    """train_v1's rows: the clean rows with the noise `spec.noise` names (see NOISE_KINDS)."""
    return NOISE_KINDS[spec.noise.kind](clean, spec, rng, alterable)
