"""Keras models for the TFLite frontend tests, built at test time with seeded random weights
(no downloads), converted with tf.lite.TFLiteConverter and run with LiteRT's reference
kernels as the oracle.

Imported only after `pytest.importorskip("tensorflow")`.
"""

from __future__ import annotations

from collections.abc import Callable

import keras
import numpy as np
import tensorflow as tf
from ai_edge_litert.interpreter import Interpreter, OpResolverType


def randomize(model: keras.Model, seed: int = 0) -> keras.Model:
    """Every weight (biases, batch-norm statistics included) drawn at random: Keras' zero
    biases and unit statistics would hide layout and broadcasting mistakes."""
    rng = np.random.default_rng(seed)
    weights = []
    for w in model.get_weights():
        if "variance" in str(w.dtype) or w.ndim == 1:
            weights.append(rng.uniform(0.5, 1.5, w.shape).astype(w.dtype))
        else:
            fan_in = max(1, int(np.prod(w.shape[:-1])))
            weights.append((rng.standard_normal(w.shape) / np.sqrt(fan_in)).astype(w.dtype))
    model.set_weights(weights)
    return model


def small_cnn() -> keras.Model:
    i = keras.Input((16, 16, 3))
    x = keras.layers.Conv2D(8, 3, padding="same", activation="relu")(i)
    x = keras.layers.DepthwiseConv2D(3, strides=2, padding="same", activation="relu6")(x)
    y = keras.layers.Conv2D(8, 1, padding="valid")(x)
    x = keras.layers.Add()([x, y])
    x = keras.layers.MaxPooling2D(2)(x)
    x = keras.layers.Conv2D(6, 3, padding="same", dilation_rate=2, activation="tanh")(x)
    x = keras.layers.Conv2DTranspose(4, 3, strides=2, padding="same")(x)
    x = keras.layers.AveragePooling2D(3, strides=2, padding="same")(x)
    x = keras.layers.Flatten()(x)
    x = keras.layers.Dense(32, activation="relu")(x)  # 2048 weights: hybrid when dynamic-range
    logits = keras.layers.Dense(10)(x)
    return keras.Model(i, [logits, keras.layers.Softmax()(logits)])


def mobilenet_v2() -> keras.Model:
    return keras.applications.MobileNetV2(
        weights=None, input_shape=(96, 96, 3), alpha=0.35, classes=10, classifier_activation=None
    )


def transformer_block() -> keras.Model:
    i = keras.Input((8, 16))
    attn = keras.layers.MultiHeadAttention(num_heads=2, key_dim=8)(i, i)
    x = keras.layers.LayerNormalization()(i + attn)
    f = keras.layers.Dense(96, activation="gelu")(x)  # 1536 weights: hybrid when dynamic-range
    f = keras.layers.Dense(16)(f)
    x = keras.layers.LayerNormalization()(x + f)
    return keras.Model(i, x)


def tensor_ops() -> keras.Model:
    """Shape and data-movement ops: pad, slices, concatenation, resize, reshape, transpose,
    gather, mean, hard swish."""
    i = keras.Input((8, 8, 4))
    x = keras.layers.ZeroPadding2D(((1, 0), (0, 1)))(i)
    x = keras.layers.Cropping2D(((1, 1), (0, 1)))(x)  # strided slices
    up = keras.layers.UpSampling2D(2, interpolation="bilinear")(x)
    near = keras.layers.UpSampling2D(2, interpolation="nearest")(x)
    resized = keras.layers.Resizing(10, 12, interpolation="bilinear")(x)
    resized = keras.layers.Resizing(14, 16, interpolation="nearest")(resized)
    x = keras.layers.Concatenate()([up, near, resized])
    x = keras.layers.Conv2D(6, 3, strides=2, padding="same")(x)
    x = keras.layers.Activation("hard_swish")(x)
    x = keras.layers.Reshape((7 * 8, 6))(x)
    x = keras.layers.Permute((2, 1))(x)
    picked = keras.ops.take(x, np.array([5, 1, 3]), axis=2)
    mean = keras.ops.mean(x, axis=-1, keepdims=True)
    x = keras.layers.Concatenate(axis=-1)([picked, mean])
    x = keras.ops.sigmoid(x) * keras.ops.max(x, axis=1, keepdims=True)
    return keras.Model(i, x)


MODELS: dict[str, Callable[[], keras.Model]] = {
    "cnn": small_cnn,
    "tensor_ops": tensor_ops,
    "transformer": transformer_block,
    "mobilenet_v2": mobilenet_v2,
}


def representative(model: keras.Model, seed: int = 1):
    rng = np.random.default_rng(seed)
    shape = (1, *model.input_shape[1:])

    def data():
        for _ in range(16):
            yield [rng.standard_normal(shape).astype(np.float32)]

    return data


MODES = ("float", "int8", "uint8", "dynamic", "float16")


def convert(model: keras.Model, mode: str = "float") -> bytes:
    """The model as a TFLite flatbuffer: "float"; "int8" (full integer, int8 I/O) or "uint8"
    (full integer, uint8 I/O), calibrated on random inputs; "dynamic" (dynamic range: int8
    weights of 1,024 elements or more, float activations); "float16" (float16 weights)."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode}")
    converter = tf.lite.TFLiteConverter.from_keras_model(model)
    if mode != "float":
        converter.optimizations = [tf.lite.Optimize.DEFAULT]
    if mode == "float16":
        converter.target_spec.supported_types = [tf.float16]
    if mode in ("int8", "uint8"):
        converter.representative_dataset = representative(model)
        converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        io_type = tf.int8 if mode == "int8" else tf.uint8
        converter.inference_input_type = io_type
        converter.inference_output_type = io_type
    return converter.convert()


def random_inputs(flatbuffer: bytes, seed: int = 2) -> dict[str, np.ndarray]:
    interp = Interpreter(model_content=flatbuffer)
    rng = np.random.default_rng(seed)
    feeds = {}
    for d in interp.get_input_details():
        x = rng.standard_normal(d["shape"]).astype(np.float32)  # as the calibration data
        if d["dtype"] != np.float32:  # quantized with the input's parameters
            scale, zero_point = d["quantization"]
            info = np.iinfo(d["dtype"])
            x = np.clip(np.round(x / scale) + zero_point, info.min, info.max).astype(d["dtype"])
        feeds[d["name"]] = x
    return feeds


def run_litert(
    flatbuffer: bytes, feeds: dict[str, np.ndarray], reference: bool = True
) -> list[np.ndarray]:
    """The outputs of LiteRT's reference kernels (BUILTIN_REF), or of its default kernels
    (XNNPACK, 2 threads) when not `reference`."""
    if reference:
        kernels = {"experimental_op_resolver_type": OpResolverType.BUILTIN_REF}
    else:
        kernels = {"num_threads": 2}
    interp = Interpreter(model_content=flatbuffer, **kernels)
    interp.allocate_tensors()
    for d in interp.get_input_details():
        interp.set_tensor(d["index"], feeds[d["name"]])
    interp.invoke()
    return [interp.get_tensor(d["index"]).copy() for d in interp.get_output_details()]
