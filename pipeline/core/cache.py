"""Where daregen keeps what it can fetch or compute again: one root, `$DAREGEN_CACHE`, and its folders.

    $DAREGEN_CACHE (default: default_cache_root(), the same folder whatever the working directory)
      tasks/      the per-dataset build cache (pipeline/build_cache.py)
      sources/    source-step results of immutable data, the built-in wheels (pipeline/build_cache.py)
      dsagent/    DSAgentBench tasks and verdicts per DARE task folder, by its bytes (finalize/dsagent/build.py)
      downloads/  fetched files, by content hash (sourcing/download.py)
      openml/     the openml client's own cache (sourcing/openml_source.py)
      kaggle/     extracted Kaggle archives (sourcing/kaggle_source.py)
      llm/        design answers of the LLM, by prompt and model (task_design/llm_cache.py)

Every path is computed when asked, not at import, so a test or a served flow that sets
DAREGEN_CACHE later still gets its own folder.
"""

from __future__ import annotations

import os
import shutil
import uuid
from pathlib import Path
from collections.abc import Callable

CACHE_ENV = "DAREGEN_CACHE"
CACHE_DIR_NAME = "daregen"
# daregen's own folder: the checkout's root when it runs from one (pipeline/core/cache.py is two levels below it).
CODE_ROOT = Path(__file__).resolve().parents[2]

TASKS = "tasks"
SOURCES = "sources"
DSAGENT = "dsagent"
DOWNLOADS = "downloads"
OPENML = "openml"
KAGGLE = "kaggle"
LLM = "llm"


def default_cache_root(code_root: Path = CODE_ROOT, environ: dict | None = None) -> Path:
    """Where the caches live when neither a folder nor `$DAREGEN_CACHE` is given: `.cache/daregen` in the checkout
    daregen runs from (beside its `.venv`, git-ignored), else the user's cache folder (`$XDG_CACHE_HOME/daregen`,
    else `~/.cache/daregen`). Never relative to the working directory: a curator building from a ledger's folder
    and an operator serving from another share one cache, and no `.cache/` is left wherever a command ran."""
    env = os.environ if environ is None else environ
    if (code_root / "pyproject.toml").is_file() and (code_root / "pipeline" / "core").is_dir():
        return code_root / ".cache" / CACHE_DIR_NAME
    xdg = env.get("XDG_CACHE_HOME", "")
    base = Path(xdg) if os.path.isabs(xdg) else Path(env.get("HOME") or Path.home()) / ".cache"
    return base / CACHE_DIR_NAME


def cache_root(root: str | Path | None = None) -> Path:
    """`root` if given, else `$DAREGEN_CACHE`, else default_cache_root() (an absolute folder)."""
    return Path(root or os.environ.get(CACHE_ENV) or default_cache_root())


def llm_cache_dir() -> str:
    """The LLM answer cache's default folder, as text (LLMSettings.cache_dir is a string)."""
    return str(cache_root() / LLM)


def commit_entry(root: Path, key: str, fill: Callable[[Path], None]) -> None:
    """Write a cache entry `root/key` whole or not at all: `fill` writes it in a temporary folder beside
    it, which is then renamed into place. The first writer wins; a concurrent one's work is dropped."""
    final = root / key
    if final.exists():
        return
    tmp = root / f".{key}.tmp-{uuid.uuid4().hex[:8]}"
    tmp.mkdir(parents=True)
    try:
        fill(tmp)
        os.rename(tmp, final)
    except OSError:
        if not final.exists():
            raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
