"""Oracle programs: a standalone Python script per desktop task that solves it from the VM folder.

Each oracle is rendered by the kernel (pipeline/core/if_workflow.render_script): its self-contained
table readers and range filter, its model block when the oracle fits a pipeline, `jsonable` below,
the task's parameters as one literal and a body; it runs with the task folder as its working
directory, reads only the files placed there and writes the task's output file. Validation runs
it in the sandbox and requires the evaluator to accept what it wrote. Data enters only through
that literal (pipeline/core/if_workflow.py says why).
"""

from __future__ import annotations

from pipeline.core.if_workflow import BLOCKS, render_script

_JSONABLE = '''
import numpy as np


def jsonable(value):
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and value != value:
        return None
    return value

'''


def program(params: dict, body: str, pipeline: bool = False) -> str:
    """The oracle's full source: the table block, the model block when it fits a pipeline, `jsonable`,
    the parameters, the body."""
    return render_script("Oracle solution (daregen DSAgentBench): run from the task folder.", params, body,
                         BLOCKS if pipeline else ("tables",), helpers=_JSONABLE)
