"""Batch inference with Ray Data on a local Ray instance: the model is compiled once into an
artifact, and each of two workers loads it (`xrelay.load`: no compiler stage runs there).

    pip install 'xrelay[ray]'
    python examples/ray_batch.py [MODEL.onnx] [--images N]

Prints how many images each worker classified and whether any worker compiled.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


class Classifier:
    """A Ray Data actor: loads the artifact once, then runs each batch sample by sample
    (the example model takes a batch of one)."""

    def __init__(self, artifact: str) -> None:
        import xrelay

        self.lib = xrelay.load(artifact)
        (self.input,) = [a.name for a in self.lib.signature.inputs]

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        images = batch["image"]
        outputs = [self.lib.run(**{self.input: images[i : i + 1]})[0][0] for i in range(len(images))]
        n = len(images)
        return {
            "index": batch["index"],
            "probabilities": np.stack(outputs),
            "worker": np.full(n, os.getpid()),
            "compiled": np.full(n, "llvm" in self.lib.times),  # a load never compiles
        }


def classify(
    artifact: Path, images: np.ndarray, workers: int = 2, batch_size: int | None = None
) -> dict[str, np.ndarray]:
    """Run `images` through the artifact on a local Ray instance with `workers` actors;
    the rows in input order."""
    import ray

    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
    try:
        ds = ray.data.from_items([{"index": i, "image": img} for i, img in enumerate(images)])
        out = ds.map_batches(
            Classifier,
            fn_constructor_args=(str(artifact),),
            concurrency=workers,
            batch_size=batch_size or max(1, len(images) // (2 * workers)),
        )
        rows = sorted(out.take_all(), key=lambda r: r["index"])
    finally:
        if started:
            ray.shutdown()
    return {key: np.stack([r[key] for r in rows]) for key in rows[0]}


def main() -> None:
    import xrelay

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", nargs="?", default=str(HERE / "cnn.onnx"))
    parser.add_argument("--images", type=int, default=64)
    args = parser.parse_args()
    module, params = xrelay.from_onnx(args.model)
    lib = xrelay.build(module, params)
    (arg,) = lib.signature.inputs
    rng = np.random.default_rng(0)
    images = rng.standard_normal((args.images, *arg.shape[1:])).astype(arg.dtype)
    with tempfile.TemporaryDirectory() as tmp:
        artifact = Path(tmp) / "model.xrl"
        lib.save(artifact)
        out = classify(artifact, images)
    workers = {int(w): int((out["worker"] == w).sum()) for w in np.unique(out["worker"])}
    print(
        f"{len(images)} images on {len(workers)} workers {workers}; compiled in a worker: "
        f"{bool(out['compiled'].any())}"
    )


if __name__ == "__main__":
    main()
