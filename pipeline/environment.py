"""The environment fingerprint recorded next to the ground truth.

IF ground truth is the output of scikit-learn code, so it is only reproducible
with the same library versions; the fingerprint says which ones made it. It
holds versions only, nothing that changes between two runs on one machine.
"""

from __future__ import annotations

import hashlib
import json
import platform
import sys
from importlib import metadata

FINGERPRINT_PACKAGES = ("daregen", "numpy", "pandas", "pyarrow", "scikit-learn", "scipy", "polars", "statsmodels")


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def fingerprint() -> dict:
    return {
        "python": platform.python_version(),
        "implementation": sys.implementation.name,
        "machine": platform.machine(),
        "system": platform.system(),
        "packages": {p: _version(p) for p in FINGERPRINT_PACKAGES},
    }


def fingerprint_digest(fp: dict | None = None) -> str:
    fp = fingerprint() if fp is None else fp
    return hashlib.sha256(json.dumps(fp, sort_keys=True).encode()).hexdigest()[:16]


def code_version() -> str:
    return _version("daregen")
