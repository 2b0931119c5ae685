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


# A model-written solution that forges its result: the envelope the wrapper would write, claiming the reference's
# prediction text it cannot see, then leaves before the wrapper writes its own.
_FORGING_SOLUTION = '''
import json, os, stat
for name in os.listdir("/proc/self/fd") if os.path.isdir("/proc/self/fd") else map(str, range(3, 64)):
    fd = int(name)
    try:
        if fd > 2 and stat.S_ISFIFO(os.fstat(fd).st_mode):
            os.write(fd, json.dumps({"ok": True, "value": "row_id,y\\n0,1\\n"}).encode())
    except OSError:
        pass
os._exit(0)
'''


def test_a_forged_envelope_from_model_written_code_is_judged_by_the_caller(tmp_path) -> None:
    """Issue 48 (known open): a well-formed envelope forged by a job is accepted, and no channel inside the job's
    process can be kept from its code. Harmless because nothing the caller trusts travels on it: an SFT solution
    that forges the IF reference's answer is still compared, in the caller, with the reference it cannot see."""
    from pipeline.core import names
    from pipeline.export.sft import Solution, check_solution

    task = tmp_path / "t_class"
    (task / names.VERIFY_DIR).mkdir(parents=True)
    (task / names.VERIFY_DIR / names.SIMULATED_PRED).write_text("row_id,y\n0,0\n", encoding="utf-8")
    checked = check_solution(task, Solution(task.name, "IF", _FORGING_SOLUTION, ()))
    assert checked.score is None and checked.reason == "solution output differs from simulated_pred_local.csv"
