"""Tree-level reports of a finished DARE-layout tree: the licence table and the corpus report.

Everything here reads a tree from disk and writes text beside it, so it works on
any generation (ours, or a copy of DARE-bench's), and it is a pure function of
the tree: no timestamps, no run timings, tasks and tallies in a stable order,
and matplotlib's SVG output pinned (date dropped, hash salt fixed), so the same
tree always gives byte-identical reports and two generations diff cleanly.
"""

from __future__ import annotations

import os

import csv
import io
import re
import textwrap
from pathlib import Path
from typing import Any
from collections.abc import Iterable, Mapping

from pydantic import BaseModel, ConfigDict, Field

from pipeline.core import names
from pipeline.core.curation import CURATION_STATES, design_digest
from pipeline.core.jsonio import write_text
from pipeline.core.licences import UNKNOWN_LICENCE, canonical_licence
from pipeline.core.metrics import METRICS
from pipeline.core.safe_io import read_json_inside
from pipeline.core.text import html_text, md_cell, md_code, printable, shorten
from pipeline.core.sqlite import connect_read_only, quote_identifier, table_names
from pipeline.run_report import (DESIGN_ROWS_NOTE, EVIDENCE_KIND_COLUMN, UNRECORDED_KIND, evidence_kind_rows,
                                 commonest)

LICENSE_DISTRIBUTION_MD = "LICENSE_DISTRIBUTION.md"
LICENSES_CSV = "licenses.csv"
CORPUS_REPORT_HTML = names.CORPUS_REPORT_HTML
# Files this module writes at a tree's root (a publish step may want to keep them out of the manifest).
TREE_REPORT_FILES = (LICENSE_DISTRIBUTION_MD, LICENSES_CSV, CORPUS_REPORT_HTML)

TIME_SERIES = names.TIME_SERIES_PROBLEM
# The two variants of one task folder, by problem type (docs/dare-format.md).
VARIANT_LABELS = {"classification": ("IF", "MM"), "regression": ("IF", "MM"), TIME_SERIES: ("XF", "CF")}
DATA_SUFFIXES = (".csv", ".parquet", ".sqlite")


