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
