"""ONNX ops composed of relay ops (frontends/onnx/{grid_sample, spectral, stateful,
flex_attention, col2im, roi_align, deform_conv, more_ops}.py), through the JIT against the
ONNX reference evaluator (the implementation the conformance outputs come from) or
onnxruntime, on odd shapes and values beyond the borders."""

from __future__ import annotations

import numpy as np
import pytest
import xrelay
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

F, D, H, I64 = TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16, TensorProto.INT64
RNG = np.random.default_rng(7)


def vi(name: str, elem: int, shape) -> object:
    return helper.make_tensor_value_info(name, elem, shape)


def model(node, inputs, outputs, opset: int = 22, inits=(), domains=()):
    graph = helper.make_graph([node], "g", inputs, outputs, initializer=list(inits))
    imports = [helper.make_opsetid("", opset), *(helper.make_opsetid(d, v) for d, v in domains)]
    return helper.make_model(graph, opset_imports=imports)


def run(m, feeds: dict, const: dict | None = None) -> list[np.ndarray]:
    mod, params = xrelay.from_onnx(m, const_inputs=const or {})
    return xrelay.build(mod, params).run(**feeds)


def check(m, feeds: dict, const: dict | None = None, rtol=1e-5, atol=1e-6, want=None):
    const = const or {}
    if want is None:
        want = ReferenceEvaluator(m).run(None, {**feeds, **const})
    got = run(m, feeds, const)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


