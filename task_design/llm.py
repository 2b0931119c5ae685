"""The LLM-assisted designer: the model picks the target and features, the data has the last word.

design(record, profile, table, rng, config, *, settings, usage) -> TaskSpec, the
heuristic designer's call plus keyword settings. The model (any litellm provider)
sees the dataset's documentation and a compact profile and answers a DesignAnswer.
Every answer is validated against the profile and the data (columns exist, types
fit, the target qualifies and is not degenerate, no chosen feature leaks); an
invalid answer is retried once with the problems fed back, then the heuristic
designer takes over and the reason is recorded in TaskSpec.designer. The model
only chooses the target and the features: model type, imputer, seed, split,
ranges and file type come from the heuristic's seeded code, with the same rng.

Answers are cached by content (task_design.llm_cache), so an unchanged rebuild
makes no network call and produces the same spec. litellm is imported only when a
call is needed, with LITELLM_LOCAL_MODEL_COST_MAP=True so importing it never
fetches the price map.

The model's feature descriptions fill TaskSpec.feature_descriptions for columns the
dataset leaves undocumented; the IF instruction names those columns by them.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, replace
from pathlib import Path
from string import Template

import numpy as np
import pandas as pd
from pydantic import ValidationError

from pipeline.core.records import DatasetProfile, DatasetRecord, DatasetRejected, ProblemType, TaskSpec
from task_design import heuristic
from task_design.config import DesignConfig
from task_design.leakage import screen_leaks
from task_design.learnable import one_feature_problem
from task_design.llm_cache import LLMCache, cache_key
from task_design.llm_schema import DesignAnswer, LLMSettings, LLMUsage, schema_sha256
from task_design.roles import ColumnRole
from task_design.targets import RankedTarget, targetable

DESIGNER_NAME = "llm"
PROMPT_FILE = "design_v1.md"
_USER_SPLIT = "===== user =====\n"
MAX_PROMPT_COLUMNS = 150
MAX_DESCRIPTION_CHARS = 3000
MAX_COLUMN_DOC_CHARS = 160
PREVIEW_ROWS = 5
MAX_LEAK_SCREEN = 200  # unchosen features screened for leaks (to keep them out of the MM files)


class LLMUnavailable(Exception):
    """No usable answer could be obtained (transport error, or a cache miss in cache-only mode)."""


# ---------------------------------------------------------------- prompt


def prompt_text() -> str:
    return (Path(__file__).parent / "prompts" / PROMPT_FILE).read_text(encoding="utf-8")


def _one_line(text: str, limit: int) -> str:
    text = re.sub(r"\s+", " ", text or "").strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _column_line(col, profile: DatasetProfile, doc: str, role: ColumnRole | None = None) -> str:
    missing = profile.missing_frac(col.name)
    if col.kind == "numerical" or col.min is not None:
        extent = f"[{col.min}, {col.max}]"
    elif col.categories is not None:
        levels = list(col.categories[:8])
        extent = "{" + ", ".join(levels) + (", …" if len(col.categories) > 8 else "") + "}"
    else:
        extent = "-"
    line = f"- {col.name} / {col.kind} / {col.dtype} / {missing:.0%} / {col.n_unique} / {extent}"
    if role is not None:
        line += f" / role: {role.role}" + ("" if role.role == "outcome" else f" ({_one_line(role.evidence, 80)})")
    return line + (f" / {_one_line(doc, MAX_COLUMN_DOC_CHARS)}" if doc else "")


def build_messages(record: DatasetRecord, profile: DatasetProfile, table: pd.DataFrame,
                   config: DesignConfig, roles: dict[str, ColumnRole] | None = None) -> list[dict]:
    """The prompt; each column line carries its role (task_design.roles), so the model sees which
    columns are keys, calendar fields, coordinates or design factors before it picks a target."""
    system, user = prompt_text().split(_USER_SPLIT, 1)
    cols = profile.columns[:MAX_PROMPT_COLUMNS]
    roles = roles or {}
    lines = [_column_line(c, profile, record.column_descriptions.get(c.name, ""), roles.get(c.name)) for c in cols]
    if len(profile.columns) > len(cols):
        lines.append(f"- … and {len(profile.columns) - len(cols)} more columns, not shown")
    preview = table[[c.name for c in cols]].head(PREVIEW_ROWS).to_csv(index=False, lineterminator="\n")
    description = "\n".join(x for x in (record.subtitle, record.description) if x).strip() or "(none)"
    values = dict(max_classes=config.max_classes, min_class_count=config.min_class_count,
                  max_features=config.max_related_features, title=record.title, ref=record.ref,
                  description=description[:MAX_DESCRIPTION_CHARS], n_columns=len(profile.columns),
                  n_rows=profile.n_rows, columns="\n".join(lines), preview=preview.strip())
    return [{"role": "system", "content": Template(system).safe_substitute(values).strip()},
            {"role": "user", "content": Template(user).safe_substitute(values).strip()}]


def _sha(obj) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


# ---------------------------------------------------------------- calling the model


def _api_key(settings: LLMSettings) -> str | None:
    if settings.api_base and not settings.key_to_api_base:
        # Passed explicitly, so litellm does not fill in OPENAI_API_KEY for an endpoint a config file named.
        return "no-key"
    if settings.api_key_env:
        return os.environ.get(settings.api_key_env)
    if settings.api_base and settings.model.startswith("openai/") and not os.environ.get("OPENAI_API_KEY"):
        return "no-key"  # local OpenAI-compatible servers ignore it, but the client insists on one
    return None


def _failure(exc: Exception, settings: LLMSettings) -> str:
    """A stable one-line reason (never the message: it may hold URLs, ports or headers)."""
    import litellm

    if isinstance(exc, litellm.Timeout):
        return f"timeout after {settings.timeout:g} s"
    status = getattr(exc, "status_code", None)
    if isinstance(exc, litellm.RateLimitError) or status == 429:
        return "HTTP 429 rate limited"
    if isinstance(exc, litellm.APIConnectionError) and not status:
        return "connection failed"
    if status:
        return f"HTTP {status}"
    return f"call failed ({type(exc).__name__})"


def _call(messages: list[dict], settings: LLMSettings, usage: LLMUsage) -> dict:
    """One chat completion through litellm; returns the entry to cache."""
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    import litellm

    litellm.suppress_debug_info = True
    usage.calls += 1
    try:
        response = litellm.completion(
            model=settings.model, messages=messages, response_format=DesignAnswer,
            temperature=settings.temperature, seed=settings.seed, max_tokens=settings.max_tokens,
            timeout=settings.timeout, num_retries=settings.num_retries, api_base=settings.api_base,
            api_key=_api_key(settings), drop_params=True)
    except Exception as exc:  # every provider error becomes a recorded fallback, never a crash
        raise LLMUnavailable(_failure(exc, settings)) from None
    tokens = getattr(response, "usage", None)
    prompt_tokens = int(getattr(tokens, "prompt_tokens", 0) or 0)
    completion_tokens = int(getattr(tokens, "completion_tokens", 0) or 0)
    try:
        cost = float(litellm.completion_cost(completion_response=response) or 0.0)
    except Exception:  # unknown (e.g. self-hosted) models have no price
        cost = 0.0
    usage.prompt_tokens += prompt_tokens
    usage.completion_tokens += completion_tokens
    usage.cost_usd += cost
    content = response.choices[0].message.content or ""
    return {"content": content, "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                                          "cost_usd": cost}}


def _ask(messages: list[dict], key_inputs: tuple[str, str], settings: LLMSettings, cache: LLMCache,
         usage: LLMUsage) -> tuple[str, str]:
    """(cache key, raw answer text), from the cache when possible."""
    input_sha = _sha(messages)
    key = cache_key(settings.model_id(), *key_inputs, input_sha)
    entry = cache.get(key)
    if entry is not None:
        usage.cache_hits += 1
        return key, entry["content"]
    if settings.cache_only:
        raise LLMUnavailable(f"cache miss with --llm-cache-only (key {key})") from None
    try:
        entry = _call(messages, settings, usage)
    except LLMUnavailable as exc:
        raise LLMUnavailable(f"{exc} (key {key})") from None
    cache.put(key, {"model": settings.model_id(), "prompt_sha256": key_inputs[0], "schema_sha256": key_inputs[1],
                    "input_sha256": input_sha, "messages": messages, **entry})
    return key, entry["content"]


# ---------------------------------------------------------------- validation


def parse_answer(text: str) -> tuple[DesignAnswer | None, list[str]]:
    body = text.strip()
    fenced = re.match(r"^```(?:json)?\s*(.*?)\s*```$", body, re.S)  # some models fence JSON anyway
    if fenced:
        body = fenced.group(1)
    try:
        return DesignAnswer.model_validate_json(body), []
    except ValidationError as exc:
        problems = [f"{'.'.join(map(str, e['loc'])) or 'answer'}: {e['msg']}" for e in exc.errors()[:8]]
        return None, ["the answer is not valid JSON for the schema: " + "; ".join(problems)]


def _target_problem(name: str, problem_type: ProblemType, profile: DatasetProfile, table: pd.DataFrame,
                    candidates: dict[str, list[str]], config: DesignConfig) -> str | None:
    if name in candidates[problem_type]:
        return None
    col = profile.column(name)
    other = "regression" if problem_type == "classification" else "classification"
    if name in candidates[other]:
        return f"target {name!r} suits {other}, not {problem_type}"
    if col.top_share > config.max_top_share or col.n_unique < 2:
        return f"target {name!r} is degenerate (its most common value covers {col.top_share:.0%} of rows)"
    if profile.missing_frac(name) > config.max_target_missing:
        return f"target {name!r} is {profile.missing_frac(name):.0%} missing"
    why = (heuristic.class_target_problem(col, table, config) if problem_type == "classification"
           else heuristic.regression_target_problem(col, config))
    return f"target {name!r} cannot be a {problem_type} target ({why or 'excluded as a feature'})"


def _leaks(target: str, features: list[str], table: pd.DataFrame, profile: DatasetProfile,
           problem_type: ProblemType, config: DesignConfig) -> dict[str, str]:
    """Leak reasons for `features`, with the heuristic's two tests (rank correlation, single-feature tree)."""
    return screen_leaks(target, features, table, profile, problem_type, config)[1]


