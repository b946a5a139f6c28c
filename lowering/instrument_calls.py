"""`instrument-calls{enabled=true}`: time every call @main makes (`build(profile=True)`).

After plan-buffers @main is a straight list of calls: kernels (`@k12_conv1`), GEMM entries
(`@xr_gemm_3`) and other functions. With `enabled`, each call k is bracketed by
`@xr_prof_begin()` and `@xr_prof_end(k)`, whose definitions (linked as runtime IR by
emit-runtime, `PROFILER_IR`) read the monotonic clock and add the elapsed nanoseconds and
one call to slot k of `@xr_prof_ns` / `@xr_prof_calls`. The module attribute
`xrelay.profile_sites` lists, per slot, the callee and the location (the model node) of
the call; `Library.profile()` reads the counters back. Disabled (the default), the pass
changes nothing: a normal build has no timing code.

Before: func.call @k3_relu2(%a, %b) : (...) -> ()           loc("relu2")
After:  func.call @xr_prof_begin() : () -> ()
        func.call @k3_relu2(%a, %b) : (...) -> ()
        %k = arith.constant 3 : i64
        func.call @xr_prof_end(%k) : (i64) -> ()
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, ModuleOp, StringAttr, i64
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xrelay.ir import location_str

SITES_ATTR = "xrelay.profile_sites"


def profiler_ir(sites: int) -> str:
    n = max(sites, 1)
    return f"""
declare i32 @clock_gettime(i32, ptr)
@xr_prof_t0 = internal global i64 0
@xr_prof_ns = dso_local global [{n} x i64] zeroinitializer
@xr_prof_calls = dso_local global [{n} x i64] zeroinitializer
define internal i64 @xr_prof_now() {{
  %ts = alloca [2 x i64], align 8
  %r = call i32 @clock_gettime(i32 1, ptr %ts)
  %s = load i64, ptr %ts
  %p = getelementptr [2 x i64], ptr %ts, i64 0, i64 1
  %ns = load i64, ptr %p
  %m = mul i64 %s, 1000000000
  %t = add i64 %m, %ns
  ret i64 %t
}}
define void @xr_prof_begin() {{
  %t = call i64 @xr_prof_now()
  store i64 %t, ptr @xr_prof_t0
  ret void
}}
define void @xr_prof_end(i64 %k) {{
  %t = call i64 @xr_prof_now()
  %t0 = load i64, ptr @xr_prof_t0
  %d = sub i64 %t, %t0
  %pn = getelementptr [{n} x i64], ptr @xr_prof_ns, i64 0, i64 %k
  %old = load i64, ptr %pn
  %new = add i64 %old, %d
  store i64 %new, ptr %pn
  %pc = getelementptr [{n} x i64], ptr @xr_prof_calls, i64 0, i64 %k
  %c = load i64, ptr %pc
  %c1 = add i64 %c, 1
  store i64 %c1, ptr %pc
  ret void
}}
"""


@dataclass(frozen=True)
class InstrumentCalls(ModulePass):
    """Time each call of @main (see the module docstring). Options: enabled=false|true."""

    name = "instrument-calls"

    enabled: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if not self.enabled:
            return
        main = next(
            (f for f in op.ops if isinstance(f, func.FuncOp) and f.sym_name.data == "main"), None
        )
        if main is None or not main.body.blocks:
            return
        calls = [c for c in main.body.block.ops if isinstance(c, func.CallOp)]
        sites = []
        for k, call in enumerate(calls):
            sites.append(StringAttr(f"{call.callee.root_reference.data}@{location_str(call)}"))
            Rewriter.insert_op(func.CallOp("xr_prof_begin", [], []), InsertPoint.before(call))
            index = arith.ConstantOp(IntegerAttr(k, i64))
            Rewriter.insert_op(index, InsertPoint.after(call))
            end = func.CallOp("xr_prof_end", [index.result], [])
            Rewriter.insert_op(end, InsertPoint.after(index))
        for name, inputs in (("xr_prof_begin", []), ("xr_prof_end", [i64])):
            op.body.block.insert_op_before(func.FuncOp.external(name, inputs, []), main)
        op.attributes[SITES_ATTR] = ArrayAttr(sites)
