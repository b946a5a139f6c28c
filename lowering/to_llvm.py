"""`to-llvm`: arith, math, memref, cf and func -> the llvm dialect (xDSL has no such
conversion; this one covers what the loop-level IR of our pipeline holds).

Memrefs are row-major and contiguous, so a memref is a bare `!llvm.ptr` to its first
element: `memref.load %m[%i, %j]` is a GEP by `i * stride0 + j` and a load,
`memref.reinterpret_cast` is the same pointer. A memref with dynamic dimensions also
carries their sizes as i64 values: a function argument of such a type becomes the pointer
followed by one i64 per dynamic dimension (so does a call's operand, and `@main`'s
signature: the caller passes the sizes), `memref.alloc` and `reinterpret_cast` take them
from their operands, `memref.dim` reads them, and strides are products of them. `index` is i64. `memref.alloc` / `dealloc`
call malloc / free; `memref.global` becomes an `llvm.mlir.global` of a flat array. Math
without an LLVM instruction or intrinsic (erf, tan) calls libm, by the names in relay's
unary table. Every function gets external linkage (xDSL's default is internal) and returns
void: results are out-parameters after bufferize.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects import arith, cf, func, llvm, math, memref
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AnyFloat,
    BytesAttr,
    DenseIntOrFPElementsAttr,
    Float32Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    TensorType,
    UnitAttr,
    f16,
    f32,
    i1,
    i8,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xrelay.dialects import relay
from xrelay.dialects.arith_extras import RemFOp
from xrelay.errors import Error
from xrelay.lowering import llvm_extras

PTR = llvm.LLVMPointerType()


def dynamic_count(t: Attribute) -> int:
    """How many i64 sizes follow a value of type `t` in a signature."""
    return t.get_shape().count(DYNAMIC_INDEX) if isinstance(t, MemRefType) else 0


def expanded_types(types) -> list[Attribute]:
    """Argument types with each memref's dynamic sizes after its pointer."""
    out: list[Attribute] = []
    for t in types:
        out.append(llvm_type(t))
        out += [i64] * dynamic_count(t)
    return out


def llvm_type(t: Attribute) -> Attribute:
    if isinstance(t, IndexType):
        return i64
    if isinstance(t, MemRefType):
        return PTR
    return t


def _suffix(t: Attribute) -> str:
    return "f32" if isinstance(t, Float32Type) else f"f{t.bitwidth}"  # type: ignore[union-attr]


ICMP = {
    "eq": "eq",
    "ne": "ne",
    "slt": "slt",
    "sle": "sle",
    "sgt": "sgt",
    "sge": "sge",
    "ult": "ult",
    "ule": "ule",
    "ugt": "ugt",
    "uge": "uge",
}

INT_BINARY: dict[type[Operation], type[Operation]] = {
    arith.AddiOp: llvm.AddOp,
    arith.SubiOp: llvm.SubOp,
    arith.MuliOp: llvm.MulOp,
    arith.DivSIOp: llvm.SDivOp,
    arith.DivUIOp: llvm.UDivOp,
    arith.RemSIOp: llvm.SRemOp,
    arith.RemUIOp: llvm.URemOp,
    arith.AndIOp: llvm.AndOp,
    arith.OrIOp: llvm.OrOp,
    arith.XOrIOp: llvm.XOrOp,
    arith.ShLIOp: llvm.ShlOp,
    arith.ShRSIOp: llvm.AShrOp,
    arith.ShRUIOp: llvm.LShrOp,
}

FLOAT_BINARY: dict[type[Operation], type[Operation]] = {
    arith.AddfOp: llvm.FAddOp,
    arith.SubfOp: llvm.FSubOp,
    arith.MulfOp: llvm.FMulOp,
    arith.DivfOp: llvm.FDivOp,
    RemFOp: llvm.FRemOp,
}

# (op, intrinsic base name): called as llvm.<base>.<f32|f64>. The typed name matters: xDSL's
# llvm.intr.exp & co. declare an untyped "llvm.exp" once per module, so an f32 and an f64 use
# in one module clashed ("Type of #1 arg mismatch: float != double").
FLOAT_INTRINSICS: dict[type[Operation], str] = {
    math.ExpOp: "exp",
    math.PowFOp: "pow",
    math.LogOp: "log",
    math.SqrtOp: "sqrt",
    math.FloorOp: "floor",
    math.CeilOp: "ceil",
    math.SinOp: "sin",
    math.CosOp: "cos",
    math.AbsFOp: "fabs",
    arith.MaximumfOp: "maximum",
    arith.MinimumfOp: "minimum",
    arith.MaxnumfOp: "maxnum",
    arith.MinnumfOp: "minnum",
    math.RoundEvenOp: "roundeven",
    math.TruncOp: "trunc",
    math.TanhOp: "tanh",
    math.FmaOp: "fma",
}

