"""`daregen curate approve|reject|pin|unset REF ...`: one decision into the ledger; `curate status TREE`.

The ledger is the curators' file, with their comments and their order: it is edited as a TOML
document (tomlkit), never re-serialised from the model. A ledger reached through a symbolic link is
edited at its target (the link stays, and the curators' real ledger gets the decision); a FIFO, a
device or a file over the size cap is refused in one line, before any lock is taken. Each edit
holds an exclusive flock on the ledger's folder for its read-modify-write (no lock file is left
beside the ledger), checks the whole result with the same model and source checks a build applies
(pipeline.core.curation, pipeline.curation_check), and replaces the file atomically (a temporary
file in the same folder, fsync, rename), so two curators editing at once, or a kill, never leave a
half-written or invalid ledger.

An approval names a task as a tree holds it: `approve --tree TREE` takes the task's design digest
there, and a `--digest` given beside it must be that digest. One approval per task: approving again
replaces it.
"""

from __future__ import annotations

import contextlib
import difflib
import fcntl
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import tomlkit
from tomlkit.items import AoT, Table

from pipeline.commands import command
from pipeline.core.curation import (DECISION_KINDS, LEDGER_SOURCES, Ledger, ledger_target, parse_ledger,
                                    read_ledger_text)
from pipeline.curation_check import check_ledger
from sourcing.registry import open_source, parse_sources, source_kind
from sourcing.sources_file import resolve_spec
from pipeline.review.reports import LINKED_TASK, linked_task_dirs
from pipeline.review.curation import REJECTED, TaskReview, approval_text, tree_reviews, unmatched_approvals


