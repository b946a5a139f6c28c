"""A small writer of textual LLVM IR for the runtime kernels.

Mutable variables live in allocas (`var`/`get`/`set`); LLVM's SROA turns them into SSA
values at O3, so loops are written as structured code:

    w = Writer()
    with w.function("void", "@f", [("i64", "%n"), ("ptr", "%p")]):
        with w.loop("i", "0", "%n") as i:
            ...
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from contextlib import contextmanager


class Writer:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self._ids = itertools.count()
        self._allocas: list[str] = []

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"

    def fresh(self, stem: str = "t") -> str:
        return f"%{stem}.{next(self._ids)}"

    def label(self, stem: str) -> str:
        return f"{stem}.{next(self._ids)}"

    def op(self, text: str, stem: str = "t") -> str:
        """Emit `%x = text`, return %x."""
        name = self.fresh(stem)
        self.lines.append(f"  {name} = {text}")
        return name

    def do(self, text: str) -> None:
        self.lines.append(f"  {text}")

    def block(self, label: str) -> None:
        self.lines.append(f"{label}:")

    def br(self, label: str) -> None:
        self.do(f"br label %{label}")

    @contextmanager
    def function(
        self, ret: str, name: str, params: list[tuple[str, str]], linkage: str = "internal"
    ) -> Iterator[None]:
        args = ", ".join(f"{t} {n}" for t, n in params)
        self.lines.append(f"define {linkage} {ret} {name}({args}) nounwind {{")
        self.lines.append("entry:")
        start = len(self.lines)
        self._allocas = []
        yield
        self.lines.append(f"  ret {ret}" if ret == "void" else "")
        self.lines.append("}")
        self.lines[start:start] = self._allocas  # allocas first, in the entry block

    # --- variables ----------------------------------------------------------------------

    def var(self, ty: str, init: str, stem: str = "v") -> tuple[str, str]:
        slot = self.alloca(ty, stem + ".slot")
        self.do(f"store {ty} {init}, ptr {slot}")
        return slot, ty

    def alloca(self, ty: str, stem: str = "slot") -> str:
        """A stack slot of type `ty`, allocated once in the entry block, 64-byte aligned:
        a <16 x i32> slot's loads and stores assume its natural alignment of 64 (32 let
        unoptimized code, where the slot stays in memory, fault on aligned moves)."""
        slot = self.fresh(stem)
        self._allocas.append(f"  {slot} = alloca {ty}, align 64")
        return slot

    def get(self, v: tuple[str, str]) -> str:
        slot, ty = v
        return self.op(f"load {ty}, ptr {slot}")

    def set(self, v: tuple[str, str], value: str) -> None:
        slot, ty = v
        self.do(f"store {ty} {value}, ptr {slot}")

    # --- arithmetic on i64 --------------------------------------------------------------

    def add(self, a: str, b: str) -> str:
        return self.op(f"add i64 {a}, {b}")

    def sub(self, a: str, b: str) -> str:
        return self.op(f"sub i64 {a}, {b}")

    def mul(self, a: str, b: str) -> str:
        return self.op(f"mul i64 {a}, {b}")

    def min(self, a: str, b: str) -> str:
        return self.op(f"call i64 @llvm.smin.i64(i64 {a}, i64 {b})")

    def lt(self, a: str, b: str) -> str:
        return self.op(f"icmp slt i64 {a}, {b}")

    def gep(self, ptr: str, index: str, elem: str = "float") -> str:
        return self.op(f"getelementptr {elem}, ptr {ptr}, i64 {index}", "p")

    # --- control flow -------------------------------------------------------------------

    @contextmanager
    def loop(self, stem: str, lo: str, hi: str, step: str = "1") -> Iterator[str]:
        """for (i = lo; i < hi; i += step); yields the loaded induction value."""
        counter = self.var("i64", lo, stem)
        head, body, done = (
            self.label(stem + ".head"),
            self.label(stem + ".body"),
            self.label(stem + ".done"),
        )
        self.br(head)
        self.block(head)
        i = self.get(counter)
        self.do(f"br i1 {self.lt(i, hi)}, label %{body}, label %{done}")
        self.block(body)
        yield i
        self.set(counter, self.add(i, step))
        self.br(head)
        self.block(done)

    @contextmanager
    def if_(self, cond: str, stem: str = "if") -> Iterator[None]:
        then, join = self.label(stem + ".then"), self.label(stem + ".join")
        self.do(f"br i1 {cond}, label %{then}, label %{join}")
        self.block(then)
        yield
        self.br(join)
        self.block(join)

    def if_else(self, cond: str, stem: str = "if") -> tuple[str, str, str]:
        """Labels (then, else, join) after branching on cond; the caller emits the blocks."""
        then, other, join = (self.label(stem + s) for s in (".then", ".else", ".join"))
        self.do(f"br i1 {cond}, label %{then}, label %{other}")
        return then, other, join


def concat(w: Writer, parts: list[str], n: int, elem: str) -> str:
    """The vectors `parts` (2 or 4, each <n x elem>) one after another."""
    while len(parts) > 1:
        t = f"<{n} x {elem}>"
        mask = ", ".join(f"i32 {i}" for i in range(2 * n))
        parts = [
            w.op(f"shufflevector {t} {a}, {t} {b}, <{2 * n} x i32> <{mask}>")
            for a, b in zip(parts[::2], parts[1::2])
        ]
        n *= 2
    return parts[0]


def iota(n: int) -> str:
    """The constant <n x i32> 0, 1, ..., n - 1 (without its type)."""
    return "<" + ", ".join(f"i32 {i}" for i in range(n)) + ">"


def splat(w: Writer, value: str, n: int, elem: str) -> str:
    """<n x elem> with every lane `value`."""
    one = w.op(f"insertelement <{n} x {elem}> poison, {elem} {value}, i64 0")
    return w.op(
        f"shufflevector <{n} x {elem}> {one}, <{n} x {elem}> poison, <{n} x i32> zeroinitializer"
    )


def floor(w: Writer, ty: str, x: str, lo: str, zero: str) -> str:
    """llvm.maximum(x, lo) (`ty`: float or a vector of floats) for a floor `lo` that is no
    NaN (relu's 0, or -inf for none) in two instructions instead of maximum's six: the
    ordered select, x86's max (a NaN x or a tie gives x), then + `zero`, +0.0 where lo is
    +0.0 (a tie of -0 with +0 becomes +0: maximum orders -0 below +0) and -0.0 otherwise
    (x + -0.0 is x for every x, -0 and NaN included). `floor_zero` gives `zero` for a
    run-time floor."""
    cond = "i1" if ty == "float" else ty.replace("float", "i1")
    above = w.op(f"fcmp ogt {ty} {lo}, {x}")
    return w.op(f"fadd {ty} {w.op(f'select {cond} {above}, {ty} {lo}, {ty} {x}')}, {zero}")


def floor_zero(w: Writer, lo: str) -> str:
    """The float `floor` adds for the run-time floor `lo`: +0.0 if lo is +0.0, else -0.0."""
    positive_zero = w.op(f"icmp eq i32 {w.op(f'bitcast float {lo} to i32')}, 0")
    return w.op(f"select i1 {positive_zero}, float 0.0, float -0.0")


def lane_range(w: Writer, lo: str, hi: str, n: int) -> str:
    """The <n x i1> mask of lanes [max(lo, 0), min(hi, n)) (lo, hi: i64; n <= 32), made
    from scalar bits (cheaper than comparing an iota vector)."""
    lo = w.min(w.op(f"call i64 @llvm.smax.i64(i64 {lo}, i64 0)"), str(n))
    hi = w.min(w.op(f"call i64 @llvm.smax.i64(i64 {hi}, i64 0)"), str(n))
    below_hi = w.sub(w.op(f"shl i64 1, {hi}"), "1")
    below_lo = w.sub(w.op(f"shl i64 1, {lo}"), "1")
    m = w.op(f"and i64 {below_hi}, {w.op(f'xor i64 {below_lo}, -1')}")
    return w.op(f"bitcast i{n} {w.op(f'trunc i64 {m} to i{n}')} to <{n} x i1>")


def first_lanes(w: Writer, count: str, n: int) -> str:
    """The <n x i1> mask of lanes below `count` (an i64: none when negative, all from n)."""
    bound = w.op(f"trunc i64 {w.min(count, str(n))} to i32")
    return w.op(f"icmp slt <{n} x i32> {iota(n)}, {splat(w, bound, n, 'i32')}")


def copy_values(w: Writer, src: str, dst: str, count: str, n: int, elem: str = "float") -> None:
    """dst[0, count) = src[0, count) (`elem`: float or i8), n at a time, the last vector
    masked: rows of a few vectors, too short for a call to memcpy each (SqueezeNet's 16 ->
    64 3 x 3 on 55 x 55 spent 8% of its time in memcpy for its 912 rows)."""
    suffix, align = {"float": ("f32", 4), "i8": ("i8", 1)}[elem]
    v, m = f"<{n} x {elem}>", f"<{n} x i1>"
    with w.loop("q", "0", count, str(n)) as q:
        keep = first_lanes(w, w.sub(count, q), n)
        x = w.op(
            f"call {v} @llvm.masked.load.v{n}{suffix}.p0(ptr {w.gep(src, q, elem)}, i32 {align}, {m} {keep}, {v} zeroinitializer)"
        )
        w.do(
            f"call void @llvm.masked.store.v{n}{suffix}.p0({v} {x}, ptr {w.gep(dst, q, elem)}, i32 {align}, {m} {keep})"
        )
