"""A downloaded tree cannot make `daregen verify` write or read outside it, hang, or stop: links,
FIFOs, compression bombs and malformed all_metadata.json each fail their own task with a one-line
reason, nothing outside the tree changes, and the honest tasks beside them still pass."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pandas as pd
import pytest

from finalize import sandbox
from pipeline.review.verify import check_determinism, verify_task
from pipeline.cli import main
from pipeline.core import names
from pipeline.core.safe_io import InputLimits
from tests.factories import NO_DARE_EXAMPLES, DARE_EXAMPLES as EXAMPLES

REG = "jacopoferretti_lung-capacity-of-kids_reg"  # parquet files
pytestmark = [
    pytest.mark.skipif(not sandbox.isolation_possible(), reason="no namespaces here (not root, no userns)"),
    pytest.mark.skipif(not (EXAMPLES / REG).exists(), reason=NO_DARE_EXAMPLES),
]


def _copy(tree: Path, name: str) -> Path:
    return Path(shutil.copytree(EXAMPLES / REG, tree / name))


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A file outside the tree standing for ~/.bashrc."""
    path = tmp_path / "bashrc"
    path.write_text("# my shell start-up\n")
    return path


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "tree").mkdir()
    (tmp_path / "tree" / names.QUESTION_LIST).write_text("[]\n")  # verify refuses a tree that lists nothing
    return tmp_path / "tree"


def _only_problem(verdict) -> str:
    assert verdict.status == "fail" and len(verdict.problems) == 1, verdict
    return verdict.problems[0].message


def test_regenerate_never_writes_through_a_linked_prediction(tree: Path, outside: Path, capsys) -> None:
    task = _copy(tree, "t")
    sim = task / names.VERIFY_DIR / names.SIMULATED_PRED
    sim.unlink()
    sim.symlink_to(outside)
    assert main(["verify", str(tree), "--regenerate", "--no-determinism", "--jobs", "1"]) == 1
    out = capsys.readouterr().out
    assert "FAIL        t" in out and "error: t: t/verify/simulated_pred_local.csv is a symbolic link, which is refused" in out
    assert outside.read_text() == "# my shell start-up\n" and sim.is_symlink()


def test_regenerate_never_writes_through_a_linked_verify_folder(tree: Path, tmp_path: Path) -> None:
    task = _copy(tree, "t")
    elsewhere = Path(shutil.move(task / names.VERIFY_DIR, tmp_path / "elsewhere"))
    (task / names.VERIFY_DIR).symlink_to(elsewhere)
    before = sorted(p.name for p in elsewhere.iterdir())
    verdict = verify_task(task, regenerate=True)
    assert _only_problem(verdict) == "t/verify is a symbolic link, which is refused"
    assert sorted(p.name for p in elsewhere.iterdir()) == before  # no environment.json landed there


@pytest.mark.parametrize("name,target", [("train_v1_no_err.parquet", "/etc/passwd"),
                                         ("val_v1.parquet", "/proc/self/environ")])
def test_a_linked_input_is_never_copied_into_the_sandbox(tree: Path, name: str, target: str) -> None:
    task = _copy(tree, "t")
    (task / names.SOURCE_DIR / name).unlink()
    (task / names.SOURCE_DIR / name).symlink_to(target)
    assert _only_problem(verify_task(task)) == f"t/source/{name} is a symbolic link, which is refused"
    assert check_determinism([task]) == {}  # never handed to a fresh-interpreter job either


def test_a_fifo_fails_its_task_without_hanging(tree: Path) -> None:
    task = _copy(tree, "t")
    os.mkfifo(task / names.SOURCE_DIR / "fifo.csv")
    assert _only_problem(verify_task(task)) == "t/source/fifo.csv is not a regular file"


def test_a_parquet_bomb_is_refused_from_its_metadata(tree: Path) -> None:
    """A small file that declares far more decoded bytes than the limit (a 1 MB file decoding to
    gigabytes, scaled down): refused before anything decodes it."""
    task = _copy(tree, "t")
    bomb = pd.DataFrame({"row_id": [1] * 200_000, "x": ["same text, compressed away"] * 200_000})
    path = task / names.SOURCE_DIR / "train_v1.parquet"
    bomb.to_parquet(path)
    assert path.stat().st_size < 1_000_000
    message = _only_problem(verify_task(task, limits=InputLimits(max_decoded_bytes=1_000_000)))
    assert message.startswith("t/source/train_v1.parquet declares ") and \
        message.endswith("over the 1000000-byte limit (max_decoded_bytes): a compression bomb?")
    rows = _only_problem(verify_task(task, limits=InputLimits(max_rows=100_000)))
    assert rows == "t/source/train_v1.parquet has 200000 rows, over the limit of 100000 (max_rows)"


def _metadata(task: Path, edit) -> None:
    path = task / names.VERIFY_DIR / names.ALL_METADATA
    meta = json.loads(path.read_text())
    path.write_text(edit(meta) if callable(edit) else edit)


HOSTILE_METADATA = {
    "deep": ("[" * 200_000 + "]" * 200_000,
             "unreadable all_metadata.json: t/verify/all_metadata.json nests deeper than 64 levels (max_json_depth)"),
    "question_list": (lambda m: json.dumps({**m, "question": ["what?"]}),
                      # the schema picks the question's model by problem_type, so its two branches fail too
                      "all_metadata.json violates the schema at /question: ['what?'] is not of type 'object' "
                      "(and 2 more)"),
    "ranges_text": (lambda m: json.dumps({**m, "question": {**m["question"], "expected_ranges": {"Age": "3..19"}}}),
                    "all_metadata.json violates the schema at /question/expected_ranges/Age: '3..19' is not of "
                    "type 'array'"),
    "file_type": (lambda m: json.dumps({**m, "question": {**m["question"], "save_file_type": "../../etc/passwd"}}),
                  "all_metadata.json violates the schema at /question/save_file_type: '../../etc/passwd' is not "
                  "one of ['csv', 'sqlite', 'parquet']"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE_METADATA))
def test_malformed_metadata_fails_that_task_on_one_line(tree: Path, case: str) -> None:
    task = _copy(tree, "t")
    edit, expected = HOSTILE_METADATA[case]
    _metadata(task, edit)
    assert _only_problem(verify_task(task)) == expected


def test_hostile_tasks_do_not_stop_the_honest_one(tree: Path, outside: Path, capsys) -> None:
    _copy(tree, "honest")
    for case, (edit, _) in HOSTILE_METADATA.items():
        _metadata(_copy(tree, case), edit)
    linked = _copy(tree, "linked")
    (linked / names.SOURCE_DIR / "val_v1.parquet").unlink()
    (linked / names.SOURCE_DIR / "val_v1.parquet").symlink_to(outside)
    # With the determinism check: the honest task goes through two fresh sandboxed interpreters too.
    assert main(["verify", str(tree), "--jobs", "2"]) == 1
    captured = capsys.readouterr()
    assert "PASS        honest" in captured.out and "verified 6 tasks" in captured.out
    assert captured.out.count("FAIL ") == 5 and "Traceback" not in captured.out + captured.err


def test_an_unreadable_tree_is_one_line_and_exit_2(tmp_path: Path, capsys) -> None:
    fifo = tmp_path / "tree"
    os.mkfifo(fifo)
    assert main(["verify", str(fifo)]) == 2
    assert capsys.readouterr().err == f"daregen: error: TREE {fifo}: not a folder\n"