@dataclass(frozen=True)
class Checked:
    """A validated answer: what the spec needs from the model."""

    problem_type: ProblemType
    target: str
    candidates: list[str]
    features: list[str]
    excluded: dict[str, str]  # column -> why it is not a feature
    leaks: dict[str, str]  # unchosen features that leak: kept out of the MM files too
    excluded_targets: dict[str, str]  # column -> why it is not the target


def validate_answer(answer: DesignAnswer, record: DatasetRecord, profile: DatasetProfile, table: pd.DataFrame,
                    config: DesignConfig, frame: heuristic.DesignFrame) -> tuple[Checked | None, list[str]]:
    """The answer checked against the data and the column roles; (None, problems) when anything is wrong.
    The model gets the same validation as the heuristic: only an outcome candidate may be the target,
    keys are no features, the size floor and the leak screen hold."""
    names = set(profile.names)
    mentioned = ([answer.target] + answer.target_candidates + answer.related_features
                 + [c.column for c in answer.column_types] + [d.column for d in answer.feature_descriptions])
    invented = sorted({n for n in mentioned if n not in names})
    if invented:
        return None, [f"unknown column(s) {invented}: use only the listed column names, exactly"]
    problems: list[str] = []
    exclusions = frame.exclusions
    allowed = set(targetable(record, profile, frame.roles, list(frame.problem_types)))
    candidates = {k: [c for c in v if c in allowed]
                  for k, v in heuristic.target_candidates(profile, table, config).items()}
    target, problem_type = answer.target, answer.problem_type
    role = frame.roles[target]
    if target in exclusions and not role.may_be_feature:
        problems.append(f"target {target!r} cannot be used ({exclusions[target]})")
    elif target in frame.problem_types and target not in allowed:
        problems.append(f"target {target!r} is not an outcome candidate ({role.role.replace('_', ' ')}: "
                        f"{role.evidence})")
    elif (why := _target_problem(target, problem_type, profile, table, candidates, config)):
        problems.append(why)
    elif int(table[target].notna().sum()) < config.min_rows:
        problems.append(f"target {target!r} has too few known values")
    elif (why := heuristic.size_floor_problem(int(table[target].notna().sum()), config)):
        problems.append(f"target {target!r} is {why}")
    features = list(dict.fromkeys(answer.related_features))
    if target in features:
        problems.append(f"the target {target!r} is also listed as a feature")
        features.remove(target)
    if not features:
        problems.append("no related features")
    if len(features) > config.max_related_features:
        problems.append(f"{len(features)} related features (at most {config.max_related_features})")
    for f in features:
        if f in exclusions:
            problems.append(f"feature {f!r} cannot be used ({exclusions[f]})")
    said = {c.column: c.type for c in answer.column_types}
    for f in features:
        if said.get(f) == "numerical" and not pd.api.types.is_numeric_dtype(table[f]):
            problems.append(f"feature {f!r} is not numeric in the data (dtype {table[f].dtype})")
        if said.get(f) == "other":
            problems.append(f"feature {f!r} was typed 'other' (not a usable feature) yet chosen")
    if problems:
        return None, problems
    leaks = _leaks(target, features, table, profile, problem_type, config)
    if leaks:
        return None, [f"feature {f!r} {why}" for f, why in leaks.items()]
    # Unchosen columns that leak stay out of the MM files too (the heuristic does the same), ids included.
    others = [n for n in profile.names if n != target and n not in features][:MAX_LEAK_SCREEN]
    other_leaks = _leaks(target, others, table, profile, problem_type, config)
    if (why := one_feature_problem(target, [n for n in profile.names if n != target and n not in other_leaks],
                                   leaks_removed=bool(other_leaks))):
        return None, [why]
    order = {n: i for i, n in enumerate(profile.names)}
    all_candidates = sorted({c for c in answer.target_candidates + [target]
                             if c in candidates["classification"] + candidates["regression"]}, key=order.__getitem__)
    excluded = {**exclusions, **other_leaks}
    for n in profile.names:
        if n != target and n not in features and n not in excluded:
            excluded[n] = "not chosen by the LLM designer"
    excluded_targets = dict(frame.excluded_targets)
    excluded_targets.pop(target, None)
    for c in allowed - {target}:
        excluded_targets.setdefault(c, "not chosen by the LLM designer")
    return Checked(problem_type, target, all_candidates, sorted(features, key=order.__getitem__), excluded,
                   other_leaks, dict(sorted(excluded_targets.items()))), []


