"""Running generated scripts (SFT solutions, DSAgentBench oracles) as a user would: each in its own
folder with the files it reads, in a fresh interpreter that cannot import daregen."""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
from pathlib import Path

# Runs each script as `python script.py` in its folder would, with every daregen package unimportable
# (the editable install would otherwise make a stray `import pipeline` work by accident).
RUN_WITHOUT_DAREGEN = """
import os, runpy, sys
class NoDaregen:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {"pipeline", "finalize", "sourcing", "task_design", "postprocess", "flows", "tests"}:
            raise ImportError("daregen import in a generated script: " + name)
sys.meta_path.insert(0, NoDaregen())
for folder in sys.argv[1:]:
    os.chdir(folder)
    runpy.run_path("script.py", run_name="__main__")
"""


def run_without_daregen(folders: list[Path]) -> subprocess.CompletedProcess:
    """Each folder's script.py, run in that folder by one fresh interpreter that cannot import daregen."""
    return subprocess.run([sys.executable, "-c", RUN_WITHOUT_DAREGEN, *map(str, folders)],
                          env={"PATH": "/usr/bin:/bin", "PYTHONNOUSERSITE": "1", "OMP_NUM_THREADS": "1",
                               "OPENBLAS_NUM_THREADS": "1"},
                          capture_output=True, text=True, timeout=600)


def stage_script(folder: Path, script: str, files: dict[str, Path]) -> Path:
    """`folder` holding script.py and `files` (name in the folder -> path)."""
    folder.mkdir(parents=True)
    (folder / "script.py").write_text(script, encoding="utf-8")
    for name, path in files.items():
        shutil.copyfile(path, folder / name)
    return folder


def parameters_node(script: str) -> ast.expr:
    """The value bound to `P`, the one place a rendered script holds data (ValueError unless exactly one)."""
    nodes = [node.value for node in ast.walk(ast.parse(script)) if isinstance(node, ast.Assign)
             and [ast.unparse(t) for t in node.targets] == ["P"]]
    if len(nodes) != 1:
        raise ValueError(f"{len(nodes)} assignments to P")
    return nodes[0]


def script_parameters(script: str):
    """The data bound to `P`: a literal, or (for data a literal cannot hold) json.loads of one string."""
    node = parameters_node(script)
    if isinstance(node, ast.Call):
        assert ast.unparse(node.func) == "json.loads" and len(node.args) == 1
        return json.loads(ast.literal_eval(node.args[0]))
    return ast.literal_eval(node)
