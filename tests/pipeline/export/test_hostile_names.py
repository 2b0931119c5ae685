"""Untrusted names never become code: a column, a table or a task folder named to break out of a comment,
a docstring or a string still reaches the SFT solutions and the DSAgentBench oracles only inside their
one literal bound to P (so each script parses to the same code as one made from plain names), the scripts
still solve the task, and running them plants no marker file; a seed that is not an integer is refused."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from finalize.dsagent.dare_variants import dare_variants
from finalize.reference_solution import predict
from pipeline.core import names
from pipeline.core.jsonio import read_json, write_json
from pipeline.core.records import DatasetRejected
from pipeline.export.sft import if_solution, mm_solution
from pipeline.steps import ENTRY_JSON
from postprocess.formats import write_sqlite_tables
from tests.factories import build_local_task, task_folder
from tests.generated_scripts import parameters_node, run_without_daregen, stage_script

PAYLOAD = "__import__('os').system('touch MARKER')"
HOSTILE_COLUMN = f"dose\n{PAYLOAD}\n#"
HOSTILE_CATEGORY = 'colour"""\'\\'
HOSTILE_TARGET = f"label\n{PAYLOAD}"
HOSTILE_TABLE = f"dim\n{PAYLOAD}\n#"
HOSTILE_FOLDER = f'x"""; {PAYLOAD}; """_class'


def _frames(n: int = 90, seed: int = 0, dose: str = HOSTILE_COLUMN, colour: str = HOSTILE_CATEGORY,
            target: str = HOSTILE_TARGET) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(clean training rows, validation rows with row_id and the target): a learnable toy table."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({dose: rng.integers(0, 50, n), "k": rng.integers(1, 4, n)})
    frame[colour] = frame["k"].map({1: "red", 2: "blue", 3: "green"})
    frame[target] = np.where(frame[dose] + 10 * frame["k"] > 45, "yes", "no")
    cut = int(n * 0.7)
    val = frame.iloc[cut:].reset_index(drop=True).rename_axis(names.ROW_ID).reset_index()
    return frame.iloc[:cut].reset_index(drop=True), val


def write_task(root: Path, folder: str, relational: bool, plain: bool = False, random_state=0) -> Path:
    """A hand-written IF task (csv, or sqlite with its colour in a dimension table) named by hostile
    strings (plain ones when `plain`), with the reference's predictions as simulated_pred_local.csv."""
    dose, colour, target, table = (("dose", "colour", "label", "dim") if plain
                                   else (HOSTILE_COLUMN, HOSTILE_CATEGORY, HOSTILE_TARGET, HOSTILE_TABLE))
    clean, val = _frames(dose=dose, colour=colour, target=target)
    noisy = pd.concat([clean.iloc[:3], clean.iloc[[0]].assign(**{dose: 500}), clean.iloc[3:]], ignore_index=True)
    task = root / folder
    src, verify = task / names.SOURCE_DIR, task / names.VERIFY_DIR
    src.mkdir(parents=True)
    verify.mkdir()
    ftype = "sqlite" if relational else "csv"
    question = {"target": [target], "problem_type": "classification", "numerical_features": [dose],
                "categorical_features": [colour], "selected_features": [dose, colour], "imputer_type": "mean",
                "model_type": "LogisticRegression", "random_state": random_state, "save_file_type": ftype,
                "expected_ranges": {dose: [0, 49], colour: ["blue", "green", "red"]},
                "column_type_inference": {dose: "numerical", colour: "categorical"}}
    features = [dose, colour]
    if relational:
        question["join_path"] = [{"left": "orders", "right": table, "left_on": "k", "right_on": "k", "how": "left",
                                  "columns": [colour]}]
        dims = clean[["k", colour]].drop_duplicates("k").sort_values("k")
        for stem, rows in ((names.TRAIN_V1, noisy), (names.TRAIN_V1_NO_ERR, clean)):
            write_sqlite_tables(src / f"{stem}.sqlite", {"orders": rows[[dose, "k", target]], table: dims})
        write_sqlite_tables(src / "val_v1.sqlite", {names.VAL_SET_TABLE: val[[names.ROW_ID, *features]]})
        write_sqlite_tables(src / "train_v2.sqlite", {names.TRAIN_SET_TABLE: clean})
        write_sqlite_tables(src / "val_v2.sqlite", {names.VAL_SET_TABLE: val.drop(columns=[target])})
    else:
        noisy[[*features, target]].to_csv(src / "train_v1.csv", index=False, lineterminator="\n")
        clean[[*features, target]].to_csv(src / "train_v1_no_err.csv", index=False, lineterminator="\n")
        val[[names.ROW_ID, *features]].to_csv(src / "val_v1.csv", index=False, lineterminator="\n")
        clean.to_csv(src / "train_v2.csv", index=False, lineterminator="\n")
        val.drop(columns=[target]).to_csv(src / "val_v2.csv", index=False, lineterminator="\n")
    val[[names.ROW_ID, target]].to_csv(verify / names.GROUND_TRUTH, index=False, lineterminator="\n")
    write_json(verify / names.ALL_METADATA, {"question": question})
    (src / names.METADATA_TXT).write_text(f"Columns:\n{dose!r}: a dose\n", encoding="utf-8")
    if random_state == 0:
        predict(task).to_csv(verify / names.SIMULATED_PRED, index=False, lineterminator="\n")
    return task


