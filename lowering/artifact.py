"""Compiled models as files: `lib.save(path)`, `xrelay.load(path)`, and pickling.

An artifact (`.xrl`) is one file:

    magic "XRELAYAR" | u64 header length | sha256 of the header | header (JSON)
    | object code (one or more objects, each at a 64-byte boundary) | LLVM IR (zlib)
    | parameters, each at a 64-byte boundary

The header holds the format and ABI versions, the xrelay, LLVM and llvmlite versions, the
target (triple, CPU name, the CPU features the code needs), the build options and the
model's hash, the signature (names, dtypes, shapes with their symbols, ranges), and for
each object (size, sha256) and every parameter (name, dtype, shape, offset, size, crc32) where
it lies. The parameters are the arrays the native code reads (prepacked weights and
hoisted constants included).

Loading runs no compiler stage: the object code goes to the JIT linker (`Library` with
`objects`), the parameters are memory-mapped from the file. A truncated or tampered
file, an artifact of another format or ABI, or one whose code needs CPU features this
machine lacks is an `xrelay.Error` saying which.
"""

from __future__ import annotations

import io
import json
import os
import struct
import tempfile
import zlib
from importlib import metadata
from pathlib import Path
from typing import Any, BinaryIO

import llvmlite
import numpy as np
from xrelay.dialects.dims import dim_str, parse_dim
from xrelay.errors import Error
from xrelay.lowering import host
from xrelay.lowering.jit import Library, missing_features
from xrelay.signature import Argument, FunctionSignature

MAGIC = b"XRELAYAR"
FORMAT = 2  # 2: several objects ("objects"); 1: one ("object"), still read
READS = (1, 2)
# the native calling convention and runtime symbols the code expects (lowering/jit.py);
# bump it when they change
ABI = 1
ALIGN = 64
_PREFIX = struct.Struct("<8sQ32s")


def sha256(data: bytes = b"") -> Any:
    """hashlib.sha256(data), hashlib imported on first use: it loads OpenSSL's libcrypto,
    3.6 MB of resident memory, which a process that builds and runs a model (and saves
    or loads no artifact) does without. Every build hashes its model and weights with
    `blake2b` (lowering/cache.py) instead."""
    import hashlib

    return hashlib.sha256(data)


def xrelay_version() -> str:
    try:
        return metadata.version("xrelay")
    except metadata.PackageNotFoundError:
        return "unknown"


def versions() -> dict[str, Any]:
    return {
        "format": FORMAT,
        "abi": ABI,
        "xrelay": xrelay_version(),
        "llvm": host.describe()["llvm"],
        "llvmlite": llvmlite.__version__,
    }


# --- signature <-> JSON -------------------------------------------------------------------


def _dtype_name(dtype: np.dtype | None) -> str | None:
    return None if dtype is None else np.dtype(dtype).name


def _dtype(name: str | None) -> np.dtype | None:
    if name is None:
        return None
    try:
        return np.dtype(name)
    except TypeError:
        import ml_dtypes  # the narrow float types (bfloat16, float8_*)

        return np.dtype(getattr(ml_dtypes, name))


def _shape(shape: tuple[Any, ...]) -> list[Any]:
    return [d if isinstance(d, int) else dim_str(d) for d in shape]


def _unshape(shape: list[Any]) -> tuple[Any, ...]:
    return tuple(d if isinstance(d, int) else parse_dim(d) for d in shape)


def signature_json(sig: FunctionSignature) -> dict[str, Any]:
    return {
        "args": [
            {
                "name": a.name,
                "shape": _shape(a.shape),
                "dtype": _dtype_name(a.dtype),
                "is_param": a.is_param,
                "storage": _dtype_name(a.storage),
            }
            for a in sig.args
        ],
        "results": [{"shape": _shape(s), "dtype": _dtype_name(d)} for s, d in sig.results],
        "result_dtypes": [_dtype_name(d) for d in sig.result_dtypes],
        "dim_ranges": [list(r) for r in sig.dim_ranges],
    }


def signature_from_json(data: dict[str, Any]) -> FunctionSignature:
    return FunctionSignature(
        tuple(
            Argument(
                a["name"], _unshape(a["shape"]), _dtype(a["dtype"]), a["is_param"],
                _dtype(a["storage"]),
            )
            for a in data["args"]
        ),
        tuple((_unshape(r["shape"]), _dtype(r["dtype"])) for r in data["results"]),
        tuple(_dtype(d) for d in data["result_dtypes"]),
        tuple((n, lo, hi) for n, lo, hi in data["dim_ranges"]),
    )  # fmt: skip


