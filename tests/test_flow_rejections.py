"""A build never crashes on a bad dataset: each is skipped with a one-line reason and the rest is built."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline.core import names
from tests.factories import good_table


def test_bad_datasets_are_listed_and_good_ones_built(tmp_path):
    from flows import build_tasks

    src = tmp_path / "data"
    src.mkdir()
    good_table().to_csv(src / "good.csv", index=False)
    good_table().iloc[:1].to_csv(src / "one_row.csv", index=False)
    # 200 rows: above the MM size floor, so the rejection names the defect itself
    pd.DataFrame({"a": [1] * 200, "b": ["k"] * 200}).to_csv(src / "constant.csv", index=False)
    pd.DataFrame({"id": range(200)}).to_csv(src / "only_ids.csv", index=False)
    (src / "broken.parquet").write_bytes(b"not a parquet file")
    (src / "empty.csv").write_text("", encoding="utf-8")
    # duplicate and unicode column names, a copy of the target, an all-missing column
    weird = good_table(seed=1)
    weird.columns = ["x", "x", "température", "y"]
    weird["copy of y"] = weird["y"]
    weird["nothing"] = np.nan
    weird.to_csv(src / "weird.csv", index=False)
    (src / "weird.json").write_text(json.dumps({"title": "Weird", "target_hint": "y"}), encoding="utf-8")

    out = tmp_path / "tasks"
    report = build_tasks(out=str(out), limit=None, seed=3, sources=f"local:{src}")

    reasons = {r["ref"]: r["reason"] for r in report["rejections"]}
    assert "too few rows" in reasons["local/one_row"]
    assert "degenerate" in reasons["local/constant"] or "constant" in reasons["local/constant"]
    assert "no usable features" in reasons["local/only_ids"]
    assert "cannot load" in reasons["local/broken"]
    assert "local/empty" in reasons
    assert all("\n" not in r for r in reasons.values())
    built = set(report["tasks"])
    assert "local_weird_reg" in built, report  # the hint makes y the target
    assert any(t.startswith("local_good_") for t in built), report
    meta = json.loads((out / "local_weird_reg" / "verify" / names.ALL_METADATA).read_text())
    q = meta["question"]
    assert q["target"] == ["y"]
    assert "copy of y" not in q["related_features"] and "nothing" not in q["related_features"]
    assert "copy of y" in meta["daregen"]["v2_dropped_columns"]
    # read_csv itself renames the duplicate to x.1; normalisation keeps names unique from there
    assert set(q["related_features"]) <= {"x", "x.1", "température"}
    assert "température" in q["column_type_inference"]
    # the run report lists every rejection; the published tree has only built tasks
    listed = json.loads((out / names.QUESTION_LIST).read_text())
    assert sorted(e["file_path"] for e in listed) == sorted(built)
    assert "local/one_row" in (out / names.RUN_REPORT_MD).read_text()


def test_failed_build_leaves_published_tree_untouched(tmp_path, monkeypatch):
    from flows import build_tasks

    src = tmp_path / "data"
    src.mkdir()
    good_table().to_csv(src / "good.csv", index=False)
    out = tmp_path / "tasks"
    build_tasks(out=str(out), limit=None, seed=1, sources=f"local:{src}")
    (out / "README.md").write_text("kept\n")
    before = (out / names.MANIFEST).read_bytes()

    import pipeline.publish as publish

    def boom(*_a, **_k):
        raise RuntimeError("killed mid-publish")

    monkeypatch.setattr(publish, "build_manifest", boom)
    monkeypatch.setattr("pipeline.build.build_manifest", boom)
    try:
        build_tasks(out=str(out), limit=None, seed=2, sources=f"local:{src}")
    except RuntimeError:
        pass
    assert (out / names.MANIFEST).read_bytes() == before
    assert not list(tmp_path.glob(".tasks.staging-*")), "staging left behind"
    # a later successful build replaces the tree but keeps the user's README
    monkeypatch.undo()
    build_tasks(out=str(out), limit=None, seed=2, sources=f"local:{src}")
    assert (out / "README.md").read_text() == "kept\n"
    assert (out / names.MANIFEST).read_bytes() != before


def test_a_build_with_no_tasks_does_not_replace_the_published_tree(tmp_path):
    from flows import build_tasks

    src = tmp_path / "data"
    src.mkdir()
    good_table().to_csv(src / "good.csv", index=False)
    out = tmp_path / "tasks"
    build_tasks(out=str(out), limit=None, seed=1, sources=f"local:{src}")
    before = (out / names.MANIFEST).read_bytes()
    report = build_tasks(out=str(out), limit=0, seed=1, sources=f"local:{src}")
    assert report["built"] == 0 and report["published"] is False
    assert (out / names.MANIFEST).read_bytes() == before
    assert not list(tmp_path.glob(".tasks.staging-*"))
    # The reasons of an unpublished build stay readable, at the path the CLI prints.
    assert Path(report["run_report_md"]).read_text().startswith("# daregen run report")
