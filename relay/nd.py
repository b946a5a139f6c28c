"""`tvm.nd` and `tvm.cpu` for Relay scripts: `NDArray`, a numpy array with TVM's accessors
(`numpy()`, `asnumpy()`, `shape`, `dtype`), and `Device`, of which xrelay has one: the
host CPU, where compiled code runs and arrays live.

    x = relay.nd.array(image, relay.cpu(0))
    y = executor(x).numpy()
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from xrelay.errors import Error
from xrelay.relay.unsupported import unsupported


@dataclass(frozen=True)
class Device:
    """A device (`relay.cpu(0)`): xrelay compiles for and runs on the host CPU only."""

    device_type: str = "cpu"
    device_id: int = 0

    def __repr__(self) -> str:
        return f"{self.device_type}({self.device_id})"


def cpu(dev_id: int = 0) -> Device:
    """The host CPU (`tvm.cpu`); every id is the same CPU, as in TVM."""
    if not isinstance(dev_id, int) or dev_id < 0:
        raise Error(f"cpu({dev_id!r}): the device id is a non-negative integer")
    return Device("cpu", dev_id)


def check_device(device: Any, where: str) -> None:
    """Refuse anything but None, a CPU `Device` or a list of them, naming `where`."""
    devices = device if isinstance(device, list | tuple) else [device]
    for dev in devices:
        if dev is not None and not isinstance(dev, Device):
            raise Error(
                f"{where}: device {dev!r} is not an xrelay device: xrelay runs on the host "
                "CPU only; pass relay.cpu(0)"
            )


class NDArray:
    """An array on the CPU (`tvm.nd.NDArray`): holds a C-contiguous numpy array; numpy
    functions accept it as an array (`np.asarray(nd)`)."""

    def __init__(self, data: np.ndarray, device: Device | None = None) -> None:
        check_device(device, "NDArray")
        self._data = np.ascontiguousarray(data)
        self.device = device or cpu(0)

    @property
    def shape(self) -> tuple[int, ...]:
        return self._data.shape

    @property
    def dtype(self) -> str:
        """The element type's name, as TVM gives it ("float32")."""
        return str(self._data.dtype)

    def numpy(self) -> np.ndarray:
        """A copy as a numpy array."""
        return self._data.copy()

    asnumpy = numpy  # TVM's older name

    def copyfrom(self, source: Any) -> NDArray:
        """Overwrite the contents with `source` (same shape; converted to this dtype)."""
        array = np.asarray(source)
        if array.shape != self.shape:
            raise Error(f"NDArray.copyfrom: shape {array.shape} into an array of {self.shape}")
        self._data[...] = array
        return self

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        if dtype is not None and np.dtype(dtype) != self._data.dtype:
            return self._data.astype(dtype)
        return self._data.copy() if copy else self._data

    def __repr__(self) -> str:
        return f"<xrelay.relay.nd.NDArray shape={self.shape}, {self.device}>\n{self._data!r}"


def array(source: Any, device: Device | None = None) -> NDArray:
    """A copy of `source` (a numpy array, anything numpy converts, or an NDArray) on
    `device` (`tvm.nd.array`)."""
    return NDArray(np.array(source, order="C"), device)


def empty(shape: Any, dtype: Any = "float32", device: Device | None = None) -> NDArray:
    """An uninitialized array (`tvm.nd.empty`), e.g. for `get_output(i, out)`."""
    return NDArray(np.empty(tuple(shape), np.dtype(dtype)), device)


def to_numpy(value: Any) -> np.ndarray:
    """An input value (NDArray, numpy array, anything numpy converts) as a numpy array."""
    return np.asarray(value)


def numpy_params(params: Mapping[str, Any] | None) -> dict[str, np.ndarray]:
    """Parameters given as NDArrays or numpy arrays, as numpy arrays."""
    return {name: to_numpy(value) for name, value in (params or {}).items()}


def __getattr__(name: str) -> Any:
    raise unsupported("relay.nd", name, ["Device", "NDArray", "array", "cpu", "empty"])