# --- writing ------------------------------------------------------------------------------


def _bytes(array: np.ndarray) -> memoryview:
    """The bytes of a C-contiguous array (any dtype, 0-d and empty included)."""
    return memoryview(array.reshape(-1).view(np.uint8))


def _pad(offset: int) -> int:
    return -offset % ALIGN


def write(lib: Library, out: BinaryIO) -> None:
    if lib.externals:
        raise Error(
            "this library calls kernels compiled by another target's codegen "
            f"({', '.join(sorted(lib.externals))}), which an artifact cannot hold"
        )
    arrays = [(name, np.asarray(a, order="C")) for name, a in lib.params.items()]  # 0-d stays 0-d
    objects, offset = [], 0
    for code in lib.objects:
        offset += _pad(offset)
        objects.append({"offset": offset, "size": len(code), "sha256": sha256(code).hexdigest()})
        offset += len(code)
    ir = None
    if lib.ir_z is not None:  # what export_library compiles (position-independent)
        offset += _pad(offset)
        ir = {
            "offset": offset,
            "size": len(lib.ir_z),
            "sha256": sha256(lib.ir_z).hexdigest(),
        }
        offset += len(lib.ir_z)
    layout = []
    for name, array in arrays:
        offset += _pad(offset)
        layout.append(
            {
                "name": name,
                "dtype": _dtype_name(array.dtype),
                "shape": list(array.shape),
                "offset": offset,
                "nbytes": array.nbytes,
                "crc32": zlib.crc32(_bytes(array)),
            }
        )
        offset += array.nbytes
    header = {
        **versions(),
        "meta": lib.meta,
        "target": lib.target,
        "signature": signature_json(lib.signature),
        "objects": objects,
        "ir": ir,
        "params": layout,
        "unused_params": sorted(lib.unused_params),
    }
    text = json.dumps(header, sort_keys=True).encode()
    out.write(_PREFIX.pack(MAGIC, len(text), sha256(text).digest()))
    out.write(text)
    base = _PREFIX.size + len(text)
    out.write(b"\0" * _pad(base))  # sections are relative to the 64-aligned data start
    position = 0
    for code, entry in zip(lib.objects, objects):
        out.write(b"\0" * (entry["offset"] - position))
        out.write(code)
        position = entry["offset"] + entry["size"]
    if ir is not None:
        out.write(b"\0" * (ir["offset"] - position))
        out.write(lib.ir_z)
        position = ir["offset"] + ir["size"]
    for (_, array), entry in zip(arrays, layout):
        out.write(b"\0" * (entry["offset"] - position))
        out.write(_bytes(array))
        position = entry["offset"] + entry["nbytes"]


def save(lib: Library, path: str | os.PathLike) -> None:
    """Write `lib` to `path` atomically (a reader never sees a partial file)."""
    path = Path(path)
    if not path.parent.is_dir():
        raise Error(f"cannot save to '{path}': folder '{path.parent}' does not exist")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            write(lib, out)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def dumps(lib: Library) -> bytes:
    buffer = io.BytesIO()
    write(lib, buffer)
    return buffer.getvalue()


# --- reading ------------------------------------------------------------------------------


def _header(data: memoryview | bytes, where: str) -> tuple[dict[str, Any], int]:
    if len(data) < _PREFIX.size:
        raise Error(f"{where}: not an xrelay artifact (too short)")
    magic, length, digest = _PREFIX.unpack_from(data, 0)
    if magic != MAGIC:
        raise Error(f"{where}: not an xrelay artifact")
    text = bytes(data[_PREFIX.size : _PREFIX.size + length])
    if len(text) != length or sha256(text).digest() != digest:
        raise Error(f"{where}: the artifact's header is truncated or corrupt")
    try:
        header = json.loads(text)
    except ValueError:
        raise Error(f"{where}: the artifact's header is not JSON") from None
    if not isinstance(header, dict):
        raise Error(f"{where}: the artifact's header is malformed")
    base = _PREFIX.size + length
    return header, base + _pad(base)


