"""What the LLM designer asks for, how it is configured, and what it spent.

DesignAnswer is sent to the model as the `response_format` (a JSON schema), so
its schema hash is part of every cache key: changing a field invalidates the
cached answers instead of silently mis-reading them. Lists of small objects stand
in for dicts because strict JSON-schema modes forbid free-form object keys.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import asdict, dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from pipeline.core.cache import llm_cache_dir

_LLM_KEY_NAME = re.compile(r"^[A-Z][A-Z0-9_]*_(API|LLM)_KEY$")
# Services whose keys end in _API_KEY too, yet must never reach a model server.
_NOT_LLM_KEY = re.compile(r"^(KAGGLE|AWS|GITHUB|GH|GITLAB|PREFECT|DATABASE|PG|STRIPE|SLACK|SENDGRID|TWILIO)_")


def looks_like_llm_key(name: str) -> bool:
    """`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`, `MY_LLM_KEY`: yes; `KAGGLE_KEY`, `AWS_API_KEY`: no."""
    return bool(_LLM_KEY_NAME.match(name)) and not _NOT_LLM_KEY.match(name)


# Providers whose key litellm reads from one well-known variable, so a build can say before its first call
# that the key is missing. Other providers (ollama, bedrock's AWS credentials, ...) are not checked.
PROVIDER_KEY_VARIABLES = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY", "gemini": "GEMINI_API_KEY",
                          "mistral": "MISTRAL_API_KEY", "groq": "GROQ_API_KEY", "deepseek": "DEEPSEEK_API_KEY",
                          "openrouter": "OPENROUTER_API_KEY"}


class ColumnType(BaseModel):
    model_config = ConfigDict(extra="forbid")

    column: str
    type: Literal["numerical", "categorical", "other"]


class FeatureDescription(BaseModel):
    model_config = ConfigDict(extra="forbid")

    column: str
    description: str


class DesignAnswer(BaseModel):
    """The model's design choices; everything else in a TaskSpec comes from the seeded heuristic code."""

    model_config = ConfigDict(extra="forbid")

    feasible: bool
    feasibility_reason: str
    problem_type: Literal["classification", "regression"]
    target_candidates: list[str]
    target: str
    related_features: list[str]
    column_types: list[ColumnType]
    feature_descriptions: list[FeatureDescription]


def schema_sha256() -> str:
    return hashlib.sha256(json.dumps(DesignAnswer.model_json_schema(), sort_keys=True).encode()).hexdigest()


class LLMSettings(BaseModel):
    """How to reach the model. Holds no secret: the API key is read from `api_key_env` at call time."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str = "openai/gpt-4o-mini"
    api_base: str | None = None  # not part of the cache key: the same model behind another URL answers alike
    api_key_env: str | None = None  # name of the environment variable holding the key (litellm's default if None)
    # Whether the API key may go to `api_base`: False for a caller of the Python API that names an
    # endpoint it does not trust with the key. (The CLI never sets it: it refuses an api_base that only
    # a config file names, since the endpoint would receive sample rows too.)
    key_to_api_base: bool = True
    # api_key_env may name any variable only with this (the CLI's --llm-allow-key-env); otherwise
    # only one that looks like an LLM key, so a config cannot send KAGGLE_KEY to a model server.
    allow_key_env: bool = False
    cache_dir: str = Field(default_factory=llm_cache_dir)  # $DAREGEN_CACHE/llm when the settings are made
    cache_only: bool = False  # a cache miss falls back to the heuristic instead of calling the model
    temperature: float = 0.0
    seed: int = 0  # sent where the provider supports it (litellm drops it elsewhere)
    timeout: float = Field(default=60.0, gt=0)
    num_retries: int = Field(default=2, ge=0)  # transport retries (429, 5xx, timeouts) inside litellm
    max_tokens: int = Field(default=4000, gt=0)

    @model_validator(mode="after")
    def _key_env_looks_like_an_llm_key(self) -> LLMSettings:
        name = self.api_key_env
        if name is not None and not self.allow_key_env and not looks_like_llm_key(name):
            raise ValueError(f"{name!r} does not look like an LLM API key variable (a name ending in _API_KEY "
                             f"or _LLM_KEY, not a known non-LLM service's); --llm-allow-key-env sends it anyway")
        return self

    def model_id(self) -> str:
        """What identifies the answering model in a cache key."""
        return f"{self.model}|temperature={self.temperature}|seed={self.seed}"


@dataclass
class LLMUsage:
    """Counters for one design call; summed over datasets into the run report."""

    calls: int = 0  # HTTP exchanges attempted (cache misses)
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    fallbacks: int = 0

    def as_dict(self) -> dict:
        return asdict(self)

    @staticmethod
    def total(items: list[dict]) -> dict:
        out = LLMUsage().as_dict()
        for item in items:
            for k in out:
                out[k] += item.get(k, 0)
        out["cost_usd"] = round(out["cost_usd"], 6)
        return out


def usage_line(u: dict) -> str:
    """One line of LLM usage for the CLI summary and run_report.md (from LLMUsage.total)."""
    return (f"llm: {u['calls']} calls, {u['cache_hits']} cache hits, "
            f"{u['prompt_tokens'] + u['completion_tokens']} tokens, ${u['cost_usd']:.4f}, "
            f"{u['fallbacks']} heuristic fallbacks")


def provider(settings: LLMSettings) -> str:
    """`openai` of `openai/gpt-4o-mini`."""
    return settings.model.split("/")[0]


def key_destination(settings: LLMSettings) -> str:
    """One line for the user: which variable's key goes where (never the key)."""
    variable = f"${settings.api_key_env}" if settings.api_key_env else f"{provider(settings)}'s usual variable"
    if settings.cache_only:
        return "LLM: --llm-cache-only, so no API key is sent anywhere"
    if settings.api_base and not settings.key_to_api_base:
        return (f"LLM: no API key is sent to {settings.api_base} (named by the config file; name it with "
                f"--llm-api-base or DAREGEN_LLM_API_BASE to send one)")
    if settings.api_base:
        return f"LLM: the API key from {variable} goes to {settings.api_base}"
    return f"LLM: the API key from {variable} goes to {provider(settings)}'s default endpoint"


def missing_key(settings: LLMSettings) -> str | None:
    """Why no call could carry the API key the model needs, or None: the variable named by `api_key_env`
    is empty, or a known provider's usual variable is when its default endpoint is used (an `api_base`,
    a local server, takes a placeholder key: task_design.llm)."""
    if settings.cache_only or (settings.api_base and not settings.key_to_api_base):
        return None
    if settings.api_key_env:
        return None if os.environ.get(settings.api_key_env) else f"${settings.api_key_env} is not set"
    usual = PROVIDER_KEY_VARIABLES.get(provider(settings))
    if settings.api_base or usual is None or os.environ.get(usual):
        return None
    return f"${usual} is not set (the key of {provider(settings)}'s default endpoint)"
