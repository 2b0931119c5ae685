"""bench/check_reasons.py tells a reason cut inside a word from a whole one and from a shortening at a word
boundary, and a run report's header that miscounts question_list.json from one that counts it."""

from __future__ import annotations

import json
from pathlib import Path

from bench.check_reasons import main

DOC = "Site is located on a wooded hill in a rural area called Laegern, about 190 m above Baden."


def _tree(root: Path, evidence: str, header: str, cell: str) -> Path:
    task = root / "tree" / "some_ts"
    (task / "verify").mkdir(parents=True)
    (task / "source").mkdir()
    (task / "source" / "metadata.txt").write_text(f"la: {DOC}\n")
    (task / "verify" / "all_metadata.json").write_text(json.dumps({"daregen": {"target_evidence": evidence}}))
    (root / "tree" / "question_list.json").write_text(json.dumps([{"file_path": "some_ts",
                                                                   "task": "time_series_analysis"}]))
    (root / "tree" / "run_report.md").write_text(f"# daregen run report\n\n- built: {header}\n\n| t | e |\n|---|---|\n"
                                                 f"| some_ts | {cell} |\n")
    (root / "tree" / "corpus_report.html").write_text("<p>no shortened cell</p>\n")
    return root / "tree"


def test_a_whole_reason_and_a_word_boundary_shortening_pass(tmp_path, monkeypatch, capsys):
    tree = _tree(tmp_path, f"ranked fallback (score 0.25: a measured numerical variable: {DOC})",
                 "1 task (1 time_series_analysis)", "ranked fallback (score 0.25: a measured numerical variable: Site…")
    monkeypatch.setattr("sys.argv", ["check_reasons.py", str(tree)])
    assert main() == 0
    assert "0 cut inside a word" in capsys.readouterr().out


def test_a_fixed_width_cut_a_mid_word_shortening_and_a_wrong_header_fail(tmp_path, monkeypatch, capsys):
    cut = f"ranked fallback (score 0.25: a measured numerical variable: {DOC[:80]})"
    tree = _tree(tmp_path, cut, "1 task (1 regression)", "ranked fallback (score 0.25: a measured numerical vari…")
    monkeypatch.setattr("sys.argv", ["check_reasons.py", str(tree)])
    assert main() == 1
    out = capsys.readouterr().out
    assert "1 cut inside a word" in out and "its source goes on with 'v'" in out
    assert "run_report.md: cut inside a word: 'score 0.25: a measured numerical vari'…" in out
    assert "MISMATCH" in out
