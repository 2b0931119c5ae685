"""A job's result comes back bounded and validated: the supervisor keeps at most `result_bytes` of it, on
disk rather than in memory, and the caller accepts exactly one envelope of the two the job's wrapper
writes. What a job writes on its result pipe is what it could have returned, never more.

Found by issue 42's red team: a job forged its result on the inherited pipe, and a 200 MB result grew
the caller to 1.25 GB outside the job's limits.
"""

from __future__ import annotations

import json

import pytest

from finalize import sandbox
from finalize.sandbox import Limits, run_in_sandbox
from tests.finalize import hostile_jobs as jobs

pytestmark = pytest.mark.skipif(not sandbox.isolation_possible(), reason="no namespaces here (not root, no userns)")


def test_an_envelope_written_before_the_wrappers_is_refused() -> None:
    """The job writes a result, then returns: two documents on the pipe, so neither is believed."""
    res = run_in_sandbox(jobs.forge_result, ('{"ok": true, "value": "forged"}', False))
    assert res.status == "crash" and res.value is None
    assert res.reason.startswith("crashed: malformed result (not one JSON document: Extra data"), res.reason


@pytest.mark.parametrize("payload", [
    {"ok": True, "value": 1, "status": "ok"},
    {"ok": True},
    {"ok": "yes", "value": 1},
    {"ok": False, "type": "x; rm -rf /", "message": "m"},
    {"ok": False, "type": "MemoryError", "message": 7},
    [1, 2],
])
def test_an_envelope_of_another_shape_is_refused(payload) -> None:
    res = run_in_sandbox(jobs.forge_result, (json.dumps(payload), True))
    assert (res.status, res.reason) == ("crash", "crashed: malformed result (not the envelope the job's wrapper "
                                                 "writes)"), payload


def test_a_well_formed_envelope_is_only_what_the_job_could_return() -> None:
    """Harmless: the same value a `return` gives, judged by the caller as any returned value is."""
    res = run_in_sandbox(jobs.forge_result, ('{"ok": true, "value": "forged"}', True))
    assert res.ok and res.value == "forged"


def test_a_result_past_the_cap_is_refused_without_being_kept() -> None:
    res = run_in_sandbox(jobs.big_result, (200,), limits=Limits(result_bytes=16 << 20, wall_s=120))
    assert res.status == "crash"
    assert res.reason == f"crashed: no result (result too large: over {16 << 20} bytes (result_bytes))"


def test_the_default_cap_admits_a_result_of_some_megabytes() -> None:
    assert Limits().result_bytes == 64 << 20
    res = run_in_sandbox(jobs.big_result, (8,))
    assert res.ok and len(res.value) == 8 << 20
