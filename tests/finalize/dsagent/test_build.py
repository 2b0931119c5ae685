"""Every published DSAgentBench config validates against the published schema, names its task by a
stable uuid5, and two builds with the same seed write byte-identical dsagentbench/ folders."""

from __future__ import annotations

import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import jsonschema

from finalize.dsagent import config as dsconfig
from finalize.dsagent.build import OUT_DIR, SCHEMA_FILE, SCHEMA_PATH, TASKS_DIR, schema_problems, verdict, write_dsagent
from pipeline.core.jsonio import read_json
from tests.factories import DARE_EXAMPLES, NO_DARE_EXAMPLES, DSAGENT_SEED as SEED, needs_sandbox

pytestmark = needs_sandbox


def _configs(tree: Path) -> dict[str, dict]:
    return {p.parent.name: read_json(p) for p in sorted((tree / OUT_DIR / TASKS_DIR).glob("*/config.json"))}


def test_every_config_validates_against_the_published_schema(desktop_tree) -> None:
    tree, report = desktop_tree
    schema = read_json(SCHEMA_PATH)
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert (tree / OUT_DIR / SCHEMA_FILE).read_bytes() == SCHEMA_PATH.read_bytes()
    configs = _configs(tree)
    assert len(configs) == report["published"] > 0
    for name, cfg in configs.items():
        jsonschema.validate(cfg, schema, cls=jsonschema.Draft202012Validator)
        folder = tree / OUT_DIR / TASKS_DIR / name
        assert (folder / "evaluator.py").is_file() and (folder / "expected.json").is_file()
        # The files placed in the VM exist in the tree, where the base URL serves them from.
        placed = next(step for step in cfg["config"] if step["type"] == "download")["parameters"]["files"]
        for f in placed:
            rel = f["url"].split("127.0.0.1:8000/", 1)[1]
            assert (tree / rel).is_file(), rel
            assert f["path"].startswith(f"/home/user/dsagent/{name}/")
        assert cfg["evaluator"]["result"]["path"].startswith(f"/home/user/dsagent/{name}/")
        assert "<TASK_FOLDER>" not in cfg["instruction"]


def test_a_config_missing_its_evaluator_fails_the_schema(desktop_tree) -> None:
    tree, _ = desktop_tree
    cfg = next(iter(_configs(tree).values()))
    broken = {k: v for k, v in cfg.items() if k != "evaluator"}
    assert any("evaluator" in p for p in schema_problems(broken, read_json(SCHEMA_PATH)))
    unlabelled = {**cfg, "tags": ["eda"]}
    assert schema_problems(unlabelled, read_json(SCHEMA_PATH))


def test_every_dare_task_has_desktop_variants_and_the_report_counts_match(desktop_tree) -> None:
    tree, report = desktop_tree
    configs = _configs(tree)
    dare = sorted(p.parent.parent.name for p in tree.glob("*/verify/all_metadata.json"))
    with_if = sorted(c["daregen"]["source_task"] for c in configs.values() if c["daregen"]["variant"] == "if")
    assert with_if == dare
    assert report["dare_tasks"] == report["dare_tasks_with_config"] == len(dare)
    assert report["category_tasks"] == sum(c["category"] != "modelling" for c in configs.values())
    validation = read_json(tree / OUT_DIR / "validation.json")
    for name, record in validation.items():
        assert record["published"] == (name in configs), name
        if record["published"]:
            assert record["oracle"] >= 0.95
            assert all(s == "n/a" or s < 0.95 for s in record["perturbations"].values())
        else:
            assert record["reason"] and any(r["task"] == record["key"] for r in report["rejections"])


def test_ids_are_uuid5_of_the_task_key(desktop_tree) -> None:
    tree, _ = desktop_tree
    for cfg in _configs(tree).values():
        assert cfg["id"] == str(uuid.uuid5(dsconfig.NAMESPACE, cfg["daregen"]["key"]))
        assert uuid.UUID(cfg["id"]).version == 5


