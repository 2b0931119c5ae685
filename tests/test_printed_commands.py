"""Every command the README, docs/cli.md and a build's `next:` lines print runs as printed after `make setup`, which
puts nothing on PATH: its executable exists where the line says, and its subcommand's `--help` answers."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.core import names

ROOT = Path(__file__).resolve().parent.parent
DOCS = ("README.md", "docs/cli.md")
# A PATH as `make setup` leaves it: the system's, without the checkout's .venv/bin.
BARE_PATH = os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep)
                            if p and Path(p).resolve() != Path(sys.executable).parent.resolve())
COMMAND_START = re.compile(r"^(\.venv/bin/|daregen\b|prefect\b|make\b)")


def _code_lines(path: Path) -> list[str]:
    """The lines of a Markdown file's code blocks that start a command (continuation lines are options)."""
    lines, inside = [], False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            inside = not inside
        elif inside and COMMAND_START.match(line):
            lines.append(line.split("  #")[0].strip())
    return lines


def _subcommands(words: list[str]) -> list[list[str]]:
    """The subcommand paths a command line names (`curate approve|reject` names two), found by walking
    daregen's own parser: every word that is one of its subparsers' choices."""
    from pipeline.cli import parser

    paths: list[list[str]] = [[]]
    node = parser()
    for word in words:
        actions = [a for a in node._actions if a.choices and isinstance(a.choices, dict)]
        choices = actions[0].choices if actions else {}
        alternatives = word.split("|")
        if not alternatives or not all(w in choices for w in alternatives):
            break
        paths = [p + [w] for p in paths for w in alternatives]
        node = choices[alternatives[0]]
    return paths


def _runs(argv0: str, words: list[str], cwd: Path) -> None:
    """`argv0` resolves from `cwd` with the bare PATH, and `argv0 SUBCOMMAND --help` answers for each subcommand."""
    resolved = (cwd / argv0) if os.sep in argv0 else None
    if resolved is None:
        import shutil

        found = shutil.which(argv0, path=BARE_PATH)
        assert found, f"{argv0!r} is not on the PATH `make setup` leaves"
        resolved = Path(found)
    assert resolved.is_file() and os.access(resolved, os.X_OK), f"{argv0}: no executable at {resolved}"
    if resolved.name != "daregen":
        return
    for path in _subcommands(words):
        proc = subprocess.run([argv0, *path, "--help"], cwd=cwd, capture_output=True, text=True, timeout=120,
                              env={**os.environ, "PATH": BARE_PATH})
        assert proc.returncode == 0 and "usage: daregen" in proc.stdout, (argv0, path, proc.stderr[-500:])


@pytest.mark.parametrize("doc", DOCS)
def test_every_command_the_docs_print_runs_as_printed(doc):
    lines = _code_lines(ROOT / doc)
    assert lines, f"{doc} shows no command"
    for line in lines:
        argv0, *words = shlex.split(line.split(" [")[0])  # a synopsis's options start at its first bracket
        assert not line.startswith(("daregen ", "prefect ")), f"{doc}: {line!r} would not run: nothing is on PATH"
        if argv0 == "make":
            assert re.search(rf"^{re.escape(words[0])}:", (ROOT / "Makefile").read_text(), re.M), line
            continue
        _runs(argv0, words, ROOT)


def _next_lines(out: Path, cwd: Path, monkeypatch) -> list[str]:
    """The `next:` lines of a build's summary for the tree `out`, printed in `cwd` with the bare PATH."""
    from pipeline.run_report import summary_table

    monkeypatch.chdir(cwd)
    monkeypatch.setenv("PATH", BARE_PATH)
    report = {"considered": 1, "built": 1, "by_type": {"regression": 1}, "by_format": {"csv": 1}, "tasks": ["t"],
              "rejections": [], "seconds": 1.0, "seed": 0, "sources": "builtin", "limit": None, "published": True}
    text = summary_table(report, out)
    return [line.strip() for line in text.split("\nnext:\n", 1)[1].splitlines()]


def test_the_next_lines_of_a_build_run_as_printed_from_the_checkout_and_from_elsewhere(tmp_path, monkeypatch):
    out = tmp_path / "my tree"  # a space: the printed path is quoted
    out.mkdir()
    (out / names.QUESTION_LIST).write_text(json.dumps([]))
    for cwd in (ROOT, tmp_path):
        lines = _next_lines(out, cwd, monkeypatch)
        assert len(lines) == 4, lines
        for line in lines:
            argv0, *words = shlex.split(line.split("  ")[0])
            assert argv0 != "daregen", line  # not on the bare PATH
            assert str(out) in words, line
            _runs(argv0, words, cwd)
        if cwd == ROOT:
            assert lines[0].startswith(".venv/bin/daregen verify ") or not (ROOT / ".venv").is_dir(), lines[0]
