"""Write one task in the DARE-bench layout: source/, verify/, all_metadata.json.

`write_task` is handed the directory to write; it writes the data files, the
metadata, runs the reference solution for the IF ground truth, then checks the
result. A task that fails a check is removed and reported, never published.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, replace
from pathlib import Path

from finalize.checks import (agent_tables, check_instruction, check_scoring, check_tabular_task, checks_failed,
                             errors)
from finalize.instructions import question_v1, question_v2, spec_references
from finalize.metadata_txt import metadata_descriptions, render_metadata_txt, with_checked_claims
from finalize.mm_check import assess_task
from finalize.runner import run_reference
from finalize.schema import check_metadata_schema
from pipeline.core import names
from pipeline.core.column_refs import with_name_use
from pipeline.core.environment import fingerprint, fingerprint_digest
from pipeline.core.jsonio import read_json, write_json, write_text
from pipeline.core.records import DatasetRejected, JoinStep, TaskPackage, TaskSpec
from pipeline.core.task_metadata import (DataInfo, FeatureReference, MetaData, Provenance, TabularQuestion,
                                         TaskMetadata, as_json, rejected_when_invalid,
                                         write_all_metadata)
from pipeline.core.timing import timed
from postprocess.formats import SQLITE_TABLE, write_frame, write_relational_tables, write_split_tables
from postprocess.relational import split_relational, task_join_path


@dataclass(frozen=True)
class BuildContext:
    seed: int
    design_digest: str
    source_digest: str = ""  # the source's identity (pipeline.steps.source_digest): part of the design digest


def needed_files(spec: TaskSpec) -> tuple[list[str], list[str]]:
    f = lambda stem: names.data_file(stem, spec.save_file_type)  # noqa: E731
    return ([f(names.TRAIN_V1), f(names.VAL_V1), names.METADATA_TXT],
            [f(names.TRAIN_V2), f(names.VAL_V2), names.METADATA_TXT])


def tabular_question(spec: TaskSpec, join_path: tuple[JoinStep, ...] = ()) -> TabularQuestion:
    """The question block; `join_path` (a relational source's joins, which question_v1 requires) only if any."""
    rel = lambda *parts: "./" + "/".join((spec.task_dir,) + parts)  # noqa: E731
    f = lambda stem: names.data_file(stem, spec.save_file_type)  # noqa: E731
    v1, v2 = needed_files(spec)
    joins = {"join_path": list(join_path)} if join_path else {}
    return TabularQuestion.from_spec(
        spec,
        needed_files_v1=v1,
        needed_files_v2=v2,
        train_err_split_save_file=rel(names.SOURCE_DIR, f(names.TRAIN_V1)),
        train_no_err_save_file=rel(names.SOURCE_DIR, f(names.TRAIN_V1_NO_ERR)),
        val_no_err_save_file=rel(names.SOURCE_DIR, f(names.VAL_V1)),
        train_v2_save_file=rel(names.SOURCE_DIR, f(names.TRAIN_V2)),
        val_v2_save_file=rel(names.SOURCE_DIR, f(names.VAL_V2)),
        ground_truth_file=rel(names.VERIFY_DIR, names.GROUND_TRUTH),
        simulated_pred_file=rel(names.VERIFY_DIR, names.SIMULATED_PRED),
        output_file=rel(names.PREDICTION),
        **joins,
    )


def question_block(spec: TaskSpec) -> dict:
    """The question block as all_metadata.json holds it (no join_path)."""
    return as_json(tabular_question(spec))


def _features_missing(pkg: TaskPackage) -> bool:
    """Whether a selected feature has a missing value in train_v1 (its noise included) or val_v1."""
    return any(frame[c].isna().any() for stem in (names.TRAIN_V1, names.VAL_V1) if (frame := pkg.frames.get(stem))
               is not None for c in pkg.spec.selected_features if c in frame.columns)


def question_list_entry(pkg: TaskPackage, refs: dict[str, FeatureReference]) -> dict:
    """`refs`: how question_v1 refers to each feature (instructions.spec_references)."""
    spec = pkg.spec
    v1, v2 = needed_files(spec)
    return {
        "file_path": spec.task_dir,
        "task": spec.problem_type,
        "question_v1": question_v1(pkg.record, spec, refs, has_missing=_features_missing(pkg)),
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
        raise DatasetRejected(f"a relational task needs sqlite files, not {ftype}", "relational_needs_sqlite")
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
            documented = metadata_descriptions(metadata_txt)  # what an agent can look a description up in
            refs = spec_references(spec, documented)
            entry = question_list_entry(pkg, refs)
            # why a column's name still appears in the text, for each feature where it does
            refs = with_name_use(refs, entry["question_v1"])
            write_data_files(pkg, src)
            pkg.ground_truth.to_csv(verify / names.GROUND_TRUTH, index=False, lineterminator="\n")
            env = fingerprint()
            write_json(verify / names.ENVIRONMENT, env)
            with rejected_when_invalid():
                typed_question = tabular_question(spec, task_join_path(pkg.record, spec))
            question = as_json(typed_question)
        with timed("finalize/mm check"):
            mm = assess_task(task_dir, question)  # MM feasibility from the files just written; scores recorded below
        with timed("finalize/writes"), rejected_when_invalid():
            write_all_metadata(verify / names.ALL_METADATA, TaskMetadata(
                question=typed_question,
                data_info=DataInfo.of(pkg.record),
                meta_data=MetaData.of(pkg.record, metadata_txt),
                daregen=Provenance.of(
                    spec, pkg.record, seed=ctx.seed, design_config=ctx.design_digest, source_digest=ctx.source_digest,
                    train_rows=len(pkg.frames[names.TRAIN_V1_NO_ERR]), val_rows=len(pkg.ground_truth),
                    environment=fingerprint_digest(env), noise_rows=pkg.n_noise_rows,
                    design_attempts=list(spec.design_attempts), v2_dropped_columns=list(spec.v2_dropped_columns),
                    mm_baselines=mm.scores, feature_references=list(refs.values()),
                    **({"split_time_column": spec.split_time_column} if spec.split_time_column else {})),
            ))
        with timed("finalize/reference run"):
            run_reference(task_dir, verify / names.SIMULATED_PRED)
        with timed("finalize/file checks"):
            problems = check_tabular_task(task_dir)
        with timed("finalize/instruction check"):
            # read as an agent reads it: metadata.txt is the only key from descriptions to columns
            problems += check_instruction(spec.task_dir, entry["question_v1"], question,
                                          documented, strict=True,
                                          tables=agent_tables(src, spec.save_file_type))
            problems += check_scoring(spec.task_dir, entry, question)
        with timed("finalize/schema check"):
            problems += list(mm.problems) + check_metadata_schema(spec.task_dir,
                                                                  read_json(verify / names.ALL_METADATA))
        problems = errors(problems)
        if problems:
            raise checks_failed(problems)
    except BaseException:
        shutil.rmtree(task_dir, ignore_errors=True)
        raise
    return entry
