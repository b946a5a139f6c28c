"""The GEMM runtime's object code, compiled while the passes still run.

The GEMM runtime's part of a build's LLVM module (lowering/split_module.py) is the
longest to compile (ResNet-50: 1.5-1.9 s of LLVM's 2 s on two workers, after 1.1 s of
passes on one core while the other waits), and its text depends only on choices known
once `select-kernels` has run: the target, threads, the vector width and which GEMM
variants the calls need (`wrappers.gemm_runtime_ir`; the pixel-major ones that
`prepack-weights` will pick: `prepack_weights.packed_specs`). `start` links that runtime alone,
splits it as the build will split the whole module, and has the last compile worker
compile its large parts into compile_worker's cache (`compile_ahead`); the build's own
compile then finds them there, or waits for them, and compiles the rest meanwhile.

A guess that turns out different from the build's text (a later pass changed a GEMM's
variant) costs only the idle core's time: the cache is keyed by the text. The pixel-major
product's functions are left out when some of the model's own wrappers will share their
part (a pixel-major product's batch split over threads: Winograd's terms in most CNNs on
16-float vectors); the rest is compiled ahead all the same (ResNet-50: LLVM's time after
the passes 1.6-1.9 -> 0.8-1.34 s).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from xdsl.dialects.builtin import ModuleOp
from xrelay.lowering import compile_worker, host
from xrelay.lowering.jit import threads_available
from xrelay.lowering.kernels.parallel import pool_ir
from xrelay.lowering.kernels.wrappers import batch_split, gemm_runtime_ir
from xrelay.lowering.prepack_weights import module_vector_width, packed_specs
from xrelay.lowering.split_module import split_module


def runtime_text(module: ModuleOp, vector_width: int) -> str | None:
    """The GEMM runtime `module` (after select-kernels) will call, as a module of its own
    (what `jit.llvm_module` links into the build's: the same triple, the thread pool's
    declarations first); None without GEMM calls. Without the pixel-major product's
    functions when some of the model's own wrappers will share their part: those that
    split a pixel-major product's batch over threads call its internal `xr_gemm_pm`,
    which LLVM inlines into them (kernels/gemm_pixel.py); the rest of the runtime is a
    part of its own all the same (the pixel-major product has copies of its own of what
    it shares with the GEMM's)."""
    specs = packed_specs(module, vector_width)  # (prepack-weights picks pixel-major ones)
    threads = threads_available()
    if any(spec.pixel_major and batch_split(spec, threads) for spec in specs):
        specs = [replace(spec, pixel_major=False) for spec in specs]
    runtime = gemm_runtime_ir(specs, threads, module_vector_width(module, vector_width))
    if not runtime:
        return None
    triple = host.describe()["default_triple"]
    # a function of its own besides the runtime's groups: as in the build, the runtime's
    # part is not the one that defines the mutable globals (split_module's last part)
    stub = "define void @xr_runtime_ahead() {\n  ret void\n}\n"
    return f'target triple = "{triple}"\n' + pool_ir(threads) + runtime + stub


def start(module: ModuleOp, target: dict[str, Any], vector_width: int) -> bool:
    """Compile the GEMM runtime's part of `module` (after select-kernels) for `target` in
    the background (the large groups are parts of their own however many parts the build
    asks for). Returns whether it started (not without a runtime_text, or with fewer than
    two compile workers)."""
    if not compile_worker.can_compile_ahead():  # (before making a text for nothing)
        return False
    text = runtime_text(module, vector_width)
    if text is None:
        return False
    return compile_worker.compile_ahead([text], target, lambda linked: split_module(linked, 2))