def _check_compatible(header: dict[str, Any], where: str) -> None:
    if header.get("format") not in READS or header.get("abi") != ABI:
        raise Error(
            f"{where}: made by xrelay {header.get('xrelay')} (artifact format "
            f"{header.get('format')}, ABI {header.get('abi')}); this xrelay "
            f"{xrelay_version()} reads format {' or '.join(map(str, READS))}, ABI {ABI}: compile it again"
        )
    target = header["target"]
    here = host.describe()["triple"]
    if target["triple"] != here:
        raise Error(f"{where}: compiled for {target['triple']}, this machine is {here}")
    missing = missing_features(target)
    if missing:
        raise Error(
            f"{where}: compiled for CPU '{target['cpu']}', which needs features this CPU "
            f"lacks: {', '.join(missing)}"
        )


def _library(header: dict[str, Any], data: Any, start: int, size: int, where: str, mapped: Any):
    """The Library of an artifact whose bytes are `data` (a buffer), its sections from
    `start`; `mapped(entry)` gives a parameter's array."""
    try:
        return _unchecked_library(header, data, start, size, where, mapped)
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise Error(
            f"{where}: the artifact's header is malformed ({type(e).__name__}: {e})"
        ) from None


def _unchecked_library(
    header: dict[str, Any], data: Any, start: int, size: int, where: str, mapped: Any
):
    _check_compatible(header, where)
    objects = header["objects"] if "objects" in header else [{**header["object"], "offset": 0}]
    ir = header.get("ir")
    end = start
    for entry in objects + ([ir] if ir else []):
        end = max(end, start + entry["offset"] + entry["size"])
    for entry in header["params"]:
        end = max(end, start + entry["offset"] + entry["nbytes"])
    if size < end:
        raise Error(f"{where}: the artifact is truncated ({size} bytes, {end} expected)")
    codes = []
    for entry in objects:
        code = bytes(data[start + entry["offset"] : start + entry["offset"] + entry["size"]])
        if sha256(code).hexdigest() != entry["sha256"]:
            raise Error(f"{where}: the artifact's object code is corrupt (checksum mismatch)")
        codes.append(code)
    ir_z = None
    if ir:
        ir_z = bytes(data[start + ir["offset"] : start + ir["offset"] + ir["size"]])
        if sha256(ir_z).hexdigest() != ir["sha256"]:
            raise Error(f"{where}: the artifact's LLVM IR is corrupt (checksum mismatch)")
    params = {}
    for entry in header["params"]:
        array = mapped(entry)
        if zlib.crc32(_bytes(array)) != entry["crc32"]:
            raise Error(f"{where}: parameter '{entry['name']}' is corrupt (checksum mismatch)")
        params[entry["name"]] = array
    return Library(
        None,
        signature_from_json(header["signature"]),
        params,
        {},
        target=header["target"],
        objects=codes,
        ir_z=ir_z,
        meta=header["meta"],
        unused_params=header["unused_params"],
    )


def load(path: str | os.PathLike) -> Library:
    """The Library saved at `path`; parameters are memory-mapped (read-only)."""
    path = Path(path)
    where = f"'{path}'"
    try:
        size = path.stat().st_size
        with open(path, "rb") as f:
            head = f.read(_PREFIX.size)
            if len(head) == _PREFIX.size:
                (_, length, _) = _PREFIX.unpack(head)
                length = min(length, size)
                head += f.read(length)
    except OSError as e:
        raise Error(f"cannot read {where}: {e.strerror or e}") from None
    header, start = _header(head, where)
    if size <= start:
        raise Error(f"{where}: the artifact is truncated (no sections)")
    data = np.memmap(path, dtype=np.uint8, mode="r")

    def mapped(entry: dict[str, Any]) -> np.ndarray:
        offset = start + entry["offset"]
        raw = data[offset : offset + entry["nbytes"]]
        return raw.view(_dtype(entry["dtype"])).reshape(entry["shape"])

    return _library(header, data, start, size, where, mapped)


def loads(blob: bytes) -> Library:
    """The Library of an artifact held in memory (what pickling gives)."""
    where = "artifact bytes"
    header, start = _header(blob, where)
    view = memoryview(blob)

    def mapped(entry: dict[str, Any]) -> np.ndarray:
        offset = start + entry["offset"]
        raw = np.frombuffer(view[offset : offset + entry["nbytes"]], dtype=np.uint8)
        return raw.view(_dtype(entry["dtype"])).reshape(entry["shape"])

    return _library(header, blob, start, len(blob), where, mapped)
