"""The rewrite driver: callbacks pairing a pattern with a rewrite, applied to a fixpoint
(TVM's DFPatternCallback / rewrite).

    class FuseScale(PatternCallback):
        def __init__(self):
            self.x, self.a, self.b = wildcard(), is_constant(), is_constant()
            self.pattern = is_op("multiply")(is_op("multiply")(self.x, self.a), self.b)

        def callback(self, pre, post, node_map):
            scale = self.emit(relay.MultiplyOp(node_map[self.a][0], node_map[self.b][0]))
            return self.emit(relay.MultiplyOp(node_map[self.x][0], scale))

    rewrite([FuseScale()], module)

`callback(pre, post, node_map)` gets the matched value (pre and post are the same value:
rewrites apply in place), the bindings as {pattern: [value]}, and returns the replacement
or None to leave the match alone. `self.emit(op)` inserts a new op before the matched one
and returns its result. Relay ops left without users are erased.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter
from xrelay.dialects.relay.base import RelayOp
from xrelay.errors import Error
from xrelay.ir import location_str
from xrelay.transforms.pattern.patterns import Pattern, PatternError

MAX_ROUNDS = 100


class PatternCallback:
    """Subclass with a `pattern` attribute and a `callback` method."""

    pattern: Pattern
    _anchor: Operation | None = None

    def callback(
        self, pre: SSAValue, post: SSAValue, node_map: dict[Pattern, list[SSAValue]]
    ) -> SSAValue | None:
        raise NotImplementedError

    def emit(self, op: Operation) -> Any:
        if self._anchor is None:
            raise Error("PatternCallback.emit is only valid inside callback()")
        op.location = self._anchor.location
        Rewriter.insert_op(op, InsertPoint.before(self._anchor))
        return op.results[0] if len(op.results) == 1 else op


def _erase_dead(module: ModuleOp) -> None:
    """Erase relay ops without users; walking backwards erases whole dead chains at once."""
    for op in reversed(list(module.walk())):
        if isinstance(op, RelayOp) and not any(r.uses for r in op.results):
            Rewriter.erase_op(op)


def rewrite(callbacks: Sequence[PatternCallback], module: ModuleOp) -> ModuleOp:
    """Apply the callbacks until none changes anything; returns the module (changed in place)."""
    for cb in callbacks:
        if not isinstance(getattr(cb, "pattern", None), Pattern):
            raise PatternError(f"{type(cb).__name__} has no `pattern` attribute holding a Pattern")
    for _ in range(MAX_ROUNDS):
        changed = _one_round(callbacks, module)
        _erase_dead(module)
        if not changed:
            return module
    raise Error(f"pattern rewriting did not reach a fixpoint in {MAX_ROUNDS} rounds")


def _one_round(callbacks: Sequence[PatternCallback], module: ModuleOp) -> bool:
    changed = False
    for op in list(module.walk()):
        if op.parent is None:  # erased by an earlier rewrite in this round
            continue
        for result in list(op.results):
            for cb in callbacks:
                m = cb.pattern.match(result)
                if m is None:
                    continue
                cb._anchor = op
                try:
                    new = cb.callback(result, result, m.node_map())
                except Error:
                    raise
                except Exception as e:  # a callback bug must still name the site
                    raise Error(
                        f"{location_str(op)}: {type(cb).__name__}.callback failed: "
                        f"{type(e).__name__}: {e}"
                    ) from e
                finally:
                    cb._anchor = None
                if new is None or new is result:
                    continue
                if new.type != result.type:
                    raise Error(f"{type(cb).__name__} replaced a {result.type} by a {new.type}")
                result.replace_all_uses_with(new)
                changed = True
                break
    return changed
