"""An LLM answer reaches a task only after it passes the data checks; every failure ends in a valid spec
with the fallback reason recorded, and cached answers make a rebuild identical without any HTTP call.

These run the real litellm client against tests/fake_openai.py on 127.0.0.1.
"""

from __future__ import annotations

import json
import logging

import numpy as np
import pytest

from pipeline.core.jsonio import dumps
from pipeline.core.records import DatasetRejected, TaskSpec
from pipeline.core.seeding import rng_for
from task_design import heuristic, llm
from task_design.config import DesignConfig
from task_design.llm_schema import LLMSettings, LLMUsage
from task_design.profile import profile_table
from tests.factories import REF, build_record, build_table
from tests.fake_openai import FakeOpenAI, Reply

SEED = 5


def _table():
    # `flag` is a degenerate target: 98% of its rows hold one value.
    return build_table(flag=lambda n: np.where(np.arange(n) < n * 0.98, "a", "b"))


def _leaky_table():
    t = build_table()
    t["label_copy"] = t["label"].map({"yes": "Y", "no": "N"})
    return t


def _answer(**overrides) -> dict:
    answer = {
        "feasible": True, "feasibility_reason": "label is the documented response",
        "problem_type": "classification", "target_candidates": ["label"], "target": "label",
        "related_features": ["x", "visits", "colour"],
        "column_types": [{"column": "x", "type": "numerical"}, {"column": "visits", "type": "numerical"},
                         {"column": "colour", "type": "categorical"}, {"column": "label", "type": "categorical"}],
        "feature_descriptions": [{"column": "x", "description": "the measured signal"}],
    }
    answer.update(overrides)
    return answer


def _design(server: FakeOpenAI | None, tmp_path, table=None, **settings) -> tuple[TaskSpec, LLMUsage]:
    table = _table() if table is None else table
    options = dict(model="openai/fake-model", api_base=server.api_base if server else "http://127.0.0.1:9/v1",
                   cache_dir=str(tmp_path / "cache"), timeout=5, num_retries=0)
    options.update(settings)
    usage = LLMUsage()
    spec = llm.design(_record(), profile_table(table), table, rng_for(SEED, REF, "design"), DesignConfig(),
                      settings=LLMSettings(**options), usage=usage)
    return spec, usage


def _record():
    return build_record(description="Synthetic survey.", column_descriptions={"x": "A signal."})


def _heuristic_spec(table=None) -> TaskSpec:
    table = _table() if table is None else table
    return heuristic.design(_record(), profile_table(table), table, rng_for(SEED, REF, "design"), DesignConfig())


def _assert_fallback(spec: TaskSpec, reason: str, table=None) -> None:
    assert spec.designer.startswith("heuristic (llm fallback: "), spec.designer
    assert reason in spec.designer, spec.designer
    assert "key " in spec.designer  # the cache key is recorded even when nothing was cached
    # Apart from the designer label, a fallback is exactly the heuristic's spec for the same seed.
    assert spec.model_copy(update={"designer": "heuristic"}) == _heuristic_spec(table)


# ---------------------------------------------------------------- happy path and cache


def test_valid_answer_is_used_and_a_rebuild_is_served_from_the_cache(tmp_path):
    with FakeOpenAI([Reply.answer(_answer())]) as server:
        spec, usage = _design(server, tmp_path)
        assert server.n_requests == 1
        body = server.requests[0]
        assert body["temperature"] == 0 and body["seed"] == 0
        assert body["response_format"]["type"] == "json_schema"
        prompt = body["messages"][-1]["content"]
        assert "Synthetic survey." in prompt and "A signal." in prompt and "colour" in prompt
    assert spec.designer.startswith("llm (openai/fake-model, cache key ")
    assert spec.target == ("label",) and spec.problem_type == "classification"
    assert spec.related_features == ("x", "visits", "colour")
    assert spec.excluded_features["sparse"] == "not chosen by the LLM designer"
    assert (usage.calls, usage.cache_hits, usage.fallbacks) == (1, 0, 0) and usage.prompt_tokens > 0
    key = spec.designer.rsplit(" ", 1)[-1].rstrip(")")
    entry = json.loads(next((tmp_path / "cache").rglob(f"{key}.json")).read_text())
    assert entry["key"] == key and entry["content"] == json.dumps(_answer())

    with FakeOpenAI([Reply.status(500)]) as again:
        spec2, usage2 = _design(again, tmp_path)
        assert again.n_requests == 0
    assert dumps(spec2.model_dump(mode="json")) == dumps(spec.model_dump(mode="json"))
    assert (usage2.calls, usage2.cache_hits) == (0, 1)


