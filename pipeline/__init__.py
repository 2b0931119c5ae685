"""The application: the build (steps, caching, the determinism guard, publishing), the CLI, the Prefect
plumbing, the review commands (review/) and the exports (export/).

The shared kernel every stage imports lives in `pipeline.core`, which imports nothing else of the project.
"""
