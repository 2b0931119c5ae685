"""Curator review of a regeneration: what changed between two DARE-layout trees.

`diff_trees(old, new)` compares two trees task by task (added, removed, changed)
and, for each changed task, says which `all_metadata.json` fields changed (with
readable JSON paths and old -> new values), which data files changed row count,
which ground-truth files changed content, and how the instruction texts changed
word by word. `write_diff_reports` renders that as Markdown and as one
self-contained HTML page. Either tree may be missing or empty (a first
generation), and the output is a pure function of the two trees: no timestamps,
tasks and fields in a stable order, so the reports themselves diff cleanly.
"""

from __future__ import annotations

import difflib
import json
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from pipeline.core import names
from pipeline.core.curation import UNDIGESTED, Ledger
from pipeline.core.hashing import content_hash, sha256_file
from pipeline.core.jsonio import write_text
from pipeline.core.safe_io import InputLimits, UnsafeInput, check_table_file, printable, regular_file_inside
from pipeline.core.text import block_text, html_text, md_cell, md_code, shorten
from pipeline.review.curation import TaskReview, approval_text, state_counts, tree_reviews, unmatched_approvals
from pipeline.review.reports import (DATA_SUFFIXES, TREE_REPORT_FILES, count_rows, question_entries,
                                     LINKED_TASK, read_json_or_none, task_dirs, linked_task_dirs)

INSTRUCTION_KEYS = ("question_v1", "question_v2")
# question_list.json fields compared besides the instructions (which get a word diff of their own).
_ENTRY_PREFIX = "question_list"
# Top-level all_metadata.json blocks in the order a curator reads them: the task first, provenance last.
_BLOCK_ORDER = ("question", "daregen", "data_info", "meta_data")
# Within the question block, the choices that define a task come before the file paths.
_FIRST_FIELDS = ("question.problem_type", "question.target", "question.model_type", "question.selected_features",
                 "question.random_state", "question.expected_ranges", "question.imputer_type",
                 "question.train_test_ratio", "question.save_file_type")
_DECISION_FIELDS = 5  # changed fields a decision names; the changed task's own section lists them all
_LONG_TEXT = 120  # a changed string longer than this is shown as a word diff, not old -> new
DIFF_MD = names.DIFF_MD
DIFF_HTML = "diff.html"
_CONTEXT_WORDS = 8  # unchanged words kept on each side of a change in a rendered word diff
# Root files left out of the comparison: run reports hold timings (they always differ), and the
# tree and diff reports are derived from what is compared.
_NOT_COMPARED = frozenset({names.RUN_REPORT_JSON, names.RUN_REPORT_MD, *TREE_REPORT_FILES, DIFF_MD, DIFF_HTML})


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class FieldChange(_Frozen):
    """One JSON value that differs; `path` reads like `question.expected_ranges.age[1]`."""

    path: str
    kind: Literal["added", "removed", "changed"]
    old: Any = None
    new: Any = None


class RowCountChange(_Frozen):
    file: str  # `source/train_v2.csv`, or `source/train_v1.sqlite:table_1` for one table
    old: int | None  # None: the file (or table) is new
    new: int | None  # None: the file (or table) is gone


class HashChange(_Frozen):
    file: str
    old: str | None
    new: str | None


class WordOp(_Frozen):
    op: Literal["=", "-", "+"]
    text: str


class WordDiff(_Frozen):
    key: str  # question_v1 | question_v2
    ops: tuple[WordOp, ...]
    reordered: bool = False  # the same words (punctuation aside) in another order: no word-by-word markup

    @property
    def added_words(self) -> int:
        return sum(len(o.text.split()) for o in self.ops if o.op == "+")

    @property
    def removed_words(self) -> int:
        return sum(len(o.text.split()) for o in self.ops if o.op == "-")


class TaskChange(_Frozen):
    task_dir: str
    # The old folder when the task changed problem type and so its name (`x_class` -> `x_reg`): one
    # dataset's task, shown as one change rather than a removal plus an addition.
    old_task_dir: str | None = None
    fields: tuple[FieldChange, ...] = ()
    row_counts: tuple[RowCountChange, ...] = ()
    ground_truth: tuple[HashChange, ...] = ()
    files_changed: tuple[str, ...] = ()  # every file whose content differs (data, text, verify/)
    files_added: tuple[str, ...] = ()
    files_removed: tuple[str, ...] = ()
    instructions: tuple[WordDiff, ...] = ()

    @property
    def changed(self) -> bool:
        return bool(self.old_task_dir or self.fields or self.row_counts or self.ground_truth or self.files_changed
                    or self.files_added or self.files_removed or self.instructions)


