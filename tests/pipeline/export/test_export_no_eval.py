"""An export whose tasks give no eval split says so: a warning line with the reason, a card that names only the
splits it holds (never "train, eval" without an eval), and a time-series task's SFT line says why it has none
instead of "0 kept"."""

from __future__ import annotations

from pathlib import Path

from pipeline.cli import main
from pipeline.core import names
from pipeline.core.jsonio import read_json, write_json
from pipeline.export.export import CARD
from tests.pipeline.export.test_hostile_export import _ts_task


def _one_family_tree(root: Path) -> Path:
    """Three time-series tasks of one dataset (one family, which is never split)."""
    tree = root / "tree"
    tasks = [_ts_task(tree, f"task{i}_ts", seed=i) for i in range(3)]
    for t in tasks:
        meta = read_json(t / names.VERIFY_DIR / names.ALL_METADATA)
        meta["daregen"]["ref"] = "local/one"
        write_json(t / names.VERIFY_DIR / names.ALL_METADATA, meta)
    write_json(tree / names.QUESTION_LIST, [
        {"file_path": t.name, "task": names.TIME_SERIES_PROBLEM, "question_v1": f"Forecast y for {t.name}.",
         "needed_files_v1": ["train.csv", "val_v1.csv"]} for t in tasks])
    return tree


def test_an_export_without_an_eval_split_warns_and_its_card_does_not_claim_one(tmp_path: Path, capsys) -> None:
    tree = _one_family_tree(tmp_path)
    out = tmp_path / "export"
    assert main(["export", str(tree), "--out", str(out), "--jobs", "1"]) == 0
    printed = capsys.readouterr().out
    warning = [line for line in printed.splitlines() if line.startswith("warning: ")]
    assert warning == ["warning: no eval split: the tree's tasks come from 1 dataset family, no problem type has "
                       "two, and a family is never split across train and eval; every task is training data "
                       "(export a tree with more datasets for an eval split)"]
    card = (out / CARD).read_text(encoding="utf-8")
    assert "# train, eval" not in card and 'load_dataset("path/to/this/folder")' in card
    assert "# train\n" in card and "**This export has no eval split**" in card
    sft = [line for line in printed.splitlines() if line.startswith("sft ")]
    assert len(sft) == 3 and all("0 kept" not in line and "none: SFT solutions are written for classification "
                                 "and regression tasks" in line for line in sft)


def test_eval_fraction_zero_is_named_as_the_reason(tmp_path: Path, capsys) -> None:
    tree = _one_family_tree(tmp_path)
    assert main(["export", str(tree), "--out", str(tmp_path / "export"), "--eval-fraction", "0", "--jobs", "1"]) == 0
    assert "warning: no eval split: --eval-fraction is 0, so every task is training data" in capsys.readouterr().out
