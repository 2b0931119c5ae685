"""An approved release that publishes nothing tells one story: its summary says so first, with the one reason;
it names no file and suggests no command for the earlier release still at --out; withheld tasks are counted as
withheld, never as skipped datasets; no line is printed twice; and "N tasks restored" from the build cache is
the count run_report.md gives as reused.

Through the real `daregen` CLI (pipeline.cli.main) in one fresh interpreter with its own Prefect home and build
cache: two small local datasets are built, both tasks approved and released, then both reseeded (a pin), so the
next `--publish approved` release withholds both; it is run twice, the second time from the build cache. Three
builds that publish every task at the same --out then leave the approved release's generation in place.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.core import names
from tests.factories import write_datasets
from tests.orchestration_helpers import child_env

# Each argv through main() in turn, its stdout and stderr captured apart; one JSON line per command.
RUN_COMMANDS = r"""
import contextlib, io, json, sys
from pipeline.cli import main

for argv in json.loads(sys.argv[1]):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code
    print("RUN " + json.dumps({"argv": argv, "code": code, "out": out.getvalue(), "err": err.getvalue()}),
          file=sys.__stdout__, flush=True)
"""


@pytest.fixture(scope="module")
def story(tmp_path_factory) -> tuple[Path, list[dict]]:
    root = tmp_path_factory.mktemp("release-story")
    write_datasets(root / "data", n=2)  # d0 (regression), d1 (classification), d0_copy (a duplicate: skipped)
    sources, ledger = f"local:{root / 'data'}", str(root / "curation.toml")
    Path(ledger).write_text("# the curators' decisions\n", encoding="utf-8")
    all_, release = str(root / "all"), str(root / "release")
    curate = ["--curation", ledger, "--sources", sources]
    release_build = ["build", "--sources", sources, "--out", release, "--curation", ledger, "--publish", "approved"]
    commands = [["build", "--sources", sources, "--out", all_, "--curation", ledger],
                ["curate", "approve", "local/d0", "--tree", all_, *curate],
                ["curate", "approve", "local/d1", "--tree", all_, *curate],
                release_build,
                ["curate", "pin", "local/d0", "--seed", "5", *curate],
                ["curate", "pin", "local/d1", "--seed", "5", *curate],
                release_build,
                release_build,
                # three nightlies that publish every task at the release's --out (issue 48): the approved
                # generation of the first release is not theirs to rotate away
                *(["build", "--sources", sources, "--out", release, "--curation", ledger, "--seed", str(seed)]
                  for seed in (1, 2, 3))]
    proc = subprocess.run([sys.executable, "-c", RUN_COMMANDS, json.dumps(commands)], capture_output=True,
                          text=True, timeout=1800, env=child_env(root / "prefect-home", root / "cache"))
    runs = [json.loads(line[4:]) for line in proc.stdout.splitlines() if line.startswith("RUN ")]
    assert len(runs) == len(commands), proc.stderr[-3000:]
    return root, runs


def test_the_first_release_publishes_both_approved_tasks(story):
    root, runs = story
    assert [r["code"] for r in runs[:6]] == [0, 0, 0, 0, 0, 0], [r["err"][-500:] for r in runs[:6]]
    assert runs[3]["out"].startswith("built 2 tasks")
    assert len(json.loads((root / "release" / names.QUESTION_LIST).read_text(encoding="utf-8"))) == 2


@pytest.mark.parametrize("run", [6, 7])
def test_an_empty_release_says_so_first_with_one_reason_and_exits_non_zero(story, run):
    root, runs = story
    result = runs[run]
    assert result["code"] == 1
    first = result["out"].splitlines()[0]
    assert first == (f"nothing published: none of the 2 built tasks is approved at its current design digest, so "
                     f"--publish approved withheld every one (2 changed since approval); {root / 'release'} is "
                     "unchanged")
    assert "built 0 tasks" not in result["out"] and "nothing was built" not in result["err"]
    # The reason is said once: not again on stderr, and no other line of the run is repeated either.
    lines = [ln for ln in (result["err"] + result["out"]).splitlines() if ln.strip()]
    assert [ln for ln in lines if lines.count(ln) > 1] == []


@pytest.mark.parametrize("run", [6, 7])
def test_it_names_no_file_and_no_command_of_the_earlier_release(story, run):
    root, runs = story
    out = runs[run]["out"]
    release = root / "release"
    assert (release / names.QUESTION_LIST).is_file()  # the earlier release is still published...
    assert str(release / names.QUESTION_LIST) not in out and str(release / names.CORPUS_REPORT_HTML) not in out
    assert "next:" not in out and "daregen verify" not in out  # ...and this summary does not describe it
    assert f"unpublished-{names.RUN_REPORT_MD}" in out  # the one report this build wrote


@pytest.mark.parametrize("run", [6, 7])
def test_withheld_tasks_are_counted_as_withheld_not_skipped(story, run):
    out = story[1][run]["out"]
    assert "  2 built tasks withheld by --publish approved" in out
    assert "  1 dataset skipped; most common reasons:" in out  # d0_copy, the duplicate table, only
    assert "changed since approval" not in out.split("dataset skipped")[1]


def test_the_tasks_restored_from_the_cache_are_the_reports_reused_count(story):
    root, runs = story
    restored = re.search(r"build cache: (\d+) tasks? and \d+ rejections? restored", runs[7]["err"])
    assert restored is not None, runs[7]["err"]
    report = (root / f".release.generations/unpublished-{names.RUN_REPORT_MD}").read_text(encoding="utf-8")
    assert f"- reused from the build cache: {restored.group(1)} tasks" in report and restored.group(1) == "2"
    assert report.startswith("# daregen run report\n\n**nothing published: none of the 2 built tasks")
    assert "- considered: 3 datasets, rejected: 1" in report


def test_builds_that_publish_every_task_never_rotate_the_approved_release_away(story):
    from pipeline.publish import generations_dir, publish_mode, published_generation

    root, runs = story
    assert [r["code"] for r in runs[8:]] == [0, 0, 0], [r["err"][-500:] for r in runs[8:]]
    sealed = sorted(p for p in generations_dir(root / "release").iterdir() if p.is_dir() and not p.name.startswith("."))
    modes = [publish_mode(p) for p in sealed]
    assert modes == ["approved", "all", "all", "all"], (sealed, modes)  # keep 3 of each mode, not 3 in all
    approved = sealed[0]
    assert len(json.loads((approved / names.QUESTION_LIST).read_text(encoding="utf-8"))) == 2
    assert published_generation(root / "release") == sealed[-1]