class TaskFacts(BaseModel):
    """What the reports need to know about one task folder, read from its files."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    task_dir: str
    problem_type: str  # classification | regression | time_series_analysis | unknown
    file_type: str
    model_type: str
    licence: str  # as the source recorded it
    licence_key: str  # canonical key (sourcing.base.canonical_licence), `unknown` if unrecognised
    n_rows: int | None  # train + val rows of the full (v2 / raw) data
    n_features: int | None  # selected features
    variants: tuple[str, ...]  # variant labels with an instruction, e.g. ("IF", "MM")
    # name -> score, from `baselines` (time series) and `daregen.mm_baselines` (tabular), when recorded.
    baselines: dict[str, float] = Field(default_factory=dict)
    problem: str = ""  # why the task could not be read, if it could not
    # The design's choice, for curators (so a reviewer can judge the target): the target, its evidence, the candidates
    # passed over (column -> reason), the targets tried and refused, and the MM validation rows.
    target: str = ""
    target_evidence: str = ""
    target_evidence_kind: str = ""  # daregen.target_evidence_kind; "" in a tree that does not record it
    excluded_targets: dict[str, str] = Field(default_factory=dict)
    design_attempts: tuple[str, ...] = ()
    val_rows: int | None = None
    train_rows: int | None = None
    ref: str = ""  # daregen.ref: the dataset the task was made from
    curation_state: str = ""  # daregen.curation.state (pipeline.core.curation); "" in a tree that does not record it
    design_digest: str = ""  # pipeline.core.curation.design_digest of the task folder: what an approval names


# ------------------------------------------------------------------ reading a tree


def task_dirs(tree: Path) -> list[Path]:
    """Task folders of a tree (those with verify/all_metadata.json), sorted by name; [] for a missing tree.
    A folder that is a symbolic link is never one (linked_task_dirs): its files may be anywhere."""
    tree = Path(tree)
    if not tree.is_dir():
        return []
    return sorted((p for p in tree.iterdir()
                   if not p.is_symlink() and (p / names.VERIFY_DIR / names.ALL_METADATA).is_file()),
                  key=lambda p: p.name)


LINKED_TASK = "a link, refused (never walked)"


def linked_task_dirs(tree: Path) -> list[str]:
    """The names of the tree's entries that are symbolic links to what looks like a task folder: refused
    as `verify` refuses them, and listed so (LINKED_TASK) rather than silently left out."""
    tree = Path(tree)
    if not tree.is_dir():
        return []
    return sorted(p.name for p in tree.iterdir()
                  if p.is_symlink() and os.path.lexists(p / names.VERIFY_DIR / names.ALL_METADATA))


def read_json_or_none(path: Path) -> Any:
    """The parsed file, or None when it is missing, not valid JSON, a link, not a regular file or past
    the limits (a report must not die, hang or swell on one bad file)."""
    try:
        return read_json_inside(path, Path(path).parent)
    except (OSError, ValueError):
        return None


def question_entries(tree: Path) -> dict[str, dict]:
    """question_list.json keyed by task folder ({} if absent or unreadable)."""
    entries = read_json_or_none(Path(tree) / names.QUESTION_LIST)
    if not isinstance(entries, list):
        return {}
    return {e["file_path"]: e for e in entries if isinstance(e, dict) and isinstance(e.get("file_path"), str)}


def count_rows(path: Path) -> dict[str, int]:
    """Rows of a data file: {"": n} for csv and parquet, {table: n} for each table of a sqlite file.

    csv is counted with the csv module, not by lines, because quoted fields may hold newlines.
    """
    suffix = path.suffix.lower()
    if suffix == ".csv":
        with open(path, newline="", encoding="utf-8", errors="replace") as fh:
            n = sum(1 for _ in csv.reader(fh))
        return {"": max(0, n - 1)}
    if suffix == ".parquet":
        import pyarrow.parquet as pq

        return {"": pq.ParquetFile(path).metadata.num_rows}
    if suffix == ".sqlite":
        con = connect_read_only(path)
        try:
            tables = table_names(con)
            return {t: con.execute(f"SELECT COUNT(*) FROM {quote_identifier(t)}").fetchone()[0]
                    for t in tables}
        finally:
            con.close()
    raise ValueError(f"not a data file: {path.name}")


def file_row_counts(task_dir: Path) -> dict[str, int]:
    """`source/train_v2.parquet` -> rows, `source/train_v1.sqlite:table_1` -> rows, for every data file."""
    out: dict[str, int] = {}
    for path in sorted(p for p in Path(task_dir).rglob("*") if p.is_file() and p.suffix.lower() in DATA_SUFFIXES):
        rel = path.relative_to(task_dir).as_posix()
        try:
            counts = count_rows(path)
        except Exception as exc:  # sqlite3, csv and pyarrow each raise their own types on a corrupt file
            raise ValueError(f"{rel}: unreadable ({type(exc).__name__})") from None
        for table, n in counts.items():
            out[f"{rel}:{table}" if table else rel] = n
    return out


def licence_of(meta: dict) -> str:
    """The licence as recorded: data_info.licenseName, else the first meta_data.licenses name."""
    name = (meta.get("data_info") or {}).get("licenseName")
    if not name:
        licences = (meta.get("meta_data") or {}).get("licenses") or []
        name = next((lic.get("name") for lic in licences if isinstance(lic, dict) and lic.get("name")), None)
    return str(name).strip() if name and str(name).strip() else UNKNOWN_LICENCE


def _numeric_leaves(value: Any, prefix: str = "") -> dict[str, float]:
    """{name: score} from a baselines block, flattening nesting as `a.b` and ignoring non-numbers."""
    out: dict[str, float] = {}
    if isinstance(value, dict):
        for key in sorted(value, key=str):
            out.update(_numeric_leaves(value[key], f"{prefix}{key}" if not prefix else f"{prefix}.{key}"))
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        out[prefix or "score"] = float(value)
    return out


def baselines_of(meta: dict) -> dict[str, float]:
    """Recorded baseline scores, wherever the producing stage put them (top level, question, daregen)."""
    found: dict[str, float] = {}
    daregen = meta.get("daregen") or {}
    for block in (meta.get("baselines"), (meta.get("question") or {}).get("baselines"),
                  daregen.get("baselines"), daregen.get("mm_baselines")):
        if isinstance(block, dict):
            found.update(_numeric_leaves(block))
    return dict(sorted(found.items()))


def _rows_of(counts: dict[str, int]) -> int | None:
    """Train + val rows of the full data: train_v2 + val_v2 (tabular) or train + val_v1 (time series)."""
    def rows(stem: str) -> list[int]:
        return [n for rel, n in counts.items() if rel.startswith(f"{names.SOURCE_DIR}/{stem}.")]

    # A time-series task has a val_v2 too (identifiers only), so the pair is chosen by its train file.
    for train, val in ((names.TRAIN_V2, names.VAL_V2), ("train", names.VAL_V1)):
        if rows(train):
            return sum(rows(train)) + sum(rows(val))
    return None


def read_task_facts(task_dir: Path, entry: dict | None = None, digest: str | None = None) -> TaskFacts:
    """Facts of one task folder; a folder whose files cannot be read gets `problem` set, not an exception.
    `digest`: its design digest as the build computed it (stamp_curation), else computed here."""
    task_dir = Path(task_dir)
    meta = read_json_or_none(task_dir / names.VERIFY_DIR / names.ALL_METADATA)
    if not isinstance(meta, dict):
        return TaskFacts(task_dir=task_dir.name, problem_type="unknown", file_type="unknown", model_type="unknown",
                         licence=UNKNOWN_LICENCE, licence_key=UNKNOWN_LICENCE, n_rows=None, n_features=None,
                         variants=(), problem="verify/all_metadata.json is missing or not valid JSON")
    question = meta.get("question") or {}
    problem_type = str(question.get("problem_type") or (entry or {}).get("task") or "unknown")
    if problem_type in {"time_series", "time series", "forecasting"}:
        problem_type = TIME_SERIES
    problem = ""
    try:
        counts = file_row_counts(task_dir)
    except ValueError as exc:
        counts, problem = {}, str(exc)
    features = question.get("selected_features")
    labels = VARIANT_LABELS.get(problem_type, ("v1", "v2"))
    if entry is not None:
        variants = tuple(label for label, key in zip(labels, ("question_v1", "question_v2")) if entry.get(key))
    else:
        variants = tuple(label for label, key in zip(labels, ("needed_files_v1", "needed_files_v2"))
                         if question.get(key))
    licence = licence_of(meta)
    return TaskFacts(
        task_dir=task_dir.name,
        problem_type=problem_type,
        file_type=str(question.get("save_file_type") or "unknown"),
        model_type=str(question.get("model_type") or "unknown"),
        licence=licence,
        licence_key=canonical_licence(licence),
        n_rows=_rows_of(counts),
        n_features=len(features) if isinstance(features, list) else None,
        variants=variants,
        baselines=baselines_of(meta),
        problem=problem,
        design_digest=digest if digest is not None else _digest_or_empty(task_dir, meta, entry),
        **_design_facts(question, meta.get("daregen")),
    )


def _digest_or_empty(task_dir: Path, meta: dict, entry: dict | None) -> str:
    """The task's design digest (as `curate approve` names it), or "" for a folder too malformed to digest."""
    try:
        return design_digest(task_dir, meta, entry)
    except (AttributeError, TypeError, ValueError, OSError):
        return ""


