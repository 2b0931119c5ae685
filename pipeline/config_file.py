"""`daregen build --config FILE`: build settings in TOML, so a nightly job or a curator
keeps them in one reviewed file instead of a long command line.

    [build]                    # any of: out, limit, seed, sources, designer, column_references,
                               # curation, publish
    sources = "builtin"
    curation = "curation.toml"     # the curators' ledger (docs/review.md)
    designer = "llm"
    column_references = "dare"     # IF texts name a feature by its description ("dare", the default)
                                   # or always with its column name ("explicit")

    [llm]                      # any LLMSettings field: model, api_key_env, cache_dir,
    model = "openai/gpt-4o-mini"   # cache_only, timeout, num_retries, ...

    [limits]                   # any pipeline.core.safe_io.InputLimits field: max_file_bytes,
    max_rows = 10_000_000          # max_decoded_bytes, max_rows, max_columns, max_cells, ...

Flags given on the command line win over the file. API keys never go in the file:
`api_key_env` names the environment variable that holds one. A config file may be shared,
so it is untrusted: an `api_base` that only the file names is refused by `--designer llm`
(sample rows and the key go only to an endpoint named by `--llm-api-base` or
DAREGEN_LLM_API_BASE), and it cannot set what only a flag may (`key_to_api_base`, `allow_key_env`).
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from pydantic import ValidationError

from pipeline.core import names
from pipeline.core.safe_io import InputLimits

BUILD_KEYS = {"out": str, "limit": int, "seed": int, "sources": str, "designer": str, "column_references": str,
              "curation": str, "publish": str}
# [build] keys whose value is one of a fixed set of words
BUILD_CHOICES = {"column_references": names.COLUMN_REFERENCE_STYLES, "publish": names.PUBLISH_MODES}
SECTIONS = {"build", "llm", "limits"}
# Settings that decide where the API key goes: a shared file must not grant them to itself.
FLAG_ONLY_LLM_KEYS = {"key_to_api_base", "allow_key_env"}


def _read(path: Path) -> dict:
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"config file {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"config file {path}: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"config file {path}: {exc}") from None
    return data


def load_limits(path: Path | None) -> InputLimits:
    """The `[limits]` table of a config file (the defaults without one)."""
    if path is None:
        return InputLimits()
    table = _read(path).get("limits", {})
    try:
        return InputLimits.model_validate(table)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise ValueError(f"config file {path}: [limits] {'.'.join(map(str, err['loc']))}: {err['msg']}") from None


def load_config(path: Path) -> tuple[dict, dict]:
    """(build settings, llm settings) from a TOML file; ValueError names what is wrong."""
    data = _read(path)
    unknown = set(data) - SECTIONS
    if unknown:
        raise ValueError(f"config file {path}: unknown section(s) {sorted(unknown)}; known: {sorted(SECTIONS)}")
    build = dict(data.get("build", {}))
    for key, value in build.items():
        if key not in BUILD_KEYS:
            raise ValueError(f"config file {path}: unknown [build] key {key!r}; known: {sorted(BUILD_KEYS)}")
        if not isinstance(value, BUILD_KEYS[key]) or isinstance(value, bool):
            raise ValueError(f"config file {path}: [build] {key} must be a {BUILD_KEYS[key].__name__}")
        if key in BUILD_CHOICES and value not in BUILD_CHOICES[key]:
            raise ValueError(f"config file {path}: [build] {key} must be one of "
                             f"{', '.join(map(repr, BUILD_CHOICES[key]))}, not {value!r}")
    llm = dict(data.get("llm", {}))
    if any("key" == k or k.endswith("_key") for k in llm):
        raise ValueError(f"config file {path}: put API keys in the environment and name it with api_key_env")
    flag_only = sorted(set(llm) & FLAG_ONLY_LLM_KEYS)
    if flag_only:
        raise ValueError(f"config file {path}: [llm] {flag_only[0]} can only be set on the command line")
    return build, llm
