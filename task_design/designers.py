"""The designers' names and modules: the registry's keys, importable with nothing else (the CLI lists
them as --designer's choices before pydantic or pandas load). task_design.registry builds on it."""

DESIGNER_MODULES = {"heuristic": "task_design.heuristic", "llm": "task_design.llm"}
