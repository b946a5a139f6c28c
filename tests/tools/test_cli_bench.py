"""`xrelay bench` and the timing helpers it shares with bench/run.py (what they print and
refuse; no timing is asserted)."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import xrelay
from xrelay.tools.timing import alternate, peak_gflops

EXAMPLE = Path(xrelay.__file__).parent / "examples" / "cnn.onnx"


def cli(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "xrelay.tools.cli", *argv],
        check=False, capture_output=True, text=True,
        env={**os.environ, "XRELAY_CACHE_DIR": "off"},
    )  # fmt: skip


def test_bench_prints_both_systems_and_the_ratio():
    done = cli("bench", str(EXAMPLE), "--runs", "3", "--seconds", "0")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["system", "median", "ms", "min", "ms", "runs"]
    assert lines[1].startswith("xrelay") and lines[2].startswith("onnxruntime")
    assert lines[3].startswith("ratio xrelay/onnxruntime:")


def test_bench_refuses_bad_counts():
    done = cli("bench", str(EXAMPLE), "--runs", "0")
    assert done.returncode == 1 and "--runs takes a positive count" in done.stderr


def test_alternate_gives_every_system_its_runs():
    calls = {"a": lambda: None, "b": lambda: sum(range(100))}
    times = alternate(calls, runs=4, seconds=0.0, settle=0.0)
    assert set(times) == {"a", "b"} and all(len(t) >= 4 for t in times.values())


def test_peak_is_measured():
    peak = peak_gflops(1, seconds=0.05)
    assert math.isfinite(peak) and peak > 0


def test_alternate_keeps_only_rounds_in_the_best_state(monkeypatch):
    """Rounds whose cache-line round trip (before or after) is over twice the best are
    dropped: the machine's CPUs were on two dies then, every system slower."""
    from xrelay.tools import timing

    trips = iter([100.0, 100.0, 500.0, 500.0] + [100.0] * 100)
    monkeypatch.setattr(timing, "round_trip_ns", lambda: next(trips))
    monkeypatch.setattr(timing, "_round_trip_kernel", lambda: object())
    runs = iter(range(1000))
    calls = {"a": lambda: next(runs), "b": lambda: None}
    stats: dict = {}
    times = timing.alternate(calls, runs=6, seconds=0.0, settle=0.0, stats=stats)
    assert stats["rounds"] == 3 and stats["kept"] == 2 and not stats["all_rounds"]
    assert stats["best_round_trip_ns"] == 100.0
    assert all(len(t) == 6 for t in times.values())  # two kept rounds of three runs


def test_alternate_counts_every_round_when_the_best_state_never_comes(monkeypatch):
    from xrelay.tools import timing

    monkeypatch.setattr(timing, "round_trip_ns", lambda: 500.0)
    monkeypatch.setattr(timing, "_round_trip_kernel", lambda: object())
    stats: dict = {}
    times = timing.alternate(
        {"a": lambda: None}, runs=3, seconds=0.0, settle=0.0, stats=stats, best_round_trip=100.0
    )
    assert stats["all_rounds"] and stats["kept"] == stats["rounds"] == 20
    assert len(times["a"]) == 60


def test_round_trip_is_measured():
    from xrelay.tools.timing import round_trip_ns

    assert round_trip_ns(200) > 0


def test_bench_says_when_rounds_were_dropped(monkeypatch, capsys):
    """`xrelay bench` prints how many rounds the machine's slow state cost."""
    from xrelay.tools import cli as cli_module
    from xrelay.tools import timing

    trips = iter([100.0, 100.0, 500.0, 500.0] + [100.0] * 100)
    monkeypatch.setattr(timing, "round_trip_ns", lambda: next(trips))
    monkeypatch.setattr(timing, "_round_trip_kernel", lambda: object())
    cli_module.main(["bench", str(EXAMPLE), "--runs", "6", "--seconds", "0", "--compare", "none"])
    out = capsys.readouterr().out
    assert "rounds: 3 run, 2 kept (the rest in a slow state)" in out