def test_cache_only_never_calls_and_falls_back_on_a_miss(tmp_path):
    with FakeOpenAI([Reply.answer(_answer())]) as server:
        spec, usage = _design(server, tmp_path, cache_only=True)
        assert server.n_requests == 0
    _assert_fallback(spec, "cache miss with --llm-cache-only")
    assert usage.calls == 0 and usage.fallbacks == 1


def test_api_key_is_sent_but_never_stored_or_logged(tmp_path, monkeypatch, caplog, capfd):
    monkeypatch.setenv("DAREGEN_TEST_LLM_KEY", "sk-very-secret-123")
    caplog.set_level(logging.DEBUG)
    with FakeOpenAI([Reply.status(401), Reply.answer(_answer())]) as server:
        failed, _ = _design(server, tmp_path, api_key_env="DAREGEN_TEST_LLM_KEY")
        spec, _ = _design(server, tmp_path, api_key_env="DAREGEN_TEST_LLM_KEY")
        assert server.authorizations == ["Bearer sk-very-secret-123"] * 2
    _assert_fallback(failed, "HTTP 401")
    stored = "".join(p.read_text() for p in (tmp_path / "cache").rglob("*.json"))
    out, err = capfd.readouterr()
    written = stored + dumps(spec.model_dump(mode="json")) + failed.designer + caplog.text + out + err
    assert "very-secret" not in written


# ---------------------------------------------------------------- invalid answers


def test_malformed_json_is_retried_with_the_error_fed_back(tmp_path):
    with FakeOpenAI([Reply.text('{"feasible": true, "target": "label",'), Reply.answer(_answer())]) as server:
        spec, usage = _design(server, tmp_path)
        assert server.n_requests == 2
        feedback = server.requests[1]["messages"][-1]["content"]
    assert "not valid JSON" in feedback
    assert spec.designer.startswith("llm (") and spec.target == ("label",)
    assert usage.calls == 2


def test_invented_column_twice_falls_back_to_the_heuristic(tmp_path):
    invented = _answer(related_features=["x", "income_bracket"])
    with FakeOpenAI([Reply.answer(invented)]) as server:
        spec, usage = _design(server, tmp_path)
        assert server.n_requests == 2
        assert "income_bracket" in server.requests[1]["messages"][-1]["content"]
    _assert_fallback(spec, "unknown column(s) ['income_bracket']")
    assert usage.fallbacks == 1
    # the rebuild replays both cached exchanges and lands on the same fallback
    with FakeOpenAI([Reply.answer(_answer())]) as again:
        spec2, _ = _design(again, tmp_path)
        assert again.n_requests == 0
    assert spec2 == spec


def test_degenerate_target_is_rejected_then_corrected(tmp_path):
    degenerate = _answer(target="flag", target_candidates=["flag", "label"])
    with FakeOpenAI([Reply.answer(degenerate), Reply.answer(_answer())]) as server:
        spec, _ = _design(server, tmp_path)
        feedback = server.requests[1]["messages"][-1]["content"]
    assert "'flag' is degenerate" in feedback
    assert spec.designer.startswith("llm (") and spec.target == ("label",)
    assert spec.target_candidates == ("label",)  # the degenerate candidate is dropped


def test_leaky_feature_never_reaches_a_task(tmp_path):
    table = _leaky_table()
    leaky = _answer(related_features=["x", "label_copy"])
    with FakeOpenAI([Reply.answer(leaky)]) as server:
        spec, _ = _design(server, tmp_path, table=table)
        assert server.n_requests == 2
    _assert_fallback(spec, "'label_copy' leaks the target", table=table)
    assert not (spec.target == ("label",) and "label_copy" in spec.related_features)