# ---------------------------------------------------------------- the designer


def _descriptions(answer: DesignAnswer, spec: TaskSpec, record: DatasetRecord) -> dict[str, str]:
    """The model's phrases for the task's undocumented feature columns, one short line each."""
    documented = {c for c, d in record.column_descriptions.items() if d.strip()}
    wanted = set(spec.not_filtered_related_features) - documented
    return dict(sorted((d.column, _one_line(d.description, MAX_COLUMN_DOC_CHARS)) for d in answer.feature_descriptions
                       if d.column in wanted and d.description.strip()))


def _retry_messages(messages: list[dict], raw: str, problems: list[str]) -> list[dict]:
    feedback = ("Your answer has these problems:\n" + "\n".join(f"- {p}" for p in problems)
                + "\nAnswer again with a corrected JSON object matching the schema.")
    return messages + [{"role": "assistant", "content": raw}, {"role": "user", "content": feedback}]


def _structurally_rejected(profile: DatasetProfile, table: pd.DataFrame, config: DesignConfig) -> bool:
    """True when the heuristic would reject before choosing anything, so asking the model is wasted."""
    if profile.n_rows < config.min_rows:
        return True
    exclusions = {c.name for c in profile.columns if heuristic.feature_exclusion(c, profile, config)}
    usable = [n for n in profile.names if n not in exclusions]
    cands = heuristic.target_candidates(profile, table, config)
    return not usable or not any(c in usable for c in cands["classification"] + cands["regression"])


