"""The IF workflow is written once (pipeline/core/if_workflow.py): the reference, the DSAgentBench IF
oracle and the exported SFT solution of the same task predict the same bytes, and the two rendered
scripts run without daregen, in csv, parquet, split-table sqlite and relational tasks."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from finalize.dsagent.dare_variants import dare_variants
from finalize.reference_solution import predict
from pipeline.build import BuildJob, build_one
from pipeline.core import if_workflow, names
from pipeline.core.csv_convention import CSV_READ_ARGS
from pipeline.core.jsonio import read_json
from pipeline.export.sft import if_solution
from pipeline.steps import ENTRY_JSON
from task_design.config import DesignConfig
from tests.factories import FACT, build_shop_db, build_small_tree
from tests.generated_scripts import run_without_daregen, script_parameters, stage_script

@pytest.fixture(scope="module")
def tasks(tmp_path_factory) -> list[tuple[Path, dict]]:
    """(task folder, question_list entry): a csv, a parquet and a split-table sqlite task, and a
    relational one (the shop database's orders joined to three dimension tables)."""
    root = tmp_path_factory.mktemp("if_workflow")
    tree = build_small_tree(root / "flat")
    entries = [(tree / e["file_path"], e) for e in read_json(tree / names.QUESTION_LIST)]
    dbs = root / "dbs"
    build_shop_db(dbs / "shop.db", sidecar={"target_hint": f"{FACT}.returned", "license": "CC0-1.0"})
    job = BuildJob.make(2, config=DesignConfig(file_types=("sqlite",)))
    outcome = build_one(f"sqlite/shop/{FACT}", "sqlite", str(dbs), job, root / "work", root / "tasks")[0]
    assert outcome.ok, f"{outcome.stage}: {outcome.reason}"
    entry = read_json(Path(outcome.work_dir) / ENTRY_JSON)
    entries.append((root / "tasks" / entry["file_path"], entry))
    return entries


def test_reference_oracle_and_sft_solution_predict_the_same_bytes(tasks, tmp_path) -> None:
    formats = set()
    folders, expected = [], []
    for task, entry in tasks:
        question = read_json(task / names.VERIFY_DIR / names.ALL_METADATA)["question"]
        formats.add("relational" if question.get("join_path") else question["save_file_type"])
        truth = (task / names.VERIFY_DIR / names.SIMULATED_PRED).read_text(encoding="utf-8")
        assert predict(task).to_csv(index=False, lineterminator="\n") == truth  # the reference, imported

        solution = if_solution(task, question)
        src = task / names.SOURCE_DIR
        folders.append(stage_script(tmp_path / task.name / "sft", solution.script,
                                    {f: src / f for f in solution.inputs}))
        desktop, _ = dare_variants(task, question, entry)
        oracle = next(t for t in desktop if t.kind == "if")
        files = {f: task.parent / path for f, path in oracle.inputs.items()}
        folders.append(stage_script(tmp_path / task.name / "oracle", oracle.oracle, files))
        expected += [truth, truth]
    assert formats == {"csv", "parquet", "sqlite", "relational"}

    run = run_without_daregen(folders)

    assert run.returncode == 0, run.stderr[-3000:]
    for folder, truth in zip(folders, expected):
        assert (folder / names.PREDICTION).read_text(encoding="utf-8") == truth, folder


def test_the_relational_oracle_joins_as_the_instruction_says(tasks) -> None:
    task, entry = tasks[-1]
    question = read_json(task / names.VERIFY_DIR / names.ALL_METADATA)["question"]
    oracle = next(t for t in dare_variants(task, question, entry)[0] if t.kind == "if").oracle
    assert script_parameters(oracle)["question"]["join_path"] == question["join_path"]


def test_the_blocks_import_nothing_of_daregen_and_read_csv_as_the_convention_says() -> None:
    for block in if_workflow.BLOCKS:
        source = if_workflow.self_contained_source(block)
        assert "from pipeline" not in source and "import pipeline" not in source
    tables = if_workflow.self_contained_source("tables")
    assert f"pd.read_csv(path, {CSV_READ_ARGS})" in tables
    with pytest.raises(ValueError):
        if_workflow.self_contained_source("everything")


def test_the_filter_keeps_missing_values_and_drops_every_kind_of_break() -> None:
    frame = pd.DataFrame({"n": pd.Series([1, None, 11, "oops", 5], dtype=object),
                          "c": pd.Series(["a", "a", "a", "a", "zz"], dtype=object)})
    kept = if_workflow.filter_by_expected_ranges(frame, {"n": [0, 10], "c": ["a"]},
                                                 {"n": "numerical", "c": "categorical"})
    assert kept["n"].tolist() == [1, None]


@pytest.mark.parametrize("random_state", ["0); __import__('os').system('touch MARKER'", 1.5, True, None])
def test_a_seed_that_is_not_an_integer_is_refused(random_state) -> None:
    with pytest.raises(ValueError, match="random_state must be an integer"):
        if_workflow.make_model("LogisticRegression", random_state)


@pytest.mark.parametrize("model_type", ["__class__", "os", "LogisticRegression; import os", ""])
def test_a_model_type_that_is_no_estimator_is_refused(model_type) -> None:
    with pytest.raises(ValueError, match="unknown model type"):
        if_workflow.model_class(model_type)


def test_a_script_docstring_is_fixed_text_and_parameters_are_one_literal() -> None:
    with pytest.raises(ValueError, match="docstring"):
        if_workflow.render_script('closes """ early', {}, "pass")
    params = {"name": 'a"""\n#\x1b[2J', "range": [0.5, 1e300], "levels": ["ü", 3, None, True]}
    script = if_workflow.render_script("A script.", params, "print(P)", ("tables",))
    assert script_parameters(script) == params
    # a float JSON has no literal for goes in as JSON text, still one string
    odd = {"range": [float("-inf"), 1.0]}
    assert script_parameters(if_workflow.render_script("A script.", odd, "print(P)")) == odd
    with pytest.raises(TypeError):
        if_workflow.render_script("A script.", {"model": object()}, "print(P)")
