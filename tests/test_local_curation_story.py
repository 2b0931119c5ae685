"""A local folder is curated end to end with the commands exactly as daregen prints them, from a folder outside the
checkout with nothing on PATH, laid out as a fresh clone (a plain `build` writes the default --out): `inspect`'s pin, `curate status`'s approve, then approve by ref and reject without
`--sources` (the ledger recorded the folder at the pin), a mistyped ref refused naming its own entry with a
did-you-mean, and the approved release, which the caches answer without Prefect's flow."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline.build import CACHED_BUILD_NOTE
from pipeline.core import names
from tests.factories import write_datasets
from tests.orchestration_helpers import VENV_BIN, child_env
from tests.test_printed_commands import BARE_PATH, ROOT


def _farms(folder: Path) -> None:
    """A table the heuristic skips (no column is documented as the outcome): a curator pins its target."""
    rng = np.random.default_rng(3)
    rain, sun = rng.normal(size=150), rng.normal(size=150)
    pd.DataFrame({"plot": np.arange(150), "rainfall": rain, "sunshine": sun,
                  "harvest": 2 * rain + sun + rng.normal(size=150)}).to_csv(folder / "farms.csv", index=False)


def test_a_local_folder_is_curated_with_the_commands_daregen_prints(tmp_path):
    data, work = tmp_path / "data", tmp_path / "work"
    write_datasets(data, n=3)  # local/d0 .. d2 (built as they are) and d0_copy (a duplicate)
    _farms(data)
    work.mkdir()
    env = {**child_env(tmp_path / "home", tmp_path / "cache"), "PATH": BARE_PATH}

    def run(command: str | list[str], ok: bool = True) -> subprocess.CompletedProcess:
        """A command line as printed (through the shell), or daregen's argv; from `work`, nothing on PATH."""
        argv = command if isinstance(command, str) else [str(VENV_BIN / "daregen"), *command]
        proc = subprocess.run(argv, shell=isinstance(command, str), cwd=work, env=env, capture_output=True,
                              text=True, timeout=900)
        if ok:
            assert proc.returncode == 0, (command, proc.stdout[-2000:], proc.stderr[-3000:])
        return proc

    # inspect prints the pin: the folder's other datasets have a target, farms has none with evidence
    shown = run(["inspect", f"local:{data}"]).stdout
    pin_line = next(line for line in shown.splitlines() if line.startswith("  a pin: "))
    printed, feasible = re.fullmatch(r"  a pin: (.*) \(COLUMN feasible: ([^)]*)\), then .*", pin_line).groups()
    assert "harvest" in feasible.split(", ") and " local/farms " in printed and "--sources" in printed
    assert printed.endswith(" --target COLUMN")
    run(printed.removesuffix("COLUMN") + "harvest")  # the curator fills in the column, nothing else
    ledger = work / "curation.toml"
    assert f'sources = ["local:{data}"]' in ledger.read_text(encoding="utf-8")  # recorded for later edits
    # inspect under that ledger finds the dataset in the folder it recorded, and designs the pinned target
    pinned = run(["inspect", "local/farms", "--curation", "curation.toml"]).stdout
    assert "verdict: a regression task, target harvest (curator" in pinned, pinned[:1500]

    # a plain build, in a folder laid out as a fresh clone (generated/ holds its tracked README): the default --out
    readme = work / "generated" / "README.md"
    readme.parent.mkdir()
    readme.write_bytes((ROOT / "generated" / "README.md").read_bytes())
    run(["build", "--sources", f"local:{data}", "--curation", "curation.toml"])
    tree = work / names.DEFAULT_OUT
    assert readme.read_bytes() == (ROOT / "generated" / "README.md").read_bytes()
    farms_task = next(e["file_path"] for e in json.loads((tree / names.QUESTION_LIST).read_text())
                      if e["file_path"].startswith("local_farms"))

    # curate status (which takes --sources like the other curate commands) ends with the approve to run
    status = run(["curate", "status", names.DEFAULT_OUT, "--curation", "curation.toml", "--sources", f"local:{data}"])
    approve_line = status.stdout.splitlines()[-1]
    assert approve_line.startswith("approve a task as listed: "), status.stdout
    first_listed = status.stdout.splitlines()[0].split()[1]  # "unreviewed  <task folder>  <digest>"
    approved = run(approve_line.removeprefix("approve a task as listed: "))
    assert f"(task {first_listed})" in approved.stdout
    # by ref, without --sources: the tree holds the task
    run(["curate", "approve", "local/farms", "--tree", names.DEFAULT_OUT, "--reviewer", "ana"])
    # a rejection without --sources: the ledger knows the folder
    run(["curate", "reject", "local/d2", "--reason", "a toy table"])
    # a mistyped ref: refused naming that entry (not another), with the ref meant
    typo = run(["curate", "reject", "local/farm", "--reason", "x"], ok=False)
    assert typo.returncode == 2 and typo.stderr.count("\n") == 1, typo.stderr
    assert "[[reject]] ref 'local/farm'" in typo.stderr and "did you mean 'local/farms'" in typo.stderr, typo.stderr
    assert "did you mean 'local/farms'?" in typo.stderr and "ref 'local/d2'" not in typo.stderr
    # approve takes the task folders status lists, and says which names it knows
    wrong = run(["curate", "approve", farms_task + "x", "--tree", names.DEFAULT_OUT], ok=False)
    assert wrong.returncode == 2 and f"did you mean '{farms_task}'" in wrong.stderr, wrong.stderr

    release = run(["build", "--sources", f"local:{data}", "--out", "release", "--curation", "curation.toml",
                   "--publish", "approved"])
    published = sorted(e["file_path"] for e in json.loads((work / "release" / names.QUESTION_LIST).read_text()))
    assert published == sorted([first_listed, farms_task]), published
    assert CACHED_BUILD_NOTE in release.stderr, release.stderr[-3000:]  # every task from the build cache
    next_lines = release.stdout.split("\nnext:\n", 1)[1].splitlines()
    verify = next_lines[0].strip().split("  ")[0]
    assert verify.endswith(f"daregen verify {work / 'release'}") or verify.endswith("daregen verify release"), verify
    assert not (work / ".cache").exists()  # the build cache is not where the command ran