@contextlib.contextmanager
def ledger_lock(path: Path) -> Iterator[None]:
    """An exclusive lock on the ledger's folder for one read-modify-write of the ledger: the ledger itself
    is replaced by each write (a lock on it would lock the old file), and a lock file would be left."""
    fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def _write_atomically(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        if path.exists():
            os.chmod(tmp, path.stat().st_mode & 0o777)
        else:
            os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _matches(item: Table, ref: str, problem_type: str | None, any_type: bool = False) -> bool:
    return item.get("ref") == ref and (any_type or item.get("problem_type") == problem_type)


def _remove(doc: tomlkit.TOMLDocument, kind: str, ref: str, problem_type: str | None = None) -> int:
    """Remove every `kind` entry naming `ref` (only those of `problem_type`, given one), in place (the
    others keep their place and comments)."""
    entries = doc.get(kind)
    if not isinstance(entries, AoT):
        return 0
    doomed = [i for i, t in enumerate(entries) if _matches(t, ref, problem_type, any_type=problem_type is None)]
    for i in reversed(doomed):
        del entries[i]
    if not len(entries):
        del doc[kind]
    return len(doomed)


def _put(doc: tomlkit.TOMLDocument, kind: str, fields: dict, any_type: bool = False) -> None:
    """Set the `kind` entry of (fields' ref, problem type) to `fields`: the existing entry is updated in
    place (its comments stay), else a new one is appended. Empty fields are left out."""
    wanted = {k: list(v) if isinstance(v, tuple) else v for k, v in fields.items() if v not in (None, (), "")}
    entries = doc.get(kind)
    current = next((t for t in entries if _matches(t, fields["ref"], fields.get("problem_type"), any_type)), None) \
        if isinstance(entries, AoT) else None
    if current is None:
        table = tomlkit.table()
        table.update(wanted)
        if isinstance(entries, AoT):
            entries.append(table)
        else:
            doc[kind] = AoT([table])
        return
    for key in [k for k in current if k not in wanted]:
        del current[key]
    for key, value in wanted.items():
        if current.get(key) != value:
            current[key] = value


def offline_specs(sources: str) -> list[str]:
    """The specs of `sources` (a spec or a sources file) whose datasets a ledger can name and an edit can check
    offline, besides the built-in corpus: local folders and SQLite files, their paths made absolute."""
    return [f"{key}:{os.path.abspath(arg)}" for key, arg in parse_sources(resolve_spec(sources))
            if key != "builtin" and arg and not source_kind(key).needs_network]


def _openable(specs) -> list[str]:
    """The recorded specs that still open (a folder that moved is skipped: `--sources` names its new place)."""
    out = []
    for spec in specs:
        try:
            key, _, arg = spec.partition(":")
            open_source(key, arg or None)
        except ValueError:
            continue
        out.append(spec)
    return out


def _record_sources(doc: tomlkit.TOMLDocument, sources: str) -> None:
    """Add the offline specs of `sources` to the ledger's `sources` key (its first key, before any table)."""
    recorded = [str(s) for s in doc.get(LEDGER_SOURCES) or []]
    wanted = list(dict.fromkeys([*recorded, *offline_specs(sources)]))
    if wanted != recorded:
        doc[LEDGER_SOURCES] = wanted


def edit_ledger(path: Path, sources: str | None, change, ref: str, check_ref: bool = True) -> Ledger:
    """Apply `change(doc)` to the ledger at `path` (created if absent) under its lock; the result is
    checked as a build would check it (ValueError, file untouched) and written atomically.

    Only the entries naming `ref` (the ones this edit touched) are checked against the sources: the others were
    checked when they were written, so an edit never fails on an entry it did not make. The sources are
    `sources` (whose local folders and SQLite files the ledger then records), else the ones it recorded, else
    the built-in corpus; `check_ref` False skips the check (an approval: its tree holds the task)."""
    shown, path = Path(path), ledger_target(Path(path))  # a link is edited at its target
    read_ledger_text(shown)  # a special file or one over the cap is refused before the lock is taken
    with ledger_lock(path):
        text = read_ledger_text(shown) or ""
        try:
            doc = tomlkit.parse(text)
        except tomlkit.exceptions.ParseError as exc:
            raise ValueError(f"curation ledger {shown}: {exc}") from None
        except RecursionError:
            raise ValueError(f"curation ledger {shown}: nested too deep to be a ledger") from None
        change(doc)
        if sources is not None:
            _record_sources(doc, sources)
        ledger = parse_ledger(doc.unwrap(), str(shown))
        if check_ref:
            recorded = _openable(ledger.sources)
            spec = sources if sources is not None else ",".join(recorded) or "builtin"
            hint = ("" if sources is not None else
                    "; name the folder that holds it once with --sources local:DIR (the ledger records it)")
            check_ledger(ledger.for_ref(ref), spec, str(shown), unknown_hint=hint)
        _write_atomically(path, tomlkit.dumps(doc))
    return ledger


def approve(path: Path, sources: str | None, ref: str, problem_type: str | None, digest: str | None,
            tree: Path | None, reviewer: str, note: str) -> str:
    """Approve a task as the tree `tree` holds it (at its design digest there; a `digest` given too must be
    that one); returns a line saying what was approved. Replaces any approval of the same task. `ref` is the
    dataset's ref or the task's folder in the tree (what `curate status` lists). The tree holds the task, so its
    ref is checked against the sources only when `sources` are given."""
    if tree is None:
        raise ValueError("curate approve: name the tree the task was reviewed in (--tree TREE): an approval "
                         "must match a design digest a tree holds")
    review = _task_in_tree(Path(tree), ref, problem_type)
    ref = review.ref
    if digest is not None and digest != review.digest:
        raise ValueError(f"curate approve: --digest {digest} is not the design digest of {review.task_dir} in "
                         f"{tree} ({review.digest}); approve what the tree holds")
    digest, problem_type = review.digest, review.problem_type

    def change(doc: tomlkit.TOMLDocument) -> None:
        if _untyped_approval(doc, ref):  # one approval per task: an untyped one covers this task too
            _remove(doc, "approve", ref, None)
        _put(doc, "approve", {"ref": ref, "problem_type": problem_type, "digest": digest, "reviewer": reviewer,
                              "note": note})

    edit_ledger(path, sources, change, ref, check_ref=sources is not None)
    return (f"approved {ref}" + (f" ({problem_type})" if problem_type else "") + f" at design digest {digest} "
            f"(task {review.task_dir})")


def _untyped_approval(doc: tomlkit.TOMLDocument, ref: str) -> bool:
    """Whether the ledger approves `ref` with no problem type (it then covers the task being approved)."""
    entries = doc.get("approve")
    return isinstance(entries, AoT) and any(_matches(t, ref, None) for t in entries)


def _task_in_tree(tree: Path, ref: str, problem_type: str | None) -> TaskReview:
    """The task of `tree` that `ref` names: a dataset's ref (and `problem_type` when it has two tasks) or a task
    folder; ValueError with the nearest names the tree holds."""
    reviews = tree_reviews(tree)
    found = [r for r in reviews if ref in (r.ref, r.task_dir.rstrip("/")) and problem_type in (None, r.problem_type)]
    if not found:
        known = sorted({r.ref for r in reviews} | {r.task_dir for r in reviews})
        close = difflib.get_close_matches(ref.rstrip("/"), known, n=3, cutoff=0.5)
        hint = (f"; did you mean {' or '.join(map(repr, close))}?" if close else
                f" (`curate status {tree}` lists its tasks)")
        raise ValueError(f"curate approve: no task of {ref!r}" + (f" ({problem_type})" if problem_type else "")
                         + f" in {tree}{hint}")
    if len(found) > 1:
        raise ValueError(f"curate approve: {ref!r} has {len(found)} tasks in {tree}; name one with --problem-type "
                         f"({', '.join(r.problem_type for r in found)})")
    return found[0]


def reject(path: Path, sources: str | None, ref: str, problem_type: str | None, reason: str) -> str:
    edit_ledger(path, sources, lambda doc: _put(doc, "reject", {"ref": ref, "problem_type": problem_type,
                                                                "reason": reason}), ref)
    return f"rejected {ref}" + (f" ({problem_type})" if problem_type else "")


def pin(path: Path, sources: str | None, ref: str, problem_type: str | None, target: tuple[str, ...],
        drop: tuple[str, ...], seed: int | None) -> str:
    # one pin per dataset: a new pin of the ref replaces the old one, whatever its problem type
    edit_ledger(path, sources, lambda doc: _put(doc, "pin", {"ref": ref, "target": target,
                                                             "problem_type": problem_type, "drop": drop,
                                                             "seed": seed}, any_type=True), ref)
    return f"pinned {ref}" + (f": target {', '.join(target)}" if target else "")


def unset(path: Path, sources: str | None, ref: str, kinds: tuple[str, ...], problem_type: str | None = None) -> str:
    """Remove every decision of `kinds` (all by default) naming `ref`, or only those of its task of
    `problem_type`; ValueError when there is none."""
    removed: list[int] = []

    def remove(doc: tomlkit.TOMLDocument) -> None:
        removed.extend(_remove(doc, k, ref, problem_type) for k in kinds or DECISION_KINDS)
        if not sum(removed):  # raised before the write: the file stays as it was
            raise ValueError(f"curate unset: the ledger {path} has no decision on {ref!r}"
                             + (f" ({problem_type})" if problem_type else ""))

    edit_ledger(path, sources, remove, ref)
    return f"removed {sum(removed)} decision(s) on {ref}"


def status_lines(tree: Path, ledger: Ledger | None, ledger_path: str | None = None) -> list[str]:
    """One line per task (state, task folder, digest), grouped by state, then the counts, then the command that
    approves one of them as listed (its task folder), with the ledger `ledger_path` when one was named."""
    reviews = tree_reviews(Path(tree), ledger)
    order = {"changed since approval": 0, "unreviewed": 1, "pinned": 2, "approved": 3, REJECTED: 4}
    lines = []
    width = max((len(r.task_dir) for r in reviews), default=0)  # the digests in one column, whatever the names
    reviews = sorted(reviews, key=lambda r: (order.get(r.state, 9), r.task_dir))
    for r in reviews:
        extra = f" (approved {r.approved_digest})" if r.state == "changed since approval" else \
            f" (by {r.reviewer})" if r.state == "approved" and r.reviewer else \
            f" ({r.note})" if r.state == REJECTED else ""
        lines.append(f"{r.state:<23} {r.task_dir:<{width}}  {r.digest}{extra}")
    counts = {s: n for s in order if (n := sum(r.state == s for r in reviews)) or s != REJECTED}
    lines += [f"{'refused':<23} {name:<{width}}  {LINKED_TASK}" for name in linked_task_dirs(Path(tree))]
    lines.append(", ".join(f"{n} {s}" for s, n in counts.items()) + f" ({len(reviews)} tasks)")
    if ledger is not None:  # what the ledger approves that this tree does not hold
        lines += [f"{'unmatched approval':<23} {approval_text(a)}: no task of this tree"
                  for a in unmatched_approvals(reviews, ledger)]
    pending = [r for r in reviews if r.state not in ("approved", REJECTED)]
    if pending:  # what a curator runs next, on the first task listed (approve takes the task folder)
        ledger_words = ("--curation", ledger_path) if ledger_path else ()
        run = command("curate", "approve", pending[0].task_dir, "--tree", tree, *ledger_words)
        lines.append(f"approve a task as listed: {run}")
    return lines
