"""bench/run.py waits for the machine's fast state before timing a model (the slow state,
CPUs on different dies, lasts seconds to minutes): how long, and that it gives up."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import SimpleNamespace

import pytest
from xrelay.tools import timing

RUN = Path(__file__).resolve().parents[2] / "bench" / "run.py"


@pytest.fixture
def run(monkeypatch):
    spec = importlib.util.spec_from_file_location("bench_run", RUN)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    clock = [0.0]  # the script's own clock (the process's time module left alone)
    fake = SimpleNamespace(
        monotonic=lambda: clock[0], sleep=lambda s: clock.__setitem__(0, clock[0] + s)
    )
    monkeypatch.setattr(module, "time", fake)
    return module


def test_waits_until_a_round_trip_is_near_the_best(run, monkeypatch):
    trips = iter([500.0, 480.0, 450.0, 140.0, 500.0])
    monkeypatch.setattr(timing, "round_trip_ns", lambda: next(trips))
    assert run.wait_for_fast_state(100.0, 60.0) == 3.0  # three slow trips, a second each


def test_does_not_wait_in_the_fast_state(run, monkeypatch):
    monkeypatch.setattr(timing, "round_trip_ns", lambda: 120.0)
    assert run.wait_for_fast_state(100.0, 60.0) == 0.0


def test_gives_up_after_the_limit(run, monkeypatch):
    monkeypatch.setattr(timing, "round_trip_ns", lambda: 900.0)
    assert run.wait_for_fast_state(100.0, 5.0) == 5.0


def _result(kept: int, rounds: int, ms: float) -> dict:
    """What measure() returns, as far as the retries read it."""
    stats = {"kept": kept, "rounds": rounds, "all_rounds": kept == 0, "best_round_trip_ns": 150.0}
    return {"rounds": stats, "xrelay_ms": ms}


def test_measures_again_while_every_round_was_slow(run, monkeypatch):
    monkeypatch.setattr(timing, "round_trip_ns", lambda: 120.0)
    results = iter([_result(0, 21, 6.0), _result(4, 5, 4.0)])
    seen = []

    def once(best):
        seen.append(best)
        return next(results)

    r, waited, attempts = run.measure_with_retries(once, 200.0, 60.0, 2)
    assert (r["xrelay_ms"], attempts, waited) == (4.0, 2, 0.0)
    assert seen == [200.0, 150.0]  # the second against the best round trip the first saw


def test_keeps_the_attempt_with_fast_rounds_not_the_fastest(run, monkeypatch):
    monkeypatch.setattr(timing, "round_trip_ns", lambda: 120.0)
    results = iter([_result(0, 20, 3.0), _result(0, 20, 3.5), _result(0, 20, 5.0)])
    r, _, attempts = run.measure_with_retries(lambda best: next(results), 150.0, 60.0, 2)
    assert (attempts, r["xrelay_ms"]) == (3, 5.0)  # all slow: the latest, not the fastest


def test_no_retry_when_rounds_were_kept_or_it_failed(run, monkeypatch):
    monkeypatch.setattr(timing, "round_trip_ns", lambda: 120.0)
    calls = []
    r, _, attempts = run.measure_with_retries(
        lambda best: calls.append(best) or _result(3, 7, 4.0), 150.0, 60.0, 2
    )
    assert (attempts, len(calls)) == (1, 1)
    r, _, attempts = run.measure_with_retries(lambda best: {"error": "boom"}, 150.0, 60.0, 2)
    assert (r, attempts) == ({"error": "boom"}, 1)