class Decision(_Frozen):
    """A task of the new tree a curator has to look at: approved before but changed since (with the
    fields that changed, when the old tree had it), or new and not approved; or, under a ledger, an
    approval that names no task of the new tree (`task_dir` then names the approved task)."""

    task_dir: str
    why: Literal["changed since approval", "new", "unmatched approval"]
    state: str  # the task's curation state (pipeline.core.curation.CURATION_STATES)
    design_digest: str
    approved_digest: str = ""
    fields: tuple[str, ...] = ()


class TreeDiff(_Frozen):
    old: str
    new: str
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    changed: tuple[TaskChange, ...] = ()
    unchanged: tuple[str, ...] = ()
    root_files_changed: tuple[str, ...] = Field(default=(), description="question_list.json, manifest.json, ...")
    # How the two trees were built (manifest.json without its file hashes): seed, sources, code version, ...
    build_settings: tuple[FieldChange, ...] = ()
    # Removed task -> why, from the new tree's run report (its dataset's rejection), where it says.
    removed_why: dict[str, str] = Field(default_factory=dict)
    # What the reports open with: changed since approval first, then new tasks nobody approved.
    needs_decision: tuple[Decision, ...] = ()
    # New tree's tasks per curation state (pipeline.core.curation.CURATION_STATES).
    curation: dict[str, int] = Field(default_factory=dict)
    # Entries of the new tree that are links to a task folder: refused, never walked (reports.LINKED_TASK).
    refused: tuple[str, ...] = ()

    @property
    def identical(self) -> bool:
        return not (self.added or self.removed or self.changed)

    def summary(self) -> str:
        return (f"{len(self.added)} added, {len(self.removed)} removed, {len(self.changed)} changed, "
                f"{len(self.unchanged)} unchanged" + (f", {len(self.refused)} refused" if self.refused else ""))


# ------------------------------------------------------------------ JSON fields


_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _join(path: str, key: Any) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    key = str(key)
    if _IDENT.match(key):
        return f"{path}.{key}" if path else key
    return f"{path}[{json.dumps(key, ensure_ascii=False)}]"


def _is_scalar_list(value: Any) -> bool:
    return isinstance(value, list) and all(not isinstance(v, (dict, list)) for v in value)


def _members(values: list) -> list[str]:
    return [json.dumps(v, sort_keys=True) for v in values]


def _same_members(old: list, new: list) -> bool:
    """The same members in another order (a reordered list is one change, shown as `reordered`)."""
    return old != new and sorted(_members(old)) == sorted(_members(new))


def json_changes(old: Any, new: Any, path: str = "") -> list[FieldChange]:
    """Differences between two JSON values, depth first, keys sorted.

    A list of scalars (features, targets, a range) changes as one value: an index-by-index
    diff of `selected_features` after one insertion would report every later position.
    """
    if isinstance(old, dict) and isinstance(new, dict):
        out: list[FieldChange] = []
        for key in sorted(set(old) | set(new), key=str):
            sub = _join(path, key)
            if key not in new:
                out.append(FieldChange(path=sub, kind="removed", old=old[key]))
            elif key not in old:
                out.append(FieldChange(path=sub, kind="added", new=new[key]))
            else:
                out += json_changes(old[key], new[key], sub)
        return out
    if (isinstance(old, list) and isinstance(new, list) and len(old) == len(new)
            and not (_is_scalar_list(old) and _is_scalar_list(new)) and not _same_members(old, new)):
        out = []
        for i, (a, b) in enumerate(zip(old, new)):
            out += json_changes(a, b, _join(path, i))
        return out
    # Same value and same JSON type (1 and 1.0 print differently in the task file, so they differ).
    if old == new and type(old) is type(new):
        return []
    return [FieldChange(path=path or "(root)", kind="changed", old=old, new=new)]


def metadata_changes(old: dict, new: dict) -> list[FieldChange]:
    """all_metadata.json changes, grouped by block in reading order (question, daregen, data_info, meta_data)."""
    changes = json_changes(old, new)
    rank = {block: i for i, block in enumerate(_BLOCK_ORDER)}
    first = {path: i for i, path in enumerate(_FIRST_FIELDS)}

    def key(c: FieldChange) -> tuple[int, int]:
        parts = re.split(r"[.\[]", c.path, maxsplit=2)
        return (rank.get(parts[0], len(rank)), first.get(".".join(parts[:2]), len(first)))

    return sorted(changes, key=key)  # stable: the rest keep their sorted-key order


# ------------------------------------------------------------------ words


def _words(text: str) -> list[str]:
    """Word tokens that keep their leading whitespace, so joining the tokens gives the text back."""
    return re.findall(r"\s*\S+|\s+$", text or "")


def _bare_words(text: str) -> list[str]:
    return sorted(w for w in (re.sub(r"[^\w]", "", t) for t in (text or "").split()) if w)


