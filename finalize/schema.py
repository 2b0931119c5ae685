"""The published JSON Schema of all_metadata.json, and the check that validates against it.

The schema is generated from the typed model (pipeline.core.task_metadata): after changing
the model, run `python -m finalize.schema` (or `make schema`) and commit the file; a test
fails while the committed file and the model disagree.

The schema lives once, at the repository's top level (schemas/), so people who
only read the tree can find it; it is read by path relative to this package, which
is where an editable install and a checkout both keep it. A build carries a copy
at `<tree>/schemas/` (copy_schema_into), so a tree stays checkable on its own.
"""

from __future__ import annotations

import functools
import json
import shutil
from pathlib import Path

from finalize.checks import Problem
from pipeline.core.jsonio import write_text
from pipeline.core.task_metadata import render_schema

SCHEMA_DIR = "schemas"
ALL_METADATA_SCHEMA = "all_metadata.schema.json"
_MAX_REPORTED = 5


def schema_path() -> Path:
    path = Path(__file__).resolve().parents[1] / SCHEMA_DIR / ALL_METADATA_SCHEMA
    if not path.is_file():
        raise FileNotFoundError(f"the all_metadata schema is missing: {path} (a broken install?)")
    return path


@functools.cache
def _validator():
    from jsonschema import Draft202012Validator

    schema = json.loads(schema_path().read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)  # a broken schema must fail loudly, not pass everything
    return Draft202012Validator(schema)


def check_metadata_schema(where: str, metadata: dict) -> list[Problem]:
    """One error per schema violation (the first few, in a stable order), each naming the JSON path."""
    found = sorted(_validator().iter_errors(metadata), key=lambda e: (list(map(str, e.absolute_path)), e.message))
    problems = [Problem(where, f"all_metadata.json violates the schema at "
                               f"/{'/'.join(map(str, e.absolute_path))}: {e.message[:200]}") for e in found]
    if len(problems) > _MAX_REPORTED:
        problems = problems[:_MAX_REPORTED] + [Problem(where, f"... and {len(found) - _MAX_REPORTED} more "
                                                              f"schema violations")]
    return problems


def copy_schema_into(tree: Path) -> Path:
    """Write `<tree>/schemas/all_metadata.schema.json` (byte-identical to the published one)."""
    dest = tree / SCHEMA_DIR / ALL_METADATA_SCHEMA
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(schema_path(), dest)
    return dest


def write_schema() -> Path:
    """Regenerate the published schema from the metadata model (pipeline.core.task_metadata)."""
    path = Path(__file__).resolve().parents[1] / SCHEMA_DIR / ALL_METADATA_SCHEMA
    write_text(path, render_schema())
    return path


if __name__ == "__main__":
    print(f"wrote {write_schema()}")
