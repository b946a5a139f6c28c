"""numpy <-> xDSL element types and dense constants."""

from __future__ import annotations

import numpy as np
import pytest
import xrelay
from xrelay.dialects.dtypes import dense_from_numpy, element_type, numpy_dtype, numpy_from_dense


@pytest.mark.parametrize(
    "dtype", ["float32", "float64", "float16", "bool", "int8", "int16", "int32", "int64", "uint8"]
)
def test_dense_round_trip(dtype):
    rng = np.random.default_rng(0)
    array = (rng.standard_normal((2, 3)) * 50).astype(dtype)
    attr = dense_from_numpy(array)
    back = numpy_from_dense(attr)
    assert back.dtype == array.dtype and back.shape == array.shape
    np.testing.assert_array_equal(back, array)
    assert numpy_dtype(element_type(dtype)) == np.dtype(dtype)


def test_scalar_and_empty():
    assert numpy_from_dense(dense_from_numpy(np.float32(2.5))).shape == ()
    assert numpy_from_dense(dense_from_numpy(np.zeros((0, 3), np.float32))).shape == (0, 3)


def test_unsupported_dtype_is_an_error():
    with pytest.raises(xrelay.Error, match="unsupported dtype"):
        element_type("complex64")
