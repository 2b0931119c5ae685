"""The edges of a build: the staging tree, the root files, and the swap into place.

A build writes everything into a staging folder beside the output and only
moves it into place once the root files are written, so a crash or a kill
mid-build never leaves a half-written tree where the old one was.
"""

from __future__ import annotations

import os
import shutil
import uuid
from pathlib import Path

from pipeline import names
from pipeline.hashing import content_hash
from pipeline.jsonio import read_json, write_json, write_text

# Written at the root by a build but outside the manifest: they hold timings.
REPORT_FILES = (names.RUN_REPORT_JSON, names.RUN_REPORT_MD)


def staging_dir(out: Path) -> Path:
    out = out.resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    path = out.parent / f".{out.name}.staging-{uuid.uuid4().hex[:8]}"
    path.mkdir()
    return path


def write_question_list(root: Path, entries: list[dict]) -> None:
    write_json(root / names.QUESTION_LIST, sorted(entries, key=lambda e: e["file_path"]))


def build_manifest(root: Path, meta: dict) -> dict:
    """Content hash of every task file and the question list (not the run report)."""
    files = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = path.relative_to(root).as_posix()
        if rel in REPORT_FILES or rel == names.MANIFEST:
            continue
        files[rel] = content_hash(path)
    return {**meta, "files": files}


def _managed_names(out: Path) -> set[str]:
    """Top-level entries a previous build wrote (everything else in `out` is the user's)."""
    managed = {names.QUESTION_LIST, names.MANIFEST, *REPORT_FILES}
    manifest = out / names.MANIFEST
    if manifest.exists():
        managed |= {rel.split("/", 1)[0] for rel in read_json(manifest).get("files", {})}
    return managed


def publish(staging: Path, out: Path) -> None:
    """Swap the staging tree into `out`, carrying over files the user keeps there (e.g. a README)."""
    out = out.resolve()
    if out.exists():
        managed = _managed_names(out)
        for entry in out.iterdir():
            if entry.name not in managed and not (staging / entry.name).exists():
                os.replace(entry, staging / entry.name)
        trash = out.parent / f".{out.name}.old-{uuid.uuid4().hex[:8]}"
        os.replace(out, trash)
        os.replace(staging, out)
        shutil.rmtree(trash, ignore_errors=True)
    else:
        os.replace(staging, out)


def write_report_md(root: Path, report: dict) -> None:
    lines = ["# daregen run report", "", f"- built: {report['built']} tasks "
             f"({report['by_type'].get('classification', 0)} classification, "
             f"{report['by_type'].get('regression', 0)} regression)",
             f"- considered: {report['considered']} datasets, rejected: {len(report['rejections'])}",
             f"- wall time: {report['seconds']:.1f} s"]
    if "llm" in report:
        from task_design.llm_schema import usage_line

        lines.append(f"- {usage_line(report['llm'])}")
    lines += ["", "## Rejections", "",
             "| dataset | stage | reason |", "|---|---|---|"]
    lines += [f"| {r['ref']} | {r['stage']} | {r['reason'].replace('|', '/')} |" for r in report["rejections"]]
    write_text(root / names.RUN_REPORT_MD, "\n".join(lines) + "\n")
