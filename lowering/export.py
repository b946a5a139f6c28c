"""`lib.export_library("model.so")`: a compiled model as a shared library callable from C,
with a generated header `model.h` beside it. No Python at run time.

What it links (with the system C compiler, `$CC` or `cc`): the library's object code with
its `main` renamed `xr_<name>_main` (objcopy), the parameters the code reads embedded as
one 64-byte-aligned read-only blob (`.incbin`), and a small generated C file holding

    int xr_<name>_run(const void* const* inputs, void* const* outputs);
    int xr_<name>_num_inputs(void), xr_<name>_num_outputs(void);
    const char* xr_<name>_input_name(int i), *xr_<name>_input_dtype(int i), ... _output_...;
    int xr_<name>_input_rank(int i); const int64_t* xr_<name>_input_shape(int i); ...

`inputs` are the data inputs in signature order, `outputs` buffers the caller allocated
(C-contiguous, of the shapes and dtypes the query functions give; narrow types as their
storage). `run` returns 0, 1 for a null argument, or 2 when an index a gather or
scatter reads at run time is out of range (the outputs are then not valid). The thread count is `XRELAY_NUM_THREADS`, else the online CPUs, read when the
library loads. Only symbols starting `xr_<name>_` are exported. Without a C compiler or
objcopy this is an `xrelay.Error`.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import zlib
from pathlib import Path
from typing import Any

import numpy as np
from xrelay.errors import Error
from xrelay.lowering.compile_worker import CompileError, object_code
from xrelay.lowering.jit import Library

ALIGN = 64


def _tool(name: str, env: str | None = None) -> str:
    found = shutil.which(os.environ.get(env, name) if env else name)
    if found is None:
        raise Error(
            f"export_library needs a system {'C compiler' if env else name} "
            f"({'$' + env + ' or ' if env else ''}{name}), which this machine lacks"
        )
    return found


def _c_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _table(kind: str, name: str, items: list[tuple[str, tuple[int, ...], str]]) -> str:
    """C arrays and query functions for the inputs or outputs."""
    lines = []
    for i, (_, shape, _) in enumerate(items):
        dims = ", ".join(str(d) for d in shape) or "0"
        lines.append(f"static const int64_t {kind}_shape_{i}[] = {{{dims}}};")
    shapes = ", ".join(f"{kind}_shape_{i}" for i in range(len(items))) or "0"
    names = ", ".join(_c_string(n) for n, _, _ in items) or "0"
    dtypes = ", ".join(_c_string(d) for _, _, d in items) or "0"
    ranks = ", ".join(str(len(s)) for _, s, _ in items) or "0"
    n = len(items)
    lines += [
        f"static const int64_t* const {kind}_shapes[] = {{{shapes}}};",
        f"static const char* const {kind}_names[] = {{{names}}};",
        f"static const char* const {kind}_dtypes[] = {{{dtypes}}};",
        f"static const int {kind}_ranks[] = {{{ranks}}};",
        f"XR_API int xr_{name}_num_{kind}s(void) {{ return {n}; }}",
        *(
            f"XR_API {ret} xr_{name}_{kind}_{what}(int i) "
            f"{{ return i >= 0 && i < {n} ? {kind}_{table}[i] : {none}; }}"
            for ret, what, table, none in (
                ("const char*", "name", "names", "0"),
                ("const char*", "dtype", "dtypes", "0"),
                ("int", "rank", "ranks", "-1"),
                ("const int64_t*", "shape", "shapes", "0"),
            )
        ),
    ]
    return "\n".join(lines)


def _bounds_check(checks: list, name: str, args: str) -> str:
    """The body of xr_<name>_run: the call, then each index check (2: an index was out of
    range; the C caller gets a status, not the message)."""
    if not checks:
        return f"    xr_{name}_main({args});\n    return 0;"
    limits = ", ".join(str(int(size)) for _, _, size in checks)
    return (
        f"    int64_t bounds[{2 * len(checks)}];\n"
        f"    static const int64_t sizes[] = {{{limits}}};\n"
        f"    xr_{name}_main({args});\n"
        f"    for (int k = 0; k < {len(checks)}; ++k)\n"
        "        if (bounds[2 * k] < -sizes[k] || bounds[2 * k + 1] >= sizes[k]) return 2;\n"
        "    return 0;"
    )


def _sources(lib: Library, name: str) -> tuple[str, str, bytes]:
    """(C source, header, parameter blob)."""
    sig = lib.signature
    blob = bytearray()
    call_args = []
    data_index = 0
    for arg in sig.args:
        if not arg.is_param:
            call_args.append(f"(void*)inputs[{data_index}]")
            data_index += 1
        elif arg.name in lib.unused_params:
            call_args.append("0")
        else:
            blob += b"\0" * (-len(blob) % ALIGN)
            call_args.append(f"(void*)(xr_{name}_weights + {len(blob)})")
            blob += np.ascontiguousarray(lib.params[arg.name]).tobytes()
    call_args += [f"outputs[{i}]" for i in range(len(sig.results))]
    checks = lib.checks  # index checks: (min, max) per checked axis (expose-checks)
    if checks:
        call_args.append("bounds")
    n_args = len(call_args)
    inputs = [(a.name, tuple(a.shape), (a.storage or a.dtype).name) for a in sig.inputs]
    outputs = [
        (f"output_{i}", tuple(shape), np.dtype(dtype).name)
        for i, (shape, dtype) in enumerate(sig.results)
    ]
    names = lib.meta.get("output_names") or []
    if len(names) == len(outputs):
        outputs = [(n, s, d) for n, (_, s, d) in zip(names, outputs)]
    params = ", ".join(["void*"] * n_args)
    source = f"""/* generated by xrelay: the C entry points of model '{name}' */
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#define XR_API __attribute__((visibility("default")))

