"""`lib.export_library`: a C program compiled against the generated header runs the model
from the shared library, with no Python, and matches `lib.run` (skipped without a C
compiler)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import xrelay

EXAMPLE = Path(xrelay.__file__).parent / "examples" / "cnn.onnx"

pytestmark = pytest.mark.skipif(
    shutil.which("cc") is None or shutil.which("objcopy") is None,
    reason="export_library needs a C compiler and objcopy",
)

# reads each input from in<i>.bin, writes each output to out<i>.bin, sizes from the queries
PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "NAME.h"
static size_t item(const char* dtype) {
    if (!strcmp(dtype, "float64") || !strcmp(dtype, "int64")) return 8;
    if (!strcmp(dtype, "float32") || !strcmp(dtype, "int32")) return 4;
    if (!strcmp(dtype, "float16") || !strcmp(dtype, "int16")) return 2;
    return 1;
}
static size_t bytes(int rank, const int64_t* shape, const char* dtype) {
    size_t n = item(dtype);
    for (int d = 0; d < rank; d++) n *= (size_t)shape[d];
    return n;
}
int main(int argc, char** argv) {
    const char* dir = argv[1];
    char path[4096];
    int n_in = xr_NAME_num_inputs(), n_out = xr_NAME_num_outputs();
    const void* inputs[16]; void* outputs[16]; size_t sizes[16];
    for (int i = 0; i < n_in; i++) {
        size_t n = bytes(xr_NAME_input_rank(i), xr_NAME_input_shape(i), xr_NAME_input_dtype(i));
        void* buf = malloc(n ? n : 1);
        snprintf(path, sizeof path, "%s/in%d.bin", dir, i);
        FILE* f = fopen(path, "rb");
        if (!f || fread(buf, 1, n, f) != n) { fprintf(stderr, "cannot read %s\n", path); return 2; }
        fclose(f);
        inputs[i] = buf;
    }
    for (int i = 0; i < n_out; i++) {
        sizes[i] = bytes(xr_NAME_output_rank(i), xr_NAME_output_shape(i), xr_NAME_output_dtype(i));
        outputs[i] = malloc(sizes[i] ? sizes[i] : 1);
    }
    if (xr_NAME_run(inputs, outputs) != 0) return 3;
    for (int i = 0; i < n_out; i++) {
        snprintf(path, sizeof path, "%s/out%d.bin", dir, i);
        FILE* f = fopen(path, "wb");
        fwrite(outputs[i], 1, sizes[i], f);
        fclose(f);
    }
    printf("%s %s\n", xr_NAME_input_name(0), xr_NAME_output_name(0));
    return 0;
}
"""


def run_from_c(
    lib, name: str, tmp_path: Path, inputs: list[np.ndarray], status: int = 0
) -> list[np.ndarray]:
    """Run the exported `lib` from a C program; `status`: its expected exit code (3 when
    xr_<name>_run fails)."""
    header = lib.export_library(tmp_path / f"{name}.so")
    assert header == tmp_path / f"{name}.h"
    (tmp_path / "prog.c").write_text(PROGRAM.replace("NAME", name))
    subprocess.run(
        ["cc", "-O1", "-o", str(tmp_path / "prog"), str(tmp_path / "prog.c"),
         f"-I{tmp_path}", f"-L{tmp_path}", f"-l:{name}.so", f"-Wl,-rpath,{tmp_path}"],
        check=True,
    )  # fmt: skip
    for i, x in enumerate(inputs):
        np.ascontiguousarray(x).tofile(tmp_path / f"in{i}.bin")
    done = subprocess.run(
        [str(tmp_path / "prog"), str(tmp_path)], check=False, capture_output=True, text=True,
        env={"XRELAY_NUM_THREADS": "2", "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert done.returncode == status, done.stderr
    return [
        np.fromfile(tmp_path / f"out{i}.bin", dtype=dtype).reshape(shape)
        for i, (shape, dtype) in enumerate(lib.signature.results)
    ]


def test_c_program_runs_the_exported_cnn(tmp_path):
    module, params = xrelay.from_onnx(str(EXAMPLE))
    lib = xrelay.build(module, params, cache=False)
    (arg,) = lib.signature.inputs
    x = np.random.default_rng(0).standard_normal(arg.shape).astype(np.float32)
    got = run_from_c(lib, "cnn", tmp_path, [x])
    np.testing.assert_array_equal(got[0], lib.run(x)[0])
    header = (tmp_path / "cnn.h").read_text()
    assert "int xr_cnn_run(const void* const* inputs, void* const* outputs);" in header


@pytest.mark.slow
def test_c_program_runs_resnet50(tmp_path):
    import onnx

    from ..e2e.onnx_backend.data_cases import collect, light_inputs, with_real_weights

    (case,) = [c for c in collect("light") if c.name == "light_resnet50"]
    model = with_real_weights(onnx.load(str(case.model_path)))
    module, params = xrelay.from_onnx(model)
    lib = xrelay.build(module, params, cache=False)
    inputs = light_inputs(model)
    got = run_from_c(lib, "resnet50", tmp_path, inputs)
    np.testing.assert_array_equal(got[0], lib.run(*inputs)[0])


def test_export_errors(tmp_path, monkeypatch):
    module, params = xrelay.from_onnx(str(EXAMPLE))
    lib = xrelay.build(module, params, cache=False)
    with pytest.raises(xrelay.Error, match="does not exist"):
        lib.export_library(tmp_path / "missing" / "m.so")
    monkeypatch.setenv("CC", "no-such-compiler")
    with pytest.raises(xrelay.Error, match="needs a system C compiler"):
        lib.export_library(tmp_path / "m.so")