def word_diff(old: str, new: str, key: str = "") -> WordDiff:
    if old != new and _bare_words(old) == _bare_words(new):  # a reordered list reads as a wall of markup
        return WordDiff(key=key, ops=(WordOp(op="=", text=new),), reordered=True)
    a, b = _words(old), _words(new)
    ops: list[WordOp] = []
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            ops.append(WordOp(op="=", text="".join(a[i1:i2])))
            continue
        if i2 > i1:
            ops.append(WordOp(op="-", text="".join(a[i1:i2])))
        if j2 > j1:
            ops.append(WordOp(op="+", text="".join(b[j1:j2])))
    return WordDiff(key=key, ops=tuple(ops))


def _elide(text: str, where: str) -> str:
    """Unchanged text cut to a few words of context: `where` is head, tail, middle or all."""
    words = _words(text)
    n = _CONTEXT_WORDS
    if len(words) <= 2 * n + 1 or where == "all":
        return text
    if where == "head":  # text before the first change: keep its end
        return " …" + "".join(words[-n:])
    if where == "tail":
        return "".join(words[:n]) + " …"
    return "".join(words[:n]) + " …" + "".join(words[-n:])


def _pieces(d: WordDiff) -> list[tuple[str, str]]:
    """(op, text) with long unchanged runs elided to their context."""
    out = []
    last = len(d.ops) - 1
    for i, o in enumerate(d.ops):
        if o.op == "=":
            where = "all" if len(d.ops) == 1 else "head" if i == 0 else "tail" if i == last else "middle"
            out.append(("=", _elide(o.text, where)))
        else:
            out.append((o.op, o.text))
    return out


def word_diff_markdown(d: WordDiff) -> str:
    """git's --word-diff=plain markup: [-removed-]{+added+}."""
    marks = {"=": "{}", "-": "[-{}-]", "+": "{{+{}+}}"}
    text = ""
    for op, piece in _pieces(d):
        if op == "=":
            text += piece
        else:  # leading whitespace stays outside the markup so the words read naturally
            stripped = piece.lstrip()
            text += piece[: len(piece) - len(stripped)] + marks[op].format(stripped)
    return text.strip()


def word_diff_html(d: WordDiff) -> str:
    text = ""
    for op, piece in _pieces(d):
        if op == "=":
            text += html_text(piece)
        else:
            stripped = piece.lstrip()
            tag = "del" if op == "-" else "ins"
            text += html_text(piece[: len(piece) - len(stripped)]) + f"<{tag}>{html_text(stripped)}</{tag}>"
    return text.strip()


# ------------------------------------------------------------------ files


def _task_files(task_dir: Path) -> dict[str, Path]:
    """Every entry but folders: a link or a FIFO is listed too, and compared by _digest's refusal."""
    return {p.relative_to(task_dir).as_posix(): p
            for p in sorted(task_dir.rglob("*")) if p.is_symlink() or not p.is_dir()}


def _digest(path: Path, limits: InputLimits) -> str:
    """sha256 of a regular file within the limits; otherwise the refusal, which then shows as a change.
    Never through a link (a tree may point at /proc or a FIFO, which would hang the hash)."""
    try:
        return sha256_file(regular_file_inside(path, path.parent, limits.max_file_bytes))
    except UnsafeInput as exc:
        return f"refused: {exc}"


def _table_checked(path: Path, limits: InputLimits) -> bool:
    """Whether a data file may be decoded: a parquet bomb must not be hashed or counted."""
    try:
        check_table_file(path, path.parent, path.suffix.lower().lstrip("."), limits)
        return True
    except UnsafeInput:
        return False


def _same_content(a: Path, b: Path, limits: InputLimits) -> bool:
    """Bytes first (cheap); parquet and sqlite files with different bytes may still hold the same rows."""
    digest = _digest(a, limits)
    if digest == _digest(b, limits):
        return not digest.startswith("refused")
    if a.suffix.lower() in {".parquet", ".sqlite"} and _table_checked(a, limits) and _table_checked(b, limits):
        try:
            return content_hash(a) == content_hash(b)
        except Exception:  # an unreadable table is a change worth showing, not a crash
            return False
    return False


def _is_ground_truth(rel: str) -> bool:
    name = rel.rsplit("/", 1)[-1]
    return rel.startswith(f"{names.VERIFY_DIR}/") and (name.startswith("ground_truth") or name == names.SIMULATED_PRED)


def _row_counts(files: dict[str, Path], rels: list[str], limits: InputLimits) -> dict[str, int]:
    """Rows of the given data files, `file:table` for each sqlite table; an unreadable file counts none."""
    out: dict[str, int] = {}
    for rel in rels:
        path = files.get(rel)
        if path is None or path.suffix.lower() not in DATA_SUFFIXES or not _table_checked(path, limits):
            continue
        try:
            counts = count_rows(path)
        except Exception:  # a corrupt file already shows as changed content; its rows are unknown
            continue
        out.update({f"{rel}:{table}" if table else rel: n for table, n in counts.items()})
    return out


