"""The `daregen` CLI: score writes a summary and reasons, bad input gives one clear error line."""

from __future__ import annotations

import json

import pandas as pd

from pipeline.cli import main


def test_score_cli_on_reference_and_broken_predictions(built_tree, tmp_path, capsys):
    from pipeline.review.score import write_reference_predictions

    preds = tmp_path / "preds"
    write_reference_predictions(built_tree, preds)
    entries = json.loads((built_tree / "question_list.json").read_text())
    broken, missing = entries[0]["file_path"], entries[1]["file_path"]
    # a prediction without row_id, and a missing prediction file
    path = preds / broken / "v1" / "prediction.csv"
    pd.read_csv(path).drop(columns=["row_id"]).to_csv(path, index=False)
    (preds / missing / "v2" / "prediction.csv").unlink()

    assert main(["score", str(preds), "--tasks", str(built_tree)]) == 0
    printed = capsys.readouterr().out
    assert "row_id" in printed and broken in printed and missing in printed
    summary = json.loads((preds / "score_summary.json").read_text())
    by_key = {(s["task"], s["variant"]): s for s in summary["scores"]}
    assert by_key[(broken, "v1")]["score"] == 0 and by_key[(broken, "v1")]["reason"]
    assert by_key[(missing, "v2")]["score"] == 0 and by_key[(missing, "v2")]["reason"]
    ok = [s for k, s in by_key.items() if k not in {(broken, "v1"), (missing, "v2")}]
    assert ok and all(s["score"] == 1.0 for s in ok)


def test_unknown_source_is_one_clear_error(capsys, tmp_path):
    assert main(["build", "--sources", "nosuch:thing", "--out", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("daregen: error: unknown source 'nosuch'") and err.count("\n") == 1
    assert not (tmp_path / "x").exists()
