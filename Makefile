# Everything installs into .venv/ from requirements.lock, so ground truth is built
# with the exact library versions it was recorded with.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
UV     := $(VENV)/bin/uv
UV_VERSION := 0.13.8
STAMP  := $(VENV)/.installed
# Every interpreter a build starts (the command, Prefect's server, the step workers, the sandbox's fork
# server, the guard's fresh interpreters) imports from bytecode compiled here, once: uv compiles nothing
# by default, and where PYTHONDONTWRITEBYTECODE is set (CI, containers) Python never writes it either, so
# each of them compiled about 1,100 modules again (3-4 s of CPU; the first progress line of a build with
# one core kept busy went from 17.7 s to about 10 s). daregen's own packages are compiled too.
CODE   := pipeline sourcing task_design postprocess finalize flows.py

DEMO_OUT   ?= generated/demo
DEMO_LIMIT ?= 50

.PHONY: setup demo lint test test-scale schema lock bench bench-readme clean

setup: $(STAMP)

$(STAMP): requirements.lock pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet uv==$(UV_VERSION)
	$(UV) pip install --quiet --python $(PY) --require-hashes --compile-bytecode -r requirements.lock
	$(UV) pip install --quiet --python $(PY) --no-deps -e .
	$(PY) -m compileall -q $(CODE) >/dev/null
	touch $(STAMP)

demo: setup
	$(VENV)/bin/daregen build --limit $(DEMO_LIMIT) --out $(DEMO_OUT)

# ruff's chosen rules and the import-layering contracts (both in pyproject.toml), before the suite.
lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports

test: lint
	$(PY) -m pytest -q

# Regenerate schemas/all_metadata.schema.json from the metadata model (pipeline.core.task_metadata).
schema: setup
	$(PY) -m finalize.schema

# The tree invariants over a 300-candidate build of the built-in corpus (~10 min on 2 cores).
test-scale: setup
	DAREGEN_TEST_LIMIT=300 $(PY) -m pytest -q tests/test_built_tree.py -k "not two_builds"

bench: setup
	$(PY) bench/bench_profile.py
	$(PY) bench/bench_verify.py --limit 30

# Every bench registered in bench/run_all.py, one run; rewrites bench/RESULTS.md and README's table.
bench-readme: setup
	$(PY) bench/run_all.py

# Re-resolve the pins after editing pyproject.toml's dependencies (needs the registry). uv keeps every
# pin already in requirements.lock that still satisfies pyproject, so only what changed moves.
lock: setup
	$(UV) pip compile pyproject.toml --extra dev --python-version 3.11 --generate-hashes -o requirements.lock

clean:
	rm -rf $(VENV) .pytest_cache
