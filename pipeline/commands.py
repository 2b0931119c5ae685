"""How a command daregen prints for its user (the build's "next:" lines, `inspect`'s pin, `curate status`'s
approve) is spelled, so that it runs as printed from the folder the user is in.

`make setup` installs into the checkout's `.venv/` and puts nothing on PATH: a bare `daregen` runs only in a
shell whose PATH has `.venv/bin` (an activated venv, an installed package). So a printed command names the
executable the way that reaches the one running now: `daregen` when PATH finds that very file, else its path,
relative to the working folder when it lies below it (`.venv/bin/daregen` from the checkout), else absolute.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path


def executable(name: str = "daregen", cwd: str | Path | None = None, path_env: str | None = None) -> str:
    """The shell word that runs `name` (an executable beside this interpreter: daregen, prefect) from `cwd`
    (default: the working folder) with PATH `path_env` (default: this process's)."""
    mine = Path(sys.executable).parent / name
    if not mine.is_file():  # an interpreter without the console script (python -m pipeline.cli)
        return f"{shlex.quote(sys.executable)} -m pipeline.cli" if name == "daregen" else name
    found = shutil.which(name, path=os.environ.get("PATH", "") if path_env is None else path_env)
    if found and os.path.realpath(found) == os.path.realpath(mine):
        return name
    here = Path(os.path.abspath(cwd or os.getcwd()))
    absolute = Path(os.path.abspath(mine))
    shown = str(absolute.relative_to(here)) if absolute.is_relative_to(here) else str(absolute)
    return shlex.quote(shown if os.sep in shown else f".{os.sep}{shown}")  # a bare word would be looked up on PATH


def command(*words: str | Path, name: str = "daregen") -> str:
    """`daregen WORD ...` spelled to run as printed (executable()), each word shell-quoted."""
    return " ".join([executable(name), *(shlex.quote(str(w)) for w in words)])
