"""Write one task in the DARE-bench layout: source/, verify/, all_metadata.json.

`write_task` is handed the directory to write; it writes the data files, the
metadata, runs the reference solution for the IF ground truth, then checks the
result. A task that fails a check is removed and reported, never published.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, replace
from pathlib import Path

from finalize.checks import check_instruction, check_tabular_task, errors
from finalize.instructions import column_descriptions, question_v1, question_v2
from finalize.metadata_txt import render_metadata_txt, with_checked_claims
from finalize.mm_check import assess_task
from finalize.runner import run_reference
from finalize.schema import check_metadata_schema
from pipeline.core import names
from pipeline.core.environment import code_version, fingerprint, fingerprint_digest
from pipeline.core.jsonio import read_json, write_json, write_text
from pipeline.core.records import DatasetRecord, DatasetRejected, TaskPackage, TaskSpec
from pipeline.core.timing import timed
from postprocess.formats import SQLITE_TABLE, write_frame, write_relational_tables, write_split_tables
from postprocess.relational import split_relational, task_join_path


@dataclass(frozen=True)
class BuildContext:
    seed: int
    design_digest: str


def needed_files(spec: TaskSpec) -> tuple[list[str], list[str]]:
    f = lambda stem: names.data_file(stem, spec.save_file_type)  # noqa: E731
    return ([f(names.TRAIN_V1), f(names.VAL_V1), names.METADATA_TXT],
            [f(names.TRAIN_V2), f(names.VAL_V2), names.METADATA_TXT])


def data_info(record: DatasetRecord) -> dict:
    """The source's catalogue record, with DARE-bench's (Kaggle's) key names."""
    return {
        "id": record.ref,
        "ref": record.ref,
        "title": record.title,
        "subtitle": record.subtitle,
        "description": record.description,
        "url": record.url,
        "licenseName": record.license,
        "lastUpdated": record.last_updated,
        "ownerName": record.owner,
        "ownerRef": record.owner,
        "currentVersionNumber": record.version,
        "usabilityRating": record.usability_rating,
        "tags": [{"ref": t, "name": t} for t in record.tags],
        "source": record.source,
    }


def meta_data(record: DatasetRecord, metadata_txt: str) -> dict:
    return {
        "datasetId": record.ref,
        "datasetSlug": record.slug,
        "ownerUser": record.owner,
        "usabilityRating": record.usability_rating,
        "title": record.title,
        "subtitle": record.subtitle,
        "description": metadata_txt,
        "keywords": list(record.tags),
        "licenses": [{"name": record.license}],
    }


def question_block(spec: TaskSpec) -> dict:
    rel = lambda *parts: "./" + "/".join((spec.task_dir,) + parts)  # noqa: E731
    f = lambda stem: names.data_file(stem, spec.save_file_type)  # noqa: E731
    v1, v2 = needed_files(spec)
    return {
        "target": list(spec.target),
        "target_candidates": list(spec.target_candidates),
        "related_features": list(spec.related_features),
        "not_filtered_related_features": list(spec.not_filtered_related_features),
        "selected_features": list(spec.selected_features),
        "problem_type": spec.problem_type,
        "expected_ranges": spec.expected_ranges,
        "column_type_inference": spec.column_type_inference,
        "numerical_features": list(spec.numerical_features),
        "categorical_features": list(spec.categorical_features),
        "model_type": spec.model_type,
        "imputer_type": spec.imputer_type,
        "random_state": spec.random_state,
        "train_test_ratio": spec.train_test_ratio,
        "save_file_type": spec.save_file_type,
        "needed_files_v1": v1,
        "needed_files_v2": v2,
        "train_err_split_save_file": rel(names.SOURCE_DIR, f(names.TRAIN_V1)),
        "train_no_err_save_file": rel(names.SOURCE_DIR, f(names.TRAIN_V1_NO_ERR)),
        "val_no_err_save_file": rel(names.SOURCE_DIR, f(names.VAL_V1)),
        "train_v2_save_file": rel(names.SOURCE_DIR, f(names.TRAIN_V2)),
        "val_v2_save_file": rel(names.SOURCE_DIR, f(names.VAL_V2)),
        "ground_truth_file": rel(names.VERIFY_DIR, names.GROUND_TRUTH),
        "simulated_pred_file": rel(names.VERIFY_DIR, names.SIMULATED_PRED),
        "output_file": rel(names.PREDICTION),
    }


def question_list_entry(pkg: TaskPackage) -> dict:
    spec = pkg.spec
    v1, v2 = needed_files(spec)
    return {
        "file_path": spec.task_dir,
        "task": spec.problem_type,
        "question_v1": question_v1(pkg.record, spec),
        "question_v2": question_v2(spec),
        "needed_files_v1": v1,
        "needed_files_v2": v2,
        "available_tools": ["python_executor"],
        "usability_rating": pkg.record.usability_rating,
        "lastUpdated": pkg.record.last_updated,
        "contain_multiple_files": spec.save_file_type == "sqlite",
    }


def write_data_files(pkg: TaskPackage, src: Path) -> None:
    """The five data files in the task's format (train_v1 as split tables in sqlite)."""
    spec = pkg.spec
    ftype = spec.save_file_type
    join_path = task_join_path(pkg.record, spec)
    if join_path and ftype != "sqlite":
        raise DatasetRejected(f"a relational task needs sqlite files, not {ftype}")
    for stem, frame in pkg.frames.items():
        path = src / names.data_file(stem, ftype)
        if join_path and stem in (names.TRAIN_V1, names.TRAIN_V1_NO_ERR):
            # The IF training data as the source's tables (fact + dimensions), so the agent must
            # join them; val_v1 stays one flat val_set table: it is what predictions are aligned
            # to by row_id, and the format doc defines it as row_id plus the feature columns.
            keys = [(s.left, s.left_on, s.right, s.right_on) for s in join_path]
            write_relational_tables(split_relational(frame, join_path), keys, path)
        elif stem == names.TRAIN_V1 and ftype == "sqlite":
            write_split_tables(pkg.train_v1_tables, path)
        else:
            write_frame(frame, path, ftype, SQLITE_TABLE.get(stem))


def fresh_task_dir(root: Path, name: str) -> tuple[Path, Path, Path]:
    """An empty task folder with its source/ and verify/ (a rerun replaces what a killed one left)."""
    task_dir = root / name
    if task_dir.exists():
        shutil.rmtree(task_dir)
    src, verify = task_dir / names.SOURCE_DIR, task_dir / names.VERIFY_DIR
    src.mkdir(parents=True)
    verify.mkdir()
    return task_dir, src, verify


def write_task(pkg: TaskPackage, root: Path, ctx: BuildContext) -> dict:
    """Write, run the reference, check. Returns the question_list entry; raises DatasetRejected."""
    # the source's column documentation, minus format claims the data contradicts (metadata_txt.py)
    pkg = replace(pkg, record=with_checked_claims(pkg.record, pkg.frames[names.TRAIN_V2]))
    spec = pkg.spec
    task_dir, src, verify = fresh_task_dir(root, spec.task_dir)
    try:
        with timed("finalize/writes"):
            columns = list(pkg.frames[names.TRAIN_V2].columns)
            metadata_txt = render_metadata_txt(pkg.record, columns)
            write_text(src / names.METADATA_TXT, metadata_txt)
            write_data_files(pkg, src)
            pkg.ground_truth.to_csv(verify / names.GROUND_TRUTH, index=False, lineterminator="\n")
            env = fingerprint()
            write_json(verify / names.ENVIRONMENT, env)
            question = question_block(spec)
            if join_path := task_join_path(pkg.record, spec):  # relational source: the joins question_v1 requires
                question["join_path"] = [s.model_dump(mode="json") for s in join_path]
        with timed("finalize/mm check"):
            mm = assess_task(task_dir, question)  # MM feasibility from the files just written; scores recorded below
        with timed("finalize/writes"):
            write_json(verify / names.ALL_METADATA, {
                "question": question,
                "data_info": data_info(pkg.record),
                "meta_data": meta_data(pkg.record, metadata_txt),
                "daregen": {
                    "ref": spec.ref,
                    "source": pkg.record.source,
                    "designer": spec.designer,
                    "seed": ctx.seed,
                    "design_config": ctx.design_digest,
                    "code_version": code_version(),
                    "environment": fingerprint_digest(env),
                    "noise_rows": pkg.n_noise_rows,
                    "train_rows": len(pkg.frames[names.TRAIN_V1_NO_ERR]),
                    "val_rows": len(pkg.ground_truth),
                    "excluded_features": spec.excluded_features,
                    "target_evidence": spec.target_evidence,
                    "target_evidence_kind": spec.target_evidence_kind,
                    "excluded_targets": spec.excluded_targets,
                    "design_attempts": list(spec.design_attempts),
                    "size_floors": spec.size_floors,
                    "v2_dropped_columns": list(spec.v2_dropped_columns),
                    "mm_baselines": mm.scores,
                },
            })
        with timed("finalize/reference run"):
            run_reference(task_dir, verify / names.SIMULATED_PRED)
        entry = question_list_entry(pkg)
        with timed("finalize/file checks"):
            problems = check_tabular_task(task_dir)
        with timed("finalize/instruction check"):
            problems += check_instruction(spec.task_dir, entry["question_v1"], question,
                                          column_descriptions(pkg.record, spec))
        with timed("finalize/schema check"):
            problems += list(mm.problems) + check_metadata_schema(spec.task_dir,
                                                                  read_json(verify / names.ALL_METADATA))
        problems = errors(problems)
        if problems:
            raise DatasetRejected("check failed: " + "; ".join(p.message for p in problems))
    except BaseException:
        shutil.rmtree(task_dir, ignore_errors=True)
        raise
    return entry
