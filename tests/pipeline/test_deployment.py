"""Whoever triggers a run of the served deployment chooses only safe settings: every parameter that would send a
server secret to an endpoint, make the flow a client of a scheduler, or reach a path, a limit or a ledger of the
server is refused before any work, in one line that names the setting and says the operator sets it. The
operator's settings come from the serving process, never from a run, and bound what a run may choose."""

from __future__ import annotations

import json

import pytest

from pipeline.deployment import (OPERATOR_ENV, RUN_PARAMETERS, OperatorSettings, RefusedRun, RunParameters,
                                 build_parameters, checked_run, load_operator_settings)

OPERATOR = OperatorSettings(out="/srv/daregen/nightly", sources=["builtin", "builtin:sklearn/iris"], max_limit=50,
                            cache_dir="/srv/daregen/cache", curation="/srv/daregen/curation.toml")

# The red team's findings of issue 42: each a parameter a trigger sent, and the setting it must be refused by.
FINDINGS = {
    "a server secret to an arbitrary endpoint": (
        {"designer": "llm", "designer_settings": {"model": "openai/x", "api_base": "http://198.51.100.7/v1",
                                                  "api_key_env": "AWS_SECRET_ACCESS_KEY", "allow_key_env": True}},
        "designer_settings"),
    "the flow as a client of the caller's scheduler": ({"runner": "dask", "dask_address": "tcp://198.51.100.7:8786"},
                                                       "runner"),
    "a scheduler alone": ({"dask_address": "tcp://198.51.100.7:8786"}, "dask_address"),
    "out and force replacing any folder": ({"out": "/home/op/.ssh", "force": True}, "out"),
    "force alone": ({"force": True}, "force"),
    "a server-side file as a source": ({"sources": "local:/srv/private/ssn"}, "sources"),
    "any folder as the cache": ({"cache_dir": "/home/op"}, "cache_dir"),
    "a device as the ledger": ({"curation": "/dev/zero"}, "curation"),
    "read limits lifted": ({"input_limits": {"max_rows": 10**12}}, "input_limits"),
    "a parameter build-tasks does not have": ({"shell": "id"}, "shell"),
}


def _refusal(given: dict, operator: OperatorSettings = OPERATOR) -> str:
    with pytest.raises(RefusedRun) as info:
        checked_run(given, operator)
    message = str(info.value)
    assert "\n" not in message and len(message) < 400, message
    return message


@pytest.mark.parametrize("finding", sorted(FINDINGS))
def test_each_finding_is_refused_in_one_line_naming_the_setting(finding):
    given, setting = FINDINGS[finding]
    message = _refusal({"seed": 1, **given})
    assert f"'{setting}'" in message, message
    if setting not in ("sources", "shell"):
        assert "only the operator sets it" in message and "a run may set only" in message, message


def test_the_refusal_says_where_the_operator_sets_it():
    assert "daregen serve --out" in _refusal({"out": "/tmp/x"})
    assert "daregen serve --curation" in _refusal({"curation": "/dev/zero"})
    assert OPERATOR_ENV in _refusal({"dask_address": "tcp://h:1"})
    assert "not one the operator allows" in _refusal({"sources": "local:/etc"})


def test_a_run_chooses_within_the_operators_bounds():
    run = checked_run({"limit": 7, "seed": 3, "designer": "heuristic", "sources": "builtin:sklearn/iris",
                       "publish": "approved"}, OPERATOR)
    assert (run.limit, run.seed, run.sources, run.publish) == (7, 3, "builtin:sklearn/iris", "approved")
    assert checked_run({}, OPERATOR.model_copy(update={"max_limit": "none"})).sources == "builtin"  # the default
    assert "above the operator's maximum 50" in _refusal({"limit": 51})
    assert "every candidate is above" in _refusal({"limit": None})
    assert "'limit'" in _refusal({"limit": 0})
    assert "'seed'" in _refusal({"seed": "x"})
    assert "'publish'" in _refusal({"publish": "everything"})
    assert "unknown designer" in _refusal({"designer": "gpt", "limit": 5})
    # the LLM designer needs a model and an endpoint: only the operator names them
    assert "only the operator gives" in _refusal({"designer": "llm", "limit": 5})