def _design_facts(question: dict, daregen: Any) -> dict:
    """The TaskFacts design fields from all_metadata.json; anything missing or malformed is left out."""
    daregen = daregen if isinstance(daregen, dict) else {}
    target = question.get("target")
    excluded = daregen.get("excluded_targets")
    attempts = daregen.get("design_attempts")
    val_rows, train_rows = daregen.get("val_rows"), daregen.get("train_rows")
    curation = daregen.get("curation") if isinstance(daregen.get("curation"), dict) else {}
    return {
        "ref": str(daregen.get("ref") or ""),
        "train_rows": train_rows if isinstance(train_rows, int) and not isinstance(train_rows, bool) else None,
        "curation_state": str(curation.get("state") or ""),
        "target": ", ".join(map(str, target)) if isinstance(target, list) else str(target or ""),
        "target_evidence": str(daregen.get("target_evidence") or ""),
        "target_evidence_kind": str(daregen.get("target_evidence_kind") or ""),
        "excluded_targets": ({str(k): str(v) for k, v in excluded.items()} if isinstance(excluded, dict) else {}),
        "design_attempts": tuple(map(str, attempts)) if isinstance(attempts, list) else (),
        "val_rows": val_rows if isinstance(val_rows, int) and not isinstance(val_rows, bool) else None,
    }


SHOWN_EXCLUDED = 3  # rejected target candidates named per task; the rest are counted


def leak_screen(baselines: dict[str, float]) -> str:
    """`best single feature 0.412 vs reference 0.773 (r2)` from daregen.mm_baselines, or ""."""
    for metric in METRICS:  # the block's keys carry the MM metric's registry name
        best, ref = baselines.get(f"best_single_feature_{metric}"), baselines.get(f"reference_{metric}")
        if best is not None and ref is not None:
            return f"best single feature {best:.3f} vs reference {ref:.3f} ({metric})"
    return ""