def test_same_seed_gives_byte_identical_output_and_the_same_ids(desktop_tree, small_tree, tmp_path) -> None:
    """Also whatever the schedule: the second tree validates one DARE task at a time, the first one per core."""
    first, _ = desktop_tree
    second = Path(shutil.copytree(small_tree, tmp_path / "tasks"))
    write_dsagent(second, SEED, jobs=1)
    files = lambda root: {p.relative_to(root / OUT_DIR).as_posix(): p.read_bytes()  # noqa: E731
                          for p in sorted((root / OUT_DIR).rglob("*")) if p.is_file()}
    a, b = files(first), files(second)
    assert sorted(a) == sorted(b)
    assert [k for k in a if a[k] != b[k]] == []
    assert {c["id"] for c in _configs(first).values()} == {c["id"] for c in _configs(second).values()}


def test_the_shipped_evaluator_runs_standalone(desktop_tree, tmp_path) -> None:
    """evaluator.py needs no daregen import: run it from a folder with nothing else beside it."""
    tree, _ = desktop_tree
    name = next(n for n in _configs(tree) if n.endswith("__if"))
    folder = tree / OUT_DIR / TASKS_DIR / name
    lone = tmp_path / "lone"
    shutil.copytree(folder, lone, ignore=shutil.ignore_patterns("oracle.py", "files", "config.json"))
    results = tmp_path / "results"
    results.mkdir()
    (results / "prediction.csv").write_text((folder / "reference.csv").read_text())
    env = {"PATH": "/usr/bin:/bin", "PYTHONNOUSERSITE": "1"}
    run = lambda: subprocess.run([sys.executable, "evaluator.py", str(results)], cwd=lone, env=env,  # noqa: E731
                                 capture_output=True, text=True, timeout=120)
    ok = run()
    assert ok.returncode == 0, ok.stderr
    assert float(ok.stdout) == 1.0
    (results / "prediction.csv").unlink()
    missing = run()
    assert float(missing.stdout) == 0.0


def test_verdict_names_why_a_task_is_dropped() -> None:
    assert verdict({"oracle": 1.0, "perturbations": {"missing_file": 0.0, "wrong_value": 0.5}, "error": ""}) == ""
    assert "oracle" in verdict({"oracle": 0.5, "perturbations": {"missing_file": 0.0}, "error": ""})
    assert "wrong_value" in verdict({"oracle": 1.0, "perturbations": {"missing_file": 0.0, "wrong_value": 0.97},
                                     "error": ""})
    assert verdict({"oracle": 1.0, "perturbations": {"shuffled_ids": "n/a"}, "error": ""})
    assert verdict({"oracle": None, "perturbations": {}, "error": "oracle failed: KeyError"}) == \
        "oracle failed: KeyError"


def test_published_dare_bench_tasks_time_series_included(tmp_path) -> None:
    """Foreign trees work too: DARE-bench's own tabular task gets IF and MM variants; a time-series task gets
    category tasks from train.csv / val_v1.csv, and as DARE-bench records no forecasting baselines (the bar of
    an XF/CF desktop task, see test_ts_variants.py) its XF/CF variants are listed as dropped, with the reason."""
    import pytest

    examples = DARE_EXAMPLES
    ts, reg = "punyaslokaprusty_covid-19-tracking-in-usa_ts", "jacopoferretti_lung-capacity-of-kids_reg"
    if not (examples / ts).is_dir():
        pytest.skip(NO_DARE_EXAMPLES)
    tree = tmp_path / "tree"
    for name in (ts, reg):
        shutil.copytree(examples / name, tree / name)
    shutil.copyfile(examples / "question_list.json", tree / "question_list.json")
    report = write_dsagent(tree, SEED)
    configs = _configs(tree)
    assert {c["daregen"]["variant"] for c in configs.values() if c["daregen"]["source_task"] == reg} >= {"if", "mm"}
    ts_configs = [c for c in configs.values() if c["daregen"]["source_task"] == ts]
    assert ts_configs and all(c["category"] != "modelling" for c in ts_configs)
    reasons = {r["task"]: r["reason"] for r in report["rejections"]}
    assert "no v1 baseline" in reasons[f"{ts}/xf"] and "no v2 baseline" in reasons[f"{ts}/cf"]
    assert report["dare_tasks_with_config"] == 2


