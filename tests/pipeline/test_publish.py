"""What `--out` shows changes only by one atomic pointer switch to a complete, checked generation."""

from __future__ import annotations

import json
import os
import threading

import pytest

from pipeline.core import names
from pipeline.core.jsonio import write_json
from pipeline.publish import (PARTIAL, build_lock, build_manifest, check_generation, generations_dir,
                              new_generation, publish, publish_mode, published_generation)


def _fill(gen, tasks: dict[str, str], **meta) -> None:
    """A minimal tree: one folder per task with its metadata, the question list and the manifest."""
    for task, text in tasks.items():
        write_json(gen / task / names.VERIFY_DIR / names.ALL_METADATA, {"text": text})
    write_json(gen / names.QUESTION_LIST, [{"file_path": t} for t in sorted(tasks)])
    write_json(gen / names.MANIFEST, build_manifest(gen, {"tasks": len(tasks), **meta}))


def _build(out, tasks, keep=3, **meta):
    with build_lock(out):
        gen = new_generation(out)
        _fill(gen, tasks, **meta)
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


def test_user_links_at_the_root_are_carried_as_links_never_followed(tmp_path):
    """Harmless: a link left at the published root (to a folder or a file outside the tree) is carried as
    the same link, so no generation holds a real copy of what it points at; a FIFO is not carried."""
    out, outside = tmp_path / "tasks", tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret\n")
    _build(out, {"a_class": "one"})
    os.symlink(outside, out / "leak")
    os.symlink(outside / "secret.txt", out / "leak.txt")
    os.mkfifo(out / "pipe")
    second = _build(out, {"b_reg": "two"})
    for name, target in (("leak", outside), ("leak.txt", outside / "secret.txt")):
        assert (second / name).is_symlink() and os.readlink(second / name) == str(target)
    assert not os.path.lexists(second / "pipe")


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


def test_generations_published_all_never_rotate_an_approved_one_away(tmp_path):
    """Issue 48: one approved release, then three nightlies publishing every task at the same --out; each mode
    keeps its newest `keep`, so the approved release stays until newer approved ones replace it."""
    out = tmp_path / "tasks"
    approved = _build(out, {"a_class": "approved"}, keep=2, publish="approved")
    nightlies = [_build(out, {f"n{i}_class": str(i)}, keep=2) for i in range(3)]
    assert approved.exists() and publish_mode(approved) == "approved", "rotated away by runs that published all"
    assert [g.exists() for g in nightlies] == [False, True, True]
    newer = [_build(out, {f"r{i}_class": str(i)}, keep=2, publish="approved") for i in range(2)]
    assert not approved.exists() and all(g.exists() for g in newer)  # approved ones rotate each other
    assert published_generation(out) == newer[-1] and publish_mode(nightlies[-1]) == "all"


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



def _notes(folder) -> None:
    folder.mkdir()
    (folder / "notes.txt").write_text("mine\n")


def _look_alike(folder) -> None:
    """A user's folder that holds a manifest.json and a question_list.json of its own, as many projects do:
    only a tree whose manifest matches its files is an older daregen's (adopted, later pruned)."""
    (folder / "results").mkdir(parents=True)
    (folder / "results" / "run1.csv").write_text("a,b\n1,2\n")
    write_json(folder / names.MANIFEST, {"files": {"results/run1.csv": "0" * 64}, "name": "my project"})
    write_json(folder / names.QUESTION_LIST, [{"file_path": "results", "question": "why?"}])


@pytest.mark.parametrize("make_folder", [_notes, _look_alike], ids=["plain", "look-alike"])
def test_a_folder_daregen_did_not_write_is_refused_and_with_force_kept_forever(tmp_path, make_folder):
    """Never delete what daregen did not create: a user's folder as --out is refused; with --force it is
    moved beside the generations as user-folder-<id>, which pruning never touches (three builds on)."""
    from pipeline.publish import USER_FOLDER_PREFIX, check_out_target

    out = tmp_path / "tasks"
    make_folder(out)
    mine = {p.relative_to(out): p.read_text() for p in out.rglob("*") if p.is_file()}
    with pytest.raises(ValueError, match="non-empty folder daregen did not write"):
        check_out_target(out)
    check_out_target(out, force=True)
    for i in range(3):
        _build(out, {f"t{i}_class": str(i)}, keep=1)
    kept = [p for p in generations_dir(out).iterdir() if p.name.startswith(USER_FOLDER_PREFIX)]
    assert len(kept) == 1 and {p.relative_to(kept[0]): p.read_text() for p in kept[0].rglob("*") if p.is_file()} == mine
    assert not [p for p in generations_dir(out).iterdir() if p.name.startswith("legacy-")]
    ours = {names.MANIFEST, names.QUESTION_LIST}  # the build's own, at the same names
    assert not any((out / rel).exists() for rel in mine if str(rel) not in ours)  # not carried: never part of it
    check_out_target(out)  # the pointer now: no refusal


def test_a_daregen_tree_with_one_file_changed_is_no_longer_recognised(tmp_path):
    from pipeline.publish import check_out_target

    out = tmp_path / "tasks"
    out.mkdir()
    _fill(out, {"old_class": "legacy"})
    check_out_target(out)  # the manifest matches: an older daregen's tree, adopted without --force
    write_json(out / "old_class" / names.VERIFY_DIR / names.ALL_METADATA, {"text": "edited by hand"})
    with pytest.raises(ValueError, match="daregen did not write"):
        check_out_target(out)


def test_force_never_moves_the_working_folder_its_parents_or_home(tmp_path, monkeypatch):
    from pipeline.publish import check_out_target

    work = tmp_path / "home" / "me" / "project"
    work.mkdir(parents=True)
    (work / "sources.toml").write_text("x = 1\n")
    monkeypatch.chdir(work)
    monkeypatch.setenv("HOME", str(tmp_path / "elsewhere"))
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / ".bashrc").write_text("x\n")
    for folder in (work, work.parent, tmp_path / "home", tmp_path / "elsewhere", "/"):
        with pytest.raises(ValueError, match="never moves") as err:
            check_out_target(folder, force=True)
        assert "--force to" not in str(err.value)
    assert (work / "sources.toml").is_file()


def test_an_out_inside_a_published_tree_is_refused_without_suggesting_force(tmp_path):
    from pipeline.publish import check_out_target

    out = tmp_path / "tasks"
    gen = _build(out, {"a_class": "one"})
    legacy = tmp_path / "old"
    legacy.mkdir()
    _fill(legacy, {"b_class": "two"})
    for inner in (out / "a_class", out / "a_class" / "new", gen / "a_class", legacy / "b_class", generations_dir(out)
                  / "x"):
        for force in (False, True):
            with pytest.raises(ValueError, match="inside the daregen tree") as err:
                check_out_target(inner, force=force)
            assert "--force" not in str(err.value)
    assert json.loads((out / "a_class" / "verify" / names.ALL_METADATA).read_text()) == {"text": "one"}