def design_row(f: TaskFacts) -> dict[str, str]:
    """One task's design, as plain text cells for run_report.md and corpus_report.html (each escapes them).
    Long texts are shortened at a word boundary (DESIGN_ROWS_NOTE says where the whole text is)."""
    # Columns refused for a reason of their own first: "ranked below the target" says little each time.
    excluded = sorted(f.excluded_targets.items(), key=lambda kv: (kv[1].startswith("ranked below"), kv[0]))
    named = "; ".join(f"{col} ({shorten(why, 60)})" for col, why in excluded[:SHOWN_EXCLUDED])
    more = len(excluded) - SHOWN_EXCLUDED
    return {
        "task": f.task_dir,
        "target": f.target,
        EVIDENCE_KIND_COLUMN: f.target_evidence_kind or UNRECORDED_KIND,
        "evidence": shorten(f.target_evidence, 120),
        "rejected candidates": (f"{len(excluded)}: {named}" + (f"; and {more} more" if more > 0 else "")
                                if excluded else "0"),
        "attempts refused": (f"{len(f.design_attempts)}: {shorten(f.design_attempts[0], 100)}"
                             + ("; …" if len(f.design_attempts) > 1 else "") if f.design_attempts else "0"),
        "MM val rows": "" if f.val_rows is None else str(f.val_rows),
        "leak screen": leak_screen(f.baselines),
    }


def design_rows(tree: Path, digests: Mapping[str, str] | None = None) -> list[dict[str, str]]:
    """design_row of every task in `tree`, in task-folder order (`digests`: as read_tree_facts)."""
    return [design_row(f) for f in read_tree_facts(tree, digests)]


def read_tree_facts(tree: Path, digests: Mapping[str, str] | None = None) -> list[TaskFacts]:
    """Each task folder's facts, in task folder order; `digests`: the build's design digests by task folder."""
    entries, digests = question_entries(tree), digests or {}
    return [read_task_facts(d, entries.get(d.name), digests.get(d.name)) for d in task_dirs(tree)]


# ------------------------------------------------------------------ licences


def _tally(values: Iterable[str]) -> list[tuple[str, int]]:
    """(value, count), most frequent first, ties by value: a stable order for tables and plots."""
    counts: dict[str, int] = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))


def render_licence_distribution(facts: list[TaskFacts]) -> str:
    """LICENSE_DISTRIBUTION.md: licence -> tasks and share, then every task whose licence is unknown."""
    total = len(facts)
    lines = ["# Licence distribution", "",
             f"{total} tasks. The licence is the one the source records for the dataset "
             "(`data_info.licenseName` in `verify/all_metadata.json`); the key is daregen's canonical name for it.",
             "", "| licence | key | tasks | share |", "|---|---|---:|---:|"]
    by_name: dict[str, str] = {f.licence: f.licence_key for f in facts}
    for name, n in _tally(f.licence for f in facts):
        share = f"{100 * n / total:.1f}%"
        lines.append(f"| {md_cell(name)} | {by_name[name]} | {n} | {share} |")
    unknown = [f for f in facts if f.licence_key == UNKNOWN_LICENCE]
    lines += ["", f"## Tasks with an unknown licence: {len(unknown)} of {total}", ""]
    if unknown:
        lines.append("**Flagged:** their sources state no licence daregen recognises; "
                     "check the terms before redistributing these tasks.")
        lines.append("")
        lines += [f"- {md_code(f.task_dir)} (recorded: {md_cell(f.licence)})" for f in unknown]
    else:
        lines.append("None.")
    return "\n".join(lines) + "\n"


def render_licences_csv(facts: list[TaskFacts]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["task_dir", "licence"])
    for f in sorted(facts, key=lambda f: f.task_dir):
        # printable: an ESC byte in a licence would reach the terminal of whoever `cat`s the file.
        writer.writerow([printable(f.task_dir), printable(f.licence)])
    return buf.getvalue()


# ------------------------------------------------------------------ rejections


def rejection_tally(run_report: dict | None) -> list[tuple[str, int]]:
    rejections = (run_report or {}).get("rejections") or []
    return commonest([r for r in rejections if isinstance(r, dict)])


# ------------------------------------------------------------------ tasks to look at

# A recorded score this close to another counts as equal (they are rounded to 4 decimals when recorded).
_SAME_SCORE = 1e-4


def suspicious(f: TaskFacts) -> list[str]:
    """Why a curator should look at a task before publishing it, from its recorded baselines:
    - the MM reference model does no better than its best single feature (the task is one column);
    - every baseline of a variant scores 0 (nothing recorded can solve it: a broken target or split)."""
    flags = []
    for name, score in f.baselines.items():
        if name.startswith("reference_"):
            single = f.baselines.get("best_single_feature_" + name.removeprefix("reference_"))
            if single is not None and abs(single - score) <= _SAME_SCORE:
                flags.append(f"the reference scores no better than the best single feature ({score:.3f})")
    groups: dict[str, list[float]] = {}
    for name, score in f.baselines.items():  # time series record `v1/SARIMAX`, `v2/seasonal_naive`, ...
        groups.setdefault(name.split("/", 1)[0] if "/" in name else "", []).append(score)
    for group, scores in sorted(groups.items()):
        if scores and all(abs(x) <= _SAME_SCORE for x in scores):
            label = dict(zip(("v1", "v2"), VARIANT_LABELS.get(f.problem_type, ("v1", "v2")))).get(group, group)
            flags.append(f"every {label + ' ' if label else ''}baseline scores 0 ({len(scores)} recorded)")
    return flags


