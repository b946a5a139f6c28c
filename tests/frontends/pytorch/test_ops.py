"""Op-level cases through both capture paths and the JIT, against torch eager: each case is
a small function of its inputs, so every converter's argument handling is exercised."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
import torch
import torch.nn.functional as F
import xrelay
from torch import nn

pytestmark = [
    pytest.mark.filterwarnings("ignore::torch.jit.TracerWarning"),
    pytest.mark.filterwarnings("ignore::FutureWarning"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]

g = torch.Generator().manual_seed(0)


def r(*shape: int) -> torch.Tensor:
    return torch.randn(*shape, generator=g)


def ints(*shape: int, high: int = 5) -> torch.Tensor:
    return torch.randint(0, high, shape, generator=g)


class Fn(nn.Module):
    def __init__(self, fn: Callable[..., torch.Tensor]) -> None:
        super().__init__()
        self.fn = fn

    def forward(self, *xs: torch.Tensor) -> torch.Tensor:
        return self.fn(*xs)


CASES: dict[str, tuple[Callable[..., torch.Tensor], tuple[torch.Tensor, ...]]] = {
    "add_alpha_scalar": (lambda x, y: torch.add(x, y, alpha=2) + 1.5, (r(2, 3), r(3))),
    "sub_rsub": (lambda x, y: (x - y) + (1 - x), (r(2, 3), r(2, 3))),
    "int_float_promotion": (lambda i, x: i * x + i, (ints(2, 3), r(2, 3))),
    "div_modes": (
        lambda x, y: (
            x / y + torch.div(x, y, rounding_mode="floor") + torch.div(x, y, rounding_mode="trunc")
        ),
        (r(4, 5), r(4, 5) + 3),
    ),
    "int_div_modes": (
        lambda a, b: (
            torch.div(a - 2, b + 1, rounding_mode="floor") * 10
            + torch.div(a - 2, b + 1, rounding_mode="trunc")
            + (a / (b + 1)).long()
        ),
        (ints(3, 4), ints(3, 4)),
    ),
    "pow_sqrt": (lambda x: x**2 + x.abs() ** 0.5 + x**3 + torch.pow(2.0, x), (r(3, 4),)),
    "remainder_fmod": (lambda x: torch.remainder(x, 1.5) + torch.fmod(x, 1.5), (r(3, 4) * 4,)),
    "compare_where": (
        lambda x, y: torch.where(x > y, x, y) + (x <= 0).float() + (x != y).float(),
        (r(3, 4), r(3, 4)),
    ),
    "logical": (
        lambda x, y: ((x > 0) & (y > 0) | ~(x > 1) ^ (y < -1)).float(),
        (r(3, 4), r(3, 4)),
    ),
    "unary_math": (
        lambda x: (
            torch.exp(x)
            + torch.tanh(x)
            + torch.sigmoid(x)
            + torch.erf(x)
            + x.sin()
            + x.cos()
            + x.neg()
            + x.sign()
            + x.floor()
            + x.ceil()
            + x.round()
            + x.abs().rsqrt()
            + x.abs().log()
            + x.reciprocal()
        ),
        (r(3, 4) + 0.1,),
    ),
    "activations": (
        lambda x: (
            F.silu(x)
            + F.hardswish(x)
            + F.hardsigmoid(x)
            + F.leaky_relu(x, 0.2)
            + F.relu6(x * 4)
            + F.hardtanh(x, -0.5, 0.5)
            + F.gelu(x)
        ),
        (r(3, 8) * 3,),
    ),
    "clamp_tensor_bounds": (lambda x, lo: torch.clamp(x, min=lo, max=lo + 1), (r(3, 4), r(4))),
    "int_clamp": (lambda i: torch.clamp(i, 1, 3), (ints(3, 4),)),
    "masked_fill_casts": (
        lambda x: x.masked_fill(x > 0.5, -1.0).to(torch.float64).half().float(),
        (r(3, 4),),
    ),
    "softmax_family": (
        lambda x: torch.softmax(x, -1) + torch.log_softmax(x, 0).exp() + F.softmax(x, 1),
        (r(2, 3, 4),),
    ),
    "reductions": (
        lambda x: (
            x.sum(1, keepdim=True)
            + x.mean((0, 2), keepdim=True)
            + x.amax(-1, keepdim=True)
            + x.amin(0)
            + x.prod(2, keepdim=True)
            + x.sum()
        ),
        (r(2, 3, 4),),
    ),
    "max_min_dim": (
        lambda x: (
            torch.max(x, 1).values
            + torch.min(x, 1)[0]
            + torch.max(x, 1).indices
            + torch.argmin(x, -1)
            + torch.argmax(x)
            + torch.max(x)
            + torch.maximum(x, x * 0.5)[:, 0]
        ),
        (r(3, 4),),
    ),
    "var_std_any_all": (
        lambda x: (
            x.var(1) + x.std(1, unbiased=False) + (x > 0).any(1).float() + (x > -2).all(1).float()
        ),
        (r(3, 6),),
    ),
    "int_sum_cumsum": (
        lambda i, x: i.sum(1).float() + torch.cumsum(x, 1)[:, -1],
        (ints(3, 4), r(3, 4)),
    ),
    "cumsum_axis0": (lambda x: torch.cumsum(x, 0), (r(5, 3),)),
    "views": (
        lambda x: (
            x.view(2, -1)
            .reshape(6, 2)
            .t()
            .flatten()
            .unflatten(0, (3, 4))
            .unsqueeze(0)
            .squeeze(0)
            .permute(1, 0)
            .transpose(0, 1)
            .contiguous()
        ),
        (r(2, 3, 2),),
    ),
    "expand_repeat": (
        lambda x: x.expand(3, 2, 4) + x.repeat(3, 1, 1) + x.expand_as(x.repeat(3, 1, 1)),
        (r(2, 4),),
    ),
    "cat_stack": (
        lambda x, y: torch.cat([x, y], 1).sum(1) + torch.stack([x, y], 0).sum(0).sum(1),
        (r(2, 3), r(2, 3)),
    ),
    "slice_select_narrow": (
        lambda x: x[1:, ::2, -2] + x[1:, 1, :2] + x.narrow(0, 1, 2)[:, 0, 0:1] + x[-1, 0, 0],
        (r(3, 4, 5),),
    ),
    "split_chunk_unbind": (
        lambda x: (
            x.split(2, 1)[1]
            + x.chunk(3, 1)[2]
            + torch.split(x, [1, 5], 1)[1][:, :2]
            + sum(x.unbind(1)).unsqueeze(1)
        ),
        (r(3, 6),),
    ),
    "gather_index": (
        lambda x, i: torch.gather(x, 1, i) + x[:, i[0]] + torch.index_select(x, 0, i[:, 0]),
        (r(4, 4), ints(4, 4, high=4)),
    ),
    "embedding": (
        lambda i: F.embedding(i, torch.arange(20.0).reshape(10, 2)),
        (ints(2, 3, high=10),),
    ),
    "tril_triu_arange": (
        lambda x: x.tril() + x.triu(1) + torch.arange(4.0) + torch.zeros_like(x),
        (r(4, 4),),
    ),
    "pad_modes": (
        lambda x: torch.cat(
            [
                F.pad(x, (1, 2, 1, 0), value=0.5).flatten(1),
                F.pad(x, (1, 1, 1, 1), mode="reflect").flatten(1),
                F.pad(x, (2, 0, 0, 2), mode="replicate").flatten(1),
            ],
            1,
        ),
        (r(1, 2, 4, 4),),
    ),
    "conv1d_conv_transpose": (
        lambda x, w, w2: (
            F.conv1d(x, w, padding=1, stride=2).sum()
            + F.conv_transpose2d(
                x.unsqueeze(2).repeat(1, 1, 3, 1), w2, stride=2, padding=1, output_padding=1
            ).sum()
        ),
        (r(1, 4, 9), r(6, 4, 3), r(4, 3, 3, 3)),
    ),
    "conv_same_dilated": (
        lambda x, w: F.conv2d(x, w, padding="same", dilation=2),
        (r(1, 2, 8, 8), r(3, 2, 3, 3)),
    ),
    "pools": (
        lambda x: (
            F.max_pool2d(x, 3, 2, 1, ceil_mode=True).sum((2, 3))
            + F.avg_pool2d(x, 2, count_include_pad=False, padding=1).sum((2, 3))
            + F.avg_pool2d(x, 3, 2, 1, ceil_mode=True).sum((2, 3))
            + F.adaptive_avg_pool2d(x, (2, 3)).sum((2, 3))
            + F.adaptive_max_pool2d(x, 1).flatten(1)
            + F.max_pool1d(x.flatten(2), 4).sum(2)
            + F.avg_pool1d(x.flatten(2), 4).sum(2)
        ),
        (r(1, 3, 8, 6),),
    ),
    "layer_norm_plain": (lambda x: F.layer_norm(x, (3, 4)), (r(2, 3, 4),)),
    "batch_norm_functional": (
        lambda x, m, v: F.batch_norm(x, m, v.abs() + 0.5, eps=1e-3),
        (r(2, 3, 4, 4), r(3), r(3)),
    ),
    "matmuls": (
        lambda a, b, c, d: (
            (a @ b).sum()
            + torch.bmm(a, b).sum()
            + torch.mm(a[0], b[0]).sum()
            + torch.matmul(a, d).sum()
            + torch.matmul(d, b).sum()
            + torch.addmm(c, a[0], b[0], beta=0.5, alpha=2).sum()
        ),
        (r(2, 3, 4), r(2, 4, 3), r(3), r(4)),
    ),
    "more_kinds": (
        lambda x, y, i: (
            torch.floor_divide(x, y.abs() + 1)
            + (x >= y).float()
            + x.isnan().float()
            + torch.logical_and(x > 0, y > 0).float()
            + torch.logical_or(x > 0, y > 0).float()
            + torch.logical_xor(x > 0, y > 0).float()
            + torch.minimum(x, y)
            + torch.clip(x, -1, 1)
            + i.type_as(x)
            + x.view_as(y)
            + x.reshape_as(y).detach()
            + x.swapaxes(0, 1).T
            + torch.broadcast_to(y[0], (3, 4))
            + torch.concat([x, y], 0)[:3]
            + x.double().half().float()
            + i.long().int().float()
            + i.bool().float()
        ),
        (r(3, 4), r(3, 4), ints(3, 4)),
    ),
    "conv3d_pools_3d_1d": (
        lambda x, w: (
            F.max_pool3d(F.conv3d(x, w, padding=1), 2).sum((2, 3, 4))
            + F.avg_pool3d(x, 2).sum((2, 3, 4)).repeat(1, 2)[:, :4]
            + F.adaptive_avg_pool1d(x.flatten(2), 4).sum(2).repeat(1, 2)[:, :4]
        ),
        (r(1, 2, 4, 4, 4), r(4, 2, 3, 3, 3)),
    ),
    "sdpa_masks": (
        lambda q, k, v, m: (
            F.scaled_dot_product_attention(q, k, v, attn_mask=m > 0)
            + F.scaled_dot_product_attention(q, k, v, attn_mask=m, scale=0.3)
        ),
        (r(1, 2, 4, 8), r(1, 2, 5, 8), r(1, 2, 5, 8), r(4, 5) + 1.5),
    ),
}


@pytest.mark.parametrize("path", ["exported", "traced"])
@pytest.mark.parametrize("name", list(CASES))
def test_op_matches_torch(name: str, path: str) -> None:
    fn, inputs = CASES[name]
    model = Fn(fn).eval()
    with torch.no_grad():
        want = model(*inputs).numpy()
    if path == "exported":
        module, params = xrelay.from_exported_program(torch.export.export(model, inputs))
    else:
        infos = [(f"x{i}", (tuple(x.shape), str(x.dtype)[6:])) for i, x in enumerate(inputs)]
        module, params = xrelay.from_pytorch(torch.jit.trace(model, inputs), infos)
    (got,) = xrelay.build(module, params=params).run(*[x.numpy() for x in inputs])
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(
        got, want, rtol=1e-4, atol=1e-4 * max(1.0, float(np.abs(want).max()))
    )
