"""The dialects of xrelay: relay, qnn and kernel (attributes of runtime kernels).

`DIALECTS` maps each dialect's name to a factory that imports it on first use, the form
xDSL's `Context.register_dialect` and `Universe` take (so loading the table, as `xdsl-opt`
does at start through the universe, imports no dialect).
"""

from collections.abc import Callable

from xdsl.ir import Dialect


def _relay() -> Dialect:
    from xrelay.dialects.relay import Relay

    return Relay


def _qnn() -> Dialect:
    from xrelay.dialects.qnn import Qnn

    return Qnn


def _kernel() -> Dialect:
    from xrelay.dialects.kernel import Kernel

    return Kernel


DIALECTS: dict[str, Callable[[], Dialect]] = {"relay": _relay, "qnn": _qnn, "kernel": _kernel}