def test_an_order_sensitive_if_reference_is_reached_by_following_the_instruction(small_tree, tmp_path) -> None:
    """An MLP's mini-batches depend on row order. Filtering train_v1 as instructed gives train_v1_no_err row for
    row (noise rows are interleaved, clean rows keep their order), so the oracle, which follows the instruction
    literally, reproduces DARE's own simulated_pred_local.csv and the IF variant is judged against it."""
    from finalize.reference_solution import read_table
    from finalize.runner import run_reference
    from pipeline.core.jsonio import write_json

    name = next(p.name for p in sorted(small_tree.iterdir()) if (p / "source" / "train_v1.csv").is_file())
    tree = tmp_path / "tasks"
    shutil.copytree(small_tree / name, tree / name)
    entries = [e for e in read_json(small_tree / "question_list.json") if e["file_path"] == name]
    write_json(tree / "question_list.json", entries)
    rows = lambda stem: len(read_table(tree / name / "source" / f"{stem}.csv"))  # noqa: E731
    assert rows("train_v1") > rows("train_v1_no_err")  # there is noise to filter out
    meta_path = tree / name / "verify" / "all_metadata.json"
    meta = read_json(meta_path)
    q = meta["question"]
    q["model_type"] = "MLPClassifier" if q["problem_type"] == "classification" else "MLPRegressor"
    write_json(meta_path, meta)
    run_reference(tree / name, tree / name / "verify" / "simulated_pred_local.csv")
    write_dsagent(tree, SEED)
    record = read_json(tree / OUT_DIR / "validation.json")[f"{name}__if"]
    assert record["published"], record["reason"]
    expected = read_json(tree / OUT_DIR / TASKS_DIR / f"{name}__if" / "expected.json")
    assert expected["reference_origin"] == "simulated_pred_local"
    assert (tree / OUT_DIR / TASKS_DIR / f"{name}__if" / "reference.csv").read_bytes() == \
        (tree / name / "verify" / "simulated_pred_local.csv").read_bytes()


def test_a_cached_dare_task_is_not_validated_again_and_a_changed_one_is(desktop_tree, small_tree, tmp_path) -> None:
    from finalize.dsagent.build import task_cache_key
    from finalize.dsagent.records import DesktopSettings
    from pipeline.core.jsonio import write_json

    reference, _ = desktop_tree
    cache = tmp_path / "cache"
    files = lambda root: {p.relative_to(root / OUT_DIR).as_posix(): p.read_bytes()  # noqa: E731
                          for p in sorted((root / OUT_DIR).rglob("*")) if p.is_file()}
    first = Path(shutil.copytree(small_tree, tmp_path / "first"))
    write_dsagent(first, SEED, cache_dir=cache)
    assert files(first) == files(reference)  # keeping the cache changes no byte
    dare = sorted(p.parent.parent.name for p in first.glob("*/verify/all_metadata.json"))
    assert len(list(cache.iterdir())) == len(dare)
    # Mark every cached verdict: a record that comes back marked was read from the cache, not validated.
    for part in cache.glob("*/part.json"):
        data = read_json(part)
        data["validation"] = {k: {**v, "from_cache": True} for k, v in data["validation"].items()}
        write_json(part, data)
    second = Path(shutil.copytree(small_tree, tmp_path / "second"))
    changed = second / dare[0]
    before = task_cache_key(changed, None, SEED, DesktopSettings())
    stamped = read_json(changed / "verify" / "all_metadata.json")  # an approval stamped by a later build
    stamped["daregen"]["curation"] = {"state": "approved", "design_digest": "0" * 32, "reviewer": "ana"}
    write_json(changed / "verify" / "all_metadata.json", stamped)
    assert task_cache_key(changed, None, SEED, DesktopSettings()) == before  # a decision is not a rebuild
    (changed / "notes.txt").write_text("a curator's note\n", encoding="utf-8")  # the folder's bytes change
    assert task_cache_key(changed, None, SEED, DesktopSettings()) != before
    write_dsagent(second, SEED, cache_dir=cache)
    validation = read_json(second / OUT_DIR / "validation.json")
    redone = {n for n, r in validation.items() if r.get("from_cache") is not True}
    assert redone and redone == {n for n in validation if n.startswith(dare[0])}
    a, b = files(first), files(second)
    assert sorted(a) == sorted(b)
    assert [k for k in a if a[k] != b[k]] == ["validation.json"]