def task_change(old_dir: Path, new_dir: Path, old_entry: dict | None, new_entry: dict | None,
                limits: InputLimits | None = None) -> TaskChange:
    limits = limits or InputLimits()
    old_meta = read_json_or_none(old_dir / names.VERIFY_DIR / names.ALL_METADATA)
    new_meta = read_json_or_none(new_dir / names.VERIFY_DIR / names.ALL_METADATA)
    fields = metadata_changes(old_meta if isinstance(old_meta, dict) else {},
                              new_meta if isinstance(new_meta, dict) else {})
    old_e = {k: v for k, v in (old_entry or {}).items() if k not in INSTRUCTION_KEYS}
    new_e = {k: v for k, v in (new_entry or {}).items() if k not in INSTRUCTION_KEYS}
    fields += json_changes(old_e, new_e, _ENTRY_PREFIX)
    instructions = []
    for key in INSTRUCTION_KEYS:
        a, b = (old_entry or {}).get(key) or "", (new_entry or {}).get(key) or ""
        if a != b:
            instructions.append(word_diff(str(a), str(b), key))

    old_files, new_files = _task_files(old_dir), _task_files(new_dir)
    files_changed = [rel for rel in sorted(set(old_files) & set(new_files))
                     if not _same_content(old_files[rel], new_files[rel], limits)]
    ground_truth = []
    for rel in sorted(set(old_files) | set(new_files)):
        if _is_ground_truth(rel) and (rel in files_changed or (rel in old_files) != (rel in new_files)):
            ground_truth.append(HashChange(file=rel, old=_digest(old_files[rel], limits) if rel in old_files else None,
                                           new=_digest(new_files[rel], limits) if rel in new_files else None))
    # Only files whose content changed can change row count; counting the rest would re-read the tree.
    moved = sorted(set(files_changed) | (set(old_files) ^ set(new_files)))
    old_rows, new_rows = _row_counts(old_files, moved, limits), _row_counts(new_files, moved, limits)
    row_counts = [RowCountChange(file=rel, old=old_rows.get(rel), new=new_rows.get(rel))
                  for rel in sorted(set(old_rows) | set(new_rows)) if old_rows.get(rel) != new_rows.get(rel)]
    return TaskChange(task_dir=new_dir.name, fields=tuple(fields), row_counts=tuple(row_counts),
                      ground_truth=tuple(ground_truth), files_changed=tuple(files_changed),
                      files_added=tuple(sorted(set(new_files) - set(old_files))),
                      files_removed=tuple(sorted(set(old_files) - set(new_files))),
                      instructions=tuple(instructions))


def diff_trees(old: Path, new: Path, limits: InputLimits | None = None, new_name: str | None = None,
               curation: Ledger | None = None) -> TreeDiff:
    """Task-by-task differences from `old` to `new`; a missing tree counts as an empty one. Files are
    read within `limits` (either tree may come from someone else). The reports name the trees by their
    paths (`new_name` in place of `new`'s). Review states come from `curation` when given, else from
    what the new tree's all_metadata.json files record (pipeline.review.curation)."""
    old, new, limits = Path(old), Path(new), limits or InputLimits()
    for tree in (old, new):
        if tree.exists() and not tree.is_dir():
            raise ValueError(f"{tree} is not a directory")
    old_tasks = {p.name: p for p in task_dirs(old)}
    new_tasks = {p.name: p for p in task_dirs(new)}
    old_entries, new_entries = question_entries(old), question_entries(new)
    retyped = retyped_pairs({n: old_tasks[n] for n in set(old_tasks) - set(new_tasks)},
                            {n: new_tasks[n] for n in set(new_tasks) - set(old_tasks)})
    changed, unchanged = [], []
    pairs = [(name, name) for name in set(old_tasks) & set(new_tasks)] + [(o, n) for n, o in retyped.items()]
    for old_name, name in sorted(pairs, key=lambda p: p[1]):
        change = task_change(old_tasks[old_name], new_tasks[name], old_entries.get(old_name), new_entries.get(name),
                             limits)
        if old_name != name:
            change = change.model_copy(update={"old_task_dir": old_name})
        if change.changed:
            changed.append(change)
        else:
            unchanged.append(name)
    removed = sorted(set(old_tasks) - set(new_tasks) - set(retyped.values()))
    root_files = sorted(p.name for tree in (old, new) if tree.is_dir() for p in tree.iterdir()
                        if p.is_file() and p.name not in _NOT_COMPARED)
    root_changed = [name for name in dict.fromkeys(root_files)
                    if not ((old / name).is_file() and (new / name).is_file()
                            and _same_content(old / name, new / name, limits))]
    settings = [_build_settings(tree) for tree in (old, new)]
    added = sorted(set(new_tasks) - set(old_tasks) - set(retyped))
    reviews = tree_reviews(new, curation)
    unmatched = tuple(Decision(task_dir=approval_text(a), why="unmatched approval", state="", design_digest="",
                               approved_digest=a.digest)
                      for a in (unmatched_approvals(reviews, curation) if curation is not None else ()))
    return TreeDiff(old=str(old), new=new_name or str(new),
                    needs_decision=decisions(reviews, added, changed) + unmatched,
                    curation=state_counts(reviews), refused=tuple(linked_task_dirs(new)),
                    added=tuple(added),
                    removed=tuple(removed), removed_why=removal_reasons({n: old_tasks[n] for n in removed}, new),
                    changed=tuple(changed),
                    unchanged=tuple(unchanged), root_files_changed=tuple(root_changed),
                    build_settings=tuple(json_changes(*settings, "manifest") if all(settings) else ()))


