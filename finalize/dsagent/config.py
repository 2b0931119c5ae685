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
from urllib.parse import quote, unquote

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



def _plain_path(rel: str) -> bool:
    return all(p not in ("", ".", "..") and "\\" not in p and "\0" not in p for p in rel.split("/"))


def config_problem(cfg: object, name: str, source_task: str, settings: DesktopSettings | None = None) -> tuple[str, str]:
    """(why `cfg` is not a config.json build_config could have written for the desktop task folder `name`
    made from the DARE task `source_task`, "" when it could; the base its files are placed from). The
    evaluator must be evaluator.py with expected.json, the steps only mkdir of the task's VM folder, files
    placed from the task's own DARE folder or desktop folder (one base for all), the editor launched at
    that folder. With `settings` the VM folder, placement, base and app must be theirs; without (verify
    of a published tree, which does not record them) the caller compares the base across the tree.
    The harness runs what config.json names, on its host: nothing else may pass."""
    try:
        steps = cfg["config"]
        mkdir, place, launch = steps if isinstance(steps, list) and len(steps) == 3 else ({}, {}, {})
        folder = mkdir["parameters"]["command"][2] if mkdir.get("type") == "execute" else None
        if (not isinstance(folder, str) or mkdir != {"type": "execute", "parameters": {"command": ["mkdir", "-p", folder]}}
                or not folder.startswith("/") or posixpath.normpath(folder) != folder
                or posixpath.basename(folder) != name
                or (settings is not None and folder != posixpath.join(settings.vm_root, name))):
            return f"its steps are not mkdir of the task's VM folder .../{name}, a placement and a launch", ""
        launches = [_launch(folder, s) for s in ([settings] if settings else
                                                 [DesktopSettings(app="vscode"), DesktopSettings(app="jupyter")])]
        if launch not in launches:
            return "its launch step is not the editor at the task's VM folder", ""
        output = cfg["evaluator"]["result"].get("dest")
        if (not isinstance(output, str) or "/" in output or not _plain_path(output) or cfg["evaluator"] != {
                "func": EVALUATOR_FUNC,
                "result": {"type": "vm_file", "path": posixpath.join(folder, output), "dest": output},
                "expected": {"type": "rule", "rules": {"evaluator": EVALUATOR_FILE, "expected": EXPECTED_FILE,
                                                       "solved_threshold": SOLVED_THRESHOLD}}}):
            return f"its evaluator is not {EVALUATOR_FILE} with {EXPECTED_FILE} and a plain output file", ""
        return _placement_problem(place, folder, name, source_task, settings)
    except (KeyError, TypeError, AttributeError, IndexError, ValueError):
        return "it is not the shape build_config writes", ""


def _placement_problem(place: dict, folder: str, name: str, source_task: str,
                       settings: DesktopSettings | None) -> tuple[str, str]:
    kind = place.get("type")
    key = {"download": "url", "upload_file": "local_path"}.get(kind)
    if key is None or set(place) != {"type", "parameters"} or set(place["parameters"]) != {"files"} \
            or not isinstance(place["parameters"]["files"], list):
        return "its placement step is not a download or upload_file of the task's files", ""
    if settings is not None and kind != settings.placement:
        return f"its placement is {kind}, not the settings' {settings.placement}", ""
    bases = set()
    for f in place["parameters"]["files"]:
        value, target = (f.get(key), f.get("path")) if isinstance(f, dict) and set(f) == {key, "path"} else (None, None)
        if (not isinstance(value, str) or not isinstance(target, str) or posixpath.dirname(target) != folder
                or not _plain_path(posixpath.basename(target))):
            return f"a placed file is not one {key} to a file of the task's VM folder", ""
        found = None
        for prefix in (f"{source_task}/", f"dsagentbench/tasks/{name}/"):
            shown = quote(prefix) if kind == "download" else prefix
            at = 0 if value.startswith(shown) else value.find("/" + shown) + 1
            rel = value[at:] if kind == "upload_file" else unquote(value[at:])
            base = value[:at].rstrip("/") if at else ""
            if (at or value.startswith(shown)) and rel.startswith(prefix) and _plain_path(rel) and (
                    kind == "download" or base in ("", ".") or posixpath.normpath(base) == base):
                found = base
                break
        if found is None:
            return f"it places {value[:80]!r}, not a file of {source_task}/ or of its own desktop folder", ""
        bases.add(found)
    if len(bases) > 1:
        return "its files are placed from more than one base", ""
    base = next(iter(bases), "")
    if settings is not None and bases:
        want = settings.base_url.rstrip("/") if kind == "download" else posixpath.join(settings.local_root, "x")[:-2]
        if base != want:
            return f"its files come from {base[:80]!r}, not the settings' base", ""
    return "", base