def _question(task: Path) -> dict:
    return json.loads((task / names.VERIFY_DIR / names.ALL_METADATA).read_text(encoding="utf-8"))["question"]


def _scripts(task: Path) -> dict[str, tuple[str, dict[str, Path]]]:
    """{kind: (script, files it reads)}: the SFT IF and MM solutions and the IF oracle."""
    q, src = _question(task), task / names.SOURCE_DIR
    out = {}
    for kind, make in (("sft_if", if_solution), ("sft_mm", mm_solution)):
        solution = make(task, q)
        out[kind] = (solution.script, {f: src / f for f in solution.inputs})
    oracle = next(t for t in dare_variants(task, q, {"question_v1": "IF", "question_v2": "MM"})[0] if t.kind == "if")
    out["oracle_if"] = (oracle.oracle, {f: task.parent / p for f, p in oracle.inputs.items()})
    return out


def _code_without_data(script: str) -> str:
    """The script's syntax tree with the data bound to P (a pure literal) blanked."""
    tree = ast.parse(script)
    ast.literal_eval(parameters_node(script))  # data only: no name, call or operator in it
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and [ast.unparse(t) for t in node.targets] == ["P"]:
            node.value = ast.Constant("<parameters>")
    return ast.dump(tree)


def _calls(script: str) -> set[str]:
    return {ast.unparse(node.func) for node in ast.walk(ast.parse(script)) if isinstance(node, ast.Call)}


@pytest.mark.parametrize("relational", [False, True], ids=["csv", "relational sqlite"])
def test_hostile_names_reach_the_scripts_only_as_data_and_plant_nothing(tmp_path: Path, relational: bool) -> None:
    hostile = write_task(tmp_path / "hostile", HOSTILE_FOLDER, relational)
    plain = write_task(tmp_path / "plain", "plain_class", relational, plain=True)
    hostile_scripts, plain_scripts = _scripts(hostile), _scripts(plain)

    folders = []
    for kind, (script, files) in hostile_scripts.items():
        assert _code_without_data(script) == _code_without_data(plain_scripts[kind][0]), kind
        assert "os.system" not in _calls(script) and "__import__" not in _calls(script)
        literal = parameters_node(script)
        assert all(literal.lineno <= i <= literal.end_lineno
                   for i, line in enumerate(script.splitlines(), start=1) if "MARKER" in line)
        folders.append(stage_script(tmp_path / "run" / kind, script, files))

    run = run_without_daregen(folders)

    assert run.returncode == 0, run.stderr[-3000:]
    assert not list(tmp_path.rglob("MARKER")) and not Path("MARKER").exists()
    truth = (hostile / names.VERIFY_DIR / names.SIMULATED_PRED).read_text(encoding="utf-8")
    for folder in folders:
        if folder.name != "sft_mm":  # the baseline is judged by its score, not by the reference's bytes
            assert (folder / names.PREDICTION).read_text(encoding="utf-8") == truth, folder.name