def test_no_run_builds_every_candidate_unless_the_operator_says_so():
    """Issue 48: `serve --limit 50` alone registered `limit: integer | null`, so a trigger's `limit: null` or
    10**9 built the whole corpus. The bound is always a number unless the operator wrote 'none'."""
    for limit in (None, 10**9):
        assert "above the operator's maximum 50 (daregen serve --max-limit, else --limit)" in _refusal({"limit": limit})
    with pytest.raises(RefusedRun, match="operator setting 'max_limit': Field required"):
        load_operator_settings({OPERATOR_ENV: json.dumps({"out": "/srv/t"})})  # a worker's file without a bound
    with pytest.raises(RefusedRun, match="'none' to let a run build every candidate, not 'null'"):
        load_operator_settings({OPERATOR_ENV: json.dumps({"out": "/srv/t", "max_limit": "null"})})
    unbounded = OPERATOR.model_copy(update={"max_limit": "none"})
    assert checked_run({"limit": None}, unbounded).limit is None and checked_run({"limit": 10**9}, unbounded)
    from flows import build_tasks
    from pipeline.deployment import run_schema

    schema = build_tasks.parameters.model_dump_for_openapi()
    assert run_schema(schema, OPERATOR)["properties"]["limit"]["maximum"] == 50
    assert "anyOf" not in run_schema(schema, OPERATOR)["properties"]["limit"]
    assert {"type": "null"} in run_schema(schema, unbounded)["properties"]["limit"]["anyOf"]


def test_an_operator_can_make_every_run_approved_only():
    """Issue 48: `publish` was always the run's choice, so a trigger published every unapproved task at the
    operator's `out`. Pinned, a run asking otherwise is refused in one line naming the setting and its owner."""
    pinned = OPERATOR.model_copy(update={"publish": "approved"})
    message = _refusal({"publish": "all", "limit": 5}, pinned)
    assert message.startswith("run parameter 'publish' refused: the operator pins it to 'approved' (daregen serve "
                              "--pin-publish)"), message
    assert checked_run({}, pinned).publish == "approved"  # a run that does not say gets the pin
    assert build_parameters(checked_run({"limit": 50, "publish": "approved"}, pinned), pinned)["publish"] == "approved"
    from flows import build_tasks
    from pipeline.deployment import run_schema

    publish = run_schema(build_tasks.parameters.model_dump_for_openapi(), pinned)["properties"]["publish"]
    assert (publish["enum"], publish["default"]) == (["approved"], "approved")
    assert checked_run({"publish": "all", "limit": 5}, OPERATOR).publish == "all"  # unpinned: the run's choice


def test_job_variables_of_a_run_are_refused():
    with pytest.raises(RefusedRun, match="job variables .*'env'.* refused"):
        checked_run({}, OPERATOR, {"env": {OPERATOR_ENV: "/tmp/mine.toml"}})


def test_hostile_parameter_names_are_shown_inert():
    message = _refusal({"\x1b[2J<img src=x onerror=alert(1)>": 1})
    assert "\x1b" not in message and "\\x1b" in message


def test_a_served_run_gets_the_operators_settings_and_its_own_choices():
    run = checked_run({"seed": 4, "limit": 5}, OPERATOR)
    params = build_parameters(run, OPERATOR)
    from flows import build_tasks

    assert set(params) == set(build_tasks.parameters.properties)  # every flow parameter, each from one side
    assert (params["out"], params["cache_dir"], params["curation"]) == (OPERATOR.out, OPERATOR.cache_dir,
                                                                        OPERATOR.curation)
    assert (params["seed"], params["limit"], params["sources"], params["runner"]) == (4, 5, "builtin", "local")
    assert set(RUN_PARAMETERS) == set(RunParameters.model_fields) <= set(params)


