"""A build from Kaggle (the real kagglesdk client against the loopback Kaggle API) builds tasks, rejects a
zip-slip archive with a one-line reason and leaks the credentials into no output, log, task or cache."""

from __future__ import annotations

import json
import logging
from pathlib import Path

from tests.sourcing.loopback.kaggle_api import SECRET


def test_build_from_kaggle_builds_tasks_rejects_the_zip_slip_and_leaks_no_credentials(kaggle_env, tmp_path, capfd,
                                                                                       caplog):
    from flows import build_tasks
    from sourcing.registry import open_source

    caplog.set_level(logging.DEBUG)
    open_source.cache_clear()  # adapters are cached per process; this server is new
    out = tmp_path / "tasks"
    try:
        report = build_tasks(out=str(out), seed=5,
                             sources="kaggle:alice/penguins,kaggle:bob/housing,kaggle:mallory/slip")
    finally:
        open_source.cache_clear()
    reasons = {r["ref"]: r["reason"] for r in report["rejections"]}
    assert reasons == {"kaggle/mallory/slip/1":
                       "cannot load: archive refused: member path escapes the folder '../../escaped.txt'"}
    assert report["built"] >= 2, report
    tasks = sorted(report["tasks"])
    assert any(t.startswith("kaggle_alice_penguins") for t in tasks)
    assert any(t.startswith("kaggle_bob_housing") for t in tasks)
    meta_path = next(out.glob("kaggle_alice_penguins*/verify/all_metadata.json"))
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    assert "kaggle/alice/penguins/2" in json.dumps(meta)  # the pinned version is in the build record

    captured = capfd.readouterr()
    texts = {"stdout": captured.out, "stderr": captured.err, "logs": caplog.text}
    for where, text in texts.items():
        assert SECRET not in text, where
    for root in (out, Path(tmp_path / "cache")):
        for path in root.rglob("*"):
            if path.is_file():
                assert SECRET.encode() not in path.read_bytes(), path