def _fallback(record, profile, table, rng, config, reason: str, usage: LLMUsage) -> TaskSpec:
    usage.fallbacks += 1
    reason = _one_line(reason, 300)
    try:
        spec = heuristic.design(record, profile, table, rng, config)
    except DatasetRejected as exc:
        # No colon before the llm part: the CLI groups reasons by the text before the first colon.
        raise DatasetRejected(replace(exc.rejection, detail=f"{exc.reason}; heuristic after llm fallback because "
                                                            f"{reason}")) from None
    return spec.model_copy(update={"designer": f"heuristic (llm fallback: {reason})"})


def _through_the_gates(record: DatasetRecord, profile: DatasetProfile, table: pd.DataFrame, rng: np.random.Generator,
                       config: DesignConfig, frame: heuristic.DesignFrame, checked: Checked, designer: str,
                       model: str) -> TaskSpec:
    """The validated answer's target and features through the heuristic's gate chain (heuristic.try_targets: size
    floor, leak, derived and identity screens, one feature, learnability) and its dataset-level checks (a survival
    study whose only outcome is its censored duration): the model only proposes, and a proposal a gate refuses is
    rejected with that gate's code, as the heuristic's own candidate or a curator's pin would be (a censored
    duration meets the survival gate before: design)."""
    choice = RankedTarget(checked.target, f"the LLM designer ({model}): {checked.target!r} as {checked.problem_type}, "
                                          f"validated against the column roles", 0, "llm")
    gated = replace(frame, problem_types={**frame.problem_types, checked.target: checked.problem_type})
    spec = heuristic.try_targets(record, profile, table, rng, config, gated, [choice], designer=designer,
                                 proposed=checked.features)
    return spec.model_copy(update={"target_candidates": tuple(checked.candidates),
                                   "excluded_targets": checked.excluded_targets})