# daregen's provenance that the design digest leaves out (pipeline.core.curation.UNDIGESTED): the review state the
# ledger stamps (state, approved_digest, reviewer, note) and which code and machine built the task. Such a field
# never changes what a reviewer approved, so a decision never names one.
_BOOKKEEPING = tuple(f"daregen.{key}" for key in UNDIGESTED)


def _approved_fields(paths) -> tuple[str, ...]:
    """The changed fields a reviewer approved (no bookkeeping), each once, in the diff's order."""
    return tuple(dict.fromkeys(p for p in paths if not p.startswith(_BOOKKEEPING)))


def decisions(reviews: list[TaskReview], added: list[str], changed: list[TaskChange]) -> tuple[Decision, ...]:
    """Tasks changed since their approval (with the paths of their changed fields), then added tasks
    that are not approved."""
    fields = {t.task_dir: _approved_fields(c.path for c in t.fields) for t in changed}
    stale = [Decision(task_dir=r.task_dir, why="changed since approval", state=r.state, design_digest=r.digest,
                      approved_digest=r.approved_digest, fields=fields.get(r.task_dir, ()))
             for r in reviews if r.state == "changed since approval"]
    fresh = [Decision(task_dir=r.task_dir, why="new", state=r.state, design_digest=r.digest)
             for r in reviews if r.task_dir in set(added) and r.state not in ("approved", "changed since approval")]
    return tuple(stale + fresh)


def _decision_text(d: Decision) -> str:
    if d.why == "new":
        return f"new, {d.state}, not approved (design digest {d.design_digest})"
    if d.why == "unmatched approval":
        return "the ledger approves a digest no task of this tree holds"
    shown = d.fields[:_DECISION_FIELDS]
    more = (f" and {len(d.fields) - len(shown)} more (the task under Changed tasks)"
            if len(d.fields) > len(shown) else "")
    changed = f"; changed: {', '.join(shown)}{more}" if d.fields else ""
    return f"changed since approval (approved {d.approved_digest}, now {d.design_digest}){changed}"


def _dataset_ref(task_dir: Path) -> str | None:
    meta = read_json_or_none(task_dir / names.VERIFY_DIR / names.ALL_METADATA)
    ref = ((meta.get("daregen") or {}) if isinstance(meta, dict) else {}).get("ref")
    return ref if isinstance(ref, str) else None


def _dataset_key(task_dir: Path) -> str:
    """What ties two folders of one dataset: its source ref, else the name without its problem-type suffix."""
    stem = task_dir.name
    for suffix in names.TASK_SUFFIX.values():
        stem = stem.removesuffix(f"_{suffix}")
    return _dataset_ref(task_dir) or stem


def retyped_pairs(removed: dict[str, Path], added: dict[str, Path]) -> dict[str, str]:
    """{new folder: old folder} for a dataset whose task changed type (`x_class` -> `x_reg`), when exactly one
    removed and one added folder belong to it."""
    def by_key(tasks: dict[str, Path]) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for name, path in sorted(tasks.items()):
            out.setdefault(_dataset_key(path), []).append(name)
        return out

    gone, came = by_key(removed), by_key(added)
    return {came[k][0]: gone[k][0] for k in sorted(set(gone) & set(came)) if len(gone[k]) == len(came[k]) == 1}


def removal_reasons(removed: dict[str, Path], new: Path) -> dict[str, str]:
    """Removed folder -> its dataset's rejection in the new tree's run report (`rejected at finalize: ...`)."""
    report = read_json_or_none(new / names.RUN_REPORT_JSON)
    rejections = {r.get("ref"): r for r in (report or {}).get("rejections") or [] if isinstance(r, dict)} \
        if isinstance(report, dict) else {}
    out = {}
    for name, path in sorted(removed.items()):
        r = rejections.get(_dataset_ref(path))
        if r is not None:
            out[name] = f"rejected at {r.get('stage')}: {r.get('reason')}"
    return out


