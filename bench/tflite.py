"""Benchmark xrelay against LiteRT (TFLite's runtime) on Keras MobileNetV2, int8 and float,
side by side in one run.

    python bench/tflite.py [--alpha 1.0] [--size 224] [--runs 10] [--seconds 3]
                           [--settle 0.2] [--json out.json]

The model: `keras.applications.MobileNetV2(weights=None, ...)` (nothing downloaded) with
seeded random weights, converted with `tf.lite.TFLiteConverter` twice: float, and full
integer (int8 activations and I/O, per-channel int8 weights) calibrated on 16 seeded random
inputs. Both .tflite files are cached under bench/.cache (delete them to rebuild).

Per model: import it with `xrelay.from_tflite` and compile it with `xrelay.build` (timed),
run both systems on the same seeded input, report how far apart the outputs are (int8: the
largest difference in quantized steps; float: the largest absolute difference relative to
the largest output), then time both, warm-up first, alternating the systems in turns
(xrelay.tools.timing.alternate) until each has at least `--runs` runs and `--seconds`
seconds. LiteRT runs its default kernels (XNNPACK) with `num_threads=2`; xrelay runs what it
generates on 2 threads. Reports the median (and min) ms of each and the ratio
xrelay/LiteRT (below 1: xrelay is faster).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("XRELAY_NUM_THREADS", "2")

HERE = Path(__file__).resolve().parent
if sys.path and Path(sys.path[0]).resolve() == HERE:
    sys.path.pop(0)  # `python bench/tflite.py`: `import tflite` must find the package, not us
MODES = ("int8", "float")


def keras_mobilenet_v2(alpha: float, size: int) -> Any:
    """MobileNetV2 with every weight drawn at random (seed 0): Keras' zero biases and unit
    batch-norm statistics would make a benchmark of an unusually tame network."""
    import keras

    model = keras.applications.MobileNetV2(
        weights=None, input_shape=(size, size, 3), alpha=alpha, classifier_activation=None
    )
    rng = np.random.default_rng(0)
    weights = []
    for w in model.get_weights():
        if w.ndim == 1:  # biases, batch-norm scales and statistics (variances stay positive)
            weights.append(rng.uniform(0.5, 1.5, w.shape).astype(w.dtype))
        else:
            fan_in = max(1, int(np.prod(w.shape[:-1])))
            weights.append((rng.standard_normal(w.shape) / np.sqrt(fan_in)).astype(w.dtype))
    model.set_weights(weights)
    return model


def convert(model: Any, mode: str, size: int) -> bytes:
    import tensorflow as tf

    converter = tf.lite.TFLiteConverter.from_keras_model(model)
    if mode == "int8":
        rng = np.random.default_rng(1)

        def representative():
            for _ in range(16):
                yield [rng.standard_normal((1, size, size, 3)).astype(np.float32)]

        converter.optimizations = [tf.lite.Optimize.DEFAULT]
        converter.representative_dataset = representative
        converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        converter.inference_input_type = tf.int8
        converter.inference_output_type = tf.int8
    return converter.convert()


def flatbuffers(alpha: float, size: int, cache: Path) -> dict[str, bytes]:
    paths = {m: cache / f"mobilenet_v2_a{alpha}_{size}_{m}.tflite" for m in MODES}
    if not all(p.is_file() for p in paths.values()):
        cache.mkdir(parents=True, exist_ok=True)
        model = keras_mobilenet_v2(alpha, size)
        for mode, path in paths.items():
            with contextlib.redirect_stdout(io.StringIO()):  # the converter's export listing
                path.write_bytes(convert(model, mode, size))
    return {m: p.read_bytes() for m, p in paths.items()}


def feeds(interp: Any) -> dict[str, np.ndarray]:
    """A seeded standard-normal input, quantized with the input's parameters if integer."""
    (detail,) = interp.get_input_details()
    x = np.random.default_rng(2).standard_normal(detail["shape"]).astype(np.float32)
    if detail["dtype"] != np.float32:
        scale, zero_point = detail["quantization"]
        info = np.iinfo(detail["dtype"])
        x = np.clip(np.round(x / scale) + zero_point, info.min, info.max)
    return {detail["name"]: x.astype(detail["dtype"])}


def measure(mode: str, flatbuffer: bytes, args: argparse.Namespace) -> dict[str, Any]:
    import xrelay
    from ai_edge_litert.interpreter import Interpreter
    from xrelay.tools.timing import alternate

    interp = Interpreter(model_content=flatbuffer, num_threads=2)  # default kernels: XNNPACK
    interp.allocate_tensors()
    inputs = feeds(interp)
    (in_detail,), (out_detail,) = interp.get_input_details(), interp.get_output_details()

    def litert() -> np.ndarray:
        interp.set_tensor(in_detail["index"], inputs[in_detail["name"]])
        interp.invoke()
        return interp.get_tensor(out_detail["index"])

    start = time.perf_counter()
    # the batch LiteRT runs (1), pinned: Keras' dynamic batch would otherwise stay symbolic
    module, params = xrelay.from_tflite(
        flatbuffer, shape={in_detail["name"]: tuple(int(d) for d in in_detail["shape"])}
    )
    lib = xrelay.build(module, params, cache=False)  # compile time is measured
    compile_s = time.perf_counter() - start

    got, want = lib.run(**inputs)[0], litert().copy()
    row: dict[str, Any] = {"model": f"mobilenet_v2 {mode}", "compile s": compile_s}
    if mode == "int8":
        steps = np.abs(got.astype(np.int32) - want.astype(np.int32))
        row["max diff"] = f"{int(steps.max())} steps"
        row["outputs off"] = int(np.count_nonzero(steps))
    else:
        row["max diff"] = f"{float(np.abs(got - want).max() / np.abs(want).max()):.1e} rel"
    times = alternate(
        {"xrelay": lambda: lib.run(**inputs), "litert": litert},
        args.runs,
        args.seconds,
        args.settle,
    )
    for system, ts in times.items():
        row[f"{system} ms"] = 1e3 * statistics.median(ts)
        row[f"{system} min ms"] = 1e3 * min(ts)
    row["xrelay/litert"] = row["xrelay ms"] / row["litert ms"]
    return row


def report(rows: list[dict[str, Any]]) -> None:
    print(
        f"{'model':<20}{'xrelay ms':>16}{'litert ms':>16}{'xr/litert':>11}"
        f"{'max diff':>14}{'compile s':>11}"
    )
    for r in rows:
        xr = f"{r['xrelay ms']:.2f} ({r['xrelay min ms']:.2f})"
        lt = f"{r['litert ms']:.2f} ({r['litert min ms']:.2f})"
        print(
            f"{r['model']:<20}{xr:>16}{lt:>16}{r['xrelay/litert']:>11.2f}"
            f"{r['max diff']:>14}{r['compile s']:>11.1f}"
        )
        if "outputs off" in r:
            print(f"  int8 outputs that differ: {r['outputs off']}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--alpha", type=float, default=1.0)
    parser.add_argument("--size", type=int, default=224)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--settle", type=float, default=0.2)
    parser.add_argument("--cache", type=Path, default=HERE / ".cache")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    models = flatbuffers(args.alpha, args.size, args.cache)
    rows = []
    for mode in MODES:
        rows.append(measure(mode, models[mode], args))
        print(f"done {mode}", file=sys.stderr)
    report(rows)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
