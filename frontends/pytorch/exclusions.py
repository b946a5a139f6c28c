"""Core ATen ops (`torch.Tag.core`) the PyTorch frontend does not convert, each with the reason,
and those it never needs to convert because torch evaluates them at import time.

tests/frontends/pytorch/test_core_aten_coverage.py fails when a core op of the installed
torch is neither converted (registry), folded (FOLDED, convert.SHAPE_ONLY) nor listed here;
docs/pytorch-ops.md renders these tables.
"""

from __future__ import annotations

BACKWARD = "a gradient op: training only, never in an inference graph"
RANDOM = "random numbers (torch.Tag.nondeterministic_seeded): no reproducible result"
LAYOUT = "reads or sets memory strides and storage offsets, which relay tensors do not have"
COMPLEX = "complex tensors: relay has no complex element types"

EXCLUDED: dict[str, str] = {
    "aten::_adaptive_avg_pool2d_backward": BACKWARD,
    "aten::avg_pool2d_backward": BACKWARD,
    "aten::convolution_backward": BACKWARD,
    "aten::embedding_dense_backward": BACKWARD,
    "aten::max_pool2d_with_indices_backward": BACKWARD,
    "aten::native_group_norm_backward": BACKWARD,
    "aten::native_layer_norm_backward": BACKWARD,
    "aten::rand": RANDOM,
    "aten::randn": RANDOM,
    "aten::randperm": RANDOM,
    "aten::as_strided": LAYOUT,
    "aten::sym_stride": LAYOUT,
    "aten::sym_storage_offset": LAYOUT,
    "aten::_fft_r2c": COMPLEX,
    "aten::_fft_c2r": COMPLEX,
    "aten::_local_scalar_dense": (
        "Tensor.item(): a run-time value turned into a Python number that steers the graph"
    ),
}

# Ops without tensor operands (sizes, fill values and dtypes only): their result is known at
# import time, and both capture paths evaluate them with torch (convert.fold).
FOLDED: dict[str, str] = {
    "aten::arange": "a range of known bounds",
    "aten::empty": "an uninitialized tensor of a known shape",
    "aten::empty_strided": "an uninitialized tensor of a known shape",
    "aten::full": "a constant of a known shape",
    "aten::scalar_tensor": "a 0-d constant",
}