# ------------------------------------------------------------------ plots


def _svg(draw, name: str, width: float = 6.4, height: float = 3.2) -> str:
    """An inline <svg> drawn by `draw(fig)`, with the bytes pinned: no date, fixed ids, no metadata block."""
    import matplotlib

    from matplotlib.backends.backend_svg import FigureCanvasSVG
    from matplotlib.figure import Figure

    # svg.hashsalt replaces the random salt of matplotlib's clip-path ids; salting by figure keeps
    # the ids of several SVGs in one page distinct. svg.fonttype "none" writes text as <text> rather
    # than glyph <defs> whose ids (DejaVuSans-13, ...) would repeat in every figure of the page.
    # text.parse_math off: labels are source text (a licence `CC-BY-4.0 $\\foo$`), never mathtext,
    # whose parser raises on what it cannot typeset.
    with matplotlib.rc_context({"svg.hashsalt": f"daregen-{name}", "svg.fonttype": "none",
                                "font.family": "DejaVu Sans", "font.size": 9, "text.parse_math": False}):
        fig = Figure(figsize=(width, height))
        FigureCanvasSVG(fig)
        draw(fig)
        fig.tight_layout()
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None, "Format": None, "Type": None})
    text = buf.getvalue()
    # Inline SVG in HTML takes neither the XML declaration nor the DOCTYPE.
    text = text[text.index("<svg"):]
    return _prefix_ids(text, re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")).strip() + "\n"


def _prefix_ids(svg: str, prefix: str) -> str:
    """Prefix every id (and each reference to it): matplotlib names groups figure_1, axes_1, ... in
    every figure, and ids must be unique across the inline SVGs of one HTML page."""
    ids = set(re.findall(r'\bid="([^"]+)"', svg))
    if not ids:
        return svg
    alternation = "|".join(re.escape(i) for i in sorted(ids, key=lambda i: (-len(i), i)))
    svg = re.sub(rf'\bid="({alternation})"', lambda m: f'id="{prefix}-{m.group(1)}"', svg)
    return re.sub(rf'#({alternation})(?=["\)])', lambda m: f"#{prefix}-{m.group(1)}", svg)


def _integer_ticks(axis) -> None:
    """Counts of tasks are whole numbers; matplotlib would otherwise tick 2.5 tasks."""
    from matplotlib.ticker import MaxNLocator

    axis.set_major_locator(MaxNLocator(integer=True))


def _bar_svg(items: list[tuple[str, int]], title: str, xlabel: str = "tasks") -> str:
    # Labels are source text (licences, reasons): an escape byte is shown, never drawn into the SVG.
    shown = [printable(label) for label, _ in items]

    def draw(fig):
        ax = fig.add_subplot()
        # Long rejection reasons would push the bars off the figure; wrap them instead.
        labels = [textwrap.fill(label, 34) for label in shown][::-1]
        values = [n for _, n in items][::-1]
        ax.barh(range(len(values)), values, color="#4c72b0")
        ax.set_yticks(range(len(labels)), labels)
        for y, v in enumerate(values):
            ax.annotate(str(v), (v, y), xytext=(3, 0), textcoords="offset points", va="center", fontsize=8)
        _integer_ticks(ax.xaxis)
        ax.set_xlabel(xlabel)
        ax.set_title(title)
        ax.margins(x=0.12)

    lines = sum(textwrap.fill(label, 34).count("\n") + 1 for label in shown)
    return _svg(draw, title, height=max(1.6, 0.8 + 0.28 * lines))


def _grouped_svg(groups: list[str], series: dict[str, list[int]], title: str) -> str:
    """Grouped vertical bars: one group per `groups` entry, one bar per series (e.g. v1 / v2)."""
    def draw(fig):
        ax = fig.add_subplot()
        width = 0.8 / max(1, len(series))
        for i, (name, values) in enumerate(series.items()):
            xs = [g + i * width for g in range(len(groups))]
            ax.bar(xs, values, width=width, label=name)
            for x, v in zip(xs, values):
                ax.annotate(str(v), (x, v), xytext=(0, 2), textcoords="offset points", ha="center", fontsize=8)
        ax.set_xticks([g + 0.4 - width / 2 for g in range(len(groups))], [printable(g) for g in groups])
        _integer_ticks(ax.yaxis)
        ax.set_ylabel("tasks")
        ax.set_title(title)
        ax.legend(fontsize=8)
        ax.margins(y=0.15)

    return _svg(draw, title)


def log_bins(values: list[float], n: int = 15) -> list[float]:
    """`n` log-spaced bin edges from the smallest value to the largest, both included: logspace's own end
    edges are 10 ** log10(v), which float rounding can put just inside the data, dropping the smallest task."""
    import numpy as np

    lo = max(1.0, float(min(values)))
    hi = max(lo * 2, float(max(values)))
    edges = np.logspace(np.log10(lo), np.log10(hi), n + 1)
    edges[0], edges[-1] = lo, hi
    return [float(e) for e in edges]


def _hist_svg(values: list[float], title: str, xlabel: str, log: bool = False) -> str:
    """A histogram, with a caption saying how many values it plots (every one of them, min and max included)."""
    plotted = []

    def draw(fig):
        import numpy as np

        ax = fig.add_subplot()
        data = np.asarray(values, dtype=float)
        if log:
            bins = log_bins(values)
            ax.set_xscale("log")
        elif data.max() - data.min() <= 40:  # small counts (features): one bar per integer
            bins = np.arange(data.min() - 0.5, data.max() + 1.5)
        else:
            bins = 20
        counts, _, _ = ax.hist(data, bins=bins, color="#55a868", edgecolor="white")
        plotted.append(int(round(float(np.sum(counts)))))
        _integer_ticks(ax.yaxis)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("tasks")
        ax.set_title(title)

    svg = _svg(draw, title)
    return (f"<figure>{svg}<figcaption class=\"note\">{plotted[0]} of {len(values)} tasks plotted, "
            f"{_num(min(values))} to {_num(max(values))} {html_text(xlabel)}</figcaption></figure>\n")


def _num(x: float) -> str:
    return f"{x:g}" if x != int(x) else str(int(x))


def _baseline_svg(scores: dict[str, list[float]]) -> str:
    """One bar per baseline name in each score bin, side by side (higher scores = easier tasks). Step
    outlines drawn over each other hid a baseline whose scores matched another's."""
    def draw(fig):
        ax = fig.add_subplot()
        bins = [i / 10 for i in range(11)]
        ax.hist(list(scores.values()), bins=bins, histtype="bar", rwidth=0.9,
                label=[f"{name} ({len(values)})" for name, values in scores.items()])
        ax.set_xlim(0, 1)
        _integer_ticks(ax.yaxis)
        ax.set_xlabel("score (macro-F1, or R² clipped to [0, 1]); higher = easier")
        ax.set_ylabel("tasks")
        ax.set_title("Baseline difficulty")
        ax.legend(fontsize=8)

    return _svg(draw, "baselines")


# ------------------------------------------------------------------ the corpus report


_CSS = """body{font-family:system-ui,sans-serif;max-width:60em;margin:2em auto;padding:0 1em;color:#222}
h1,h2{font-weight:600}table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.2em .6em}
td.n{text-align:right}.flag{color:#b00}figure{margin:1em 0}svg{max-width:100%;height:auto}
.note{color:#666}"""


def _table(header: list[str], rows: list[list[Any]], numeric: set[int] = frozenset()) -> str:
    out = ["<table><tr>" + "".join(f"<th>{html_text(h)}</th>" for h in header) + "</tr>"]
    for row in rows:
        cells = "".join(f'<td class="n">{html_text(str(c))}</td>' if i in numeric
                        else f"<td>{html_text(str(c))}</td>" for i, c in enumerate(row))
        out.append(f"<tr>{cells}</tr>")
    return "\n".join(out) + "</table>"


def _section(title: str, body: str) -> str:
    return f"<h2>{html_text(title)}</h2>\n{body}\n"


# The build settings a header shows, from manifest.json (never a date: the page is a function of the tree).
_IDENTITY = (("seed", "seed"), ("sources", "sources"), ("limit", "limit"), ("designer", "designer"),
             ("code_version", "code version"), ("design_config", "design configuration"))


def _identity(manifest: dict | None) -> str:
    if not isinstance(manifest, dict):
        return f'<p class="note">No {names.MANIFEST} in this tree: how it was built is unknown.</p>'
    rows = [[label, "none" if manifest.get(key) is None else manifest[key]] for key, label in _IDENTITY
            if key in manifest]
    return _table(["build", ""], rows)


def _rejection_rows(run_report: dict | None) -> list[list[str]]:
    rejections = (run_report or {}).get("rejections") or []
    return [[str(r.get("ref", "")), str(r.get("stage", "")), str(r.get("reason", ""))]
            for r in rejections if isinstance(r, dict)]


def render_corpus_report(facts: list[TaskFacts], run_report: dict | None, manifest: dict | None = None) -> str:
    """The self-contained HTML corpus report (inline SVG plots, inline CSS, no script, no external link;
    one relative link, to the run report beside it).

    It names no folder: a generation's folder name may carry a timestamp, and the same tasks must
    give the same page wherever they sit. The build's identity comes from manifest.json."""
    total = len(facts)
    parts = ["<h1>Corpus report</h1>", _identity(manifest),
             f"<p>{total} tasks"
             + (f" built from {run_report['considered']} candidate datasets; "
                f"{len(run_report.get('rejections') or [])} rejected"
                if isinstance(run_report, dict) and "considered" in run_report else "")
             + ".</p>"]
    if not facts:
        parts.append('<p class="note">This tree holds no task.</p>')

    types = sorted({f.problem_type for f in facts})
    if facts:
        v1 = [sum(1 for f in facts if f.problem_type == t and len(f.variants) > 0
                  and f.variants[0] == VARIANT_LABELS.get(t, ("v1", "v2"))[0]) for t in types]
        v2 = [sum(1 for f in facts if f.problem_type == t
                  and VARIANT_LABELS.get(t, ("v1", "v2"))[1] in f.variants) for t in types]
        body = _grouped_svg([t.replace("_analysis", "") for t in types],
                            {"v1 (IF / XF)": v1, "v2 (MM / CF)": v2}, "Tasks by type and variant")
        rows = [[t, "/".join(VARIANT_LABELS.get(t, ("v1", "v2"))), sum(f.problem_type == t for f in facts), a, b]
                for t, a, b in zip(types, v1, v2)]
        body += _table(["problem type", "variants", "tasks", "v1", "v2"], rows, {2, 3, 4})
        parts.append(_section("Tasks by type and variant", body))

        # The curation ledger's view (pipeline.core.curation): what a release of approved tasks would hold.
        states = [f.curation_state or "unrecorded" for f in facts]
        reviewed = [[state, n, f"{100 * n / total:.0f}%"] for state, n in
                    [(s, states.count(s)) for s in (*CURATION_STATES, "unrecorded")] if n or state in CURATION_STATES]
        parts.append(_section("Review", _table(["curation state", "tasks", "share"], reviewed, {1, 2})))

        formats = _tally(f.file_type for f in facts)
        models = _tally(f.model_type for f in facts)
        parts.append(_section("File formats and model types",
                              _bar_svg(formats, "File formats") + _bar_svg(models, "Model types")))

        licences = _tally(f.licence for f in facts)
        unknown = [f.task_dir for f in facts if f.licence_key == UNKNOWN_LICENCE]
        body = _bar_svg(licences, "Licences")
        body += _table(["licence", "tasks", "share"], [[name, n, f"{100 * n / total:.1f}%"] for name, n in licences],
                       {1, 2})
        body += (f'<p class="flag">{len(unknown)} of {total} tasks have an unknown licence '
                 f"(listed in {LICENSE_DISTRIBUTION_MD}).</p>" if unknown else "<p>Every task has a known licence.</p>")
        parts.append(_section("Licences", body))

        rows_ = [f.n_rows for f in facts if f.n_rows]
        feats = [f.n_features for f in facts if f.n_features is not None]
        body = (_hist_svg(rows_, "Rows per task (train + val)", "rows", log=True) if rows_ else
                '<p class="note">No row counts could be read.</p>')
        body += (_hist_svg(feats, "Selected features per task", "features") if feats else
                 '<p class="note">No task lists selected features.</p>')
        if rows_:
            srt = sorted(rows_)
            body += _table(["", "min", "median", "max"], [["rows", srt[0], srt[len(srt) // 2], srt[-1]]]
                           + ([["features", min(feats), sorted(feats)[len(feats) // 2], max(feats)]] if feats else []),
                           {1, 2, 3})
        parts.append(_section("Rows and features", body))

        with_baselines = [f for f in facts if f.baselines]
        if with_baselines:
            by_name: dict[str, list[float]] = {}
            for f in with_baselines:
                for name, score in f.baselines.items():
                    by_name.setdefault(name, []).append(min(1.0, max(0.0, score)))
            # The most recorded baselines first; a plot with more than six lines is unreadable.
            shown = sorted(by_name, key=lambda k: (-len(by_name[k]), k))[:6]
            body = _baseline_svg({name: by_name[name] for name in shown})
            body += _table(["task", "baselines"],
                           [[f.task_dir, ", ".join(f"{k} {v:.3f}" for k, v in f.baselines.items())]
                            for f in with_baselines])
            body += f'<p class="note">{total - len(with_baselines)} tasks record no baseline.</p>'
        else:
            body = ('<p class="note">No task records baselines (time-series tasks record '
                    "<code>question.baselines</code>, tabular tasks <code>daregen.mm_baselines</code>).</p>")
        parts.append(_section("Baseline difficulty", body))

        rows = [design_row(f) for f in facts]
        body = _table(["evidence kind", "tasks", "share", "rests on"], evidence_kind_rows(rows), {1, 2})
        body += _table(list(rows[0]), [list(r.values()) for r in rows])
        body += ('<p class="note">Rejected candidates: the columns the designer passed over, with why '
                 "(<code>daregen.excluded_targets</code>); evidence kind: what the target rests on "
                 "(<code>daregen.target_evidence_kind</code>; a fallback kind rests on the column's own description "
                 "only); attempts refused: targets tried and found unlearnable "
                 "(<code>daregen.design_attempts</code>); leak screen: the best single-feature score against the "
                 "reference model's (<code>daregen.mm_baselines</code>).</p>")
        body += f'<p class="note">{html_text(DESIGN_ROWS_NOTE)}</p>'
        parts.append(_section("Targets and their evidence", body))

        sizes = sorted(f.val_rows for f in facts if f.val_rows is not None)
        if sizes:
            body = _hist_svg(sizes, "MM validation rows per task", "rows", log=True)
            body += _table(["", "tasks", "min", "median", "max"],
                           [["MM validation rows", len(sizes), sizes[0], sizes[len(sizes) // 2], sizes[-1]]],
                           {1, 2, 3, 4})
            body += _table(["MM validation rows", "tasks"], _size_buckets(sizes), {1})
        else:
            body = '<p class="note">No task records its MM validation rows (<code>daregen.val_rows</code>).</p>'
        parts.append(_section("MM validation sizes", body))

        flagged = [[f.task_dir, flag] for f in facts for flag in suspicious(f)]
        body = (_table(["task", "why"], flagged) if flagged else "<p>No task is flagged.</p>")
        body += ('<p class="note">Flagged from the recorded baselines: a reference that does no better than its '
                 "best single feature, or a variant whose every baseline scores 0.</p>")
        parts.append(_section("Tasks to look at", body))

    rejections = rejection_tally(run_report)
    link = f'<p>Every rejected dataset and its reason: <a href="{names.RUN_REPORT_MD}">{names.RUN_REPORT_MD}</a></p>'
    if rejections:
        body = _bar_svg(rejections[:15], "Rejection reasons", "datasets")
        body += _table(["reason", "datasets"], [list(r) for r in rejections], {1})
        body += link + "<details><summary>every rejection</summary>"
        body += _table(["dataset", "stage", "reason"], _rejection_rows(run_report)) + "</details>"
    elif run_report is None:
        body = f'<p class="note">No {names.RUN_REPORT_JSON} in this tree.</p>'
    else:
        body = "<p>No dataset was rejected.</p>"
    parts.append(_section("Rejection reasons", body))

    unreadable = [f for f in facts if f.problem]
    if unreadable:
        parts.append(_section("Unreadable tasks", _table(["task", "problem"],
                                                         [[f.task_dir, f.problem] for f in unreadable])))
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>daregen corpus report</title><style>{_CSS}</style></head><body>\n"
            + "\n".join(parts) + "\n</body></html>\n")


def _size_buckets(sizes: list[int]) -> list[list[Any]]:
    """Counts of tasks per power-of-ten band of validation rows, e.g. `100-999`."""
    bands: dict[int, int] = {}
    for n in sizes:
        bands[len(str(max(n, 1))) - 1] = bands.get(len(str(max(n, 1))) - 1, 0) + 1
    return [[f"{10 ** k}-{10 ** (k + 1) - 1}" if k else "0-9", n] for k, n in sorted(bands.items())]


def write_tree_reports(tree: Path) -> None:
    """Write LICENSE_DISTRIBUTION.md, licenses.csv and corpus_report.html into `tree`."""
    tree = Path(tree)
    if not tree.is_dir():
        raise ValueError(f"{tree} is not a directory")
    facts = read_tree_facts(tree)
    run_report = read_json_or_none(tree / names.RUN_REPORT_JSON)
    manifest = read_json_or_none(tree / names.MANIFEST)
    write_text(tree / LICENSE_DISTRIBUTION_MD, render_licence_distribution(facts))
    write_text(tree / LICENSES_CSV, render_licences_csv(facts))
    write_text(tree / CORPUS_REPORT_HTML,
               render_corpus_report(facts, run_report if isinstance(run_report, dict) else None,
                                    manifest if isinstance(manifest, dict) else None))
