"""The edges of a build: generations, the root files, and the atomic switch of the published pointer.

`--out` is a symlink to the published generation, so everything that reads a
DARE tree at `--out` keeps working. Each build writes a new generation folder
`.<out name>.generations/<id>.partial` beside it; only once the generation is
complete and checked is it renamed to `<id>` and the pointer replaced in one
`os.replace` of a fresh symlink (atomic on POSIX). A failed, killed or partial
build therefore never changes what `--out` shows; its leftovers are removed by
the next build. The generation id names folders only and never appears inside a
task file, so two builds of the same inputs stay byte-identical.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import time
import uuid
from contextlib import contextmanager
from pathlib import Path

from pipeline.core import names
from pipeline.core.crash_points import CRASH_MARKER_ENV, CRASH_POINT_ENV, crash_point  # noqa: F401 (re-exported)
from pipeline.review.diff import DIFF_HTML, DIFF_MD
from pipeline.review.reports import TREE_REPORT_FILES
from pipeline.core.hashing import content_hash
from pipeline.core.jsonio import read_json, write_json
from pipeline.core.safe_io import UnsafeInput, read_json_inside, regular_file_inside

# Written at the root by a build but outside the manifest: they hold timings, or compare this
# generation with another one (the diff), or summarise the tree rather than being part of it.
REPORT_FILES = (names.RUN_REPORT_JSON, names.RUN_REPORT_MD)
DIFF_FILES = (DIFF_MD, DIFF_HTML)
UNHASHED = frozenset((*REPORT_FILES, *DIFF_FILES, *TREE_REPORT_FILES, names.MANIFEST))
PARTIAL = ".partial"
KEEP_GENERATIONS = 3


def generations_dir(out: Path) -> Path:
    out = Path(os.path.abspath(out))
    return out.parent / f".{out.name}.generations"


def published_generation(out: Path) -> Path | None:
    """The generation `out` points at (None if nothing is published or `out` is a plain folder)."""
    out = Path(os.path.abspath(out))
    return out.resolve() if out.is_symlink() and out.resolve().is_dir() else None


@contextmanager
def build_lock(out: Path):
    """One build at a time per output: a second one fails at once with a clear reason. The lock is
    an flock, so a killed build releases it; its partial generation is removed here."""
    gens = generations_dir(out)
    gens.mkdir(parents=True, exist_ok=True)
    with open(gens / ".lock", "w") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ValueError(f"another build is writing {out} (lock {gens / '.lock'})") from None
        for leftover in gens.glob(f"*{PARTIAL}"):
            shutil.rmtree(leftover, ignore_errors=True)
        for leftover in gens.glob(".current-*"):
            leftover.unlink(missing_ok=True)
        yield gens


USER_FOLDER_PREFIX = "user-folder-"  # a plain folder moved aside by --force: never pruned


def _is_daregen_tree(folder: Path) -> bool:
    """A plain-folder tree an older daregen published: its manifest lists every task of its question
    list, and every file it lists is there with the content hash it records. A folder that merely holds a
    `manifest.json` and a `question_list.json` is not one (it would be moved aside and later pruned)."""
    try:
        manifest = read_json_inside(folder / names.MANIFEST, folder)
        questions = read_json_inside(folder / names.QUESTION_LIST, folder)
        files = manifest.get("files") if isinstance(manifest, dict) else None
        if not isinstance(files, dict) or not files or not isinstance(questions, list):
            return False
        listed = {f"{q.get('file_path')}/{names.VERIFY_DIR}/{names.ALL_METADATA}" for q in questions
                  if isinstance(q, dict)}
        if len(listed) != len(questions) or not listed <= set(files):
            return False
        return all(isinstance(rel, str) and content_hash(regular_file_inside(folder / rel, folder)) == digest
                   for rel, digest in files.items())
    except (UnsafeInput, OSError, ValueError, TypeError):
        return False


def _published_tree_around(out: Path) -> Path | None:
    """The daregen tree `out` would land inside: a generation (reached through its pointer or not), or
    an older daregen's plain-folder tree above it."""
    real = Path(os.path.realpath(out.parent)) / out.name  # `out` itself may be the pointer to a generation
    for parent in real.parents:
        if parent.name.startswith(".") and parent.name.endswith(".generations"):
            return parent
        if parent.parent.name.startswith(".") and parent.parent.name.endswith(".generations"):
            return parent
        if (parent / names.MANIFEST).is_file() and (parent / names.QUESTION_LIST).is_file():
            return parent
    return None


