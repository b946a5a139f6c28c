"""`bufferize`: linalg on tensors -> linalg on memrefs, in destination-passing style.

xDSL has no one-shot bufferization; this pass handles exactly what relay-to-linalg emits:
- each `tensor.empty` becomes a `memref.alloc`, freed before the function returns;
- `linalg.generic` / `linalg.fill` / `linalg.matmul` write into their `outs` buffers;
- `tensor.extract` in a body becomes `memref.load`;
- `tensor.reshape` becomes a `memref.reinterpret_cast` view (row-major, no copy);
- constant tensors become private `memref.global`s read by `memref.get_global`;
- function results become trailing out-parameters (`xrelay.output = k`) that the caller
  allocates; the returned values are copied into them.

Every tensor value is produced once and never written after it is produced (each `outs`
operand is a fresh buffer), so one allocation per value is always correct.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects import arith, func, memref, tensor
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    FunctionType,
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
    TensorType,
    UnitAttr,
    i64,
)
from xdsl.dialects.linalg import attrs as linalg_attrs
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xrelay.dialects import dims as dimexpr
from xrelay.dialects.tensor_extras import ReshapeOp as DynamicReshapeOp
from xrelay.errors import Error
from xrelay.lowering.dynamic_sizes import SymbolSizes
from xrelay.lowering.relay_to_linalg.builder import amap, dims
from xrelay.lowering.relay_to_linalg.tensor import CONCAT_ATTR

OUTPUT_ATTR = "xrelay.output"


def memref_of(t: Attribute) -> Attribute:
    if isinstance(t, TensorType):
        return MemRefType(t.element_type, t.get_shape())
    return t


DIMS_ATTR = "xrelay.dims"  # on an alloc of dynamic size: its dimensions' expressions


def mark_dims(alloc: memref.AllocOp, t: TensorType) -> None:
    """Keep the expressions of a dynamic tensor's dimensions on its allocation (the
    memref type has no place for them): plan-buffers sizes the buffer from them."""
    if isinstance(t.encoding, dimexpr.DimsAttr):
        alloc.attributes[DIMS_ATTR] = t.encoding


class FunctionBufferizer:
    def __init__(self, module: ModuleOp, fn: func.FuncOp) -> None:
        self.module = module
        self.fn = fn
        self.block = fn.body.block
        self.buffers: dict[SSAValue, SSAValue] = {}
        self.allocs: list[SSAValue] = []
        self.rewriter = Rewriter()
        self.globals = sum(isinstance(op, memref.GlobalOp) for op in module.ops)
        self.sizes: SymbolSizes | None = None  # run-time sizes, made on first need

    def buffer(self, value: SSAValue, before: Operation) -> SSAValue:
        """The memref holding a tensor value (constants materialize on first use)."""
        if value in self.buffers:
            return self.buffers[value]
        owner = value.owner
        if isinstance(owner, arith.ConstantOp) and isinstance(
            owner.value, DenseIntOrFPElementsAttr
        ):
            buf = self._global(owner.value, before)
            self.buffers[value] = buf
            return buf
        raise Error(
            f"bufferize: no buffer for a value produced by '{getattr(owner, 'name', owner)}'"
        )

    def _global(self, value: DenseIntOrFPElementsAttr, before: Operation) -> SSAValue:
        name = f"__constant_{self.globals}"
        self.globals += 1
        mtype = memref_of(value.type)
        self.module.body.block.insert_op_before(
            memref.GlobalOp.get(StringAttr(name), mtype, value, constant=UnitAttr(), alignment=64),
            self.fn,
        )
        op = memref.GetGlobalOp(name, mtype)
        self.rewriter.insert_op(op, InsertPoint.before(before))
        return op.results[0]

    def insert(self, op: Operation, before: Operation) -> SSAValue | None:
        self.rewriter.insert_op(op, InsertPoint.before(before))
        return op.results[0] if op.results else None

    # --- per-op rules --------------------------------------------------------------------

    def on_empty(self, op: tensor.EmptyOp) -> None:
        t = op.tensor.type
        alloc = memref.AllocOp.get(t.element_type, 64, t.get_shape(), list(op.dynamic_sizes))
        mark_dims(alloc, t)
        buf = self.insert(alloc, op)
        assert buf is not None
        self.allocs.append(buf)
        self.buffers[op.tensor] = buf

    def on_structured(self, op: Operation) -> None:
        ins = [self.buffer(v, op) if isinstance(v.type, TensorType) else v for v in op.inputs]
        outs = [self.buffer(v, op) for v in op.outputs]
        if isinstance(op, linalg.GenericOp):
            body = op.body
            op.detach_region(body)
            for inner in list(body.walk()):
                if isinstance(inner, tensor.ExtractOp):
                    load = memref.LoadOp.get(self.buffer(inner.tensor, op), list(inner.indices))
                    self.rewriter.replace_op(inner, load)
            new = linalg.GenericOp(ins, outs, body, op.indexing_maps, op.iterator_types, [])
        elif isinstance(op, linalg.FillOp):
            new = linalg.FillOp(ins, outs, [])
        elif isinstance(op, linalg.MatmulOp):
            new = linalg.MatmulOp(ins, outs, [])
        else:
            raise Error(f"bufferize: unsupported structured op '{op.name}'")
        new.location = op.location  # the relay op it came from (kernel names, profiles)
        if CONCAT_ATTR in op.attributes:
            new.attributes[CONCAT_ATTR] = op.attributes[CONCAT_ATTR]
        self.insert(new, op)
        for res, buf in zip(op.results, outs):
            self.buffers[res] = buf

    def on_call(self, op: func.CallOp) -> None:
        """A call of a function on tensors: results become buffers passed after the inputs
        (other operands, such as the sizes a GEMM takes, stay as they are)."""
        ins = [self.buffer(v, op) if isinstance(v.type, TensorType) else v for v in op.arguments]
        outs = []
        for result in op.results:
            t = result.type
            sizes = []
            if DYNAMIC_INDEX in t.get_shape():
                if self.sizes is None:
                    args = [self.buffers[a] for a in self.block.args if a in self.buffers]
                    self.sizes = SymbolSizes(self.fn, args)
                sizes = self.sizes.sizes(dimexpr.shape_of(t))
            alloc = memref.AllocOp.get(t.element_type, 64, t.get_shape(), sizes)
            mark_dims(alloc, t)
            buf = self.insert(alloc, op)
            assert buf is not None
            self.allocs.append(buf)
            self.buffers[result] = buf
            outs.append(buf)
        call = func.CallOp(op.callee, [*ins, *outs], [])
        call.location = op.location
        self.insert(call, op)

    def on_reshape(self, op: tensor.ReshapeOp | DynamicReshapeOp) -> None:
        out = op.result.type
        shape = out.get_shape()
        if DYNAMIC_INDEX not in shape:
            strides = [int(np.prod(shape[i + 1 :])) for i in range(len(shape))]
            cast = memref.ReinterpretCastOp(
                self.buffer(op.source, op), [], [], [], [0], shape, strides, memref_of(out)
            )
            self.buffers[op.result] = self.insert(cast, op)  # type: ignore[assignment]
            return
        # a dynamic target: relay-to-linalg gave its sizes as index values
        target = op.shape.owner
        if not isinstance(target, tensor.FromElementsOp):
            raise Error("bufferize: a dynamic tensor.reshape needs its shape as from_elements")
        values = list(target.elements)
        sizes = [v for v, d in zip(values, shape) if d == DYNAMIC_INDEX]
        # row-major strides: products of the sizes after each axis (ints while static)
        strides: list[int] = []
        stride_values: list[SSAValue] = []
        acc: int | SSAValue = 1
        for d, v in reversed(list(zip(shape, values))):
            if isinstance(acc, int):
                strides.append(acc)
            else:
                strides.append(DYNAMIC_INDEX)
                stride_values.append(acc)
            if isinstance(acc, int) and d != DYNAMIC_INDEX:
                acc *= d
                continue
            if isinstance(acc, int):
                acc = self.insert(arith.ConstantOp.from_int_and_width(acc, IndexType()), op)
            acc = self.insert(arith.MuliOp(acc, v), op)
        strides.reverse()
        stride_values.reverse()
        cast = memref.ReinterpretCastOp(
            self.buffer(op.source, op),
            [],
            sizes,
            stride_values,
            [0],
            shape,
            strides,
            memref_of(out),
        )
        self.buffers[op.result] = self.insert(cast, op)  # type: ignore[assignment]

    def on_dim(self, op: tensor.DimOp) -> None:
        dim = memref.DimOp(self.buffer(op.source, op), op.index)
        self.rewriter.replace_op(op, dim)

    def copy(self, src: SSAValue, dst: SSAValue, before: Operation) -> None:
        rank = len(dst.type.get_shape())
        body = Block(arg_types=[dst.type.element_type, dst.type.element_type])
        body.add_op(linalg.YieldOp(body.args[0]))
        self.insert(
            linalg.GenericOp(
                [src],
                [dst],
                Region(body),
                [amap(rank, dims(rank))] * 2,
                [linalg_attrs.IteratorTypeAttr.parallel()] * rank,
                [],
            ),
            before,
        )

    def run(self) -> None:
        old_args = list(self.block.args)
        for arg in old_args:
            new = self.block.insert_arg(memref_of(arg.type), len(self.block.args))
            new.name_hint = arg.name_hint
            self.buffers[arg] = new
        outs = [
            self.block.insert_arg(memref_of(t), len(self.block.args))
            for t in self.fn.function_type.outputs
        ]
        for op in list(self.block.ops):
            if isinstance(op, tensor.EmptyOp):
                self.on_empty(op)
            elif isinstance(op, linalg.GenericOp | linalg.FillOp | linalg.MatmulOp):
                self.on_structured(op)
            elif isinstance(op, tensor.ReshapeOp | DynamicReshapeOp):
                self.on_reshape(op)
            elif isinstance(op, tensor.DimOp):
                self.on_dim(op)
            elif isinstance(op, func.CallOp):
                self.on_call(op)
            elif isinstance(op, func.ReturnOp):
                for value, out in zip(op.arguments, outs):
                    self.copy(self.buffer(value, op), out, op)
                for buf in self.allocs:
                    self.insert(memref.DeallocOp.get(buf), op)
                self.rewriter.replace_op(op, func.ReturnOp())
        self._erase_tensor_ops()
        for arg in old_args:
            self.block.erase_arg(arg)
        fn = self.fn
        in_attrs = (
            list(fn.arg_attrs.data)
            if fn.arg_attrs is not None
            else [DictionaryAttr({})] * len(old_args)
        )
        out_attrs = [DictionaryAttr({OUTPUT_ATTR: IntegerAttr(k, i64)}) for k in range(len(outs))]
        fn.function_type = FunctionType.from_lists([a.type for a in self.block.args], [])
        fn.arg_attrs = ArrayAttr([*in_attrs, *out_attrs])

    def _erase_tensor_ops(self) -> None:
        for op in reversed(list(self.block.ops)):
            if any(isinstance(r.type, TensorType) for r in op.results):
                if any(r.uses for r in op.results):
                    raise Error(f"bufferize: '{op.name}' result still used after bufferization")
                op.detach()
                op.erase()


@dataclass(frozen=True)
class Bufferize(ModulePass):
    """Tensors -> memrefs, results -> out-parameters. No options."""

    name = "bufferize"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for fn in [f for f in op.ops if isinstance(f, func.FuncOp)]:
            if fn.body.blocks:
                FunctionBufferizer(op, fn).run()
            else:  # an external function: inputs then results as buffers
                types = [*fn.function_type.inputs, *fn.function_type.outputs]
                fn.function_type = FunctionType.from_lists([memref_of(t) for t in types], [])