extern void xr_{name}_main({params});
extern const unsigned char xr_{name}_weights[];
extern int32_t xr_num_threads __attribute__((weak));

__attribute__((constructor)) static void xr_{name}_init(void) {{
    if (&xr_num_threads == 0) return;
    const char* value = getenv("XRELAY_NUM_THREADS");
    long n = value && *value ? atol(value) : sysconf(_SC_NPROCESSORS_ONLN);
    xr_num_threads = (int32_t)(n > 0 ? n : 1);
}}

XR_API int xr_{name}_run(const void* const* inputs, void* const* outputs) {{
    if (!inputs || !outputs) return 1;
{_bounds_check(checks, name, ", ".join(call_args))}
}}

{_table("input", name, inputs)}
{_table("output", name, outputs)}
"""
    header = f"""/* generated by xrelay: model '{name}' as a shared library */
#ifndef XR_{name.upper()}_H
#define XR_{name.upper()}_H
#include <stdint.h>
#ifdef __cplusplus
extern "C" {{
#endif
/* Run the model: `inputs` in this order, `outputs` buffers the caller allocates
   (C-contiguous). Returns 0; 2 if an index read at run time was out of range (the
   outputs are then not valid). Not reentrant: temporaries live in one static arena. */
int xr_{name}_run(const void* const* inputs, void* const* outputs);
int xr_{name}_num_inputs(void);
int xr_{name}_num_outputs(void);
const char* xr_{name}_input_name(int i);
const char* xr_{name}_input_dtype(int i);   /* numpy names: "float32", "int64", ... */
int xr_{name}_input_rank(int i);
const int64_t* xr_{name}_input_shape(int i);
const char* xr_{name}_output_name(int i);
const char* xr_{name}_output_dtype(int i);
int xr_{name}_output_rank(int i);
const int64_t* xr_{name}_output_shape(int i);
/* inputs:  {"; ".join(f"{n} {d}{list(s)}" for n, s, d in inputs)}
   outputs: {"; ".join(f"{n} {d}{list(s)}" for n, s, d in outputs)} */
#ifdef __cplusplus
}}
#endif
#endif
"""
    return source, header, bytes(blob)


def export_library(lib: Library, path: str | os.PathLike, name: str | None = None) -> Path:
    """Write the shared library `path` and its header (`path` with `.h`); returns the
    header's path. `name` (default: the file's stem) prefixes the C symbols."""
    path = Path(path)
    if not path.parent.is_dir():
        raise Error(f"cannot write '{path}': folder '{path.parent}' does not exist")
    if lib.externals:
        raise Error("this library calls kernels of another target's codegen: not exportable")
    if lib.signature.is_dynamic:
        raise Error("a library with dynamic dimensions cannot be exported: pin its shapes")
    name = re.sub(r"\W", "_", name or path.stem)
    if not name or name[0].isdigit():
        name = "m_" + name
    cc, objcopy = _tool("cc", "CC"), _tool("objcopy")
    source, header, blob = _sources(lib, name)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        codes = lib.objects
        if lib.ir_z is not None:  # the JIT's objects use absolute addresses: compile PIC
            try:
                codes = [object_code(zlib.decompress(lib.ir_z).decode(), lib.target, pic=True)]
            except CompileError as e:
                raise Error(f"export_library: LLVM could not compile the module: {e}") from None
        objects = [work / f"model{k}.o" for k in range(len(codes))]
        for path_k, code in zip(objects, codes):
            path_k.write_bytes(code)
        (work / "weights.bin").write_bytes(blob)
        (work / "wrapper.c").write_text(source)
        (work / "weights.S").write_text(
            ".section .rodata\n.balign 64\n.globl xr_{0}_weights\n.hidden xr_{0}_weights\n"
            'xr_{0}_weights:\n.incbin "{1}"\n.section .note.GNU-stack,"",@progbits\n'.format(
                name, work / "weights.bin"
            )
        )
        for path_k in objects:  # the definition and its references
            _run([objcopy, f"--redefine-sym=main=xr_{name}_main", str(path_k)])
        version = work / "exports.map"
        version.write_text(f"{{ global: xr_{name}_*; local: *; }};\n")
        _run(
            [
                cc, "-shared", "-fPIC", "-O2", "-o", str(path),
                str(work / "wrapper.c"), str(work / "weights.S"), *map(str, objects),
                f"-Wl,--version-script={version}", "-Wl,-Bsymbolic", "-lm", "-lgomp",
            ]
        )  # fmt: skip
    header_path = path.with_suffix(".h")
    header_path.write_text(header)
    return header_path


def _run(argv: list[str]) -> Any:
    done = subprocess.run(argv, check=False, capture_output=True, text=True)
    if done.returncode != 0:
        message = (done.stderr or done.stdout).strip().splitlines()
        raise Error(f"export_library: {Path(argv[0]).name} failed: {' / '.join(message[-3:])}")
    return done