def _never_moved(out: Path) -> bool:
    """Folders --force must not move aside: the working folder (the sources and the cache with it) and
    every folder above it, the home folder, the root."""
    cwd = Path(os.path.realpath(os.getcwd()))
    real = Path(os.path.realpath(out))
    return real in (cwd, *cwd.parents, Path(os.path.realpath(os.path.expanduser("~"))), Path("/"))


def check_out_target(out: Path, force: bool = False) -> None:
    """Refuse an `out` that daregen did not create: anything but nothing, a generation pointer, an empty
    folder or an older daregen's plain-folder tree, unless `force` (then it is moved aside as
    `user-folder-<id>` beside the generations and never deleted). An `out` inside a published tree, and
    (even with `force`) the working folder, its parents and the home folder, are always refused."""
    out = Path(os.path.abspath(out))
    tree = _published_tree_around(out)
    if tree is not None:
        raise ValueError(f"--out {out} is inside the daregen tree {tree}; choose an --out outside it")
    if out.is_symlink() or not os.path.lexists(out):
        return
    if not out.is_dir():
        raise ValueError(f"--out {out} exists and is not a folder; choose another --out")
    if not any(out.iterdir()) or _is_daregen_tree(out):
        return
    if force and _never_moved(out):
        raise ValueError(f"--out {out} is the working folder, one above it or the home folder, which --force "
                         f"never moves; choose another --out")
    if force:
        return
    raise ValueError(f"--out {out} is a non-empty folder daregen did not write; choose another --out, or pass "
                     f"--force to move it aside (kept, never deleted, in {generations_dir(out)})")


