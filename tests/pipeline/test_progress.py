"""Build progress reaches stderr either way: a live bar with done, failed and ETA on a terminal, one plain line
per stage otherwise, counting what entered the stage (datasets, then tasks)."""

from __future__ import annotations

from pipeline.progress import WaveProgress, phase_seconds


def _run(progress: WaveProgress) -> None:
    progress.start("finalize", 3, "task")
    for ok in (True, False, True):
        progress.advance(ok)
    progress.finish()


def test_plain_lines_when_not_a_terminal(capsys):
    _run(WaveProgress(live=False))
    err = capsys.readouterr().err
    assert err.strip() == "finalize         2 of 3 tasks still in"
    assert "rejected" not in err


def test_live_bar_counts_done_and_failed(capsys):
    progress = WaveProgress(live=True)
    _run(progress)
    err = capsys.readouterr().err
    assert "3/3" in err and "rejected 1" in err and "failed" not in err and "ETA" in err
    assert (progress.done, progress.failed) == (3, 1)


def test_one_dataset_is_singular_and_phases_read_as_text(capsys):
    progress = WaveProgress(live=False)
    progress.start("design", 1)
    progress.advance(True)
    progress.finish()
    assert capsys.readouterr().err.strip() == "design           1 of 1 dataset still in"
    assert phase_seconds({"source": 1.234, "guard": 20.0}) == "source 1.2 s, guard 20.0 s"


def test_a_wave_with_nothing_to_run_says_so_instead_of_0_of_0(capsys):
    progress = WaveProgress(live=False)
    progress.start("source", 0)
    progress.finish()
    assert capsys.readouterr().err.strip() == \
        "source           0 to run: every dataset was restored from the cache or rejected before"