def _build_settings(tree: Path) -> dict:
    manifest = read_json_or_none(tree / names.MANIFEST)
    return {k: v for k, v in manifest.items() if k != "files"} if isinstance(manifest, dict) else {}


# ------------------------------------------------------------------ rendering


def _short(value: Any, limit: int = 160) -> str:
    """A JSON value on one line, shortened to `limit` characters at a word boundary."""
    if value is None:
        return "∅"
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return shorten(text, limit)


def _short_hash(h: str | None) -> str:
    return (h if h.startswith("refused") else h[:12]) if h else "∅"


def _rows(n: int | None) -> str:
    return "∅" if n is None else str(n)


def _is_long_text(c: FieldChange) -> bool:
    return (c.kind == "changed" and isinstance(c.old, str) and isinstance(c.new, str)
            and max(len(c.old), len(c.new)) > _LONG_TEXT)


def _list_delta(c: FieldChange) -> str:
    """For a changed list, the members added and removed (order changes say `reordered`)."""
    if not (c.kind == "changed" and isinstance(c.old, list) and isinstance(c.new, list)):
        return ""
    old_set, new_set = _members(c.old), _members(c.new)
    added = [v for v in new_set if v not in old_set]
    removed = [v for v in old_set if v not in new_set]
    if not added and not removed:
        return "reordered"
    return ", ".join([f"+{v}" for v in added] + [f"−{v}" for v in removed])


# Fields a curator looks at first; the overview names their change in a few words.
_HEADLINE_FIELDS = (("question.problem_type", "type"), ("question.target", "target"),
                    ("question.model_type", "model"), ("question.save_file_type", "format"),
                    ("question.random_state", "seed"))


def _headline(t: TaskChange) -> str:
    """One line for the overview table: key fields old -> new, then what else moved."""
    by_path = {c.path: c for c in t.fields}
    parts = [f"was {t.old_task_dir}"] if t.old_task_dir else []
    for path, label in _HEADLINE_FIELDS:
        c = by_path.get(path)
        if c is not None:
            parts.append(f"{label} {_short(c.old, 40)} → {_short(c.new, 40)}")
    features = by_path.get("question.selected_features")
    if features is not None and _is_scalar_list(features.old) and _is_scalar_list(features.new):
        added = [v for v in features.new if v not in features.old]
        removed = [v for v in features.old if v not in features.new]
        # Beyond a handful of names the overview gives counts; the task's table lists them all.
        parts.append(f"features {_list_delta(features)}" if len(added) + len(removed) <= 4
                     else f"features +{len(added)} −{len(removed)}")
    elif features is not None:
        parts.append("features changed")
    others = len([c for c in t.fields if c.path not in {p for p, _ in _HEADLINE_FIELDS}
                  and c.path != "question.selected_features"])
    if others:
        parts.append(f"{others} other field{'s' if others != 1 else ''}")
    if t.row_counts:
        parts.append(f"row counts of {len(t.row_counts)} file{'s' if len(t.row_counts) != 1 else ''}")
    if t.ground_truth:
        parts.append("ground truth")
    parts += [f"{w.key} words" for w in t.instructions]
    if not parts:
        parts.append("file contents")
    return "; ".join(parts)


def _word_counts(w: WordDiff) -> str:
    return "reordered: the same words in a new order" if w.reordered else \
        f"+{w.added_words} / −{w.removed_words} words"


def _fenced(text: str) -> list[str]:
    """`text` as a fenced block whose fence is longer than any run of tildes inside it, so a `~~~~`
    line in an instruction cannot end the block and turn the rest into Markdown."""
    fence = "~" * max(4, max((len(m) for m in re.findall(r"~+", text)), default=0) + 1)
    return [f"{fence}text", block_text(text), fence]


