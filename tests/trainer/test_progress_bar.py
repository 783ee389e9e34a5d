"""The terminal view: a live bar on a terminal, a line every N steps elsewhere."""

import io

from rich.console import Console

from rewardhub.trainer.progress import StepReporter, headline

ROW = {"step": 10, "reward/mean": 0.5, "actor/entropy": 1.25, "response/length_mean": 2.0, "time/step_s": 0.2}


def test_headline_shows_the_numbers_to_watch():
    assert headline(ROW) == "step 10: reward 0.500  entropy 1.250  len 2.000  s/step 0.200"


def test_a_log_file_gets_a_line_every_n_steps():
    out = io.StringIO()
    reporter = StepReporter(total=20, console=Console(file=out, force_terminal=False, width=200), every=10)
    for step in range(1, 21):
        reporter.update({**ROW, "step": step})
    reporter.close()
    lines = out.getvalue().splitlines()
    assert [line.split(":")[0] for line in lines] == ["step 10", "step 20"]


def test_a_terminal_gets_a_progress_bar():
    out = io.StringIO()
    reporter = StepReporter(total=20, console=Console(file=out, force_terminal=True, width=200))
    reporter.update(ROW)
    reporter.close()
    assert "rewardhub-train" in out.getvalue() and "10/20" in out.getvalue()


def test_disabled_prints_nothing():
    out = io.StringIO()
    reporter = StepReporter(total=20, enabled=False, console=Console(file=out, force_terminal=True))
    reporter.update(ROW)
    reporter.note("hello")
    reporter.close()
    assert out.getvalue() == ""
