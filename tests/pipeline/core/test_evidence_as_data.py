"""Invariant: evidence and rejections are data. The designer's and the build's control flow decide by an
Evidence's kind, a Rejection's code or a flag, never by reading back the words a user reads: no module named
here calls `.startswith(` on a reason, an evidence, a why or a detail, and a record carries its evidence typed
through record.json."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pydantic import ValidationError

from pipeline.core.records import Evidence
from tests.factories import build_record

ROOT = Path(__file__).resolve().parents[3]
# The stages' and the build's modules whose decisions once read prose (issue 40): every module of the designer,
# the R help page reader that words the evidence, the steps, the build, its cache, the run report, DSAgentBench's
# judge and the kernel's column references (how an instruction names a column, and why).
_MODULES = [*sorted((ROOT / "task_design").rglob("*.py")),
            *(ROOT / p for p in ("sourcing/rdoc.py", "pipeline/steps.py", "pipeline/build.py", "pipeline/build_cache.py",
                                 "pipeline/run_report.py", "finalize/dsagent/build.py", "pipeline/core/column_refs.py"))]
# The receiver of a `.startswith(` call: a name or an attribute chain, with the arguments of a call after it (one
# level of nested parentheses: `str(r.get("reason", ""))`).
_STARTSWITH = re.compile(r"(?P<receiver>[\w.]*(?:\((?:[^()]|\([^()]*\))*\))?)\.startswith\(")
_PROSE = re.compile(r"reason|evidence|why|detail", re.I)


def prose_prefix_tests(source: str) -> list[str]:
    """The `.startswith(` receivers in `source` that hold a reason, an evidence, a why or a detail."""
    return [m.group("receiver") for m in _STARTSWITH.finditer(source) if _PROSE.search(m.group("receiver"))]


@pytest.mark.parametrize("line", [
    'if evidence.startswith("series modelled"):',
    'if not match and len(status) == 1 and not why.startswith("a two-level"):',
    'frontier = [c for c, why in out.items() if why.startswith("includes the target")]',
    'return stage == "finalize" and reason.startswith(CACHED_FINALIZE_REASON)',
    'if any(str(r.get("reason", "")).startswith(_MACHINE_REASONS) for r in dropped):',
    'if rejection.detail.startswith("computed from"):',
    'if evidence.text.startswith(PLOT_FORMULA_EVIDENCE):',
])
def test_the_check_catches_each_form_the_prose_tests_had(line: str) -> None:
    assert prose_prefix_tests(line)


def test_a_prefix_test_of_anything_else_passes() -> None:
    assert not prose_prefix_tests('if ref.startswith("openml") or name.startswith(("x", "y")):')
    assert not prose_prefix_tests('rel.startswith(categories.GENERATED_DIR + "/")')


def test_no_decision_reads_a_reason_or_an_evidence_back() -> None:
    found = [f"{path.relative_to(ROOT)}: {receiver}.startswith("
             for path in _MODULES if "__pycache__" not in path.parts
             for receiver in prose_prefix_tests(path.read_text())]
    assert found == []


def test_a_records_evidence_survives_record_json_typed() -> None:
    evidence = Evidence(kind="fitted_model", text="model response in lm(cbind(a, b) ~ …) in Examples, 'score' computed "
                                                  "from 'a'", joint=("a", "b"), computed="score")
    record = build_record(documented_outcomes={"a": evidence})
    back = type(record).model_validate_json(record.model_dump_json())
    assert back.documented_outcomes["a"] == evidence and back == record


def test_evidence_without_words_or_of_an_unknown_kind_is_refused() -> None:
    with pytest.raises(ValidationError):
        Evidence(kind="fitted_model", text=" ")
    with pytest.raises(ValidationError):
        Evidence(kind="hunch", text="the column looks like an outcome")
    with pytest.raises(ValidationError):  # a bare string is no evidence: its kind would have to be read from it
        build_record(documented_outcomes={"y": "model response in lm(y ~ x) in Examples"})