# math op -> the C functions (for f32, for f64) to call, for the math ops LLVM has no
# instruction or intrinsic for: the rows of relay.UNARY_TABLE name them beside their math op.
LIBM: dict[type[Operation], tuple[str, str]] = {
    row.math: row.libm for row in relay.UNARY_TABLE if row.math is not None and row.libm is not None
}

CASTS = (
    arith.ExtFOp,
    arith.TruncFOp,
    arith.SIToFPOp,
    arith.UIToFPOp,
    arith.FPToSIOp,
    arith.FPToUIOp,
    arith.ExtSIOp,
    arith.ExtUIOp,
    arith.TruncIOp,
)


def strides(shape: tuple[int, ...]) -> list[int]:
    return [int(np.prod(shape[i + 1 :])) for i in range(len(shape))]


class FunctionLowering:
    """Translates one func.func (already in cf form) into an llvm.func."""

    def __init__(self, fn: func.FuncOp, externs: dict[str, llvm.LLVMFunctionType]) -> None:
        self.fn = fn
        self.externs = externs
        self.values: dict[SSAValue, SSAValue] = {}
        # a memref with dynamic dimensions -> the i64 size of each of its dimensions
        self.sizes: dict[SSAValue, list[SSAValue]] = {}
        self.blocks: dict[Block, Block] = {}
        self.cur: Block | None = None
        self.i64_constants: dict[int, SSAValue] = {}

    def v(self, value: SSAValue) -> SSAValue:
        try:
            return self.values[value]
        except KeyError:
            raise Error(
                f"to-llvm: value used before its definition in @{self.fn.sym_name.data}"
            ) from None

    def emit(self, op: Operation) -> SSAValue:
        assert self.cur is not None
        self.cur.add_op(op)
        return op.results[0] if op.results else None  # type: ignore[return-value]

    def i64c(self, value: int) -> SSAValue:
        """An i64 constant, created once per function at the top of its entry block."""
        if value not in self.i64_constants:
            op = llvm.ConstantOp(IntegerAttr(value, i64), i64)
            entry = self.blocks[self.fn.body.blocks.first]  # type: ignore[index]
            if entry.first_op is None:
                entry.add_op(op)
            else:
                entry.insert_op_before(op, entry.first_op)
            self.i64_constants[value] = op.results[0]
        return self.i64_constants[value]

    def extern(self, name: str, args: list[Attribute], result: Attribute | None) -> None:
        self.externs.setdefault(name, llvm.LLVMFunctionType(args, result))

    def run(self) -> llvm.FuncOp:
        for old in self.fn.body.blocks:
            new = Block(arg_types=expanded_types(a.type for a in old.args))
            self.blocks[old] = new
            it = iter(new.args)
            for a in old.args:
                self.values[a] = next(it)
                if dynamic_count(a.type):
                    dynamic = [next(it) for _ in range(dynamic_count(a.type))]
                    self.set_sizes(a, dynamic)
        for old in self.fn.body.blocks:
            self.cur = self.blocks[old]
            for op in old.ops:
                self.convert(op)
        inputs = expanded_types(self.fn.function_type.inputs)
        private = self.fn.sym_visibility is not None and self.fn.sym_visibility.data == "private"
        return llvm.FuncOp(
            self.fn.sym_name.data,
            llvm.LLVMFunctionType(inputs, None),
            linkage=llvm.LinkageAttr("internal" if private else "external"),
            body=Region([self.blocks[b] for b in self.fn.body.blocks]),
        )

    # --- dispatch ------------------------------------------------------------------------

    def convert(self, op: Operation) -> None:
        t = type(op)
        if t in INT_BINARY:
            self.values[op.results[0]] = self.emit(INT_BINARY[t](self.v(op.lhs), self.v(op.rhs)))
        elif t in FLOAT_BINARY:
            self.values[op.results[0]] = self.emit(FLOAT_BINARY[t](self.v(op.lhs), self.v(op.rhs)))
        elif t in FLOAT_INTRINSICS:
            rt = op.results[0].type
            name = f"llvm.{FLOAT_INTRINSICS[t]}.{_suffix(rt)}"
            args = [self.v(o) for o in op.operands]
            self.values[op.results[0]] = self.emit(llvm.CallIntrinsicOp(name, args, [rt]))
        elif t in LIBM:
            rt = op.results[0].type
            name = LIBM[t][0] if isinstance(rt, Float32Type) else LIBM[t][1]
            self.extern(name, [rt], rt)
            self.values[op.results[0]] = self.emit(
                llvm.CallOp(name, self.v(op.operands[0]), return_type=rt)
            )
        elif t in CASTS:
            self.cast(op)
        else:
            handler = HANDLERS.get(t)
            if handler is None:
                raise Error(f"to-llvm: no conversion for '{op.name}'")
            handler(self, op)

    def cast(self, op: Operation) -> None:
        """Casts to or from f16 go through f32: x86 converts f32 <-> f16 in hardware (F16C);
        the other conversions would call compiler-rt routines the JIT cannot resolve."""
        src, dst = op.operands[0].type, op.results[0].type
        unsigned = type(op) in (arith.UIToFPOp, arith.FPToUIOp, arith.ExtUIOp)
        x = self.v(op.operands[0])
        if f16 in (src, dst) and f32 not in (src, dst):
            x = self.convert_scalar(x, src, f32, unsigned)
            src = f32
        self.values[op.results[0]] = self.convert_scalar(x, src, dst, unsigned)

    def convert_scalar(
        self, x: SSAValue, src: Attribute, dst: Attribute, unsigned: bool
    ) -> SSAValue:
        if src == dst:
            return x
        src_float, dst_float = isinstance(src, AnyFloat), isinstance(dst, AnyFloat)
        if src_float and dst_float:
            cls = llvm.FPExtOp if dst.bitwidth > src.bitwidth else llvm.FPTruncOp  # type: ignore[union-attr]
        elif dst_float:
            cls = llvm_extras.UIToFPOp if unsigned else llvm.SIToFPOp
        elif src_float:
            cls = llvm_extras.FPToUIOp if unsigned else llvm_extras.FPToSIOp
        else:
            assert isinstance(src, IntegerType) and isinstance(dst, IntegerType)
            if dst.width.data < src.width.data:
                cls = llvm.TruncOp
            else:
                cls = llvm.ZExtOp if unsigned else llvm.SExtOp
        return self.emit(cls(x, dst))

    # --- individual ops ------------------------------------------------------------------

    def constant(self, op: arith.ConstantOp) -> None:
        value = op.value
        t = llvm_type(op.result.type)
        if t == i64 and isinstance(value, IntegerAttr):
            self.values[op.result] = self.i64c(value.value.data)
            return
        if isinstance(value, IntegerAttr):
            value = IntegerAttr(value.value.data, t)
        elif not isinstance(value, FloatAttr):
            raise Error(f"to-llvm: unsupported constant {value}")
        self.values[op.result] = self.emit(llvm.ConstantOp(value, t))

    def cmpi(self, op: arith.CmpiOp) -> None:
        pred = arith.CMPI_COMPARISON_OPERATIONS[op.predicate.value.data]
        flag = llvm.ICmpPredicateFlag(ICMP[pred])
        self.values[op.result] = self.emit(
            llvm.ICmpOp(self.v(op.lhs), self.v(op.rhs), IntegerAttr(flag.to_int(), i64))
        )

    def cmpf(self, op: arith.CmpfOp) -> None:
        pred = arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data]
        mapped = {"false": "_false", "true": "_true"}.get(pred, pred)
        self.values[op.result] = self.emit(llvm.FCmpOp(self.v(op.lhs), self.v(op.rhs), mapped))

    def select(self, op: arith.SelectOp) -> None:
        self.values[op.result] = self.emit(
            llvm.SelectOp(self.v(op.cond), self.v(op.lhs), self.v(op.rhs))
        )

    def negf(self, op: arith.NegfOp) -> None:
        self.values[op.result] = self.emit(llvm.FNegOp(self.v(op.operand)))

    def same_bits(self, op: arith.BitcastOp) -> None:
        """i8 <-> ui8 and the like are the same value (signless after relay-to-linalg);
        f32 <-> i32 and the like an llvm.bitcast."""
        if llvm_type(op.input.type) == llvm_type(op.result.type):
            self.values[op.result] = self.v(op.input)
        else:
            self.values[op.result] = self.emit(
                llvm.BitcastOp(self.v(op.input), llvm_type(op.result.type))
            )

    def minmax_int(self, op: Operation) -> None:
        pred = {
            arith.MaxSIOp: "sgt",
            arith.MinSIOp: "slt",
            arith.MaxUIOp: "ugt",
            arith.MinUIOp: "ult",
        }[type(op)]
        a, b = self.v(op.lhs), self.v(op.rhs)
        flag = llvm.ICmpPredicateFlag(pred)
        cond = self.emit(llvm.ICmpOp(a, b, IntegerAttr(flag.to_int(), i64)))
        self.values[op.result] = self.emit(llvm.SelectOp(cond, a, b))

    def floordivsi(self, op: arith.FloorDivSIOp) -> None:
        """q = a / b rounded toward -inf: the truncated quotient, minus one when the
        remainder is non-zero and has the other sign than b."""
        a, b = self.v(op.lhs), self.v(op.rhs)
        t = a.type
        q = self.emit(llvm.SDivOp(a, b))
        r = self.emit(llvm.SRemOp(a, b))
        zero = self.emit(llvm.ConstantOp(IntegerAttr(0, t), t))
        one = self.emit(llvm.ConstantOp(IntegerAttr(1, t), t))

        def icmp(x: SSAValue, y: SSAValue, pred: str) -> SSAValue:
            return self.emit(
                llvm.ICmpOp(x, y, IntegerAttr(llvm.ICmpPredicateFlag(pred).to_int(), i64))
            )

        nonzero = icmp(r, zero, "ne")
        signs_differ = icmp(icmp(r, zero, "slt"), icmp(b, zero, "slt"), "ne")
        fix = self.emit(llvm.AndOp(nonzero, signs_differ))
        self.values[op.result] = self.emit(llvm.SelectOp(fix, self.emit(llvm.SubOp(q, one)), q))

    def absi(self, op: math.AbsIOp) -> None:
        x = self.v(op.operand)
        zero = self.emit(llvm.ConstantOp(IntegerAttr(0, x.type), x.type))
        neg = self.emit(llvm.SubOp(zero, x))
        lt = self.emit(
            llvm.ICmpOp(x, zero, IntegerAttr(llvm.ICmpPredicateFlag("slt").to_int(), i64))
        )
        self.values[op.result] = self.emit(llvm.SelectOp(lt, neg, x))

    def rsqrt(self, op: math.RsqrtOp) -> None:
        x = self.v(op.operand)
        one = self.emit(llvm.ConstantOp(FloatAttr(1.0, x.type), x.type))
        root = self.emit(llvm.CallIntrinsicOp(f"llvm.sqrt.{_suffix(x.type)}", [x], [x.type]))
        self.values[op.result] = self.emit(llvm.FDivOp(one, root))

    def index_cast(self, op: arith.IndexCastOp) -> None:
        x = self.v(op.input)
        src, dst = llvm_type(op.input.type), llvm_type(op.result.type)
        assert isinstance(src, IntegerType) and isinstance(dst, IntegerType)
        if src.width.data == dst.width.data:
            self.values[op.result] = x
        elif src.width.data < dst.width.data:
            self.values[op.result] = self.emit(llvm.SExtOp(x, dst))
        else:
            self.values[op.result] = self.emit(llvm.TruncOp(x, dst))

    def set_sizes(self, mref: SSAValue, dynamic: list[SSAValue]) -> None:
        """Record the sizes of a dynamic memref from the values of its dynamic dimensions."""
        it = iter(dynamic)
        shape = mref.type.get_shape()
        self.sizes[mref] = [next(it) if d == DYNAMIC_INDEX else self.i64c(d) for d in shape]

    def dynamic_sizes(self, mref: SSAValue) -> list[SSAValue]:
        shape = mref.type.get_shape()
        return [v for v, d in zip(self.sizes[mref], shape) if d == DYNAMIC_INDEX]

    def strides_of(self, mref: SSAValue) -> list[int | SSAValue]:
        t = mref.type
        if mref not in self.sizes:
            return strides(t.get_shape())  # type: ignore[return-value]
        out: list[int | SSAValue] = []
        acc: int | SSAValue = 1
        for d, size in reversed(list(zip(t.get_shape(), self.sizes[mref]))):
            out.append(acc)
            if isinstance(acc, int) and d != DYNAMIC_INDEX:
                acc *= d
            else:
                acc = self.emit(llvm.MulOp(self.i64c(acc) if isinstance(acc, int) else acc, size))
        return out[::-1]

    def address(self, mref: SSAValue, indices) -> SSAValue:
        t = mref.type
        assert isinstance(t, MemRefType)
        linear = None
        for idx, stride in zip(indices, self.strides_of(mref)):
            term = self.v(idx)
            if not isinstance(stride, int):
                term = self.emit(llvm.MulOp(term, stride))
            elif stride != 1:
                term = self.emit(llvm.MulOp(term, self.i64c(stride)))
            linear = term if linear is None else self.emit(llvm.AddOp(linear, term))
        if linear is None:
            return self.v(mref)
        return self.emit(llvm.GEPOp.from_mixed_indices(self.v(mref), [linear], t.element_type))

    def load(self, op: memref.LoadOp) -> None:
        ptr = self.address(op.memref, op.indices)
        self.values[op.res] = self.emit(llvm.LoadOp(ptr, op.res.type))

    def store(self, op: memref.StoreOp) -> None:
        ptr = self.address(op.memref, op.indices)
        self.emit(llvm.StoreOp(self.v(op.value), ptr))

    def alloc(self, op: memref.AllocOp) -> None:
        t = op.memref.type
        assert isinstance(t, MemRefType)
        self.extern("malloc", [i64], PTR)
        if not op.dynamic_sizes:
            size = max(1, int(np.prod(t.get_shape())) * byte_size(t.element_type))
            self.values[op.memref] = self.emit(
                llvm.CallOp("malloc", self.i64c(size), return_type=PTR)
            )
            return
        self.set_sizes(op.memref, [self.v(v) for v in op.dynamic_sizes])
        static = int(np.prod([d for d in t.get_shape() if d != DYNAMIC_INDEX]))
        total = self.i64c(static * byte_size(t.element_type))
        for v in self.dynamic_sizes(op.memref):
            total = self.emit(llvm.MulOp(total, v))
        # malloc(0) may return null: ask for at least one byte
        one = self.i64c(1)
        flag = llvm.ICmpPredicateFlag("ugt")
        cond = self.emit(llvm.ICmpOp(total, one, IntegerAttr(flag.to_int(), i64)))
        total = self.emit(llvm.SelectOp(cond, total, one))
        self.values[op.memref] = self.emit(llvm.CallOp("malloc", total, return_type=PTR))

    def dim(self, op: memref.DimOp) -> None:
        index = op.index.owner
        if not (isinstance(index, arith.ConstantOp) and isinstance(index.value, IntegerAttr)):
            raise Error("to-llvm: memref.dim with a run-time axis")
        axis = index.value.value.data
        d = op.source.type.get_shape()[axis]
        if d != DYNAMIC_INDEX:
            self.values[op.result] = self.i64c(d)
        else:
            self.values[op.result] = self.sizes[op.source][axis]

    def dealloc(self, op: memref.DeallocOp) -> None:
        self.extern("free", [PTR], None)
        self.emit(llvm.CallOp("free", self.v(op.memref)))

    def get_global(self, op: memref.GetGlobalOp) -> None:
        self.values[op.memref] = self.emit(llvm.AddressOfOp(op.name_.root_reference, PTR))

    def arena_view(self, op: memref.ViewOp) -> None:
        """A buffer at a byte offset of an arena (plan-buffers)."""
        base, shift = self.v(op.source), self.v(op.byte_shift)
        self.values[op.result] = self.emit(llvm.GEPOp.from_mixed_indices(base, [shift], i8))
        if dynamic_count(op.result.type):
            self.set_sizes(op.result, [self.v(v) for v in op.sizes])

    def view(self, op: memref.ReinterpretCastOp) -> None:
        if any(op.static_offsets.iter_values()):
            raise Error("to-llvm: reinterpret_cast with an offset")
        self.values[op.result] = self.v(op.source)
        if dynamic_count(op.result.type):
            self.set_sizes(op.result, [self.v(v) for v in op.sizes])

    def br(self, op: cf.BranchOp) -> None:
        self.emit(llvm.BrOp(self.blocks[op.successor], *[self.v(a) for a in op.arguments]))

    def cond_br(self, op: cf.ConditionalBranchOp) -> None:
        self.emit(
            llvm.CondBrOp(
                self.v(op.cond),
                self.blocks[op.then_block],
                [self.v(a) for a in op.then_arguments],
                self.blocks[op.else_block],
                [self.v(a) for a in op.else_arguments],
            )
        )

    def call(self, op: func.CallOp) -> None:
        if op.results:
            raise Error("to-llvm: calls must return through out-parameters (run bufferize)")
        args = []
        for a in op.arguments:
            args.append(self.v(a))
            if dynamic_count(a.type):
                args += self.dynamic_sizes(a)
        self.emit(llvm.CallOp(op.callee.root_reference.data, *args))

    def ret(self, op: func.ReturnOp) -> None:
        if op.arguments:
            raise Error("to-llvm: functions must return through out-parameters (run bufferize)")
        self.emit(llvm.ReturnOp())


