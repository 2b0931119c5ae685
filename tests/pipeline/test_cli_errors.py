"""Every CLI failure is one line on stderr and a non-zero exit, decided from the arguments and paths alone
(nothing is built, created or written), and `diff` writes beside NEW or into --out, never into the current
folder. Each case runs the real command in a subprocess, as a user types it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from pipeline.core import names


def _daregen(cwd, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pipeline.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300)


@pytest.fixture
def folders(tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "tree").mkdir()
    (tmp_path / "tree" / names.QUESTION_LIST).write_text("[]\n")
    (tmp_path / "work").mkdir()
    return tmp_path


CASES = {
    "score on a folder without question_list.json": (["score", "empty", "--tasks", "empty"], "question_list.json"),
    "score on a missing prediction folder": (["score", "preds", "--tasks", "tree"], "PRED_DIR preds"),
    "score on a prediction folder without predictions": (["score", "empty", "--tasks", "tree"], "no predictions"),
    "verify on a missing folder": (["verify", "missing"], "TREE missing: no such folder"),
    "verify on a tree without question_list.json": (["verify", "empty"], "question_list.json"),
    "build into /proc": (["build", "--out", "/proc/daregen-x"], "cannot write in /proc"),
    "build with a negative limit": (["build", "--limit", "-1"], "--limit"),
    "build from a missing sources file": (["build", "--sources", "sources.toml"], "sources.toml: no such sources file"),
    "build from an unknown source": (["build", "--sources", "nosuch:x"], "unknown source 'nosuch'"),
    "diff with a missing NEW tree": (["diff", "tree", "missing"], "NEW missing: no such folder"),
    "serve from a missing sources file": (["serve", "--sources", "sources.toml"], "no such sources file"),
    "serve into /proc": (["serve", "--out", "/proc/daregen-x"], "cannot write in /proc"),
    "serve with an unknown timezone": (["serve", "--timezone", "Mars/Base"], "not an IANA timezone"),
    "serve with a bad cron": (["serve", "--cron", "x y"], "--cron"),
    "serve a default limit above its maximum": (["serve", "--limit", "10", "--max-limit", "5"],
                                                "--limit 10 is above --max-limit 5"),
    "serve allowing a missing sources file": (["serve", "--allow-sources", "other.toml"], "no such sources file"),
    "an unknown flag": (["build", "--bogus"], "--bogus"),
    "build with an unknown designer": (["build", "--designer", "bogus"], "invalid choice: 'bogus'"),
    "build from a missing local folder": (["build", "--sources", "local:nowhere"], "nowhere"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_failure_is_one_line_and_a_non_zero_exit(folders, case):
    args, expected = CASES[case]
    proc = _daregen(folders, *args)
    assert proc.returncode != 0, proc.stdout
    assert proc.stderr.startswith("daregen: error: ") and proc.stderr.count("\n") == 1, proc.stderr
    assert expected in proc.stderr
    assert proc.stdout == ""
    assert not (folders / "preds").exists()  # score refuses before creating anything


def test_diff_writes_beside_new_or_into_out_never_into_the_current_folder(folders):
    proc = _daregen(folders / "work", "diff", str(folders / "missing-old"), str(folders / "tree"))
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in folders.iterdir() if p.is_file()) == ["tree.diff.html", "tree.diff.md"]
    assert not any((folders / "work").iterdir())
    assert not (folders / "tree" / "diff.md").exists()  # a tree's own review of its build is left alone
    proc = _daregen(folders / "work", "diff", str(folders / "tree"), str(folders / "tree"), "--out",
                    str(folders / "review"))
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in (folders / "review").iterdir()) == ["diff.html", "diff.md"]
