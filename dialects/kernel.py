"""The `kernel` dialect: typed attributes that the lowering attaches to runtime-kernel
declarations and packed parameters, so mid-pipeline IR prints and parses back.

    func.func private @xr_gemm_0(tensor<64x27xf32>, ...) -> tensor<1x64x1024xf32>
        attributes {xrelay.kernel = #kernel.gemm<m = 64, n = 1024, k = 27, rsa = 27, csa = 1,
                    rsb = 1024, csb = 1, ldc = 1024, per_row = true, relu = true>}
    %w.packed = ... {xrelay.pack = #kernel.pack<source = "w", operand = "a", rows = 64, k = 27>}

Each attribute holds a frozen dataclass; the textual form lists the fields that differ from
their defaults as `name = value` (integers, booleans, strings, lists of integer lists).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar, Generic, TypeVar

from xdsl.ir import Data, Dialect
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer

R = TypeVar("R")


def _print_value(printer: Printer, value: object) -> None:
    if isinstance(value, bool):
        printer.print_string("true" if value else "false")
    elif isinstance(value, int):
        printer.print_string(str(value))
    elif isinstance(value, str):
        printer.print_string_literal(value)
    else:  # a tuple of integer tuples
        rows = ", ".join("[" + ", ".join(str(v) for v in row) + "]" for row in value)
        printer.print_string(f"[{rows}]")


def _parse_value(parser: AttrParser, default: object) -> object:
    if isinstance(default, bool):
        return parser.parse_boolean()
    if isinstance(default, int):
        return parser.parse_integer(allow_boolean=False)
    if isinstance(default, str):
        return parser.parse_str_literal()

    def row() -> tuple[int, ...]:
        return tuple(
            parser.parse_comma_separated_list(
                AttrParser.Delimiter.SQUARE, lambda: parser.parse_integer(allow_boolean=False)
            )
        )

    return tuple(parser.parse_comma_separated_list(AttrParser.Delimiter.SQUARE, row))


class RecordAttr(Data[R], Generic[R]):
    """An attribute whose data is an instance of `record` (a frozen dataclass whose fields
    all have defaults of type int, bool, str or tuple of int tuples)."""

    record: ClassVar[type]

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> R:
        fields = {f.name: f for f in dataclasses.fields(cls.record)}
        values: dict[str, object] = {}

        def entry() -> None:
            pos = parser.pos
            key = parser.parse_identifier()
            if key not in fields or key in values:
                parser.raise_error(f"#{cls.name}: unexpected or repeated field '{key}'", pos)
            parser.parse_punctuation("=")
            values[key] = _parse_value(parser, _default(fields[key]))

        parser.parse_comma_separated_list(AttrParser.Delimiter.ANGLE, entry)
        return cls.record(**values)

    def print_parameter(self, printer: Printer) -> None:
        items = [
            (f.name, getattr(self.data, f.name))
            for f in dataclasses.fields(self.record)
            if getattr(self.data, f.name) != _default(f)
        ]
        with printer.in_angle_brackets():
            for i, (key, value) in enumerate(items):
                if i:
                    printer.print_string(", ")
                printer.print_string(f"{key} = ")
                _print_value(printer, value)


def _default(f: dataclasses.Field) -> object:
    if f.default is not dataclasses.MISSING:
        return f.default
    return f.default_factory()  # type: ignore[misc]


def size_code(j: int) -> int:
    """A size of a GEMM spec known only at run time: the declaration's j-th index
    argument (after its buffers), written as the negative number -(j + 1)."""
    return -(j + 1)


def size_index(value: int) -> int | None:
    """The index argument a spec field reads (`size_code`), or None for a constant."""
    return -value - 1 if value < 0 else None


@dataclass(frozen=True)
class GemmSpec:
    """C[b][i, j] = sum_k A[b][i, k] B[b][k, j] per batch index b (nested loops `batch`,
    each (count, A stride, B stride, C stride, vector stride)), then the epilogue
    y = acc * scale[ch] + shift[ch] (+ residual), relu, where ch is the row (`per_row`,
    convolution channels) or the column. A packed operand is read in the layout of
    lowering/kernels/prepack.py, padded to `mpad` rows (A) or `npad` columns (B). A
    negative size or stride is a run-time value: the declaration's index argument
    `size_index(value)` (dynamic shapes).

    `window` ((H, W), (KH, KW), (SH, SW), (DH, DW), (PT, PL), (OH, OW)): B is the implicit
    im2col matrix of a convolution whose input B points at (kernels/conv_pack.py; rsb and
    csb unused, the batch strides step through the input); in an 8-bit product that is
    not `per_row`, A is that matrix's transpose, from the input A points at (pixel-major).

    `group` != 0: the 8-bit GEMM (lowering/kernels/igemm.py, qnn-int-products): A and B
    are bytes, the data u8 (s8 when `flip`: read xor 0x80), the weight s8 packed in words of
    `group` values; C is i32; the epilogue is the shift, an i32 vector. With `requantize`
    (and `scale`: the f32 multipliers) the declaration has a second result, the bytes
    clamp(roundeven(f32(C) * scale[ch]) + out_zero_point, out_min, out_max); C then holds
    partial sums only. Its `window` has no padding (qnn-int-products pads the input first)
    unless `direct`.
    `direct` (f32, strides 1 or 2): B's rows are read from a zero-padded copy of the
    convolution's input (its phases) at one offset per k (lowering/kernels/gemm_direct.py),
    not packed.
    `tiles`: on AMX tiles (lowering/kernels/amx.py), the weight packed for them; with
    `direct` a convolution read straight from its input's words (lowering/kernels/
    amx_conv.py; without tiles, on VNNI, lowering/kernels/vnni_conv.py, weight- or
    pixel-major), the weight packed for that: its `window` keeps the padding, which the
    kernel fills with the byte `fill` (the zero point, as the kernel reads the data).
    `prologue` (f32, B read as a plain matrix, no batch strides of its vectors): B[k, j]
    is read as max(B[k, j] * ps[k] + pt[k], 0), the two vectors the declaration's next
    arguments after the residual (per-channel affine ops and relu before a 1x1
    convolution).
    `pixel_major` (f32 convolution, A its weight packed in `mpad` / NR panels of NR rows):
    the product runs as pixels x channels into a scratch, transposed back into C
    (lowering/kernels/gemm_pixel.py; prepack-weights chooses it for few pixels or a window
    wider than 3 x 3, and for Winograd's products of few tiles, term by term). In an 8-bit
    `direct` product of pixels x channels (qnn-int-products, VNNI): C and the bytes are
    stored channel-major, [N][M] (lowering/kernels/vnni_conv.py), not as [M, ldc].
    `winograd`: the products of Winograd's terms (winograd_convs.product_spec: B the input
    transform's tiles through a 1x1 window, A the transformed weights, a batch of terms)."""

    m: int = 0
    n: int = 0
    k: int = 0
    rsa: int = 0
    csa: int = 0
    rsb: int = 0
    csb: int = 0
    ldc: int = 0
    batch: tuple[tuple[int, ...], ...] = ()
    per_row: bool = False
    scale: bool = False
    shift: bool = False
    residual: bool = False
    relu: bool = False
    a_packed: bool = False
    b_packed: bool = False
    mpad: int = 0
    npad: int = 0
    group: int = 0
    tiles: bool = False
    direct: bool = False
    fill: int = 0
    flip: bool = False
    requantize: bool = False
    out_zero_point: int = 0
    out_min: int = 0
    out_max: int = 0
    window: tuple[tuple[int, ...], ...] = ()
    prologue: bool = False
    pixel_major: bool = False
    winograd: bool = False


@dataclass(frozen=True)
class PackSpec:
    """How a packed parameter is made from parameter `source`: operand "a" (convolution
    weights [O, C/g, kh, kw] as `groups` matrices of `rows` x `k`, in panels of `panel`
    rows: the micro-kernel's height, 6 or 8) or "b" (a [rows, k] matrix, or its transpose
    when `transpose`, in panels of `panel` columns: the micro-kernel's width, 16 or 32)."""

    source: str = ""
    operand: str = ""
    rows: int = 0
    k: int = 0
    groups: int = 1
    transpose: bool = False
    panel: int = 16


@dataclass(frozen=True)
class LutSpec:
    """A table lookup of 8-bit values (qnn-lookup-tables, lowering/kernels/lut.py): the
    data is `outer` x `channels` planes of `plane` bytes; byte v of channel c becomes entry
    (v xor `flip`) of the table's row c (`per_channel`) or of its only row."""

    outer: int = 1
    channels: int = 1
    plane: int = 0
    per_channel: bool = True
    flip: int = 0


@irdl_attr_definition
class GemmAttr(RecordAttr[GemmSpec]):
    """The geometry and epilogue of a runtime GEMM declaration (`select-kernels`)."""

    name = "kernel.gemm"
    record = GemmSpec


@irdl_attr_definition
class PackAttr(RecordAttr[PackSpec]):
    """How a packed parameter of @main is computed from a weight (`prepack-weights`)."""

    name = "kernel.pack"
    record = PackSpec


@irdl_attr_definition
class LutAttr(RecordAttr[LutSpec]):
    """The layout of a runtime table lookup declaration (`qnn-lookup-tables`)."""

    name = "kernel.lut"
    record = LutSpec


@dataclass(frozen=True)
class PoolSpec:
    """An f32 2-D max pool (`average`: average pool) of `planes` planes [h, w] -> [oh, ow]
    (lowering/kernels/pool.py, select-kernels): window kh x kw, strides sh, sw, dilation
    dh, dw, top and left padding pt, pl (the bottom and right follow from the output's
    size)."""

    planes: int = 1
    h: int = 1
    w: int = 1
    oh: int = 1
    ow: int = 1
    kh: int = 1
    kw: int = 1
    sh: int = 1
    sw: int = 1
    dh: int = 1
    dw: int = 1
    pt: int = 0
    pl: int = 0
    average: bool = False


@irdl_attr_definition
class PoolAttr(RecordAttr[PoolSpec]):
    """The geometry of a runtime max pool declaration (`select-kernels`)."""

    name = "kernel.pool"
    record = PoolSpec


@dataclass(frozen=True)
class NarrowConvSpec:
    """An f32 2-D convolution with few input channels per group (lowering/kernels/
    narrow_conv.py, select-kernels: depthwise convolutions, stems): `n` images, `groups`
    groups of `cg` input channels [h, w] and `og` output channels [oh, ow] each; window
    kh x kw, strides sh, sw (sw 1 or 2), dilation dh, dw, top and left padding pt, pl;
    then y = acc * scale[ch] + shift[ch] (+ residual), relu, as the GEMM's epilogue (each a
    flag: the vector or tensor is the declaration's next argument after the input and the
    weight)."""

    n: int = 1
    groups: int = 1
    cg: int = 1
    og: int = 1
    h: int = 1
    w: int = 1
    oh: int = 1
    ow: int = 1
    kh: int = 1
    kw: int = 1
    sh: int = 1
    sw: int = 1
    dh: int = 1
    dw: int = 1
    pt: int = 0
    pl: int = 0
    scale: bool = False
    shift: bool = False
    residual: bool = False
    relu: bool = False


@irdl_attr_definition
class NarrowConvAttr(RecordAttr[NarrowConvSpec]):
    """The geometry and epilogue of a runtime narrow convolution declaration
    (`select-kernels`)."""

    name = "kernel.narrow_conv"
    record = NarrowConvSpec


@dataclass(frozen=True)
class WinogradSpec:
    """An f32 Winograd F(m x m, 3 x 3) transform of `planes` planes (lowering/kernels/
    winograd.py, select-kernels). Input (`output` false): [h, w] planes, padded by `top`
    and `left` (zeros past the input), into the [(m+2)^2, planes, th, tw + 1] tiles of
    relay.nn.winograd_input. Output: the [(m+2)^2, planes, th, tw] products into [h, w]
    planes (the convolution's output, cropped), then y * scale[ch] + shift[ch]
    (+ residual), relu, ch = plane % channels (each a flag: the vector or tensor is the
    declaration's next argument)."""

    output: bool = False
    m: int = 4
    planes: int = 1
    channels: int = 1
    h: int = 1
    w: int = 1
    th: int = 1
    tw: int = 1
    top: int = 0
    left: int = 0
    scale: bool = False
    shift: bool = False
    residual: bool = False
    relu: bool = False


@irdl_attr_definition
class WinogradAttr(RecordAttr[WinogradSpec]):
    """The geometry of a runtime Winograd transform declaration (`select-kernels`)."""

    name = "kernel.winograd"
    record = WinogradSpec


@dataclass(frozen=True)
class RowSpec:
    """An f32 layer norm, softmax, log-softmax, or a row's mean, maximum or minimum
    (`kind`: "layer_norm", "softmax", "log_softmax", "mean", "max" (global pools and
    relay.max), "min" (relay.min)) of `rows`
    contiguous rows of `n` values (lowering/kernels/rows.py, select-kernels); a layer
    norm's epsilon as Python writes the float (repr)."""

    kind: str = "softmax"
    rows: int = 1
    n: int = 1
    epsilon: str = ""


@irdl_attr_definition
class RowAttr(RecordAttr[RowSpec]):
    """The shape of a runtime row kernel declaration (`select-kernels`)."""

    name = "kernel.rows"
    record = RowSpec


Kernel = Dialect(
    "kernel", [], [GemmAttr, PackAttr, LutAttr, PoolAttr, NarrowConvAttr, WinogradAttr, RowAttr]
)
