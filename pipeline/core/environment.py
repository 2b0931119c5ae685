"""The environment fingerprint recorded next to the ground truth.

IF ground truth is the output of scikit-learn code, so it is only reproducible
with the same library versions; the fingerprint says which ones made it. It
holds versions only, nothing that changes between two runs on one machine.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
import sys
from importlib import metadata
from pathlib import Path

# daregen's own top-level packages whose code decides a task's bytes (pyproject's [tool.setuptools]
# packages minus sub-packages): the build cache hashes them and the reference runner copies them
# into the sandbox. flows.py only orchestrates, so it is in neither.
CODE_PACKAGES = ("pipeline", "sourcing", "task_design", "postprocess", "finalize")

FINGERPRINT_PACKAGES = ("daregen", "numpy", "pandas", "pyarrow", "scikit-learn", "scipy", "polars", "statsmodels")


# One BLAS/OpenMP thread: how a dot product splits its sums over threads changes its last digits
# (pandas' Series.corr on 10,000 rows differs in the 16th digit between one thread and two), so a
# value computed with the machine's default would depend on its core count. The sandbox's jobs get
# these variables; pin_blas_threads gives them to the building process itself.
ONE_THREAD_ENV = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}

_pinned_pid: int | None = None


def pin_blas_threads() -> None:
    """One BLAS/OpenMP thread for the rest of this process and every process it starts: the variables
    reach the libraries loaded later (scipy's own OpenBLAS) and the children, threadpoolctl the ones
    already loaded. For good, not a `with` block: a block restores the count it found when it ends, so
    with two threads inside at once the first to leave gives the other its old thread count back."""
    global _pinned_pid
    if _pinned_pid == os.getpid():
        return
    os.environ.update(ONE_THREAD_ENV)
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1)
    _pinned_pid = os.getpid()


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
    if fp is None:
        return _installed_digest()
    return hashlib.sha256(json.dumps(fp, sort_keys=True).encode()).hexdigest()[:16]


@functools.lru_cache(maxsize=1)
def _installed_digest() -> str:
    """The installed libraries' digest, once per process: the build keys every dataset with it, and each
    metadata.version call scans sys.path (8 of them per dataset were 5 s of a 60-dataset no-op)."""
    return fingerprint_digest(fingerprint())


def code_version() -> str:
    return _version("daregen")


def runtime_fingerprint() -> dict:
    """`fingerprint()` plus what changes floating-point results on one machine or another: the
    platform and the BLAS/OpenMP libraries scikit-learn calls (threadpoolctl). Written next to
    regenerated IF ground truth (`daregen verify --regenerate`); not part of the build digest."""
    import numpy  # noqa: F401  threadpoolctl lists only libraries already loaded
    import scipy.linalg  # noqa: F401
    from threadpoolctl import threadpool_info

    blas = [{k: info.get(k) for k in ("user_api", "internal_api", "version", "architecture", "threading_layer")}
            | {"library": os.path.basename(info.get("filepath", ""))} for info in threadpool_info()]
    return fingerprint() | {"platform": platform.platform(), "blas": sorted(blas, key=lambda b: json.dumps(b))}


_REPO = Path(__file__).resolve().parents[2]  # the checkout (or site-packages) holding the packages


def _files_digest(parts: tuple[str, ...]) -> str:
    """The package version plus a hash of the source files under `parts` (folders or files of the
    repository): the version alone would serve stale results after an edit in a development checkout."""
    h = hashlib.sha256(code_version().encode())
    for part in parts:
        root = _REPO / part
        for path in sorted(root.rglob("*")) if root.is_dir() else [root]:
            if path.suffix in (".py", ".md", ".json") and "__pycache__" not in path.parts:
                h.update(path.relative_to(_REPO).as_posix().encode())
                h.update(path.read_bytes())
    return h.hexdigest()[:16]


@functools.lru_cache(maxsize=1)
def code_digest() -> str:
    """The code that decides a task's bytes (flows.py only orchestrates), and the DSAgentBench schema
    the root files validate against."""
    return _files_digest((*CODE_PACKAGES, "schemas"))


@functools.lru_cache(maxsize=1)
def source_code_digest() -> str:
    """The code the source step runs: the adapters, the kernel and the step itself. Narrower than
    code_digest, so an edit to a designer does not make a rerun re-read every built-in table."""
    return _files_digest(("sourcing", "pipeline/core", "pipeline/steps.py"))
