"""`xrelay-opt`: parse textual IR, verify it, run a pass pipeline, print the result.

It is xDSL's opt driver (every xDSL dialect and pass is there, and xrelay's through the
`xdsl.universe` entry point) with xrelay's diagnostics: a parse or verification failure is one
line `file:line:col: error: ...` on stderr and exit code 1, never a traceback (any other
failure is one `xrelay-opt: error: ...` line; XRELAY_TRACEBACK=1 shows the traceback). Under
`--verify-diagnostics` the diagnostic goes to stdout and the exit code is 0, so lit tests can
FileCheck it.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline
from xdsl.utils.exceptions import DiagnosticException, VerifyException
from xdsl.utils.target import Target
from xdsl.xdsl_opt_main import xDSLOptMain
from xrelay.errors import Error
from xrelay.ir import dialect_factories, parse_module, verify_module
from xrelay.tools.report import fail


@dataclass(frozen=True)
class LLVMTarget(Target):
    """`-t llvm`: the LLVM IR `xrelay.build` compiles, the runtime (emit-runtime) linked in."""

    name = "llvm"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        from xrelay.lowering.jit import llvm_ir

        output.write(llvm_ir(module))


class XRelayOptMain(xDSLOptMain):
    def __init__(self, args: Sequence[str] | None = None) -> None:
        super().__init__(description="xrelay modular optimizer driver", args=args)

    def register_all_dialects(self) -> None:
        for name, factory in dialect_factories().items():
            self.ctx.register_dialect(name, factory)

    def register_all_targets(self) -> None:
        # ours first: the base class keeps the first target registered under a name
        self.available_targets["llvm"] = lambda: LLVMTarget
        super().register_all_targets()

    def setup_pipeline(self) -> None:
        started = time.perf_counter()

        def between(prev: ModulePass | None, module: ModuleOp, _next: ModulePass | None) -> None:
            nonlocal started
            if self.args.time_passes and prev is not None:
                print(f"Pass {prev.name} took {time.perf_counter() - started:.4f} s", file=sys.stderr)
            if not self.args.disable_verify:
                verify_module(module)
            started = time.perf_counter()

        try:
            self.pipeline = PassPipeline.parse_spec(self.available_passes, self.args.passes, between)
        except Exception as e:  # noqa: BLE001 - an unknown pass or a malformed option
            print(f"xrelay-opt: error: {e}", file=sys.stderr)
            sys.exit(1)

    def parse_chunk(self, chunk, file_extension: str, start_offset: int = 0) -> ModuleOp | None:
        return parse_module(chunk.read(), self.get_input_name(), self.ctx, start_offset)

    def run(self) -> None:
        try:
            chunks, extension = self.prepare_input()
        except (OSError, ValueError) as e:
            print(f"xrelay-opt: error: {e}", file=sys.stderr)
            sys.exit(1)
        failed = False
        pieces: list[str] = []
        for chunk, offset in chunks:
            try:
                module = self.parse_chunk(chunk, extension, offset)
                assert module is not None
                self.apply_passes(module)
                pieces.append(self.output_resulting_program(module))
            except (Error, VerifyException, DiagnosticException) as e:
                message = str(e)
                if self.args.verify_diagnostics:
                    pieces.append(message + "\n")
                else:
                    print(message, file=sys.stderr)
                    failed = True
            except (Exception, KeyboardInterrupt) as e:  # noqa: BLE001 - never a traceback
                fail("xrelay-opt", e)
            finally:
                chunk.close()
        out = self.prepare_output()
        out.write("// -----\n".join(pieces))
        if out is not sys.stdout:
            out.close()
        if failed:
            sys.exit(1)


def main(argv: Sequence[str] | None = None) -> None:
    try:
        XRelayOptMain(argv).run()
    except SystemExit:
        raise
    except (Exception, KeyboardInterrupt) as e:  # noqa: BLE001 - one line, never a traceback
        fail("xrelay-opt", e)


if __name__ == "__main__":
    main()