def test_operator_settings_come_from_the_serving_process(tmp_path):
    assert load_operator_settings({OPERATOR_ENV: OPERATOR.model_dump_json()}) == OPERATOR
    toml = tmp_path / "operator.toml"
    toml.write_text('out = "/srv/t"\nmax_limit = 9\nsources = ["builtin"]\nrunner = "dask"\ndask_address = "tcp://10.0.0.2:8786"\n'
                    '[input_limits]\nmax_rows = 20_000_000\n', encoding="utf-8")
    settings = load_operator_settings({OPERATOR_ENV: str(toml)})
    assert settings.dask_address == "tcp://10.0.0.2:8786" and settings.input_limits == {"max_rows": 20_000_000}
    with pytest.raises(RefusedRun, match="without operator settings"):
        load_operator_settings({})
    with pytest.raises(RefusedRun, match="absolute path"):
        load_operator_settings({OPERATOR_ENV: json.dumps({"out": "relative/tree"})})
    with pytest.raises(RefusedRun, match="operator setting 'designer_settings.modle'"):
        load_operator_settings({OPERATOR_ENV: json.dumps({"out": "/srv/t", "max_limit": 9,
                                                           "designer_settings": {"modle": "x"}})})
    with pytest.raises(RefusedRun, match="operator setting 'runnr'"):
        load_operator_settings({OPERATOR_ENV: json.dumps({"out": "/srv/t", "max_limit": 9, "runnr": "dask"})})


