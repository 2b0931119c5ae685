"""Where daregen keeps what it can fetch or compute again: one root, `$DAREGEN_CACHE`, and its folders.

    $DAREGEN_CACHE (default .cache/daregen, relative to the working directory)
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
DEFAULT_CACHE = Path(".cache/daregen")

TASKS = "tasks"
SOURCES = "sources"
DSAGENT = "dsagent"
DOWNLOADS = "downloads"
OPENML = "openml"
KAGGLE = "kaggle"
LLM = "llm"


def cache_root(root: str | Path | None = None) -> Path:
    """`root` if given, else `$DAREGEN_CACHE`, else .cache/daregen (not resolved: as the user spelled it)."""
    return Path(root or os.environ.get(CACHE_ENV) or DEFAULT_CACHE)


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
