"""The flow's build (the session `built_tree`) carries dsagentbench/: a desktop config for every DARE task
it built (IF/MM variants for every tabular one), category tasks (at least 1.5 per DARE task) over all six
categories and all three difficulties."""

from __future__ import annotations

from pathlib import Path

import jsonschema

from finalize.dsagent.build import OUT_DIR, SCHEMA_PATH, TASKS_DIR
from finalize.dsagent.records import CATEGORIES
from pipeline.core import names
from pipeline.core.jsonio import read_json


def test_built_tree_has_validated_desktop_configs(built_tree: Path) -> None:
    out = built_tree / OUT_DIR
    configs = [read_json(p) for p in sorted((out / TASKS_DIR).glob("*/config.json"))]
    schema = read_json(SCHEMA_PATH)
    for cfg in configs:
        jsonschema.validate(cfg, schema, cls=jsonschema.Draft202012Validator)
    tabular = sorted(e["file_path"] for e in read_json(built_tree / names.QUESTION_LIST)
                     if e["task"] in ("classification", "regression"))
    modelled = {c["daregen"]["source_task"] for c in configs if c["category"] == "modelling"}
    assert [t for t in tabular if t not in modelled] == []
    every = sorted(e["file_path"] for e in read_json(built_tree / names.QUESTION_LIST))
    assert [t for t in every if t not in {c["daregen"]["source_task"] for c in configs}] == []
    category_tasks = [c for c in configs if c["category"] != "modelling"]
    # Two categories are drawn per DARE task; a series has no SQLite tables to acquire from, so fewer
    # of its draws succeed. Issue 8's "at least 50" holds at scale (255 in the 300-candidate build);
    # this 70-candidate tree has about 26 tasks, a quarter of them series since candidates are tiered (series first).
    # Per DARE task, not a flat count: under the evidence policy the 70-candidate tree holds about 17 DARE
    # tasks (two categories each, less the generators with nothing to ask), where it held 27 before.
    assert len(category_tasks) >= 1.5 * len(every) and len(category_tasks) >= 20
    assert {c["category"] for c in configs} == set(CATEGORIES)
    assert {c["difficulty"] for c in category_tasks} == {"easy", "medium", "hard"}
    assert {"single-stage", "multi-stage"} <= {t for c in configs for t in c["tags"]}
    report = read_json(built_tree / names.RUN_REPORT_JSON)["dsagentbench"]
    assert report["published"] == len(configs)
    validation = read_json(out / "validation.json")
    assert sum(r["published"] for r in validation.values()) == len(configs)