HANDLERS: dict[type[Operation], Callable[[FunctionLowering, Operation], None]] = {
    arith.ConstantOp: FunctionLowering.constant,
    arith.CmpiOp: FunctionLowering.cmpi,
    arith.CmpfOp: FunctionLowering.cmpf,
    arith.SelectOp: FunctionLowering.select,
    arith.NegfOp: FunctionLowering.negf,
    arith.MaxSIOp: FunctionLowering.minmax_int,
    arith.MaxUIOp: FunctionLowering.minmax_int,
    arith.MinUIOp: FunctionLowering.minmax_int,
    arith.BitcastOp: FunctionLowering.same_bits,
    arith.MinSIOp: FunctionLowering.minmax_int,
    arith.MaxUIOp: FunctionLowering.minmax_int,
    arith.MinUIOp: FunctionLowering.minmax_int,
    arith.FloorDivSIOp: FunctionLowering.floordivsi,
    arith.IndexCastOp: FunctionLowering.index_cast,
    math.AbsIOp: FunctionLowering.absi,
    math.RsqrtOp: FunctionLowering.rsqrt,
    memref.LoadOp: FunctionLowering.load,
    memref.StoreOp: FunctionLowering.store,
    memref.AllocOp: FunctionLowering.alloc,
    memref.DeallocOp: FunctionLowering.dealloc,
    memref.GetGlobalOp: FunctionLowering.get_global,
    memref.ReinterpretCastOp: FunctionLowering.view,
    memref.ViewOp: FunctionLowering.arena_view,
    memref.DimOp: FunctionLowering.dim,
    cf.BranchOp: FunctionLowering.br,
    cf.ConditionalBranchOp: FunctionLowering.cond_br,
    func.ReturnOp: FunctionLowering.ret,
    func.CallOp: FunctionLowering.call,
}