def design(record: DatasetRecord, profile: DatasetProfile, table: pd.DataFrame, rng: np.random.Generator,
           config: DesignConfig, *, settings: LLMSettings | None = None, usage: LLMUsage | None = None) -> TaskSpec:
    settings = settings or LLMSettings()
    usage = usage if usage is not None else LLMUsage()
    if _structurally_rejected(profile, table, config):
        return heuristic.design(record, profile, table, rng, config)  # raises the heuristic's reason
    frame = heuristic.design_frame(record, profile, table, config)  # roles; rejects a contingency table
    cache = LLMCache(settings.cache_dir)
    key_inputs = (hashlib.sha256(prompt_text().encode()).hexdigest(), schema_sha256())
    messages = build_messages(record, profile, table, config, frame.roles)
    problems: list[str] = []
    for attempt in (1, 2):
        try:
            key, raw = _ask(messages, key_inputs, settings, cache, usage)
        except LLMUnavailable as exc:
            return _fallback(record, profile, table, rng, config, str(exc), usage)
        answer, problems = parse_answer(raw)
        if answer is not None and not answer.feasible:
            raise DatasetRejected(f"llm judged infeasible: {_one_line(answer.feasibility_reason, 200)} "
                                  f"(cache key {key})", "llm_infeasible")
        if answer is not None and (role := frame.roles.get(answer.target)) is not None \
                and role.role == "censored_duration":  # a survival study's time: the heuristic's survival gate
            raise DatasetRejected(heuristic.survival_problem(frame, []) or role.evidence, "survival_study")
        if answer is not None:
            checked, problems = validate_answer(answer, record, profile, table, config, frame)
            if checked is not None:
                spec = _through_the_gates(record, profile, table, rng, config, frame, checked,
                                          f"{DESIGNER_NAME} ({settings.model}, cache key {key})", settings.model)
                return spec.model_copy(update={"feature_descriptions": _descriptions(answer, spec, record)})
        if attempt == 1:
            messages = _retry_messages(messages, raw, problems)
    return _fallback(record, profile, table, rng, config,
                     f"invalid answer after a retry: {'; '.join(problems)} (key {key})", usage)
