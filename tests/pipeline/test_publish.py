"""What `--out` shows changes only by one atomic pointer switch to a complete, checked generation."""

from __future__ import annotations

import json
import os
import threading

import pytest

from pipeline.core import names
from pipeline.core.jsonio import write_json
from pipeline.publish import (PARTIAL, build_lock, build_manifest, check_generation, generations_dir,
                              new_generation, publish, published_generation)


def _fill(gen, tasks: dict[str, str]) -> None:
    """A minimal tree: one folder per task with its metadata, the question list and the manifest."""
    for task, text in tasks.items():
        write_json(gen / task / names.VERIFY_DIR / names.ALL_METADATA, {"text": text})
    write_json(gen / names.QUESTION_LIST, [{"file_path": t} for t in sorted(tasks)])
    write_json(gen / names.MANIFEST, build_manifest(gen, {"tasks": len(tasks)}))


def _build(out, tasks, keep=3):
    with build_lock(out):
        gen = new_generation(out)
        _fill(gen, tasks)
        assert check_generation(gen) == []
        return publish(gen, out, keep)


def test_out_is_a_symlink_to_the_sealed_generation(tmp_path):
    out = tmp_path / "tasks"
    gen = _build(out, {"a_class": "one"})
    assert out.is_symlink() and not os.path.isabs(os.readlink(out))  # relative: the folder can move
    assert published_generation(out) == gen and not gen.name.endswith(PARTIAL)
    assert json.loads((out / "a_class" / "verify" / names.ALL_METADATA).read_text()) == {"text": "one"}
    # the generation id names a folder only, never a file's content
    assert all(gen.name not in p.read_text() for p in gen.rglob("*") if p.is_file())


def test_a_partial_generation_never_shows_and_is_cleaned_by_the_next_build(tmp_path):
    out = tmp_path / "tasks"
    first = _build(out, {"a_class": "one"})
    with build_lock(out):
        half = new_generation(out)
        write_json(half / "b_reg" / "x.json", {"half": True})  # a build killed here...
    assert published_generation(out) == first and not (out / "b_reg").exists()
    with build_lock(out):  # ...is swept away by the next one
        assert not half.exists()


def test_user_files_are_carried_over_and_old_generations_stay_whole(tmp_path):
    out = tmp_path / "tasks"
    first = _build(out, {"a_class": "one"})
    (out / "README.md").write_text("kept\n")
    second = _build(out, {"b_reg": "two"})
    assert (out / "README.md").read_text() == "kept\n"
    assert not (out / "a_class").exists()
    assert (first / "a_class").is_dir() and (first / "README.md").is_file()  # copied, not moved
    assert published_generation(out) == second


def test_a_plain_folder_from_an_older_build_becomes_a_legacy_generation(tmp_path):
    out = tmp_path / "tasks"
    out.mkdir()
    _fill(out, {"old_class": "legacy"})
    (out / "notes.txt").write_text("mine\n")
    _build(out, {"new_class": "x"})
    assert out.is_symlink() and (out / "notes.txt").read_text() == "mine\n"
    legacy = [p for p in generations_dir(out).iterdir() if p.name.startswith("legacy-")]
    assert len(legacy) == 1 and (legacy[0] / "old_class").is_dir()


def test_only_the_last_k_generations_are_kept(tmp_path):
    out = tmp_path / "tasks"
    gens = [_build(out, {f"t{i}_class": str(i)}, keep=2) for i in range(4)]
    assert [g.exists() for g in gens] == [False, False, True, True]
    assert published_generation(out) == gens[-1]


def test_a_second_build_of_the_same_output_is_refused(tmp_path):
    out = tmp_path / "tasks"
    entered, release = threading.Event(), threading.Event()

    def hold():
        with build_lock(out):
            entered.set()
            release.wait(30)

    t = threading.Thread(target=hold)
    t.start()
    entered.wait(30)
    try:
        with pytest.raises(ValueError, match="another build is writing"):
            with build_lock(out):
                pass
    finally:
        release.set()
        t.join()


def test_a_generation_with_a_listed_task_missing_is_not_publishable(tmp_path):
    out = tmp_path / "tasks"
    with build_lock(out):
        gen = new_generation(out)
        _fill(gen, {"a_class": "one"})
        write_json(gen / names.QUESTION_LIST, [{"file_path": "a_class"}, {"file_path": "ghost_reg"}])
        (gen / "a_class" / names.VERIFY_DIR / names.ALL_METADATA).unlink()
        problems = check_generation(gen)
    assert any("ghost_reg" in p for p in problems) and any("missing" in p for p in problems)


def test_the_manifest_leaves_out_reports_and_diffs(tmp_path):
    _fill(tmp_path, {"a_class": "one"})
    for name in ("diff.md", "corpus_report.html", names.RUN_REPORT_JSON):
        (tmp_path / name).write_text("varies\n")
    files = build_manifest(tmp_path, {})["files"]
    assert sorted(files) == ["a_class/verify/all_metadata.json", names.QUESTION_LIST]



def test_a_folder_daregen_did_not_write_is_refused_and_with_force_kept_forever(tmp_path):
    """Never delete what daregen did not create: a user's folder as --out is refused; with --force it is
    moved beside the generations as user-folder-<id>, which pruning never touches."""
    from pipeline.publish import USER_FOLDER_PREFIX, check_out_target

    out = tmp_path / "tasks"
    out.mkdir()
    (out / "notes.txt").write_text("mine\n")
    with pytest.raises(ValueError, match="non-empty folder daregen did not write"):
        check_out_target(out)
    check_out_target(out, force=True)
    for i in range(3):
        _build(out, {f"t{i}_class": str(i)}, keep=1)
    kept = [p for p in generations_dir(out).iterdir() if p.name.startswith(USER_FOLDER_PREFIX)]
    assert len(kept) == 1 and (kept[0] / "notes.txt").read_text() == "mine\n"
    assert not (out / "notes.txt").exists()  # not carried into the tree: it was never part of one
    check_out_target(out)  # the pointer now: no refusal
