"""The Kaggle adapter, through the real kagglesdk client against a loopback Kaggle API, pins versions,
retries transient faults, rejects unsafe or broken downloads with a one-line reason, and never leaks credentials."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.sourcing.loopback.kaggle_api import kaggle_server


def test_search_lists_pinned_refs_and_judges_every_filter(kaggle_env):
    from sourcing.kaggle_source import KaggleSource

    source = KaggleSource("search=penguins?min_usability=0.5&keywords=fixture")
    verdicts = {v.ref: v for v in source.preview()}
    assert set(verdicts) == {"kaggle/alice/penguins/2", "kaggle/carol/broken/3", "kaggle/dave/gpl-penguins/1",
                             "kaggle/mallory/slip/1"}
    gpl = verdicts["kaggle/dave/gpl-penguins/1"]
    assert not gpl.ok and gpl.verdicts["licence"] == "fail: gpl not in the allow-list"
    assert verdicts["kaggle/alice/penguins/2"].verdicts == {"licence": "pass", "keywords": "pass", "usability": "pass"}
    assert source.candidates() == ["kaggle/alice/penguins/2", "kaggle/carol/broken/3", "kaggle/mallory/slip/1"]
    assert KaggleSource("search=penguins?quota=1").candidates() == ["kaggle/alice/penguins/2"]
    assert all(authed for *_, authed in kaggle_env.log), "the client must send the credentials"


def test_record_carries_metadata_and_version_and_a_rebuild_reads_the_cache(kaggle_env):
    from sourcing.kaggle_source import KaggleSource

    source = KaggleSource("alice/penguins")
    assert source.candidates() == ["kaggle/alice/penguins/2"]  # the current version, pinned
    record = source.record("kaggle/alice/penguins/2")
    assert (record.version, record.license, record.owner, record.usability_rating) == ("2", "CC0: Public Domain",
                                                                                       "Alice", 0.9)
    # the metadata's own column entry wins; the description's features table fills a column it lacks
    assert record.column_descriptions["bill_length_mm"] == "Bill length in millimetres."
    assert record.column_descriptions["flipper_length_mm"] == "Flipper length in millimetres"
    assert "body_mass_g" not in record.column_descriptions  # no such column in the table
    assert record.tags == ("animals", "biology") and record.last_updated == "2024-03-01"
    assert record.slug == "kaggle_alice_penguins" and record.subtitle.startswith("Palmer Penguins Lite")
    table = source.load_table("kaggle/alice/penguins/2")
    assert table.shape == (150, 5) and "species" in table.columns  # the csv, not the README, is the table
    downloads = kaggle_env.hits("blob alice/penguins")
    again = KaggleSource("alice/penguins/2")
    assert again.load_table("kaggle/alice/penguins/2").equals(table)
    assert kaggle_env.hits("blob alice/penguins") == downloads == 1  # same bytes from the sha256 cache


def test_429_500_timeout_and_truncation_are_retried(kaggle_env):
    from sourcing.kaggle_source import KaggleSource

    kaggle_env.inject("GetDataset bob/housing", "429", "500", "timeout")
    kaggle_env.inject("blob bob/housing", "truncate", "500")
    source = KaggleSource("bob/housing")
    ref = source.candidates()[0]
    assert ref == "kaggle/bob/housing/1"
    assert kaggle_env.hits("GetDataset bob/housing") == 4
    assert source.record(ref).license == "CC BY-SA 4.0"
    assert source.load_table(ref).shape == (160, 5)
    assert kaggle_env.hits("blob bob/housing") == 3


def test_persistent_errors_become_one_line_reasons(kaggle_env):
    from sourcing.kaggle_source import KaggleSource

    kaggle_env.inject("GetDataset bob/housing", *["500"] * 6)
    with pytest.raises(ValueError, match=r"^kaggle GetDataset bob/housing failed after 4 attempts: HTTP 500$"):
        KaggleSource("bob/housing").candidates()
    with pytest.raises(ValueError, match=r"HTTP 404$"):
        KaggleSource("nobody/nothing").candidates()  # a 404 is not retried
    assert kaggle_env.hits("GetDataset ?") == 1


@pytest.mark.parametrize("name, reason", [
    ("mallory/slip", r"^archive refused: member path escapes the folder '\.\./\.\./escaped\.txt'$"),
    ("carol/broken", r"^download failed after 3 attempts: corrupted zip \("),
    ("dave/gpl-penguins", r"^filtered out: licence gpl not in the allow-list$"),
])
def test_unsafe_broken_or_filtered_downloads_are_refused(kaggle_env, tmp_path, name, reason):
    from sourcing.kaggle_source import KaggleSource

    source = KaggleSource(name)
    ref = source.candidates()[0]
    with pytest.raises(ValueError, match=reason):
        source.record(ref)
        source.load_table(ref)
    assert not list(tmp_path.rglob("escaped.txt"))
    if name == "carol/broken":
        assert kaggle_env.hits("blob carol/broken") == 3  # re-fetched, bounded


def test_kaggle_calls_are_limited_to_the_semaphore(kaggle_env, monkeypatch):
    import threading

    from sourcing.kaggle_source import KaggleSource

    monkeypatch.setenv("DAREGEN_KAGGLE_TIMEOUT_S", "30")
    kaggle_env.stall_s = 0.3
    kaggle_env.inject("GetDataset alice/penguins", *["slow"] * 6)
    results: list[list[str]] = []
    threads = [threading.Thread(target=lambda: results.append(KaggleSource("alice/penguins").candidates()))
               for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [["kaggle/alice/penguins/2"]] * 6
    assert 1 <= kaggle_env.max_inflight <= 2  # DAREGEN_KAGGLE_CONCURRENCY's default


def test_the_adapter_never_imports_the_kaggle_package_and_frees_the_port():
    import socket
    import subprocess
    import sys

    code = ("import sys, sourcing.kaggle_source as k; k.KaggleSource('alice/penguins'); "
            "print('kaggle' in sys.modules, 'kagglesdk' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[2]).stdout.split()
    assert out == ["False", "False"]  # `import kaggle` would authenticate; kagglesdk loads on first call
    with kaggle_server():
        pass
    with socket.socket() as probe:  # the loopback server released kagglesdk's fixed port
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        probe.bind(("127.0.0.1", 7777))
