"""tasks.parquet carries what a curator's decision rests on: the target's evidence kind, whether the source
documents it or it is a fallback reading, the evidence sentence, the design digest an approval names (the one
pipeline.core.curation.design_digest gives) and the curation state; and `curate status` under a ledger that
now rejects a task's dataset lists that task as rejected, with the reason, not as unreviewed."""

from __future__ import annotations

import json
from pathlib import Path

from pipeline.cli import main
from pipeline.core import names
from pipeline.core.curation import DIGEST_LENGTH, design_digest
from pipeline.review.reports import question_entries
from pipeline.review.task_index import COLUMNS, index_table
from tests.factories import write_question_list, write_task_folder

DOCUMENTED = {"ref": "local/shop", "target_evidence_kind": "model_formula",
              "target_evidence": "the documentation's response: model response in lm(label ~ .) in Examples",
              "curation": {"state": "approved"}}
FALLBACK = {"ref": "local/cars", "target_evidence_kind": "outcome_name",
            "target_evidence": "outcome name among 3 outcome candidates (score 2.00: its conventional name)"}


def _tree(root: Path) -> Path:
    write_question_list(root, [write_task_folder(root, "shop_class", daregen=DOCUMENTED),
                               write_task_folder(root, "cars_class", daregen=FALLBACK)])
    return root


def test_the_index_holds_the_decisions_inputs(tmp_path: Path):
    tree = _tree(tmp_path / "tree")
    rows = {r["task_dir"]: r for r in index_table(tree).to_pylist()}
    assert {"evidence_kind", "evidence_strength", "target_evidence", "design_digest", "curation_state"} <= set(COLUMNS)
    shop, cars = rows["shop_class"], rows["cars_class"]
    assert (shop["evidence_kind"], shop["evidence_strength"]) == ("model_formula", "documented")
    assert (cars["evidence_kind"], cars["evidence_strength"]) == ("outcome_name", "fallback")
    assert shop["target_evidence"] == DOCUMENTED["target_evidence"] and shop["curation_state"] == "approved"
    for task in ("shop_class", "cars_class"):
        meta = json.loads((tree / task / names.VERIFY_DIR / names.ALL_METADATA).read_text(encoding="utf-8"))
        entry = question_entries(tree)[task]
        assert rows[task]["design_digest"] == design_digest(tree / task, meta, entry)
        assert len(rows[task]["design_digest"]) == DIGEST_LENGTH


def test_curate_status_lists_a_task_whose_dataset_is_now_rejected_as_rejected(tmp_path: Path, capsys):
    tree = _tree(tmp_path / "tree")
    ledger = tmp_path / "curation.toml"
    ledger.write_text('[[reject]]\nref = "local/cars"\nreason = "a toy table"\n', encoding="utf-8")
    assert main(["curate", "status", str(tree), "--curation", str(ledger)]) == 0
    lines = capsys.readouterr().out.splitlines()
    cars = next(line for line in lines if "cars_class" in line)
    assert cars.startswith("rejected ") and cars.endswith("(a toy table)") and "unreviewed" not in cars
    assert lines[-2] == "0 changed since approval, 1 unreviewed, 0 pinned, 0 approved, 1 rejected (2 tasks)"
    # the next command, on the first task that awaits a decision, as `curate approve` takes it (its task folder)
    assert lines[-1].startswith("approve a task as listed: ") and \
        lines[-1].endswith(f"curate approve {lines[0].split()[1]} --tree {tree} --curation {ledger}"), lines


def test_the_build_stamps_each_digest_once_and_the_index_takes_it_without_hashing_again(tmp_path: Path):
    # Issue 49 (left weak): tasks.parquet hashed every file of every task, after stamp_curation had just done so
    # (and the run report's designs and review counts did it twice more). The stamp changes no digested byte,
    # so the digests it returns are those of the stamped tree, and the index records them as given.
    from pipeline.core.curation import Ledger
    from pipeline.review.curation import stamp_curation, tree_reviews

    tree = _tree(tmp_path / "tree")
    entries = json.loads((tree / names.QUESTION_LIST).read_text(encoding="utf-8"))
    digests = stamp_curation(tree, entries, Ledger())
    assert set(digests) == {"shop_class", "cars_class"}
    assert index_table(tree, digests).to_pylist() == index_table(tree).to_pylist()  # the same as hashing again
    assert [r.digest for r in tree_reviews(tree, digests=digests)] == [r.digest for r in tree_reviews(tree)]
    given = {task: "given-not-hashed" for task in digests}
    assert {r["design_digest"] for r in index_table(tree, given).to_pylist()} == {"given-not-hashed"}


def test_curate_status_puts_every_digest_in_one_column(tmp_path: Path, capsys):
    # Issue 49: task folders of different lengths pushed each digest to a different column.
    from pipeline.review.curation import tree_reviews

    tree = tmp_path / "tree"
    write_question_list(tree, [write_task_folder(tree, "a_class", daregen=FALLBACK),
                               write_task_folder(tree, "a_much_longer_task_folder_class", daregen=DOCUMENTED)])
    assert main(["curate", "status", str(tree)]) == 0
    out = capsys.readouterr().out.splitlines()
    columns = {next(line for line in out if r.task_dir in line).index(r.digest) for r in tree_reviews(tree)}
    assert len(columns) == 1, out
