"""Per-dataset randomness.

Every random choice for a dataset comes from a generator seeded by
(global seed, dataset ref, stage), never from a shared stream, so adding or
removing a dataset never changes another dataset's task.
"""

from __future__ import annotations

import hashlib

import numpy as np


def derive_seed(seed: int, ref: str, stage: str) -> int:
    """A 63-bit seed that depends only on its three inputs (not on PYTHONHASHSEED)."""
    digest = hashlib.sha256(f"{seed}\x1f{ref}\x1f{stage}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def rng_for(seed: int, ref: str, stage: str) -> np.random.Generator:
    return np.random.default_rng(derive_seed(seed, ref, stage))