def test_unchosen_leaky_column_is_kept_out_of_the_mm_files(tmp_path):
    table = _leaky_table()
    with FakeOpenAI([Reply.answer(_answer())]) as server:
        spec, _ = _design(server, tmp_path, table=table)
    assert spec.designer.startswith("llm (") and spec.target == ("label",)
    assert spec.v2_dropped_columns == ("label_copy",)
    assert spec.excluded_features["label_copy"].startswith("leaks the target")


def test_wrong_problem_type_and_string_typed_numeric_are_caught(tmp_path):
    wrong = _answer(problem_type="regression", column_types=[{"column": "colour", "type": "numerical"}])
    with FakeOpenAI([Reply.answer(wrong)]) as server:
        spec, _ = _design(server, tmp_path)
        feedback = server.requests[1]["messages"][-1]["content"]
    assert "suits classification, not regression" in feedback
    assert "'colour' is not numeric" in feedback
    _assert_fallback(spec, "invalid answer after a retry")


def test_infeasible_verdict_rejects_the_dataset(tmp_path):
    with FakeOpenAI([Reply.answer(_answer(feasible=False, feasibility_reason="No meaningful\ntarget."))]) as server:
        with pytest.raises(DatasetRejected, match=r"^llm judged infeasible: No meaningful target\. \(cache key"):
            _design(server, tmp_path)


# ---------------------------------------------------------------- transport failures


def test_timeout_falls_back_and_is_not_cached(tmp_path):
    with FakeOpenAI([Reply.sleep(4)]) as server:
        spec, usage = _design(server, tmp_path, timeout=1)
        assert server.n_requests == 1
    _assert_fallback(spec, "timeout after 1 s")
    assert not list((tmp_path / "cache").rglob("*.json"))
    assert usage.calls == 1 and usage.fallbacks == 1


@pytest.mark.parametrize("status, reason", [(429, "HTTP 429 rate limited"), (500, "HTTP 500")])
def test_http_errors_fall_back(tmp_path, status, reason):
    with FakeOpenAI([Reply.status(status)]) as server:
        spec, _ = _design(server, tmp_path)
        assert server.n_requests == 1
    _assert_fallback(spec, reason)
    assert not list((tmp_path / "cache").rglob("*.json"))


def test_transient_429_is_retried_by_the_client(tmp_path):
    with FakeOpenAI([Reply.status(429), Reply.answer(_answer())]) as server:
        spec, _ = _design(server, tmp_path, num_retries=1)
        assert server.n_requests == 2
    assert spec.designer.startswith("llm (")


def test_structurally_hopeless_dataset_is_rejected_without_a_call(tmp_path):
    table = build_table(n=10)
    with FakeOpenAI([Reply.answer(_answer())]) as server:
        with pytest.raises(DatasetRejected, match="too few rows"):
            _design(server, tmp_path, table=table)
        assert server.n_requests == 0


def test_model_descriptions_name_undocumented_columns_in_the_instruction(tmp_path):
    from finalize.instructions import question_v1

    answer = _answer(feature_descriptions=[
        {"column": "x", "description": "a made-up phrase for x"},  # x is documented: ignored
        {"column": "visits", "description": "number of visits to the clinic"},
    ])
    with FakeOpenAI([Reply.answer(answer)]) as server:
        spec, _ = _design(server, tmp_path)
    assert spec.feature_descriptions == {"visits": "number of visits to the clinic"}
    record = build_record(description="Synthetic survey.", column_descriptions={"x": "A signal."})
    text = question_v1(record, spec)
    assert "number of visits to the clinic (`visits`)" in text
    assert "made-up phrase" not in text
    if "x" in spec.expected_ranges:
        assert "A signal (`x`)" in text  # the entry's own case (column_refs.description_phrase)


def test_a_target_with_one_feature_beside_it_is_refused_as_the_heuristic_refuses_it(tmp_path):
    # Two columns: whatever the model answers, the MM files would hold one predictor (dslabs/heights).
    table = build_table()[["x", "label"]]
    one = _answer(related_features=["x"], column_types=[{"column": "x", "type": "numerical"}])
    with FakeOpenAI([Reply.answer(one), Reply.answer(one)]) as server:
        with pytest.raises(DatasetRejected, match="one feature only"):
            _design(server, tmp_path, table=table)
        feedback = server.requests[1]["messages"][-1]["content"]
    assert "one feature only ('x' beside 'label')" in feedback
