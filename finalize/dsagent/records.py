"""Typed contracts of the DSAgentBench stage: the desktop settings and one desktop task."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Category = Literal["data_acquisition", "eda", "feature_engineering", "modelling", "evaluation", "visualization"]
CATEGORIES: tuple[str, ...] = Category.__args__
Difficulty = Literal["easy", "medium", "hard"]


def difficulty_for(steps: int) -> Difficulty:
    """DSAgentBench's rule: easy is 1-2 steps, medium 3-4, hard 5 or more."""
    if steps < 1:
        raise ValueError("a task has at least one step")
    return "easy" if steps <= 2 else "medium" if steps <= 4 else "hard"


class DesktopSettings(BaseModel):
    """Where the harness puts task files in the VM and how it gets them there."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    vm_root: str = "/home/user/dsagent"  # each task gets <vm_root>/<task name>/
    placement: Literal["download", "upload_file"] = "download"
    base_url: str = "http://127.0.0.1:8000"  # serves the task tree (download placement)
    local_root: str = "."  # the tree as the harness sees it (upload_file placement)
    snapshot: str = "dsagentbench"
    app: Literal["vscode", "jupyter"] = "vscode"
    timeout_s: float = 300.0  # sandbox wall clock for one dataset's validation batch

    @model_validator(mode="after")
    def _check(self) -> DesktopSettings:
        if not self.vm_root.startswith("/"):
            raise ValueError("vm_root must be an absolute path in the VM")
        return self


class DesktopTask(BaseModel):
    """One desktop task before it is written: what the agent sees, does, and how it is judged.

    `inputs` maps a file name in the task's VM folder to its path relative to the
    tree (a DARE source file, or a file this stage generated); `generated` holds
    the text of the generated ones. `expected` is the evaluator's expected.json;
    `reference_csv` the reference predictions a prediction check needs.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    key: str  # "<task_dir>/<kind>", the uuid5 name
    name: str  # folder name under dsagentbench/tasks/
    source_task: str
    category: Category
    kind: str  # if, mm, xf, cf, or the category generator's variant
    steps: tuple[str, ...]
    stages: tuple[Category, ...]
    instruction: str
    inputs: dict[str, str]
    generated: dict[str, bytes] = Field(default_factory=dict)
    output: str  # the file the agent saves in its task folder, collected by the evaluator
    expected: dict[str, Any]
    reference_csv: str | None = None
    oracle: str  # a Python program that solves the task from the VM folder
    perturbations: tuple[str, ...]
    # Files only the oracle sees (name in its folder -> path in the tree), never placed in the VM: a
    # time-series oracle's held-out future rows, since no program forecasts them exactly.
    oracle_inputs: dict[str, str] = Field(default_factory=dict)

    @property
    def difficulty(self) -> Difficulty:
        return difficulty_for(len(self.steps))

    @property
    def multi_stage(self) -> bool:
        return len(set(self.stages)) > 1

    @model_validator(mode="after")
    def _check(self) -> DesktopTask:
        if self.category not in self.stages:
            raise ValueError("a task's category must be one of its stages")
        if self.output in self.inputs:
            raise ValueError("the output must not overwrite an input")
        if set(self.oracle_inputs) & (set(self.inputs) | {self.output}):
            raise ValueError("an oracle-only input must not share a name with a VM file")
        if not self.perturbations:
            raise ValueError("every evaluator must be checked against at least one wrong output")
        return self