def test_a_seed_that_is_code_is_refused_everywhere(tmp_path: Path) -> None:
    payload = f"0); {PAYLOAD}; ("
    task = write_task(tmp_path, "seeded_class", relational=False, random_state=payload)
    q = _question(task)
    with pytest.raises(ValueError, match="random_state must be an integer, not a str"):
        if_solution(task, q)
    with pytest.raises(DatasetRejected, match="random_state must be an integer"):
        dare_variants(task, q, {"question_v1": "IF", "question_v2": "MM"})
    with pytest.raises(ValueError, match="random_state must be an integer"):
        predict(task)
    assert not list(tmp_path.rglob("MARKER"))


def test_a_hostile_time_column_of_a_short_panel_is_only_text_and_data(tmp_path: Path) -> None:
    # A short panel's time column reaches question_v2 ("Every row of `val_v2` comes after every row of
    # `train_v2` in `<column>`") and all_metadata.json's split_time_column. A text date column is found by its
    # values whatever its name, so the name can be anything a source ships (its line breaks become spaces).
    when = f"when` {PAYLOAD} #\"'"
    rng = np.random.default_rng(3)
    n = 280
    capital, output = rng.gamma(4, 2, n), rng.gamma(5, 3, n)
    table = pd.DataFrame({"firm": np.tile([f"f{i:02d}" for i in range(40)], 7),
                          when: np.repeat([f"{y}-07-01" for y in range(1976, 1983)], 40),
                          "capital": capital, "output": output, "emp": 2 * capital + output + rng.normal(0, 1, n)})
    outcome = build_local_task(tmp_path, "panel", table, "csv", seed=0, target_hint="emp",
                               column_descriptions={"firm": "firm index", "emp": "employment",
                                                    "capital": "capital stock", "output": "output"})
    task = task_folder(tmp_path, outcome)
    meta = json.loads((task / names.VERIFY_DIR / names.ALL_METADATA).read_text(encoding="utf-8"))
    assert meta["daregen"]["split_time_column"] == when
    assert read_json(Path(outcome.work_dir) / ENTRY_JSON)["question_v2"].endswith(f"in `{when}`: the predictions are for the later time points.")
    train = pd.read_csv(task / names.SOURCE_DIR / "train_v2.csv")
    val = pd.read_csv(task / names.SOURCE_DIR / "val_v2.csv")
    assert train[when].max() < val[when].min()  # validated on the last time points

    script = mm_solution(task, meta["question"]).script
    literal = parameters_node(script)
    assert "os.system" not in _calls(script) and "__import__" not in _calls(script)
    assert all(literal.lineno <= i <= literal.end_lineno
               for i, line in enumerate(script.splitlines(), start=1) if "MARKER" in line)
    assert not list(tmp_path.rglob("MARKER")) and not Path("MARKER").exists()


def test_a_hostile_title_that_names_a_short_panels_hostile_outcome_is_only_text(tmp_path: Path) -> None:
    # task_design.study_subject.panel_subject quotes the title and the column it names in the target's evidence
    # (all_metadata.json, the run report): both come from the source, and both stay text.
    emp = f"emp` {PAYLOAD} #"
    title = f"Employment of British Firms {PAYLOAD}"
    rng = np.random.default_rng(3)
    n = 280
    capital, output = rng.gamma(4, 2, n), rng.gamma(5, 3, n)
    table = pd.DataFrame({"firm": np.tile([f"f{i:02d}" for i in range(40)], 7),
                          "year": np.repeat(np.arange(1976, 1983), 40), "capital": capital, "output": output,
                          emp: 2 * capital + output + rng.normal(0, 1, n)})
    outcome = build_local_task(tmp_path, "panel", table, "csv", seed=0, title=title,
                               column_descriptions={"firm": "firm index", emp: "employment",
                                                    "capital": "capital stock", "output": "output"})
    task = task_folder(tmp_path, outcome)
    meta = json.loads((task / names.VERIFY_DIR / names.ALL_METADATA).read_text(encoding="utf-8"))
    assert meta["question"]["target"] == [emp] and meta["daregen"]["target_evidence_kind"] == "study_subject"
    assert f"the title {title!r} is about 'employment', which {emp!r} measures" in meta["daregen"]["target_evidence"]
    script = mm_solution(task, meta["question"]).script
    literal = parameters_node(script)
    assert "os.system" not in _calls(script) and "__import__" not in _calls(script)
    assert all(literal.lineno <= i <= literal.end_lineno
               for i, line in enumerate(script.splitlines(), start=1) if "MARKER" in line)
    assert not list(tmp_path.rglob("MARKER")) and not Path("MARKER").exists()
