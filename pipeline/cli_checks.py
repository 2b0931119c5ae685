"""Checks the CLI runs on every argument, ref, path and setting before any work starts.

Each raises ValueError with one line naming the flag and what is wrong; `daregen` prints it and exits 2.
Nothing here imports pandas, scikit-learn, the stages or Prefect (seconds to load on a busy machine),
so a mistake costs a fraction of a second, measured by bench/bench_cli_errors.py.
"""

from __future__ import annotations

import socket
import sys
import urllib.parse
from pathlib import Path

from pipeline.core import names

# How long an --llm-api-base may take to accept a connection before the build refuses it: a server on
# the machine or the network answers in milliseconds; the check must stay inside the CLI's budget.
ENDPOINT_CONNECT_TIMEOUT_S = 1.5
FALLBACK_HINT = "; --llm-fallback designs with the heuristic instead"  # ends an LLM designer's refusal


def version_line() -> str:
    """`daregen --version`: the installed version and the digest of the code that decides a task's bytes
    (the build cache's key and every tree's manifest carry the same digest)."""
    from pipeline.core.environment import code_digest, code_version  # importlib.metadata: only when asked

    return f"daregen {code_version()} (code digest {code_digest()})"


def at_least(value: int | float | None, flag: str, minimum: int | float) -> None:
    """`flag` is unset or at least `minimum`."""
    if value is not None and value < minimum:
        raise ValueError(f"{flag} must be >= {minimum}, got {value}")


def task_tree(path: str | Path, what: str) -> Path:
    """A folder holding tasks: a DARE-layout tree (question_list.json) or task folders with
    verify/all_metadata.json (what export and the reports read)."""
    p = Path(path)
    if not p.exists():
        raise ValueError(f"{what} {path}: no such folder")
    if not p.is_dir():
        raise ValueError(f"{what} {path}: not a folder")
    has_task = next(p.glob(f"*/{names.VERIFY_DIR}/{names.ALL_METADATA}"), None) is not None
    if not has_task and not (p / names.QUESTION_LIST).is_file():
        raise ValueError(f"{what} {path}: not a task tree (no {names.QUESTION_LIST}, no "
                         f"<task>/{names.VERIFY_DIR}/{names.ALL_METADATA})")
    return p


def reachable_endpoint(api_base: str, flag: str = "--llm-api-base") -> None:
    """A TCP connection to the endpoint's host and port opens within ENDPOINT_CONNECT_TIMEOUT_S."""
    url = urllib.parse.urlsplit(api_base)
    if url.scheme not in ("http", "https") or not url.hostname:
        raise ValueError(f"{flag} {api_base}: not an http(s) URL (e.g. http://127.0.0.1:8000/v1)")
    try:
        port = url.port or (443 if url.scheme == "https" else 80)
    except ValueError:
        raise ValueError(f"{flag} {api_base}: bad port") from None
    try:
        socket.create_connection((url.hostname, port), timeout=ENDPOINT_CONNECT_TIMEOUT_S).close()
    except OSError as exc:
        if isinstance(exc, TimeoutError):
            reason = f"no answer within {ENDPOINT_CONNECT_TIMEOUT_S:g} s"
        else:
            reason = exc.strerror or type(exc).__name__
        raise ValueError(f"{flag} {api_base}: cannot connect to {url.hostname}:{port} ({reason})") from None


def llm_named_and_reachable(given: dict, fallback: bool) -> None:
    """What llm_ready checks with the standard library alone, run before pydantic and the designer's
    settings load (a second or more on a busy machine): a model is named, and (without `fallback`,
    which turns an unreachable endpoint into a warning) the endpoint named accepts a connection."""
    if "model" not in given:
        raise ValueError("--designer llm needs --llm-model (or model in the config's [llm]), "
                         "e.g. openai/gpt-4o-mini")
    if given.get("api_base") and not given.get("cache_only") and not fallback:
        try:
            reachable_endpoint(given["api_base"])
        except ValueError as exc:
            raise ValueError(f"{exc}{FALLBACK_HINT}") from None


def llm_ready(given: dict, fallback: bool) -> None:
    """`--designer llm` can reach its model: a model is named (the default would send every dataset's
    sample rows to a provider nobody chose), its API key is set, its endpoint accepts a connection.
    With `fallback` a problem other than the missing model is a warning: the build goes on and every
    dataset the model cannot answer is designed by the heuristic, as the user asked."""
    from task_design.llm_schema import LLMSettings, key_destination, missing_key  # pydantic: loaded already

    llm_named_and_reachable(given, fallback)
    settings = LLMSettings.model_validate(given)
    problems = []
    key = missing_key(settings)
    if settings.cache_only:
        pass  # no call is made: a cache miss falls back, as --llm-cache-only says
    elif key:
        problems.append(f"no API key for {settings.model}: {key}")
    elif settings.api_base:
        try:
            reachable_endpoint(settings.api_base)
        except ValueError as exc:
            problems.append(str(exc))
    if problems and not fallback:
        raise ValueError(f"{problems[0]}{FALLBACK_HINT}")
    for problem in problems:
        print(f"daregen: warning: {problem}; --llm-fallback: the heuristic designs what the model cannot",
              file=sys.stderr)
    print(f"daregen: {key_destination(settings)}", file=sys.stderr)


def export_args(tree: str, out: str | None, holdouts: list[str], eval_fraction: float, jobs: int,
                check_only: bool) -> None:
    """`daregen export`'s arguments, before its tables are read."""
    from pipeline.export.split_rules import check_eval_fraction

    task_tree(tree, "TREE")
    for h in holdouts:
        task_tree(h, "--holdout")
    check_eval_fraction(eval_fraction)
    at_least(jobs, "--jobs", 1)
    if out is None and not check_only:
        raise ValueError("--out is required unless --check")
