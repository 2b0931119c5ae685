"""A shared config file cannot collect secrets or lift its own restrictions: the API key reaches only
an endpoint the user named on the command line or in the environment (shown with the real litellm
client against a loopback OpenAI server), api_key_env names only LLM-key-like variables unless a flag
allows more, the CLI says where the key goes, and every refusal is one line with exit code 2."""

from __future__ import annotations

import pytest

from pipeline.cli import _apply_config, _designer_settings, main, parser
from pipeline.config_file import load_limits
from pipeline.core.safe_io import InputLimits
from task_design.llm import _call
from task_design.llm_schema import LLMSettings, LLMUsage, key_destination
from tests.fake_openai import FakeOpenAI, Reply

SECRET = "sk-hostile-test-secret"
MESSAGES = [{"role": "user", "content": "hello"}]


@pytest.fixture(autouse=True)
def _environment(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("KAGGLE_KEY", "kaggle-secret")
    monkeypatch.delenv("DAREGEN_LLM_API_BASE", raising=False)


def _config(tmp_path, text: str) -> str:
    path = tmp_path / "shared.toml"
    path.write_text(text, encoding="utf-8")
    return str(path)


def _settings(*argv) -> LLMSettings:
    args = parser().parse_args(["build", "--designer", "llm", *argv])
    return LLMSettings.model_validate(_designer_settings(args, _apply_config(args)))


def _authorization(settings: LLMSettings, server: FakeOpenAI) -> str:
    _call(MESSAGES, settings.model_copy(update={"num_retries": 0, "timeout": 10}), LLMUsage())
    return server.authorizations[-1]


def test_an_endpoint_only_a_config_file_names_is_refused_and_receives_nothing(tmp_path, capsys) -> None:
    """It would receive five sample rows of every dataset (a sources.toml may point at a private
    database), so the build stops before any call, with one line; a heuristic build ignores it."""
    with FakeOpenAI([Reply.answer({"ok": True})]) as server:
        cfg = _config(tmp_path, f'[build]\ndesigner = "llm"\nlimit = 1\n[llm]\nmodel = "openai/m"\n'
                                f'api_base = "{server.api_base}"\n')
        assert main(["build", "--config", cfg, "--out", str(tmp_path / "out")]) == 2
        assert server.n_requests == 0
    assert capsys.readouterr().err == (
        f"daregen: error: the config file names the LLM endpoint {server.api_base!r}, which would receive sample "
        "rows; name it with --llm-api-base or DAREGEN_LLM_API_BASE to use it\n")
    assert not (tmp_path / "out").exists()
    args = parser().parse_args(["build", "--config", cfg, "--designer", "heuristic"])
    assert _designer_settings(args, _apply_config(args)) is None


def test_an_endpoint_named_by_flag_or_environment_receives_the_key(tmp_path, capsys, monkeypatch) -> None:
    with FakeOpenAI([Reply.answer({"ok": True})]) as server:
        cfg = _config(tmp_path, '[llm]\nmodel = "openai/m"\napi_base = "http://127.0.0.1:9/v1"\n')
        assert _authorization(_settings("--config", cfg, "--llm-api-base", server.api_base), server) == \
            f"Bearer {SECRET}"
        assert key_destination(_settings("--config", cfg, "--llm-api-base", server.api_base)) == \
            f"LLM: the API key from openai's usual variable goes to {server.api_base}"
        monkeypatch.setenv("DAREGEN_LLM_API_BASE", server.api_base)
        assert _authorization(_settings("--config", cfg), server) == f"Bearer {SECRET}"


def test_api_key_env_must_look_like_an_llm_key(tmp_path, capsys) -> None:
    cfg = _config(tmp_path, '[build]\ndesigner = "llm"\nlimit = 1\n[llm]\nmodel = "openai/m"\napi_key_env = "KAGGLE_KEY"\n')
    assert main(["build", "--config", cfg, "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == (
        "daregen: error: bad --llm-* setting 'api_key_env': 'KAGGLE_KEY' does not look like an LLM API key variable "
        "(a name ending in _API_KEY or _LLM_KEY, not a known non-LLM service's); --llm-allow-key-env sends it "
        "anyway\n")
    assert _settings("--config", cfg, "--llm-allow-key-env").api_key_env == "KAGGLE_KEY"  # the user's own choice
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("key", ["allow_key_env", "key_to_api_base"])
def test_a_config_file_cannot_grant_itself_what_only_a_flag_may(tmp_path, capsys, key) -> None:
    cfg = _config(tmp_path, f'[build]\ndesigner = "llm"\n[llm]\n{key} = true\n')
    assert main(["build", "--config", cfg, "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == f"daregen: error: config file {cfg}: [llm] {key} can only be set on the command line\n"


def test_limits_come_from_the_config_and_a_bad_one_is_one_line(tmp_path, capsys) -> None:
    assert load_limits(_config(tmp_path, "[limits]\nmax_rows = 7\n")) == InputLimits(max_rows=7)
    cfg = _config(tmp_path, "[limits]\nmax_rows = -1\n")
    assert main(["verify", str(tmp_path), "--config", cfg]) == 2
    assert capsys.readouterr().err == \
        f"daregen: error: config file {cfg}: [limits] max_rows: Input should be greater than 0\n"
    cfg = _config(tmp_path, "[limits]\nmax_rowz = 1\n")
    assert main(["diff", str(tmp_path), str(tmp_path), "--config", cfg]) == 2
    assert "[limits] max_rowz: Extra inputs are not permitted" in capsys.readouterr().err


def test_a_non_empty_folder_daregen_did_not_write_is_refused_as_out(tmp_path, capsys) -> None:
    out = tmp_path / "my-thesis"
    out.mkdir()
    (out / "chapter1.tex").write_text("years of work\n")
    assert main(["build", "--out", str(out), "--limit", "1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"daregen: error: --out {out} is a non-empty folder daregen did not write; choose "
                          "another --out, or pass --force") and err.count("\n") == 1
    assert (out / "chapter1.tex").read_text() == "years of work\n"