def test_serve_reads_the_operators_file_and_refuses_a_bad_one_in_one_line(tmp_path, capsys):
    """`daregen serve --settings FILE`: the operator's file on the server, checked before anything is registered."""
    from pipeline.cli import main

    bad = tmp_path / "operator.toml"
    bad.write_text('runnr = "dask"\n', encoding="utf-8")
    assert main(["serve", "--out", str(tmp_path / "t"), "--settings", str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "'runnr'" in err and str(bad) in err, err
    good = tmp_path / "good.toml"
    good.write_text("max_limit = 7\n", encoding="utf-8")
    assert main(["serve", "--out", str(tmp_path / "t"), "--settings", str(good), "--limit", "9"]) == 2
    assert "--limit 9 is above --max-limit 7" in capsys.readouterr().err
    assert main(["serve", "--out", str(tmp_path / "t"), "--settings", str(good), "--designer", "llm"]) == 2
    assert "[designer_settings]" in capsys.readouterr().err


def test_serve_needs_a_bound_and_pins_publish_only_when_asked(tmp_path, capsys):
    from pipeline.cli import main

    out = str(tmp_path / "t")
    assert main(["serve", "--out", out]) == 2
    err = capsys.readouterr().err.strip()
    assert "needs a bound on what one run builds" in err and "--max-limit none" in err and "\n" not in err, err
    assert main(["serve", "--out", out, "--limit", "5", "--pin-publish"]) == 2
    assert "--pin-publish pins --publish" in capsys.readouterr().err
    pinned = tmp_path / "pinned.toml"
    pinned.write_text('max_limit = 7\npublish = "approved"\n', encoding="utf-8")
    assert main(["serve", "--out", out, "--settings", str(pinned), "--publish", "all"]) == 2
    assert "pins publish to 'approved'" in capsys.readouterr().err


def test_a_pinned_publish_pins_the_limit_so_no_trigger_publishes_a_subset_release():
    """Red team 48 #9: pinned to approved, a trigger's smaller limit published a release of the first N
    candidates' approved tasks, and three such runs pruned the full approved generation. Pinned, the limit is
    the operator's maximum: a run asking another is refused in one line naming the setting and its owner."""
    pinned = OPERATOR.model_copy(update={"publish": "approved"})
    for limit in (1, 49, None):
        message = _refusal({"limit": limit}, pinned)
        assert message.startswith("run parameter 'limit' refused: the operator pins publish to 'approved' and with "
                                  "it the limit to 50 (daregen serve --max-limit, else --limit, with daregen serve "
                                  "--pin-publish)"), message
    assert checked_run({"limit": 50}, pinned).limit == 50 and checked_run({"seed": 2}, pinned).limit == 50
    unbounded = pinned.model_copy(update={"max_limit": "none"})
    assert checked_run({}, unbounded).limit is None and "'limit' refused" in _refusal({"limit": 3}, unbounded)
    from flows import build_tasks
    from pipeline.deployment import run_schema

    limit = run_schema(build_tasks.parameters.model_dump_for_openapi(), pinned)["properties"]["limit"]
    assert (limit["minimum"], limit["maximum"], limit["default"]) == (50, 50, 50)


def test_a_pinned_publish_pins_the_sources_too():
    """Re-review of red team 48 #9: pinned to approved, a trigger could still choose a narrower allowed source, whose
    release of a subset of the approved tasks replaced the full one. Pinned, the sources are the operator's first."""
    pinned = OPERATOR.model_copy(update={"publish": "approved", "sources": ["builtin", "builtin:sklearn/iris"]})
    message = _refusal({"sources": "builtin:sklearn/iris"}, pinned)
    assert message.startswith("run parameter 'sources' refused: the operator pins publish to 'approved' and with it "
                              "the sources to 'builtin'"), message
    assert checked_run({"sources": "builtin"}, pinned).sources == "builtin"
    assert checked_run({}, pinned).sources == "builtin"
    unpinned = pinned.model_copy(update={"publish": None})
    assert checked_run({"sources": "builtin:sklearn/iris", "limit": 5}, unpinned).sources == "builtin:sklearn/iris"


def _registered(monkeypatch, argv: list[str]) -> tuple:
    """What `daregen serve argv` would register (the operator's settings and the deployment's parameters)."""
    import flows
    from pipeline.cli import main

    seen = []
    monkeypatch.setattr(flows, "serve", lambda operator, cron, timezone, parameters: seen.append((operator, parameters)))
    assert main(["serve", *argv]) == 0
    [(operator, parameters)] = seen
    return operator, parameters


def test_serve_max_limit_none_registers_a_null_default_limit(tmp_path, monkeypatch):
    """Red team 48 #5: `serve --max-limit none` without --limit registered the default limit "none", which
    Prefect refused with two screens of traceback. The default is null (every candidate), which the flow accepts."""
    operator, parameters = _registered(monkeypatch, ["--out", str(tmp_path / "t"), "--max-limit", "none"])
    assert parameters["limit"] is None and checked_run(parameters, operator).limit is None
    operator, parameters = _registered(monkeypatch, ["--out", str(tmp_path / "t"), "--max-limit", "none",
                                                     "--publish", "approved", "--pin-publish"])
    assert parameters["limit"] is None and checked_run(parameters, operator).publish == "approved"


def test_serve_refuses_a_default_limit_other_than_the_pinned_one(tmp_path, monkeypatch, capsys):
    import flows
    from pipeline.cli import main

    def registered(*args, **kwargs):
        raise AssertionError("a default limit other than the pinned one was registered")

    out = str(tmp_path / "t")
    monkeypatch.setattr(flows, "serve", registered)
    assert main(["serve", "--out", out, "--limit", "5", "--max-limit", "9", "--publish", "approved",
                 "--pin-publish"]) == 2
    err = capsys.readouterr().err.strip()
    assert "a pinned publish pins the limit too, to --max-limit 9" in err and "\n" not in err, err
    operator, parameters = _registered(monkeypatch, ["--out", out, "--limit", "5", "--publish", "approved",
                                                     "--pin-publish"])
    assert checked_run(parameters, operator).limit == 5
