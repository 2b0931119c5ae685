"""pin_blas_threads: a value the building process computes with BLAS (the DSAgentBench EDA answers'
Pearson correlations) is the one the sandbox's one-thread jobs compute, whatever the core count and
however threads' `threadpool_limits` blocks interleave."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from pipeline.core.environment import ONE_THREAD_ENV

# 50,000 rows: OpenBLAS splits a dot product this long over its threads, and for this seed one thread
# and two give correlations that differ in the last bit (as pandas' Series.corr did on the corpus).
_CORR = """
import numpy as np, pandas as pd
a, b = np.random.default_rng(0).normal(size=(2, 50_000))
def corr():
    return pd.Series(a).corr(pd.Series(b)).hex()
"""

_BUILDER = _CORR + """
import json, os, subprocess, sys
from threadpoolctl import threadpool_info, threadpool_limits
from pipeline.core.environment import pin_blas_threads

threads = max(i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas")
default = corr()
pin_blas_threads()
# Two threads' `with threadpool_limits(limits=1)` blocks, the first to enter leaving first: it restores
# the count it found, which without the pin is the machine's default, while the other is still inside.
first, second = threadpool_limits(limits=1), threadpool_limits(limits=1)
first.restore_original_limits()
after_race = corr()
second.restore_original_limits()
child = subprocess.run([sys.executable, "-c", "import os; print(os.environ.get('OPENBLAS_NUM_THREADS'))"],
                       capture_output=True, text=True, check=True).stdout.strip()
print(json.dumps({"threads": threads, "default": default, "after_race": after_race, "child": child}))
"""


def _run(code: str, env: dict[str, str]) -> str:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env,
                          cwd=os.getcwd()).stdout.strip().splitlines()[-1]


def test_pinned_blas_gives_the_sandboxs_one_thread_value_after_racing_limit_blocks() -> None:
    base = {k: v for k, v in os.environ.items() if k not in ONE_THREAD_ENV}
    one_thread = _run(_CORR + "print(corr())", base | ONE_THREAD_ENV)
    got = json.loads(_run(_BUILDER, base))
    if got["threads"] < 2:
        pytest.skip("one BLAS thread by default here: nothing to pin")
    assert got["after_race"] == one_thread
    assert got["child"] == "1"  # processes it starts (step workers) compute as it does
    # The check has teeth: on this machine the default thread count gives another value.
    assert got["default"] != one_thread
