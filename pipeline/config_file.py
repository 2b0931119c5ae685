"""`daregen build --config FILE`: build settings in TOML, so a nightly job or a curator
keeps them in one reviewed file instead of a long command line.

    [build]                    # any of: out, limit, seed, sources, designer
    sources = "builtin"
    designer = "llm"

    [llm]                      # any LLMSettings field: model, api_base, api_key_env,
    model = "openai/gpt-4o-mini"   # cache_dir, cache_only, timeout, num_retries, ...
    api_base = "http://127.0.0.1:8000/v1"

Flags given on the command line win over the file. API keys never go in the file:
`api_key_env` names the environment variable that holds one.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

BUILD_KEYS = {"out": str, "limit": int, "seed": int, "sources": str, "designer": str}
SECTIONS = {"build", "llm"}


def load_config(path: Path) -> tuple[dict, dict]:
    """(build settings, llm settings) from a TOML file; ValueError names what is wrong."""
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"config file {path} does not exist") from None
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"config file {path}: {exc}") from None
    unknown = set(data) - SECTIONS
    if unknown:
        raise ValueError(f"config file {path}: unknown section(s) {sorted(unknown)}; known: {sorted(SECTIONS)}")
    build = dict(data.get("build", {}))
    for key, value in build.items():
        if key not in BUILD_KEYS:
            raise ValueError(f"config file {path}: unknown [build] key {key!r}; known: {sorted(BUILD_KEYS)}")
        if not isinstance(value, BUILD_KEYS[key]) or isinstance(value, bool):
            raise ValueError(f"config file {path}: [build] {key} must be a {BUILD_KEYS[key].__name__}")
    llm = dict(data.get("llm", {}))
    if any("key" == k or k.endswith("_key") for k in llm):
        raise ValueError(f"config file {path}: put API keys in the environment and name it with api_key_env")
    return build, llm
