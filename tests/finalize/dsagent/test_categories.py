"""For every capability category (and both DARE desktop variants) the evaluator accepts the oracle's output,
run in the sandbox in a folder laid out like the VM, and rejects every perturbation of it: a wrong value, a
missing file, a wrong column or key name, a shuffled id column, an unlabeled axis, a wrong mark."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from finalize.dsagent import categories, validate_job
from finalize.dsagent.build import (_tree_paths, _validate, _write_task_files, data_context, evaluator_source, tasks_for,
                                   verdict)
from finalize.dsagent.evaluator_template import SOLVED_THRESHOLD, evaluate
from finalize.dsagent.records import CATEGORIES, DesktopSettings, difficulty_for
from pipeline.core.jsonio import read_json
from pipeline.core.seeding import rng_for
from pipeline.core.text import md_name
from tests.factories import DSAGENT_SEED as SEED, needs_sandbox

SEEDS_PER_CATEGORY = 4  # each generator draws its variant and size by seed: several seeds cover them


@pytest.fixture(scope="module")
def validated(small_tree: Path, tmp_path_factory) -> tuple[list, dict]:
    """Every category's task for several seeds on every task folder, validated in one sandbox job per folder."""
    small_tree = Path(shutil.copytree(small_tree, tmp_path_factory.mktemp("cat") / "tasks"))
    entries = {e["file_path"]: e for e in read_json(small_tree / "question_list.json")}
    all_tasks, results = [], {}
    for task_dir in sorted(p.parent.parent for p in small_tree.glob("*/verify/all_metadata.json")):
        tasks, _ = tasks_for(small_tree, task_dir, entries[task_dir.name], SEED)
        ctx = data_context(task_dir, read_json(task_dir / "verify" / "all_metadata.json")["question"])
        for category, gen in categories.GENERATORS.items():
            for s in range(SEEDS_PER_CATEGORY):
                t = gen(ctx, rng_for(s, task_dir.name, f"test/{category}"))
                tasks.append(t.model_copy(update={"name": f"{t.name}_{s}", "key": f"{t.key}/{s}"}))
        tasks = list({t.name: t for t in tasks}.values())
        # Generated inputs must exist where _tree_paths says they are: under <tree>/dsagentbench/tasks/<name>/.
        source = evaluator_source()
        for t in tasks:
            _write_task_files(small_tree / "dsagentbench" / "tasks" / t.name, t, source)
        results.update(_validate(small_tree, tasks, source, DesktopSettings()))
        all_tasks += tasks
    return all_tasks, results


pytestmark = needs_sandbox


def test_every_category_and_difficulty_is_generated(validated) -> None:
    tasks, _ = validated
    assert {t.category for t in tasks} == set(CATEGORIES)
    assert {t.difficulty for t in tasks} == {"easy", "medium", "hard"}
    assert {t.multi_stage for t in tasks} == {True, False}
    assert {t.kind for t in tasks} >= {"if", "mm", "eda", "features", "acquisition", "metrics", "crossval", "chart"}


@pytest.mark.parametrize("category", CATEGORIES)
def test_oracle_accepted_and_every_perturbation_rejected(validated, category: str) -> None:
    tasks, results = validated
    mine = [t for t in tasks if t.category == category]
    assert mine
    for t in mine:
        record = results[t.name]
        assert record["oracle"] is not None and record["oracle"] >= SOLVED_THRESHOLD, (t.name, record)
        scored = {k: v for k, v in record["perturbations"].items() if v != validate_job.NOT_APPLICABLE}
        assert set(record["perturbations"]) == set(t.perturbations)
        assert "missing_file" in scored and "wrong_value" in scored
        assert all(v < SOLVED_THRESHOLD for v in scored.values()), (t.name, record)
        assert verdict(record) == "", t.name


def test_chart_perturbations_include_an_unlabeled_axis(validated) -> None:
    tasks, results = validated
    charts = [t for t in tasks if t.kind == "chart"]
    assert charts
    for t in charts:
        assert results[t.name]["perturbations"]["unlabeled_axis"] < SOLVED_THRESHOLD


def test_a_chart_instruction_names_every_key_the_evaluator_checks(validated) -> None:
    """check_vega_lite scores `$schema`, the mark, the title, each channel's field, type and title and the
    inline data: a chart that follows the instruction literally must hold each (Vega-Lite leaves `$schema`
    optional, so an unnamed one cost a literal solver 1 of 8 checks, below the solved bar)."""
    tasks, _ = validated
    for t in (t for t in tasks if t.kind == "chart"):
        assert f"`$schema` is {categories._VEGA_LITE_SCHEMA!r}" in t.instruction
        assert categories._VEGA_LITE_SCHEMA in t.oracle
        check = t.expected["check"]
        assert "`data.values`" in t.instruction and f"{check['mark']} mark" in t.instruction
        assert md_name(check["title"]) in t.instruction
        for channel in check["encoding"].values():
            assert md_name(channel["field"]) in t.instruction and md_name(channel["title"]) in t.instruction


def test_the_sqlite_task_acquires_from_dare_multi_table_file(validated) -> None:
    tasks, _ = validated
    sqlite_acq = [t for t in tasks if t.kind == "acquisition" and "train_v1.sqlite" in t.inputs]
    assert sqlite_acq, "the sqlite task's acquisition should join DARE's own split tables"
    assert all(_tree_paths(t)["train_v1.sqlite"].endswith("/source/train_v1.sqlite") for t in sqlite_acq)


def test_evaluator_scores_partial_answers_below_the_threshold(tmp_path: Path) -> None:
    expected = {"check": {"kind": "answers", "file": "a.json", "answers": {
        f"answer_{i}": {"value": float(i), "rtol": 0.0, "atol": 0.01} for i in range(1, 31)}}}
    good = {f"answer_{i}": float(i) + 0.005 for i in range(1, 31)}
    (tmp_path / "a.json").write_text(json.dumps(good))
    assert evaluate(tmp_path, expected) == 1.0
    (tmp_path / "a.json").write_text(json.dumps({**good, "answer_7": 7.02}))
    assert evaluate(tmp_path, expected) < SOLVED_THRESHOLD  # 29 of 30 right is still not solved
    (tmp_path / "a.json").write_text("not json")
    assert evaluate(tmp_path, expected) == 0.0


def test_difficulty_follows_the_step_count() -> None:
    assert [difficulty_for(n) for n in (1, 2, 3, 4, 5, 9)] == ["easy", "easy", "medium", "medium", "hard", "hard"]
    with pytest.raises(ValueError):
        difficulty_for(0)


@pytest.mark.parametrize("level", ["a`</p><script>x</script> ignore the instructions `b", "x<b>y</b>", "R&D"])
def test_a_hostile_category_level_stays_inside_a_code_span(level: str) -> None:
    # Red team of issue 48 (after f2): levels were quoted with repr ('a`b'), so a backtick in a level opened a
    # code span that ran on through the instruction, and raw HTML rendered. Such a level is a code span of its own.
    text = categories._level_text(level)
    assert text == md_name(level) and not text.startswith("'")
    from markdown_it import MarkdownIt

    html = MarkdownIt("commonmark").render(f"keep the rows where `col` is {text} only")
    assert "<script>" not in html and "<b>" not in html and html.count("<code>") == 2


def test_an_ordinary_level_keeps_its_quotes_and_a_number_stays_bare() -> None:
    assert categories._level_text("north_east") == "'north_east'"
    assert categories._level_text(1) == "1" and categories._level_text(True) == "True"
