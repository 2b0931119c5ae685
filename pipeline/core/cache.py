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
DAREGEN_CACHE later still gets its own folder. Entries are written whole (commit_entry); the folders
of tasks/ and dsagent/ are stored with their files' hashes and restored only through copy_checked,
which never follows a link: one mechanism for both caches.
"""

from __future__ import annotations

import os
import shutil
import uuid
from pathlib import Path
from collections.abc import Callable

from pipeline.core.hashing import sha256_file

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


# ------------------------------------------------------------------ entries checked on restore
# The task cache (pipeline/build_cache.py) and the DSAgentBench cache (finalize/dsagent/build.py) store a
# folder with the content hash of each of its files, and check both the entry and the copy against them
# before anything of it reaches a generation. A link or a special file is never followed or kept.

NOT_REGULAR = "not a regular file"


def folder_files(folder: Path) -> dict[str, str]:
    """{path relative to `folder`: sha256 of its bytes} of every file below it; a link or a special
    file is named by its kind (NOT_REGULAR), never followed."""
    out = {}
    for path in sorted(folder.rglob("*")):
        if path.is_symlink() or not (path.is_dir() or path.is_file()):
            out[path.relative_to(folder).as_posix()] = NOT_REGULAR
        elif path.is_file():
            out[path.relative_to(folder).as_posix()] = sha256_file(path)
    return out


def files_problem(stored: dict, found: dict) -> str:
    """The first difference between two folder_files maps, in one phrase ("" when they agree); a link or
    a special file among `found` is one whatever `stored` says (an entry may record it so)."""
    for rel in sorted(set(stored) | set(found)):
        if rel not in found:
            return f"{rel} is missing"
        if found[rel] == NOT_REGULAR:
            return f"{rel} is a link or a special file"
        if rel not in stored:
            return f"{rel} was added"
        if stored[rel] != found[rel]:
            return f"{rel} does not match its content hash"
    return ""


def stored_folder_problem(folder: Path, stored: object) -> str:
    """Why the cached `folder` is not the one stored with the hashes `stored` ("" when it is): it is a
    link or not a folder, the entry records no hashes, or a file differs (files_problem)."""
    if not isinstance(stored, dict):
        return "the entry records no content hashes"
    if folder.is_symlink() or not folder.is_dir():
        return f"{folder.name} is not a folder"
    return files_problem(stored, folder_files(folder))


FILE_MODE, DIR_MODE = 0o644, 0o755  # what a fresh build writes (core/jsonio.FILE_MODE, mkdir under umask 022)


def reset_modes(folder: Path) -> None:
    """Give `folder` and everything below it the modes a fresh build writes (files 0644, folders 0755),
    whatever the cache entry held: a mode is not in the stored hashes, so an entry's world-writable or
    set-uid bit must never reach a generation. A link is left alone (the check refuses it)."""
    os.chmod(folder, DIR_MODE)
    for path in folder.rglob("*"):
        if not path.is_symlink():
            os.chmod(path, DIR_MODE if path.is_dir() else FILE_MODE)


def copy_checked(src: Path, dest: Path, stored: dict) -> str:
    """Copy the cached folder `src` to `dest` (bytes only, never modes; links copied as links, never
    followed) and check the copy against `stored`, which catches an entry changed since it was checked;
    on a difference the copy is removed and the difference returned ("" when the copy is the stored folder)."""
    problem = stored_folder_problem(src, stored)
    if not problem:
        shutil.copytree(src, dest, symlinks=True, copy_function=shutil.copyfile)
        reset_modes(dest)
        problem = stored_folder_problem(dest, stored)
        if problem:
            shutil.rmtree(dest, ignore_errors=True)
    return problem


def is_folder_name(name: object) -> bool:
    """Whether `name` is one plain folder name (no separator, not `.` or `..`): what a cached folder's
    name must be, since the build joins it to the generation it writes."""
    return (isinstance(name, str) and name not in ("", ".", "..") and "/" not in name and "\\" not in name
            and "\0" not in name)


def discard_entry(root: Path, key: str) -> None:
    """Remove an entry that failed its check (a link in its place too), so a rebuild can store a good one
    under the same key."""
    entry = root / key
    if entry.is_symlink():
        entry.unlink(missing_ok=True)
    else:
        shutil.rmtree(entry, ignore_errors=True)
