"""An export of a real built tree is a loadable, family-safe training dataset: one parquet row per variant,
rewards of 1.0 for every ground truth and below 1.0 for a perturbed one (equal to `daregen score`), IF SFT
solutions that reproduce the reference run standalone, and no training task from a held-out family."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zlib
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
import yaml

from pipeline.review.score import score_tree
from pipeline.cli import main
from pipeline.core import names
from pipeline.core.jsonio import read_json, write_json
from pipeline.export.export import EXPORT_REPORT, export_tree, split_files
from pipeline.reward import compute_score, score_prediction
from postprocess.formats import read_frame
from tests.conftest import TREE_SEED
from tests.pipeline.export.builders import perturbations

# The first 11 builtin candidates at the suite's seed build two regression families (COUNT/azprocedure,
# Ecdat/Ketchup) past the designer's size floors, so the split has an eval family; 8 built one per type.
LIMIT = 11


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    from flows import build_tasks

    out = tmp_path_factory.mktemp("export_tree") / "tasks"
    # The suite's seed: with the session's build cache these tasks are copies when built_tree ran first.
    build_tasks(out=str(out), limit=LIMIT, seed=TREE_SEED, sources="builtin")
    return out


@pytest.fixture(scope="module")
def exported(tree: Path, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("export") / "dataset"
    assert main(["export", str(tree), "--out", str(out), "--eval-fraction", "0.3", "--seed", "1"]) == 0
    return out


def _rows(exported: Path) -> list[dict]:
    return [r for path in split_files(exported).values() for r in pq.read_table(path).to_pylist()]


def test_parquet_splits_card_and_files(tree: Path, exported: Path) -> None:
    rows = _rows(exported)
    entries = read_json(tree / names.QUESTION_LIST)
    variants = sum(bool(e.get(k)) for e in entries for k in ("question_v1", "question_v2"))
    assert len(rows) == variants and len({r["task_id"] for r in rows}) == variants
    splits_of_family: dict[str, set[str]] = {}
    for r in rows:
        splits_of_family.setdefault(r["family"], set()).add(r["split"])
        assert r["messages"][-1]["content"] == r["prompt"] and r["variant"] in ("IF", "MM", "XF", "CF")
        for f in r["files"]:
            assert (exported / f["path"]).is_file()
        assert (exported / r["reward_spec"]["ground_truth_path"]).is_file()
    assert all(len(s) == 1 for s in splits_of_family.values()), splits_of_family
    assert {r["split"] for r in rows} == {"train", "eval"}
    header = (exported / "README.md").read_text().split("---\n")[1]
    configs = {c["config_name"]: c["data_files"] for c in yaml.safe_load(header)["configs"]}
    assert {d["split"] for d in configs["default"]} == {"train", "eval"}
    assert all((exported / d["path"]).is_file() for c in configs.values() for d in c)
    assert "## Licences" in (exported / "README.md").read_text()
    try:
        import datasets
    except ImportError:
        return
    loaded = datasets.load_dataset(str(exported))
    assert sum(len(loaded[s]) for s in loaded) == variants


def test_rewards_are_one_for_ground_truth_and_below_for_perturbations(exported: Path) -> None:
    for r in _rows(exported):
        spec = r["reward_spec"]
        truth_path = exported / spec["ground_truth_path"]
        truth = pd.read_csv(truth_path)
        verl = dict(data_source=r["data_source"], ground_truth=r["reward_model"]["ground_truth"],
                    extra_info=r["extra_info"], export_dir=str(exported))
        assert compute_score(solution_str=truth_path.read_text(), **verl) == 1.0, r["task_id"]
        target = spec["targets"][0]
        for what, frame in perturbations(truth, target).items():
            if what == "shuffled row_id" and truth[target].nunique() == 1:
                continue  # constant predictions: shuffling ids cannot change them
            assert compute_score(solution_str=frame.to_csv(index=False), **verl) < 1.0, (r["task_id"], what)


def test_score_prediction_equals_daregen_score(exported: Path, tmp_path: Path) -> None:
    tasks = exported / "tasks"
    preds, expected = tmp_path / "preds", {}
    for r in _rows(exported):
        truth = pd.read_csv(exported / r["reward_spec"]["ground_truth_path"])
        kinds = perturbations(truth, r["reward_spec"]["targets"][0])
        frame = list(kinds.values())[len(expected) % len(kinds)]  # a different perturbation per row
        path = preds / Path(r["task_dir"]).name / r["dare_variant"] / names.PREDICTION
        path.parent.mkdir(parents=True, exist_ok=True)
        frame.to_csv(path, index=False)
        expected[(Path(r["task_dir"]).name, r["dare_variant"])] = score_prediction(exported / r["task_dir"],
                                                                                    r["variant"], frame)
    for s in score_tree(preds, tasks).scores:
        assert expected[(s.task, s.variant)] == s


def test_if_sft_solutions_reproduce_the_reference_standalone(exported: Path, tmp_path: Path) -> None:
    records = [json.loads(line) for rel in read_json(exported / EXPORT_REPORT)["sft_files"].values()
               for line in (exported / rel).read_text().splitlines()]
    if_records = [r for r in records if r["variant"] == "IF"]
    dropped = read_json(exported / EXPORT_REPORT)["sft_dropped"]
    rows = {r["task_id"]: r for r in _rows(exported)}
    assert len(if_records) + sum(d["task_id"].endswith("/IF") for d in dropped) == sum(
        r["variant"] == "IF" for r in rows.values())
    assert if_records, "no IF solution survived"
    assert all(r["score"] > 0 for r in records if r["variant"] == "MM")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    for record in if_records:
        assert [m["role"] for m in record["messages"]] == ["system", "user", "assistant"]
        code = re.search(r"```python\n(.*)```", record["messages"][2]["content"], re.S).group(1)
        work = tmp_path / record["task_id"].replace("/", "__")
        work.mkdir()
        (work / "solution.py").write_text(code)
        for f in rows[record["task_id"]]["files"]:
            shutil.copyfile(exported / f["path"], work / Path(f["path"]).name)
        proc = subprocess.run([sys.executable, "solution.py"], cwd=work, env=env, capture_output=True, text=True,
                              timeout=300)
        assert proc.returncode == 0, proc.stderr[-2000:]
        reference = exported / rows[record["task_id"]]["task_dir"] / names.VERIFY_DIR / names.SIMULATED_PRED
        assert (work / names.PREDICTION).read_bytes() == reference.read_bytes(), record["task_id"]


def test_export_is_byte_identical_when_repeated(tree: Path, exported: Path, tmp_path: Path) -> None:
    again = tmp_path / "again"
    assert main(["export", str(tree), "--out", str(again), "--eval-fraction", "0.3", "--seed", "1"]) == 0
    written = sorted(p.relative_to(exported) for p in exported.rglob("*") if p.is_file())
    assert written == sorted(p.relative_to(again) for p in again.rglob("*") if p.is_file())
    for rel in written:
        assert (exported / rel).read_bytes() == (again / rel).read_bytes(), rel


def _renamed_copy(task: Path, holdout: Path) -> None:
    """A DARE-bench-like task from another source: same rows, every column renamed, columns reversed, csv."""
    q = read_json(task / names.VERIFY_DIR / names.ALL_METADATA)["question"]
    ftype, target = q["save_file_type"], q["target"][0]
    dest = holdout / f"someone_copy-of-{task.name}"
    (dest / names.SOURCE_DIR).mkdir(parents=True)
    (dest / names.VERIFY_DIR).mkdir(parents=True)
    rename = lambda c: c if c == names.ROW_ID else f"c_{zlib.crc32(c.encode())}"  # noqa: E731
    for stem in (names.TRAIN_V2, names.VAL_V2):
        frame = read_frame(task / names.SOURCE_DIR / names.data_file(stem, ftype), ftype)
        frame[frame.columns[::-1]].rename(columns=rename).to_csv(dest / names.SOURCE_DIR / f"{stem}.csv", index=False)
    truth = pd.read_csv(task / names.VERIFY_DIR / names.GROUND_TRUTH)
    truth.rename(columns=rename).to_csv(dest / names.VERIFY_DIR / names.GROUND_TRUTH, index=False)
    write_json(dest / names.VERIFY_DIR / names.ALL_METADATA, {
        "question": {"target": [rename(target)], "problem_type": q["problem_type"], "save_file_type": "csv"},
        "data_info": {"ref": f"someone/copy-of-{task.name}"}})


def test_holdout_gives_zero_overlap_where_a_plain_export_trains_on_it(tree: Path, tmp_path: Path,
                                                                      capsys) -> None:
    tabular = [t for t in sorted(tree.iterdir()) if t.name.endswith(("_class", "_reg"))][:2]
    holdout = tmp_path / "holdout"
    for task in tabular:
        _renamed_copy(task, holdout)
    plain = export_tree(tree, None, eval_fraction=0.0, seed=0, check_only=True).plan
    assert {plain.split[t.name] for t in tabular} == {"train"}
    safe = export_tree(tree, None, [holdout], eval_fraction=0.0, seed=0, check_only=True).plan
    assert {safe.split[t.name] for t in tabular} == {"eval"}
    assert sorted(o["task_dir"] for o in safe.holdout_overlaps) == sorted(t.name for t in tabular)
    assert main(["export", str(tree), "--check", "--holdout", str(holdout)]) == 0
    printed = capsys.readouterr().out
    assert all(f"overlap  {t.name}" in printed for t in tabular), printed


def test_export_refuses_a_folder_that_is_not_an_export(tree: Path, tmp_path: Path, capsys) -> None:
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me")
    assert main(["export", str(tree), "--out", str(tmp_path / "mine")]) == 2
    assert "refusing" in capsys.readouterr().err
    assert (tmp_path / "mine" / "notes.txt").read_text() == "keep me"
