"""Run test items in worker processes, each with a time limit: a crash (abort, segfault)
or a hang is an outcome, not the end of the run. Used by the node conformance runner and
the fuzzing tier.

`run_isolated(items, target, args, jobs, timeout)`: `items` maps a key to a picklable
payload; each worker imports `target` ("package.module:function") once and answers
`function(payload, *args)` -> (outcome, detail) per item. A worker that dies is reported
as ("crash", ...) and one that does not answer in `timeout` seconds as ("timeout", ...);
either is replaced by a fresh worker.
"""

from __future__ import annotations

import importlib
import multiprocessing as mp
import time
from collections.abc import Hashable, Mapping
from typing import Any


def _serve(conn: Any, target: str, args: tuple) -> None:
    module, _, name = target.partition(":")
    handler = getattr(importlib.import_module(module), name)
    conn.send("ready")
    while True:
        item = conn.recv()
        if item is None:
            return
        conn.send(handler(item, *args))


class Worker:
    def __init__(self, target: str, args: tuple) -> None:
        self.target, self.args = target, args
        self.parent, child = mp.Pipe()
        self.process = mp.get_context("spawn").Process(
            target=_serve, args=(child, target, args), daemon=True
        )
        self.process.start()
        self.parent.recv()
        self.key: Hashable | None = None
        self.started = 0.0

    def submit(self, key: Hashable, payload: Any) -> None:
        self.key, self.started = key, time.monotonic()
        self.parent.send(payload)

    def kill(self) -> None:
        self.process.kill()
        self.process.join()


def run_isolated(
    items: Mapping[Hashable, Any], target: str, args: tuple, jobs: int, timeout: float
) -> dict[Hashable, tuple[str, str]]:
    results: dict[Hashable, tuple[str, str]] = {}
    pending = list(reversed(list(items.items())))
    workers = [Worker(target, args) for _ in range(min(jobs, len(items)) or 1)]
    for w in workers:
        if pending:
            w.submit(*pending.pop())
    while any(w.key is not None for w in workers):
        for i, w in enumerate(workers):
            if w.key is None:
                continue
            outcome = None
            if w.parent.poll(0.01):
                try:
                    outcome = w.parent.recv()
                except EOFError:
                    outcome = ("crash", f"worker died (exit code {w.process.exitcode})")
            elif not w.process.is_alive():
                outcome = ("crash", f"worker died (exit code {w.process.exitcode})")
            elif time.monotonic() - w.started > timeout:
                outcome = ("timeout", f"no answer within {timeout:.0f} s")
            if outcome is None:
                continue
            results[w.key] = outcome
            if outcome[0] in ("crash", "timeout"):
                w.kill()
                w = workers[i] = Worker(target, args)
            w.key = None
            if pending:
                w.submit(*pending.pop())
    for w in workers:
        w.parent.send(None)
        w.process.join(timeout=5)
    return results
