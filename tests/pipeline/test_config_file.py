"""`daregen build --config FILE` fills what the flags leave unset, and a bad file is one clear error line."""

from __future__ import annotations

import pytest

from pipeline.cli import _apply_config, _designer_settings, main, parser
from pipeline.config_file import load_config


def _write(tmp_path, text: str):
    path = tmp_path / "daregen.toml"
    path.write_text(text, encoding="utf-8")
    return path


def _args(*argv):
    return parser().parse_args(["build", *argv])


def test_file_fills_unset_flags_and_flags_win(tmp_path):
    cfg = _write(tmp_path, '[build]\nlimit = 40\nseed = 9\nsources = "local:data"\ndesigner = "llm"\n'
                           '[llm]\nmodel = "openai/from-file"\napi_base = "http://127.0.0.1:1/v1"\ntimeout = 5\n')
    args = _args("--config", str(cfg), "--seed", "3", "--llm-model", "openai/from-flag")
    file_llm = _apply_config(args)
    assert (args.limit, args.seed, args.sources, args.designer) == (40, 3, "local:data", "llm")
    assert str(args.out) == "generated/tasks"
    with pytest.raises(ValueError, match="names the LLM endpoint"):  # only a flag or the environment may
        _designer_settings(args, file_llm)
    args = _args("--config", str(cfg), "--llm-model", "openai/from-flag", "--llm-api-base", "http://127.0.0.1:2/v1")
    settings = _designer_settings(args, _apply_config(args))
    assert settings == {"model": "openai/from-flag", "api_base": "http://127.0.0.1:2/v1", "timeout": 5}


def test_column_references_comes_from_the_file_the_flag_wins_and_dare_is_the_default(tmp_path):
    cfg = _write(tmp_path, '[build]\ncolumn_references = "explicit"\n')
    args = _args("--config", str(cfg))
    _apply_config(args)
    assert args.column_references == "explicit"
    args = _args("--config", str(cfg), "--column-references", "dare")
    _apply_config(args)
    assert args.column_references == "dare"
    args = _args()
    _apply_config(args)
    assert args.column_references == "dare"


def test_defaults_without_a_file():
    args = _args()
    assert _apply_config(args) == {}
    assert (str(args.out), args.limit, args.seed, args.sources, args.designer) == \
        ("generated/tasks", None, 0, "builtin", "heuristic")
    assert _designer_settings(args, {}) is None


def test_llm_table_is_kept_for_a_later_llm_run_but_flags_need_the_llm_designer(tmp_path):
    cfg = _write(tmp_path, '[llm]\nmodel = "openai/x"\n')
    args = _args("--config", str(cfg))
    assert _designer_settings(args, _apply_config(args)) is None
    with pytest.raises(ValueError, match="need --designer llm"):
        args = _args("--llm-model", "openai/x")
        _designer_settings(args, _apply_config(args))


@pytest.mark.parametrize("text, message", [
    ("[build\n", "config file"),
    ("[nightly]\nx = 1\n", "unknown section"),
    ("[build]\nlimt = 3\n", "unknown [build] key 'limt'"),
    ("[build]\nlimit = \"many\"\n", "limit must be a int"),
    ("[build]\nseed = true\n", "seed must be a int"),
    ("[llm]\napi_key = \"sk-123\"\n", "API keys"),
    ("[build]\ncolumn_references = \"backticks\"\n", "column_references must be one of 'dare', 'explicit'"),
])
def test_bad_files_are_rejected_with_the_reason(tmp_path, text, message):
    with pytest.raises(ValueError, match=message.replace("[", r"\[")):
        load_config(_write(tmp_path, text))


def test_unknown_llm_setting_and_missing_file_are_one_line_errors(tmp_path, capsys):
    cfg = _write(tmp_path, '[build]\ndesigner = "llm"\n[llm]\nmodle = "x"\n')
    assert main(["build", "--config", str(cfg), "--out", str(tmp_path / "t")]) == 2
    assert main(["build", "--config", str(tmp_path / "nope.toml")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and err[0].startswith("daregen: error: bad --llm-* setting 'modle'")
    assert "does not exist" in err[1]
    assert not (tmp_path / "t").exists()
