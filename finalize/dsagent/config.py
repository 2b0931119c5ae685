"""OSWorld-style task JSON for one desktop task (the DSAgentBench / OSWorld evaluation_examples format).

    {"id", "snapshot", "instruction", "source", "config": [...], "trajectory", "related_apps",
     "evaluator": {"func", "result": {"type": "vm_file", ...}, "expected": {"type": "rule", ...}},
     "category", "difficulty", "tags", "daregen": {...}}

Config steps follow OSWorld's setup controller: `execute` (make the task folder),
`download` (files from a URL) or `upload_file` (files from a host path), then
`launch` of VS Code or Jupyter at the folder. The expected side never goes to
the VM: it is a rule naming the evaluator and expected.json beside this config.
"""

from __future__ import annotations

import posixpath
import uuid
from urllib.parse import quote

from finalize.dsagent.dare_variants import TASK_FOLDER
from finalize.dsagent.records import DesktopSettings, DesktopTask
from pipeline.core.metrics import SOLVED_THRESHOLD

# A fixed namespace, so a task key maps to the same id on every machine and in every build.
NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://github.com/daregen/daregen/dsagentbench")
EVALUATOR_FUNC = "daregen_python_evaluator"
EVALUATOR_FILE = "evaluator.py"
EXPECTED_FILE = "expected.json"
APPS = {"vscode": ["vs_code", "terminal"], "jupyter": ["jupyter", "chrome", "terminal"]}


def task_id(key: str) -> str:
    return str(uuid.uuid5(NAMESPACE, key))


def vm_folder(task: DesktopTask, settings: DesktopSettings) -> str:
    return posixpath.join(settings.vm_root, task.name)


def _placement(task: DesktopTask, settings: DesktopSettings, tree_paths: dict[str, str]) -> dict:
    folder = vm_folder(task, settings)
    files = []
    for name in sorted(tree_paths):
        target = posixpath.join(folder, name)
        if settings.placement == "download":
            files.append({"url": f"{settings.base_url.rstrip('/')}/{quote(tree_paths[name])}", "path": target})
        else:
            files.append({"local_path": posixpath.join(settings.local_root, tree_paths[name]), "path": target})
    return {"type": settings.placement, "parameters": {"files": files}}


def _launch(folder: str, settings: DesktopSettings) -> dict:
    if settings.app == "vscode":
        command = ["code", folder]
    else:
        command = ["jupyter", "lab", f"--notebook-dir={folder}"]
    return {"type": "launch", "parameters": {"command": command}}


def build_config(task: DesktopTask, settings: DesktopSettings, tree_paths: dict[str, str], source: str) -> dict:
    """The task JSON; `tree_paths` maps each VM file name to its path relative to the task tree."""
    folder = vm_folder(task, settings)
    return {
        "id": task_id(task.key),
        "snapshot": settings.snapshot,
        "instruction": task.instruction.replace(TASK_FOLDER, folder),
        "source": source,
        "config": [
            {"type": "execute", "parameters": {"command": ["mkdir", "-p", folder]}},
            _placement(task, settings, tree_paths),
            _launch(folder, settings),
        ],
        "trajectory": "trajectories/",
        "related_apps": APPS[settings.app],
        "evaluator": {
            "func": EVALUATOR_FUNC,
            "result": {"type": "vm_file", "path": posixpath.join(folder, task.output), "dest": task.output},
            "expected": {"type": "rule", "rules": {"evaluator": EVALUATOR_FILE, "expected": EXPECTED_FILE,
                                                   "solved_threshold": SOLVED_THRESHOLD}},
        },
        "category": task.category,
        "difficulty": task.difficulty,
        "tags": sorted({task.category, "multi-stage" if task.multi_stage else "single-stage", *task.stages}),
        "daregen": {"key": task.key, "source_task": task.source_task, "variant": task.kind,
                    "steps": len(task.steps), "stages": list(task.stages)},
    }