def render_markdown(d: TreeDiff) -> str:
    lines = ["# daregen diff", "", f"- old: {md_code(d.old)}", f"- new: {md_code(d.new)}",
             f"- {d.summary()}"]
    if d.curation:
        lines.append("- review: " + ", ".join(f"{n} {state}" for state, n in d.curation.items()))
    lines += [f"- build setting {md_code(c.path)}: {md_cell(_short(c.old))} → {md_cell(_short(c.new))}"
              for c in d.build_settings]
    lines += [f"- refused {md_code(name)}: {LINKED_TASK}" for name in d.refused]
    lines.append("")
    if d.needs_decision:
        lines += [f"## Needs a decision ({len(d.needs_decision)})", "", "| task | why |", "|---|---|"]
        lines += [f"| {md_code(x.task_dir)} | {md_cell(_decision_text(x))} |" for x in d.needs_decision] + [""]
    if d.identical:
        lines += ["No task changed.", ""]
    for title, items in (("Added tasks", d.added), ("Removed tasks", d.removed)):
        if items:
            lines += [f"## {title} ({len(items)})", ""]
            lines += [f"- {md_code(t)}" + (f": {md_cell(d.removed_why[t])}" if t in d.removed_why else "")
                      for t in items] + [""]
    if d.changed:
        lines += [f"## Changed tasks ({len(d.changed)})", "", "| task | what changed |", "|---|---|"]
        lines += [f"| {md_code(t.task_dir)} | {md_cell(_headline(t))} |" for t in d.changed] + [""]
    for t in d.changed:
        lines += [f"### {md_code(t.task_dir)}"
                  + (f" (was {md_code(t.old_task_dir)})" if t.old_task_dir else ""), ""]
        plain = [c for c in t.fields if not _is_long_text(c)]
        if plain:
            lines += ["| field | old | new | |", "|---|---|---|---|"]
            for c in plain:
                old = "" if c.kind == "added" else md_code(_short(c.old))
                new = "" if c.kind == "removed" else md_code(_short(c.new))
                note = c.kind if c.kind != "changed" else md_cell(_list_delta(c))
                lines.append(f"| {md_code(c.path)} | {old} | {new} | {note} |")
            lines.append("")
        for c in t.fields:
            if _is_long_text(c):
                lines += [f"{md_code(c.path)} (word diff):", "",
                          *_fenced(word_diff_markdown(word_diff(c.old, c.new, c.path))), ""]
        if t.row_counts:
            lines += ["| file | old rows | new rows |", "|---|---:|---:|"]
            lines += [f"| {md_code(r.file)} | {_rows(r.old)} | {_rows(r.new)} |" for r in t.row_counts] + [""]
        if t.ground_truth:
            lines += ["Ground truth changed:", ""]
            lines += [f"- {md_code(h.file)}: {md_code(_short_hash(h.old))} → {md_code(_short_hash(h.new))}" for h in t.ground_truth]
            lines.append("")
        for w in t.instructions:
            lines += [f"{md_code(w.key)} ({_word_counts(w)}):", "", *_fenced(word_diff_markdown(w)), ""]
        other = [f for f in t.files_changed if not _is_ground_truth(f)]
        for label, files in (("Files with new content", other), ("Files added", t.files_added),
                             ("Files removed", t.files_removed)):
            if files:
                lines += [f"{label}: " + ", ".join(md_code(f) for f in files), ""]
    if d.root_files_changed:
        lines += ["## Tree files that differ", "", ", ".join(md_code(f) for f in d.root_files_changed), ""]
    return "\n".join(lines).rstrip("\n") + "\n"


_CSS = """body{font-family:system-ui,sans-serif;max-width:70em;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.2em .6em;vertical-align:top}
td.n{text-align:right}code{font-size:90%}ins{background:#dfd;text-decoration:none}
del{background:#fdd}.words{white-space:pre-wrap;border-left:3px solid #ccc;padding-left:.8em}
.kind{color:#666}details{margin:.3em 0}"""


def _code(value: str) -> str:
    return f"<code>{html_text(value)}</code>"