def new_generation(out: Path) -> Path:
    """An empty partial generation; its id is its UTC start time to the microsecond, so ids sort
    in build order (builds of one output are serialised by `build_lock`)."""
    now = time.time_ns() // 1000
    gid = time.strftime("%Y%m%dT%H%M%S", time.gmtime(now // 1_000_000)) + f".{now % 1_000_000:06d}Z"
    path = generations_dir(out) / f"{gid}{PARTIAL}"
    path.mkdir(parents=True)
    return path


def sealed_path(partial: Path) -> Path:
    """Where a partial generation lives once published: `<id>.partial` -> `<id>`."""
    return partial.with_name(partial.name.removesuffix(PARTIAL))


def write_question_list(root: Path, entries: list[dict]) -> None:
    write_json(root / names.QUESTION_LIST, sorted(entries, key=lambda e: e["file_path"]))


def build_manifest(root: Path, meta: dict) -> dict:
    """Content hash of every task file and the question list (not the reports)."""
    files = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = path.relative_to(root).as_posix()
        if rel in UNHASHED:
            continue
        files[rel] = content_hash(path)
    return {**meta, "files": files}


def check_generation(root: Path) -> list[str]:
    """Problems that forbid publishing a generation: a listed task without its files, a file the
    manifest names that is missing. (Content checks ran per task in finalize.)"""
    problems = []
    manifest = read_json(root / names.MANIFEST)
    for rel in manifest["files"]:
        if not (root / rel).is_file():
            problems.append(f"{rel}: in the manifest but missing")
    for entry in read_json(root / names.QUESTION_LIST):
        if not (root / entry["file_path"] / names.VERIFY_DIR / names.ALL_METADATA).is_file():
            problems.append(f"{entry['file_path']}: listed but has no {names.ALL_METADATA}")
    return problems


def _managed_names(tree: Path) -> set[str]:
    """Top-level entries a build wrote (everything else in a generation is the user's)."""
    managed = set(UNHASHED) | {names.QUESTION_LIST}
    manifest = tree / names.MANIFEST
    if manifest.exists():
        managed |= {rel.split("/", 1)[0] for rel in read_json(manifest).get("files", {})}
    return managed


def carry_user_files(old: Path, new: Path) -> None:
    """Copy files the user keeps in the published tree (e.g. a README) into the new generation;
    copied, not moved, so the old generation stays whole. A link is carried as the link itself, never
    followed (the next generation must not get a real copy of whatever it points at), and links inside a
    carried folder stay links; a FIFO, socket or device is not carried."""
    managed = _managed_names(old)
    for entry in sorted(old.iterdir()):
        if entry.name in managed or os.path.lexists(new / entry.name):
            continue
        if entry.is_symlink():
            os.symlink(os.readlink(entry), new / entry.name)
        elif entry.is_dir():
            shutil.copytree(entry, new / entry.name, symlinks=True)
        elif entry.is_file():
            shutil.copy2(entry, new / entry.name, follow_symlinks=False)


def publish(partial: Path, out: Path, keep: int = KEEP_GENERATIONS) -> Path:
    """Seal `partial` as a generation and point `out` at it atomically; returns the generation.

    A plain-folder `out` from an older daregen is first moved into the generations as
    `legacy-<id>` (the one moment `out` is briefly absent); any other folder only reaches here with
    --force, and is kept as `user-folder-<id>`."""
    out = Path(os.path.abspath(out))
    gens = partial.parent
    previous = published_generation(out)
    if previous is not None:
        carry_user_files(previous, partial)
    elif out.is_dir() and not out.is_symlink():
        if not any(out.iterdir()):
            out.rmdir()
        elif _is_daregen_tree(out):
            carry_user_files(out, partial)
            os.replace(out, gens / f"legacy-{uuid.uuid4().hex[:6]}")
        else:  # only with --force (check_out_target): the user's folder, moved aside and never pruned
            os.replace(out, gens / f"{USER_FOLDER_PREFIX}{uuid.uuid4().hex[:6]}")
    final = sealed_path(partial)
    os.replace(partial, final)
    crash_point("switch")
    link = gens / f".current-{uuid.uuid4().hex[:8]}"
    os.symlink(os.path.relpath(final, out.parent), link)  # relative: the tree can be moved whole
    os.replace(link, out)
    prune_generations(out, keep)
    return final


def publish_mode(generation: Path) -> str:
    """The publish mode a generation was built under, from its manifest (names.PUBLISH_MODES; `all` when the
    manifest says nothing, as every generation before the mode was recorded)."""
    try:
        manifest = read_json_inside(generation / names.MANIFEST, generation)
    except (UnsafeInput, OSError, ValueError):
        return names.PUBLISH_MODES[0]
    mode = manifest.get("publish") if isinstance(manifest, dict) else None
    return mode if mode in names.PUBLISH_MODES else names.PUBLISH_MODES[0]


def prune_generations(out: Path, keep: int) -> None:
    """Keep the newest `keep` sealed generations of each publish mode (never the published one): a generation
    only curators' approvals let through is rotated away by newer approved ones, never by runs that published
    every task (three unreviewed nightlies would otherwise take the last approved release with them)."""
    gens = generations_dir(out)
    current = published_generation(out)
    sealed = sorted((p for p in gens.iterdir() if p.is_dir() and not p.is_symlink() and not p.name.endswith(PARTIAL)
                     and not p.name.startswith((".", USER_FOLDER_PREFIX))),
                    key=lambda p: (not p.name.startswith("legacy-"), p.name))  # a legacy tree is the oldest
    for mode in names.PUBLISH_MODES:
        of_mode = [p for p in sealed if publish_mode(p) == mode]
        for old in of_mode[: max(0, len(of_mode) - max(1, keep))]:
            if old != current:
                shutil.rmtree(old, ignore_errors=True)