def byte_size(elem: Attribute) -> int:
    if elem == i1:
        return 1
    if isinstance(elem, IntegerType):
        return elem.width.data // 8
    assert isinstance(elem, AnyFloat)
    return elem.bitwidth // 8


def lower_global(op: memref.GlobalOp) -> llvm.GlobalOp:
    t = op.type
    assert isinstance(t, MemRefType)
    n = int(np.prod(t.get_shape()))
    value = op.initial_value
    if isinstance(value, UnitAttr):  # uninitialized: an arena the runtime module defines
        return llvm.GlobalOp(
            llvm.LLVMArrayType(n, t.element_type), op.sym_name, "external", alignment=64
        )
    assert isinstance(value, DenseIntOrFPElementsAttr)
    flat = DenseIntOrFPElementsAttr(TensorType(t.element_type, [n]), BytesAttr(value.data.data))
    if len(value) == 1 and n != 1:  # splat
        flat = DenseIntOrFPElementsAttr(
            TensorType(t.element_type, [n]), BytesAttr(value.data.data * n)
        )
    return llvm.GlobalOp(
        llvm.LLVMArrayType(n, t.element_type),
        op.sym_name,
        "internal",
        constant=True,
        value=flat,
        alignment=64,
    )


@dataclass(frozen=True)
class ToLLVM(ModulePass):
    """func/arith/math/memref/cf -> llvm dialect. No options."""

    name = "to-llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        externs: dict[str, llvm.LLVMFunctionType] = {}
        new_ops: list[Operation] = []
        for top in list(op.ops):
            if isinstance(top, memref.GlobalOp):
                new_ops.append(lower_global(top))
            elif isinstance(top, func.FuncOp) and not top.body.blocks:
                # an external function (linked in by build): pointers in, nothing returned
                inputs = expanded_types(top.function_type.inputs)
                externs[top.sym_name.data] = llvm.LLVMFunctionType(inputs, None)
            elif isinstance(top, func.FuncOp):
                new_ops.append(FunctionLowering(top, externs).run())
            else:
                raise Error(f"to-llvm: unexpected top-level op '{top.name}'")
        for name, ftype in externs.items():
            new_ops.append(llvm.FuncOp(name, ftype, linkage=llvm.LinkageAttr("external")))
        for top in list(op.ops):
            top.detach()
            top.erase(safe_erase=False)
        op.body.block.add_ops(new_ops)
