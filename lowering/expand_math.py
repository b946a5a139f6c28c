"""`expand-math`: f32 `math.exp`, `math.erf` and `math.tanh` -> arith (polynomials), so
the loops that compute them vectorize. LLVM has no vector form of these: `llvm.exp.f32`
and libm's `erff`/`tanhf` are one scalar call per element, which kept softmax, sigmoid and
GELU loops scalar.

- exp: x = n ln2 + r with n = roundeven(x log2e) and |r| <= ln2/2 (ln2 split in two for an
  exact product), e^r = 1 + r + r^2 c(r) with c of degree 4, times 2^n made from the
  exponent bits. Inputs above 88.72 give +inf, below -87.34 give 0 (e^x is then under the
  smallest normal f32: flushed, as fast exps do); NaN stays NaN. Relative error 1.2e-7.
- erf: x P(x^2) / Q(x^2) on x clamped to [-4, 4] (erf(4) rounds to 1 in f32), P of degree
  6, Q of degree 5. Error 3.6e-7.
- tanh: x P(x^2) / Q(x^2), both of degree 6, on x clamped to [-9, 9]. Error 4.6e-7.

The coefficients are least-squares fits of our own (relative error weighted, computed in
f64 and checked in f32 arithmetic over the whole range): tests/lowering/test_expand_math.py
checks the compiled code against numpy. The polynomials run as fused multiply-adds
(`math.fma`, LLVM's `llvm.fma`). f64 ops keep the libm calls.

    %y = math.exp %x : f32
  becomes
    %c = arith.constant 1.44269502 : f32   ... math.fma / arith.mulf / select ...
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, ModuleOp, f32, i32
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)

EXP_C = (
    0.49999991046224734,
    0.16666542626808872,
    0.04166920796733416,
    0.008366136956865541,
    0.001375297564104535,
)
ERF_P = (
    1.1283791673264016,
    0.18530906582540826,
    0.054290499339884,
    0.003848824183614925,
    0.0003779381178769296,
    4.6368989864453445e-06,
    -1.2958961862422463e-08,
)
ERF_Q = (
    1.0,
    0.49755926811501594,
    0.11396638418932936,
    0.015454461982256577,
    0.0013051905378261796,
    6.266043940608984e-05,
)
TANH_P = (
    0.9999999991851836,
    -0.15887189497392917,
    0.03141585022065163,
    0.007962697731605952,
    0.00022719830135166515,
    1.360030330084468e-06,
    8.744568540226124e-10,
)
TANH_Q = (
    1.0,
    0.17446136013550612,
    -0.04376346543483057,
    0.024081356799084935,
    0.0016354999348881653,
    2.1615176054663014e-05,
    5.1200827256399425e-08,
)
EXP_HI = 88.72283935546875  # above: e^x overflows f32
EXP_LO = -87.33654022216797  # below: e^x is under the smallest normal f32
LOG2E = 1.4426950408889634
LN2_HI = 0.693359375  # ln 2 = LN2_HI + LN2_LO, LN2_HI with few mantissa bits
LN2_LO = -2.12194440e-4


class _Builder:
    """Emits f32 arith before `op`."""

    def __init__(self, rewriter: PatternRewriter) -> None:
        self.rewriter = rewriter

    def emit(self, op: Operation) -> SSAValue:
        self.rewriter.insert(op)
        return op.results[0]

    def c(self, value: float) -> SSAValue:
        return self.emit(arith.ConstantOp(FloatAttr(value, f32)))

    def add(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(arith.AddfOp(a, b))

    def sub(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(arith.SubfOp(a, b))

    def mul(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(arith.MulfOp(a, b))

    def clamp(self, x: SSAValue, lo: float, hi: float) -> SSAValue:
        """maximumf / minimumf against the nonzero bounds as selects of ordered compares:
        the same values (a NaN x fails both compares and stays; with a nonzero bound no
        tie is between -0 and +0), two instructions each on x86 (max, min) instead of
        maximumf's six."""
        assert lo != 0 and hi != 0
        low = self.select(self.cmp("ogt", self.c(lo), x), self.c(lo), x)
        return self.select(self.cmp("olt", self.c(hi), low), self.c(hi), low)

    def horner(self, coefficients: Sequence[float], t: SSAValue) -> SSAValue:
        """The polynomial at `t`, each step one fused multiply-add (LLVM contracts no
        separate multiply and add: no fast-math flags; one instruction instead of two, and
        one rounding)."""
        acc = self.c(coefficients[-1])
        for k in reversed(coefficients[:-1]):
            acc = self.emit(math.FmaOp(acc, t, self.c(k)))
        return acc

    def select(self, cond: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(arith.SelectOp(cond, a, b))

    def cmp(self, predicate: str, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(arith.CmpfOp(a, b, predicate))


def exp(b: _Builder, x: SSAValue) -> SSAValue:
    xc = b.clamp(x, EXP_LO, EXP_HI)
    n = b.emit(math.RoundEvenOp(b.mul(xc, b.c(LOG2E))))  # -126 .. 128
    n = b.select(b.cmp("uno", n, n), b.c(0.0), n)  # no NaN into the integer conversion
    r = b.sub(b.sub(xc, b.mul(n, b.c(LN2_HI))), b.mul(n, b.c(LN2_LO)))
    p = b.add(b.add(b.c(1.0), r), b.mul(b.mul(r, r), b.horner(EXP_C, r)))
    # 2^n as exponent bits, 2^128 as 2^127 * 2 (its bits would be inf)
    top = b.select(b.cmp("olt", b.c(127.0), n), b.c(127.0), n)  # (minimumf: n is no NaN)
    bits = b.emit(arith.FPToSIOp(top, i32))
    bits = b.emit(arith.AddiOp(bits, b.emit(arith.ConstantOp(IntegerAttr(127, i32)))))
    bits = b.emit(arith.ShLIOp(bits, b.emit(arith.ConstantOp(IntegerAttr(23, i32)))))
    y = b.mul(p, b.emit(arith.BitcastOp(bits, f32)))
    y = b.mul(y, b.select(b.cmp("ogt", n, b.c(127.0)), b.c(2.0), b.c(1.0)))
    y = b.select(b.cmp("ogt", x, b.c(EXP_HI)), b.c(float("inf")), y)
    return b.select(b.cmp("olt", x, b.c(EXP_LO)), b.c(0.0), y)


def _odd_rational(b: _Builder, x: SSAValue, bound: float, p: Sequence[float], q: Sequence[float]):
    xc = b.clamp(x, -bound, bound)
    t = b.mul(xc, xc)
    return b.emit(arith.DivfOp(b.mul(xc, b.horner(p, t)), b.horner(q, t)))


def erf(b: _Builder, x: SSAValue) -> SSAValue:
    return _odd_rational(b, x, 4.0, ERF_P, ERF_Q)


def tanh(b: _Builder, x: SSAValue) -> SSAValue:
    return _odd_rational(b, x, 9.0, TANH_P, TANH_Q)


EXPANSIONS = {math.ExpOp: exp, math.ErfOp: erf, math.TanhOp: tanh}


class _Expand(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        expand = EXPANSIONS.get(type(op))
        if expand is None or op.results[0].type != f32:
            return
        result = expand(_Builder(rewriter), op.operands[0])
        rewriter.replace(op, [], [result])


@dataclass(frozen=True)
class ExpandMath(ModulePass):
    """f32 exp, erf and tanh -> arith polynomials (vectorizable; no libm calls)."""

    name = "expand-math"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(_Expand(), apply_recursively=False).rewrite_module(op)