def rand(*shape, dtype=np.float32, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(dtype)


# --- GridSample ----------------------------------------------------------------------


def grid_model(xshape, gshape, **attrs):
    node = helper.make_node("GridSample", ["x", "g"], ["y"], **attrs)
    out = [xshape[0], xshape[1], *gshape[1:-1]]
    return model(node, [vi("x", F, xshape), vi("g", F, gshape)], [vi("y", F, out)])


def grid_values(gshape):
    """Uniform in [-1.3, 1.3] (some outside), with exact borders and centre mixed in."""
    g = RNG.uniform(-1.3, 1.3, gshape).astype(np.float32)
    flat = g.reshape(-1)
    flat[: min(6, flat.size)] = np.array([-1, 1, 0, -1, 1, 0.5], np.float32)[: min(6, flat.size)]
    return g


@pytest.mark.parametrize("mode", ["linear", "nearest", "cubic"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align", [0, 1])
def test_grid_sample_2d(mode, padding, align):
    xshape, gshape = (2, 3, 4, 5), (2, 3, 7, 2)
    m = grid_model(xshape, gshape, mode=mode, padding_mode=padding, align_corners=align)
    check(m, {"x": rand(*xshape), "g": grid_values(gshape)})


@pytest.mark.parametrize("mode", ["linear", "nearest"])
@pytest.mark.parametrize("padding", ["zeros", "reflection"])
def test_grid_sample_3d(mode, padding):
    xshape, gshape = (1, 2, 3, 4, 2), (1, 2, 3, 2, 3)
    m = grid_model(xshape, gshape, mode=mode, padding_mode=padding, align_corners=0)
    check(m, {"x": rand(*xshape), "g": grid_values(gshape)})


def test_grid_sample_opset16_names_and_far_coordinates():
    """bicubic (opset 16) is cubic (opset 20); grid values far outside sample zeros."""
    xshape, gshape = (1, 1, 3, 3), (1, 2, 2, 2)
    inputs, outputs = [vi("x", F, xshape), vi("g", F, gshape)], [vi("y", F, [1, 1, 2, 2])]
    node = helper.make_node("GridSample", ["x", "g"], ["y"], mode="bicubic")
    m = model(node, inputs, outputs, 16)
    g = np.array([[[[-50.0, 0.1], [1e6, -1e6]], [[0.3, -0.2], [3.0, 2.5]]]], np.float32)
    feeds = {"x": rand(*xshape), "g": g}
    cubic = model(helper.make_node("GridSample", ["x", "g"], ["y"], mode="cubic"), inputs, outputs)
    check(m, feeds, want=ReferenceEvaluator(cubic).run(None, feeds))


# --- DFT, STFT, MelWeightMatrix ----------------------------------------------------------


def dft_model(xshape, yshape, length=None, opset=20, **attrs):
    inputs = ["x", "n" if length is not None else ""] + (["axis"] if opset >= 20 else [])
    axis = attrs.pop("_axis", 1)
    node = helper.make_node("DFT", inputs, ["y"], **attrs)
    inits = [helper.make_tensor("axis", I64, [], [axis])] if opset >= 20 else []
    if length is not None:
        inits.append(helper.make_tensor("n", I64, [], [length]))
    return model(node, [vi("x", F, xshape)], [vi("y", F, yshape)], opset, inits)


def fft_reference(x, axis, length, inverse=False, onesided=False):
    z = x[..., 0] if x.shape[-1] == 1 else x[..., 0] + 1j * x[..., 1]
    z = z.astype(np.complex128)
    if inverse and onesided:
        return np.fft.irfft(z, n=length, axis=axis)[..., None].astype(np.float32)
    y = np.fft.ifft(z, n=length, axis=axis) if inverse else np.fft.fft(z, n=length, axis=axis)
    if onesided:
        y = np.take(y, np.arange(length // 2 + 1), axis=axis)
    return np.stack([y.real, y.imag], -1).astype(np.float32)


@pytest.mark.parametrize(
    "xshape, axis, length, onesided",
    [
        ((2, 7, 3, 1), 1, None, 0),  # odd length
        ((2, 7, 3, 2), 2, 5, 0),  # complex input, truncated
        ((3, 6, 1), 1, 9, 1),  # zero-padded, one-sided
        ((2, 5, 2), 1, None, 1),
    ],
)
def test_dft_forward(xshape, axis, length, onesided):
    x = rand(*xshape, scale=3.0)
    n = length or xshape[axis]
    bins = n // 2 + 1 if onesided else n
    yshape = list(xshape[:-1]) + [2]
    yshape[axis] = bins
    m = dft_model(xshape, yshape, length, onesided=onesided, _axis=axis)
    want = fft_reference(x, axis, n, onesided=bool(onesided))
    check(m, {"x": x}, rtol=1e-5, atol=1e-4, want=[want])


@pytest.mark.parametrize("length", [8, 9, 5])
def test_dft_inverse_one_sided_opset17(length):
    """irfft: the imaginary parts of DC (and Nyquist) are ignored; opset 17 axis attribute."""
    xshape = (2, 4, 3, 2)
    x = rand(*xshape)
    m = dft_model(xshape, [2, length, 3, 1], length, opset=17, inverse=1, onesided=1, axis=1)
    want = fft_reference(x, 1, length, inverse=True, onesided=True)
    check(m, {"x": x}, rtol=1e-5, atol=1e-5, want=[want])


def test_dft_complex_inverse_is_refused():
    m = dft_model((1, 4, 2), [1, 4, 2], inverse=1)
    with pytest.raises(xrelay.Error, match="complex-to-complex inverse DFT"):
        xrelay.from_onnx(m)


def test_stft_with_window_and_hop():
    signal = rand(2, 37, 1)
    window = np.hanning(10).astype(np.float32)
    node = helper.make_node("STFT", ["s", "step", "w", "len"], ["y"], onesided=1)
    inits = [helper.make_tensor("step", I64, [], [3]), helper.make_tensor("len", I64, [], [10])]
    m = model(node, [vi("s", F, [2, 37, 1]), vi("w", F, [10])], [vi("y", F, None)], 17, inits)
    frames = 1 + (37 - 10) // 3
    want = np.stack(
        [np.fft.rfft(signal[:, f * 3 : f * 3 + 10, 0] * window, axis=1) for f in range(frames)],
        axis=1,
    )
    want = np.stack([want.real, want.imag], -1).astype(np.float32)
    check(m, {"s": signal, "w": window}, atol=1e-5, want=[want])


def test_mel_weight_matrix_is_a_constant():
    names = ["bins", "n", "rate", "low", "high"]
    node = helper.make_node("MelWeightMatrix", names, ["y"])
    types = [TensorProto.INT32] * 3 + [F, F]
    values = [np.int32(12), np.int32(64), np.int32(16000), np.float32(30), np.float32(7000)]
    inits = [helper.make_tensor(n, t, [], [v]) for n, t, v in zip(names, types, values)]
    m = model(node, [], [vi("y", F, None)], 17, inits)
    want = ReferenceEvaluator(m).run(None, {})
    assert run(m, {})[0].tolist() == want[0].tolist()


# --- CausalConvWithState, LinearAttention, FlexAttention ----------------------------------


@pytest.mark.parametrize("k, with_past, activation", [(3, True, "silu"), (1, False, "none")])
def test_causal_conv_with_state(k, with_past, activation):
    b, c, length = 2, 3, 5
    names = ["x", "w", "bias", "past" if with_past else ""]
    node = helper.make_node("CausalConvWithState", names, ["y", "state"], activation=activation)
    inputs = [vi("x", F, [b, c, length]), vi("w", F, [c, 1, k]), vi("bias", F, [c])]
    feeds = {"x": rand(b, c, length), "w": rand(c, 1, k), "bias": rand(c)}
    if with_past:
        inputs.append(vi("past", F, [b, c, k - 1]))
        feeds["past"] = rand(b, c, k - 1)
    m = model(node, inputs, [vi("y", F, None), vi("state", F, None)], 27)
    check(m, feeds)


@pytest.mark.parametrize(
    "rule, hq, hkv, decay_per_head, beta_width, past",
    [
        ("linear", 2, 2, False, 0, False),
        ("gated", 4, 2, True, 0, True),
        ("delta", 2, 1, False, 1, False),
        ("gated_delta", 6, 3, False, 3, True),
    ],
)
def test_linear_attention(rule, hq, hkv, decay_per_head, beta_width, past):
    b, t, dk, dv = 2, 5, 3, 4
    names = ["q", "k", "v", "past" if past else "", "decay" if "gated" in rule else ""]
    names.append("beta" if "delta" in rule else "")
    node = helper.make_node(
        "LinearAttention", names, ["o", "s"], q_num_heads=hq, kv_num_heads=hkv, update_rule=rule
    )
    feeds = {"q": rand(b, t, hq * dk), "k": rand(b, t, hkv * dk) / 2, "v": rand(b, t, hkv * dv)}
    if past:
        feeds["past"] = rand(b, hkv, dk, dv)
    if "gated" in rule:
        feeds["decay"] = -np.abs(rand(b, t, hkv if decay_per_head else hkv * dk))
    if "delta" in rule:
        feeds["beta"] = RNG.uniform(0, 1, (b, t, beta_width)).astype(np.float32)
    inputs = [vi(n, F, feeds[n].shape) for n in names if n]
    m = model(node, inputs, [vi("o", F, None), vi("s", F, None)], 27)
    check(m, feeds, rtol=1e-4, atol=1e-5)


def flex_model(qshape, kshape, vshape, elem=F, **attrs):
    node = helper.make_node(
        "FlexAttention", ["q", "k", "v"], ["y"], domain="ai.onnx.preview", **attrs
    )
    inputs = [vi("q", elem, qshape), vi("k", elem, kshape), vi("v", elem, vshape)]
    return model(node, inputs, [vi("y", elem, None)], 26, domains=[("ai.onnx.preview", 1)])


def test_flex_attention_grouped_with_score_mod():
    cap = helper.make_tensor("cap", F, [], [3.0])
    score_mod = helper.make_graph(
        [
            helper.make_node("Div", ["s", "cap"], ["d"]),
            helper.make_node("Tanh", ["d"], ["t"]),
            helper.make_node("Mul", ["t", "cap"], ["out"]),
        ],
        "soft_cap",
        [vi("s", F, None)],
        [vi("out", F, None)],
        initializer=[cap],
    )
    m = flex_model([1, 4, 3, 5], [1, 2, 7, 5], [1, 2, 7, 6], scale=0.3, score_mod=score_mod)
    feeds = {"q": rand(1, 4, 3, 5), "k": rand(1, 2, 7, 5), "v": rand(1, 2, 7, 6)}
    check(m, feeds)


def test_flex_attention_fp16_softmax_in_f32():
    m = flex_model([1, 2, 3, 4], [1, 2, 5, 4], [1, 2, 5, 4], elem=H)
    feeds = {
        n: rand(*s, dtype=np.float16)
        for n, s in [("q", (1, 2, 3, 4)), ("k", (1, 2, 5, 4)), ("v", (1, 2, 5, 4))]
    }
    check(m, feeds, rtol=2e-3, atol=2e-3)


# --- Col2Im, MaxUnpool, RoiAlign, DeformConv ----------------------------------------------


@pytest.mark.parametrize(
    "image, block, attrs",
    [
        ([5, 7], [2, 3], {"strides": [2, 1], "pads": [1, 0, 0, 2], "dilations": [1, 2]}),
        ([3, 4, 5], [2, 1, 2], {}),
    ],
)
def test_col2im(image, block, attrs):
    dims = len(image)
    strides, dilations = attrs.get("strides", [1] * dims), attrs.get("dilations", [1] * dims)
    pads = attrs.get("pads", [0] * 2 * dims)
    blocks = [
        (image[i] + pads[i] + pads[i + dims] - dilations[i] * (block[i] - 1) - 1) // strides[i] + 1
        for i in range(dims)
    ]
    xshape = [2, 3 * int(np.prod(block)), int(np.prod(blocks))]
    node = helper.make_node("Col2Im", ["x", "image", "block"], ["y"], **attrs)
    inits = [
        helper.make_tensor("image", I64, [dims], image),
        helper.make_tensor("block", I64, [dims], block),
    ]
    m = model(node, [vi("x", F, xshape)], [vi("y", F, None)], 18, inits)
    check(m, {"x": rand(*xshape)})


def test_max_unpool_inverts_max_pool_indices():
    """The indices are flat in the inferred [1, 2, 4, 6], then zero-padded at the ends to
    output_shape (as the ONNX reference and its test case have it)."""
    x = rand(1, 2, 4, 6)
    pool = helper.make_node("MaxPool", ["x"], ["p", "i"], kernel_shape=[2, 2], strides=[2, 2])
    pm = model(pool, [vi("x", F, [1, 2, 4, 6])], [vi("p", F, None), vi("i", I64, None)])
    pooled, indices = ReferenceEvaluator(pm).run(None, {"x": x})
    node = helper.make_node(
        "MaxUnpool", ["p", "i", "shape"], ["y"], kernel_shape=[2, 2], strides=[2, 2]
    )
    shape = helper.make_tensor("shape", I64, [4], [1, 2, 5, 7])
    m = model(
        node,
        [vi("p", F, [1, 2, 2, 3]), vi("i", I64, [1, 2, 2, 3])],
        [vi("y", F, None)],
        22,
        [shape],
    )
    check(m, {"p": pooled, "i": indices})


@pytest.mark.parametrize("mode, coord", [("avg", "half_pixel"), ("max", "output_half_pixel")])
def test_roi_align(mode, coord):
    x = rand(2, 3, 7, 9)
    rois = np.array(
        [
            [0.5, 1.0, 6.5, 5.2],
            [-2.0, -1.5, 3.0, 12.0],
            [3.3, 2.2, 3.4, 2.3],
            [8.0, 6.0, 11.0, 9.5],
        ],
        np.float32,
    )
    batch = np.array([1, 0, 1, 0], np.int64)
    node = helper.make_node(
        "RoiAlign",
        ["x", "rois", "b"],
        ["y"],
        mode=mode,
        coordinate_transformation_mode=coord,
        output_height=3,
        output_width=2,
        sampling_ratio=2,
        spatial_scale=0.8,
    )
    inputs = [vi("x", F, [2, 3, 7, 9]), vi("rois", F, [4, 4]), vi("b", I64, [4])]
    m = model(node, inputs, [vi("y", F, None)])
    check(m, {"x": x, "rois": rois, "b": batch})


@pytest.mark.parametrize("group, offset_group", [(1, 1), (2, 2), (2, 1)])
def test_deform_conv(group, offset_group):
    n, c, h, w, oc, k = 1, 4, 5, 6, 4, (2, 3)
    attrs = {"strides": [1, 2], "pads": [1, 0, 0, 1], "dilations": [2, 1]}
    oh = (h + 1 - (k[0] - 1) * 2 - 1) // 1 + 1
    ow = (w + 1 - (k[1] - 1) - 1) // 2 + 1
    feeds = {
        "x": rand(n, c, h, w),
        "w": rand(oc, c // group, *k),
        "off": rand(n, offset_group * k[0] * k[1] * 2, oh, ow, scale=1.5),
        "b": rand(oc),
        "mask": RNG.uniform(0, 1, (n, offset_group * k[0] * k[1], oh, ow)).astype(np.float32),
    }
    node = helper.make_node(
        "DeformConv",
        ["x", "w", "off", "b", "mask"],
        ["y"],
        group=group,
        offset_group=offset_group,
        kernel_shape=list(k),
        **attrs,
    )
    m = model(node, [vi(name, F, v.shape) for name, v in feeds.items()], [vi("y", F, None)])
    check(m, feeds, rtol=1e-4, atol=1e-5)


# --- ReverseSequence, SwiGLU, Binarizer, Upsample, Det ---------------------------------------


@pytest.mark.parametrize("batch_axis, time_axis", [(0, 1), (1, 0)])
def test_reverse_sequence(batch_axis, time_axis):
    shape = [3, 5, 2] if batch_axis == 0 else [5, 3, 2]
    node = helper.make_node(
        "ReverseSequence", ["x", "lens"], ["y"], batch_axis=batch_axis, time_axis=time_axis
    )
    m = model(node, [vi("x", F, shape), vi("lens", I64, [3])], [vi("y", F, shape)], 10)
    check(m, {"x": rand(*shape), "lens": np.array([5, 1, 3], np.int64)})


def test_swiglu_and_binarizer():
    node = helper.make_node("SwiGLU", ["a", "b"], ["y"], alpha=1.7)
    m = model(node, [vi("a", F, [3, 5]), vi("b", F, [3, 5])], [vi("y", F, [3, 5])], 28)
    check(m, {"a": rand(3, 5, scale=3), "b": rand(3, 5)})
    node = helper.make_node("Binarizer", ["x"], ["y"], domain="ai.onnx.ml", threshold=0.25)
    m = model(node, [vi("x", D, [4, 3])], [vi("y", D, [4, 3])], 17, domains=[("ai.onnx.ml", 1)])
    x = rand(4, 3, dtype=np.float64)
    x[0, 0] = 0.25
    check(m, {"x": x})


def test_upsample_nearest_whole_scales():
    scales = helper.make_tensor("s", F, [4], [1, 2, 3, 1])
    node = helper.make_node("Upsample", ["x", "s"], ["y"], mode="nearest")
    m = model(node, [vi("x", F, [1, 2, 3, 2])], [vi("y", F, None)], 9, [scales])
    check(m, {"x": rand(1, 2, 3, 2)})
    node = helper.make_node("Upsample", ["x", "s"], ["y"], mode="linear")
    with pytest.raises(xrelay.Error, match="Upsample mode 'linear'"):
        xrelay.from_onnx(model(node, [vi("x", F, [1, 2, 3, 2])], [vi("y", F, None)], 9, [scales]))


@pytest.mark.parametrize("shape", [(2, 3, 3), (4, 4), (2, 5, 5), (1, 1)])
def test_det(shape):
    x = rand(*shape)
    if len(shape) == 3:
        x[0, 1] = x[0, 0] * 2  # a singular matrix: 0
    node = helper.make_node("Det", ["x"], ["y"])
    m = model(node, [vi("x", F, shape)], [vi("y", F, None)])
    check(m, {"x": x}, rtol=1e-4, atol=1e-5, want=[np.linalg.det(x).astype(np.float32)])
