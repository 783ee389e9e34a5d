"""What judging a session in a fresh sandbox costs, against judging it in the session.

One small task (a ``solution.py`` and a unittest file), judged by its test command
``python3 -m unittest test_add`` in turns: in the session (:meth:`SessionManager.run_tests`, the
session's processes stopped, the tests run on its files) and fresh
(:meth:`SessionManager.run_tests_fresh`: the processes stopped, ``solution.py`` copied out, the
tests run in a new sandbox). Fresh twice: with a spare sandbox started ahead (the service's
default, ``sessions.spares``), and with none, where every verification starts its sandbox on the
clock. The session runs one call before each verification, as an agent's last step would, so the
kernel the verification stops is a live one each time. Medians of ``--rounds`` alternating runs,
on one manager in this process (no HTTP: the difference is the sandbox work alone).

    python bench/fresh_verification.py [--rounds 15]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import write_rows  # noqa: E402

from rewardhub.sessions import SessionManager, SessionSettings  # noqa: E402

OWNER = "bench-fresh"
SOLUTION = {"solution.py": "def add(a, b):\n    return a + b\n"}
TESTS = {
    "test_add.py": (
        "import unittest\nfrom solution import add\n\n\nclass TestAdd(unittest.TestCase):\n"
        "    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n"
    )
}
COMMAND = "python3 -m unittest test_add"


def _timed(manager: SessionManager, session: str, fresh: bool) -> float:
    assert manager.run(session, OWNER, {"code": "x = 1"}).verdict == "ok"  # the agent's last call
    started = time.perf_counter()
    if fresh:
        result = manager.run_tests_fresh(session, OWNER, COMMAND, 30.0, TESTS, ["solution.py"])
    else:
        result = manager.run_tests(session, OWNER, COMMAND, 30.0, TESTS)
    elapsed = (time.perf_counter() - started) * 1000.0
    assert result.verdict == "ok", result
    return elapsed


def measure(rounds: int, spares: int) -> dict[str, list[float]]:
    manager = SessionManager(SessionSettings(spares=spares, max_sessions=8))
    times: dict[str, list[float]] = {"in_session": [], "fresh": []}
    try:
        session = manager.create(OWNER, "python", SOLUTION).id
        _timed(manager, session, False)  # warm both paths once, off the clock
        _timed(manager, session, True)
        for _ in range(rounds):
            for mode in ("in_session", "fresh"):
                if spares:  # the spare the last verification took is started again before the next one
                    deadline = time.monotonic() + 10
                    while not manager._spares and time.monotonic() < deadline:
                        time.sleep(0.05)
                times[mode].append(_timed(manager, session, mode == "fresh"))
    finally:
        manager.close()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    rows = []
    with_spare = measure(args.rounds, spares=1)
    without = measure(args.rounds, spares=0)
    in_session = statistics.median(with_spare["in_session"] + without["in_session"])
    for label, times in (("a spare started ahead", with_spare), ("no spare", without)):
        fresh = statistics.median(times["fresh"])
        print(
            f"{label:<24} in_session p50 {statistics.median(times['in_session']):7.1f} ms   fresh p50 {fresh:7.1f} ms"
        )
        rows.append(
            {
                "case": f"judge a session, {COMMAND} ({label})",
                "baseline": "in the session (run_tests)",
                "ours": "in a fresh sandbox (run_tests_fresh)",
                "baseline_value": round(in_session, 1),
                "ours_value": round(fresh, 1),
                "unit": "ms p50",
                "ratio": round(fresh / in_session, 2),
                "note": f"{args.rounds} alternating rounds; fresh costs more: the price of a sandbox the agent never touched",
            }
        )
    path = write_rows("fresh_verification", rows)
    print(f"rows: {path}")


if __name__ == "__main__":
    main()
