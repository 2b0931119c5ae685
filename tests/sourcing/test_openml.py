"""The OpenML adapter, through the real openml client against a loopback OpenML server, lists with filters,
passes the default target as a hint and the description's attribute list as column descriptions, keeps its
cache under the project cache, and turns server faults and corrupted data files into retries and then
one-line reasons."""

from __future__ import annotations

import pytest

from tests.sourcing.loopback.openml_api import openml_server


@pytest.fixture
def openml_env(monkeypatch, tmp_path):
    import openml

    monkeypatch.setenv("DAREGEN_CACHE", str(tmp_path / "cache"))
    old_server, old_cache = openml.config.server, openml.config._root_cache_directory
    with openml_server() as server:
        openml.config.server = server.url + "/api/v1/xml"
        try:
            yield server
        finally:
            openml.config.server = old_server
            openml.config.set_root_cache_directory(old_cache)


def test_tag_listing_judges_filters_and_applies_the_quota(openml_env):
    from sourcing.openml_source import OpenMLSource

    verdicts = {v.ref: v for v in OpenMLSource("tag=daregen-test?max_missing_values=0").preview()}
    assert verdicts["openml/9004"].verdicts["licence"] == "fail: gpl not in the allow-list"
    assert verdicts["openml/9001"].verdicts["missing_values"] == "fail: 2 missing values > 0"
    assert verdicts["openml/9002"].ok and verdicts["openml/9002"].rows == 140 and verdicts["openml/9002"].cols == 3
    assert OpenMLSource("tag=daregen-test").candidates() == ["openml/9001", "openml/9002", "openml/9003"]
    assert OpenMLSource("tag=daregen-test?quota=2").candidates() == ["openml/9001", "openml/9002"]
    # the rows bound is sent to the server as number_instances and judged again here
    assert OpenMLSource("tag=daregen-test?min_rows=1000").candidates() == []
    assert any("/number_instances/1000.." in path for _, path, _, _ in openml_env.log)


def test_record_and_table_with_target_hint_and_project_cache(openml_env, tmp_path):
    from sourcing.openml_source import OpenMLSource

    source = OpenMLSource("9001")
    assert source.candidates() == ["openml/9001"]
    record = source.record("openml/9001")
    assert record.target_hint == "kind" and record.license == "Public" and record.version == "1"
    assert record.title == "fixture-flowers" and record.owner == "Daregen Fixtures"
    assert "colour (nominal)" in record.about_file and record.last_updated == "2023-05-04"
    table = source.load_table("openml/9001")
    assert table.shape == (140, 5) and int(table["sepal_length"].isna().sum()) == 2
    assert list((tmp_path / "cache" / "openml").rglob("dataset.arff")), "the client's cache is the project's"


def test_the_descriptions_attribute_list_describes_the_columns(openml_env, caplog):
    from sourcing.openml_source import OpenMLSource

    with caplog.at_level("WARNING", logger="sourcing.openml_source"):
        record = OpenMLSource("9002").record("openml/9002")
    assert record.target_hint == "load_mw"
    assert record.column_descriptions == {"temperature": "outdoor air temperature, degrees Celsius",
                                          "hour": "hour of the day, 0-23",
                                          "load_mw": "electricity load in megawatts"}
    assert [r.getMessage() for r in caplog.records] == [
        "openml/9002: the card describes column 'humidity', which the table does not have: ignored"]


def test_server_errors_and_a_truncated_file_are_retried(openml_env):
    from sourcing.openml_source import OpenMLSource

    openml_env.inject("description 9002", "500", "429")
    openml_env.inject("arff 9002", "truncate")
    source = OpenMLSource("9002")
    assert source.record("openml/9002").target_hint == "load_mw"
    assert source.load_table("openml/9002").shape == (140, 3)
    assert openml_env.hits("description 9002") == 3 and openml_env.hits("arff 9002") == 2


def test_persistent_faults_become_reasons_and_other_datasets_still_load(openml_env):
    from sourcing.openml_source import OpenMLSource

    with pytest.raises(ValueError, match=r"^openml data for 9003: data file checksum mismatch \(truncated or "
                                         r"corrupted download\) after 3 attempts$"):
        OpenMLSource("9003").load_table("openml/9003")
    assert openml_env.hits("arff 9003") == 3
    with pytest.raises(ValueError, match=r"^filtered out: licence gpl not in the allow-list$"):
        OpenMLSource("9004").record("openml/9004")
    openml_env.inject("description 9001", *["500"] * 3)
    with pytest.raises(ValueError, match=r"^openml dataset 9001: OpenMLServerError: Unexpected server error when "
                                         r"calling http://127\.0\.0\.1:\d+/api/v1/xml/data/9001\.$"):
        OpenMLSource("9001").record("openml/9001")
    assert OpenMLSource("9002").load_table("openml/9002").shape == (140, 3)


def test_sources_list_command_shows_each_verdict(openml_env, capsys):
    from pipeline.cli import main
    from sourcing.registry import open_source

    open_source.cache_clear()
    try:
        assert main(["sources", "list", "--sources", "openml:tag=daregen-test?quota=2"]) == 0
    finally:
        open_source.cache_clear()
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "openml:tag=daregen-test?quota=2"
    assert out[1] == "  3 of 4 candidates pass the filters"
    assert "  skip  openml/9004  fixture-gpl  (GPL-3, rows=140 cols=3)" in out
    assert "          licence: fail: gpl not in the allow-list" in out
