"""The column-reference bench counts DARE-bench's published questions exactly as it counts ours: a
feature carries its name as a word in any case, or case as written, and every carrier says why."""

from __future__ import annotations

import pytest

from bench.bench_column_refs import main, measure
from tests.factories import DARE_EXAMPLES

pytestmark = pytest.mark.skipif(not (DARE_EXAMPLES / "question_list.json").is_file(),
                                reason="DARE-bench's examples are not beside the repository")


def test_dare_bench_examples_are_counted_both_ways_with_why():
    m = measure(DARE_EXAMPLES)
    # Pokemon's "the support stat of the Pokemon" carries `Support` in any case, not as written
    assert (m["tasks"], m["features"], m["strict"], m["as_written"], m["backticked"]) == (2, 7, 5, 0, 0)
    assert (m["tasks_naming_none"], m["tasks_writing_none"]) == (0, 2)
    assert any("'Support'" in line and "the question has 'support'" in line for line in m["carriers"])


def test_the_report_states_both_counts_and_dare_bench_figure(capsys):
    assert main([str(DARE_EXAMPLES)]) == 0
    out = capsys.readouterr().out
    assert "5 carry their column name in question_v1 as a word in any case (71.4%)" in out
    assert "0 case as written (0.0%)" in out and "16% of features" in out
