"""bench/run_all.py writes the README's headline table with no commit hash and no machine path, each figure beside
the command that gives it again; RESULTS.md keeps every bench's whole row (read back by --only) and everything
below its by-hand line; and the README table stays between its markers."""

from __future__ import annotations

import re
from pathlib import Path

from bench import run_all
from bench.run_all import BENCHES, BY_HAND, Outcome, by_hand, earlier_rows, readme_table, table, write_readme

LOAD = (1.5, 1.0, 1.0)


def _outcomes() -> list[Outcome]:
    by_name = {b.name: b for b in BENCHES}
    return [Outcome(by_name["no-op"], ".venv/bin/python bench/bench_noop.py --limit 40",
                    "40 candidates, 20 tasks: full build 48.2 s, no-op rerun 1.07 s = **2.2%**", 70.0,
                    headline="a rerun with nothing changed: **2.2%** of the full build (1.07 s of 48.2 s)"),
            Outcome(by_name["profile"], ".venv/bin/python bench/bench_profile.py --repeat 1", "failed: boom", 4.0)]


def test_the_readme_table_has_figures_and_commands_and_no_commit_or_path():
    text = readme_table(_outcomes(), LOAD, LOAD)
    assert ("| a rerun with nothing changed: **2.2%** of the full build (1.07 s of 48.2 s) | "
            "`.venv/bin/python bench/bench_noop.py --limit 40` |") in text
    assert "boom" not in text  # a failed bench has no headline
    assert not re.search(r"\b[0-9a-f]{7,40}\b", text) and "/work" not in text and "/tmp" not in text
    assert "[bench/RESULTS.md](bench/RESULTS.md)" in text


def test_results_rows_read_back_and_the_by_hand_part_is_kept(tmp_path: Path, monkeypatch):
    results = tmp_path / "RESULTS.md"
    results.write_text("# Measured by bench/run_all.py\n\n" + table(_outcomes(), LOAD, LOAD) + "\n" + BY_HAND
                       + "\n\n## Measured by hand\n\n| a | b |\n", encoding="utf-8")
    rows = earlier_rows(results)
    assert rows["no-op"].headline.startswith("a rerun with nothing changed") and rows["no-op"].seconds == 70.0
    assert rows["profile"].cell == "failed: boom"
    assert by_hand(results) == BY_HAND + "\n\n## Measured by hand\n\n| a | b |\n"


def test_the_readme_is_rewritten_between_its_markers_only(tmp_path: Path):
    readme = tmp_path / "README.md"
    readme.write_text(f"# x\n\n{run_all.BEGIN}\nold\n{run_all.END}\n\n## after\n", encoding="utf-8")
    assert write_readme(readme, "new\n")
    assert readme.read_text(encoding="utf-8") == f"# x\n\n{run_all.BEGIN}\nnew\n{run_all.END}\n\n## after\n"


def test_every_bench_has_a_headline_and_the_commands_name_no_machine_path():
    assert all(b.headline for b in BENCHES)
    assert not [b.command for b in BENCHES if "/work" in b.command or "/tmp" in b.command]
