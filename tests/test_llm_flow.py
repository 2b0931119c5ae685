"""A build with the LLM designer records the designer and cache key in every task's metadata, and a
rebuild with the model unreachable is served from the cache into an identical manifest."""

from __future__ import annotations

import json

from pipeline.core import names
from tests.fake_openai import FakeOpenAI, Reply
from tests.factories import good_table


def _reply(body: dict) -> Reply:
    prompt = body["messages"][1]["content"]
    if "Reference: local/good" in prompt:
        return Reply.answer({
            "feasible": True, "feasibility_reason": "y is the response", "problem_type": "regression",
            "target_candidates": ["y"], "target": "y", "related_features": ["x", "colour"],
            "column_types": [{"column": "x", "type": "numerical"}, {"column": "colour", "type": "categorical"}],
            "feature_descriptions": [{"column": "x", "description": "the dose"}]})
    return Reply.text("I think the target is probably y.")  # never valid JSON: falls back


def test_llm_build_records_designer_and_rebuilds_identically_offline(tmp_path):
    from flows import build_tasks

    src = tmp_path / "data"
    src.mkdir()
    good_table().to_csv(src / "good.csv", index=False)
    (src / "good.json").write_text(json.dumps({"title": "Good", "description": "A dose-response study.",
                                               "column_descriptions": {"x": "Dose in mg."}}))
    good_table(seed=4).to_csv(src / "other.csv", index=False)
    cache = tmp_path / "llm-cache"
    with FakeOpenAI([_reply]) as server:
        settings = {"model": "openai/fake-model", "api_base": server.api_base, "cache_dir": str(cache),
                    "num_retries": 0, "timeout": 10}
        report = build_tasks(out=str(tmp_path / "a"), seed=2, sources=f"local:{src}", designer="llm",
                             designer_settings=settings)
        assert server.n_requests == 3  # good: 1; other: the answer and its retry
    assert report["llm"]["calls"] == 3 and report["llm"]["cache_hits"] == 0 and report["llm"]["fallbacks"] == 1
    assert len(report["tasks"]) == 2 and "local_good_reg" in report["tasks"], report

    meta = json.loads((tmp_path / "a" / "local_good_reg" / "verify" / names.ALL_METADATA).read_text())
    assert meta["daregen"]["designer"].startswith("llm (openai/fake-model, cache key ")
    key = meta["daregen"]["designer"].rsplit(" ", 1)[-1].rstrip(")")
    assert list(cache.rglob(f"{key}.json"))
    assert meta["question"]["target"] == ["y"] and meta["question"]["related_features"] == ["x", "colour"]
    other = next(p for p in (tmp_path / "a").glob("local_other_*"))
    other_meta = json.loads((other / "verify" / names.ALL_METADATA).read_text())
    assert other_meta["daregen"]["designer"].startswith("heuristic (llm fallback: invalid answer after a retry")
    assert "key " in other_meta["daregen"]["designer"]

    # the server is gone: every answer must come from the LLM cache (a fresh build cache, so the
    # designer really runs instead of the finished tasks being restored)
    report_b = build_tasks(out=str(tmp_path / "b"), seed=2, sources=f"local:{src}", designer="llm",
                           designer_settings=settings, cache_dir=str(tmp_path / "build-cache-b"))
    assert report_b["llm"]["calls"] == 0 and report_b["llm"]["cache_hits"] == 3
    assert "- llm: 0 calls, 3 cache hits" in (tmp_path / "b" / "run_report.md").read_text()
    assert (tmp_path / "b" / names.MANIFEST).read_bytes() == (tmp_path / "a" / names.MANIFEST).read_bytes()