def render_html(d: TreeDiff) -> str:
    e = html_text
    parts = ["<h1>daregen diff</h1>",
             f"<p>old: {_code(d.old)}<br>new: {_code(d.new)}<br>{e(d.summary())}</p>"]
    if d.build_settings:
        parts.append("<p>Build settings that differ:</p><ul>" + "".join(
            f"<li>{_code(c.path)}: {_code(_short(c.old))} → {_code(_short(c.new))}</li>" for c in d.build_settings)
            + "</ul>")
    if d.curation:
        parts.append("<p>review: " + e(", ".join(f"{n} {state}" for state, n in d.curation.items())) + "</p>")
    if d.needs_decision:
        parts.append(f"<h2>Needs a decision ({len(d.needs_decision)})</h2>"
                     "<table><tr><th>task</th><th>why</th></tr>" + "".join(
                         f"<tr><td>{_code(x.task_dir)}</td><td>{e(_decision_text(x))}</td></tr>"
                         for x in d.needs_decision) + "</table>")
    if d.identical:
        parts.append("<p>No task changed.</p>")
    for title, items in (("Added tasks", d.added), ("Removed tasks", d.removed)):
        if items:
            parts.append(f"<h2>{title} ({len(items)})</h2><ul>" + "".join(
                f"<li>{_code(t)}" + (f": {e(d.removed_why[t])}" if t in d.removed_why else "") + "</li>"
                for t in items) + "</ul>")
    if d.changed:
        parts.append(f"<h2>Changed tasks ({len(d.changed)})</h2>")
        parts.append("<table><tr><th>task</th><th>what changed</th></tr>" + "".join(
            f'<tr><td><a href="#{e(t.task_dir)}">{_code(t.task_dir)}</a></td><td>{e(_headline(t))}</td></tr>'
            for t in d.changed) + "</table>")
    for t in d.changed:
        parts.append(f'<h3 id="{e(t.task_dir)}">{_code(t.task_dir)}'
                     + (f" (was {_code(t.old_task_dir)})" if t.old_task_dir else "") + "</h3>")
        plain = [c for c in t.fields if not _is_long_text(c)]
        if plain:
            rows = "".join(
                f"<tr><td>{_code(c.path)}</td>"
                f"<td>{'' if c.kind == 'added' else _code(_short(c.old, 400))}</td>"
                f"<td>{'' if c.kind == 'removed' else _code(_short(c.new, 400))}</td>"
                f'<td class="kind">{e(c.kind if c.kind != "changed" else _list_delta(c))}</td></tr>'
                for c in plain)
            parts.append("<table><tr><th>field</th><th>old</th><th>new</th><th></th></tr>" + rows + "</table>")
        for c in t.fields:
            if _is_long_text(c):
                parts.append(f"<p>{_code(c.path)} (word diff):</p>"
                             f'<div class="words">{word_diff_html(word_diff(c.old, c.new, c.path))}</div>')
        if t.row_counts:
            parts.append("<table><tr><th>file</th><th>old rows</th><th>new rows</th></tr>" + "".join(
                f'<tr><td>{_code(r.file)}</td><td class="n">{_rows(r.old)}</td><td class="n">{_rows(r.new)}</td></tr>'
                for r in t.row_counts) + "</table>")
        if t.ground_truth:
            parts.append("<p>Ground truth changed:</p><ul>" + "".join(
                f"<li>{_code(h.file)}: {_code(_short_hash(h.old))} → {_code(_short_hash(h.new))}</li>"
                for h in t.ground_truth) + "</ul>")
        for w in t.instructions:
            parts.append(f"<p>{_code(w.key)} ({e(_word_counts(w))}):</p>"
                         f'<div class="words">{word_diff_html(w)}</div>')
        other = [f for f in t.files_changed if not _is_ground_truth(f)]
        for label, files in (("Files with new content", other), ("Files added", t.files_added),
                             ("Files removed", t.files_removed)):
            if files:
                parts.append(f"<p>{label}: " + ", ".join(_code(f) for f in files) + "</p>")
    if d.root_files_changed:
        parts.append("<h2>Tree files that differ</h2><p>" + ", ".join(_code(f) for f in d.root_files_changed)
                     + "</p>")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>daregen diff</title>"
            f"<style>{_CSS}</style></head><body>\n" + "\n".join(parts) + "\n</body></html>\n")


def render_summary(d: TreeDiff, limit: int = 10) -> str:
    """A few lines for a terminal: the counts, then what changed in the first `limit` changed tasks."""
    lines = [f"{d.old} -> {d.new}: {d.summary()}"]
    for x in d.needs_decision[:limit]:
        lines.append(f"  decide   {printable(x.task_dir)}: {printable(_decision_text(x))}")
    if len(d.needs_decision) > limit:
        lines.append(f"  ... and {len(d.needs_decision) - limit} more tasks to decide on")
    for t in d.changed[:limit]:
        what = [f"was {t.old_task_dir}"] if t.old_task_dir else []
        what += [f"{len(t.fields)} field{'s' if len(t.fields) != 1 else ''}"] if t.fields else []
        what += ["row counts"] if t.row_counts else []
        what += ["ground truth"] if t.ground_truth else []
        what += [w.key for w in t.instructions]
        lines.append(f"  changed  {printable(t.task_dir)}: {', '.join(what) or 'file contents'}")
    if len(d.changed) > limit:
        lines.append(f"  ... and {len(d.changed) - limit} more changed tasks")
    return "\n".join(lines)


def write_diff(d: TreeDiff, out_dir: Path, prefix: str = "") -> tuple[Path, Path]:
    """Write `<prefix>diff.md` and `<prefix>diff.html` for an already computed diff; returns their paths."""
    out_dir = Path(out_dir)
    md, page = out_dir / f"{prefix}{DIFF_MD}", out_dir / f"{prefix}{DIFF_HTML}"
    write_text(md, render_markdown(d))
    write_text(page, render_html(d))
    return md, page


def write_diff_reports(old: Path, new: Path, out_dir: Path, new_name: str | None = None) -> tuple[Path, Path]:
    """Write diff.md and diff.html for `old` -> `new` into `out_dir`; returns their paths. `new_name` is
    the path the reports give the new tree when it is read from elsewhere (a generation being built is
    named by where it will be published, not by its `.partial` folder)."""
    return write_diff(diff_trees(old, new, new_name=new_name), out_dir)
