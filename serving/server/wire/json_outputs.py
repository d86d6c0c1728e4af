"""Output arrays to REST JSON, as TensorFlow Serving writes them.

float32 values are written with six significant digits when those read back to the same float32,
else nine (`float32_json_values`, TensorFlow Serving's `WriteDecimal`); outputs whose alias ends
with `_bytes` are written as `{"b64": ...}`.
"""

from __future__ import annotations

import base64
import contextlib
import struct
import warnings
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from serving.errors import InvalidArgument, message
from serving.server.wire.tensor_checks import B64_KEY, JsonFormat, numpy_dtype_name

__all__ = ["array_to_json", "float32_json", "float32_json_values", "json_outputs"]
# A cast of a too-large value to float32 is inf, as in TensorFlow Serving, without numpy's warning.
warnings.filterwarnings("ignore", message="overflow encountered in cast", category=RuntimeWarning, module=__name__)

_BYTES_SUFFIX = "_bytes"


# The output types TF Serving writes as JSON (`AddSingleValueAndAdvance`): the same set.
_JSON_OUTPUT_DTYPES = frozenset(
    np.dtype(t) for t in (np.float32, np.float64, np.int32, np.int16, np.int8, np.uint8, np.int64, np.bool_)
) | frozenset(np.dtype(t) for t in (np.uint32, np.uint64))


_FLOAT32 = struct.Struct("f")
# Powers of ten across float32's range (1.4e-45 .. 3.4e38): a value's index among them gives its
# decimal exponent, and the scales that put 6 or 9 significant digits left of the point.
_LOWEST_POWER = -46
_POWERS_OF_TEN = 10.0 ** np.arange(_LOWEST_POWER, 40, dtype=np.float64)
_EXPONENTS = np.arange(_LOWEST_POWER - 1, 40, dtype=np.float64)  # by searchsorted index
_SIX_DIGITS_SCALE, _NINE_DIGITS_SCALE = 10.0 ** (5 - _EXPONENTS), 10.0 ** (8 - _EXPONENTS)
# Within [1e-4, 1e6) a float32 times those scales (10**k, k <= 12) is exact in float64, so
# rounding it in numpy is exact; other values go through Python's formatting.
_EXACT_LOW, _EXACT_HIGH = 1e-4, 1e6
_SMALL_ARRAY = 8  # up to this many values, formatting each is cheaper than numpy's passes


def _float32_as_written(value: float) -> float:
    """TensorFlow Serving's `WriteDecimal` for one float32 (as a Python float): six significant
    digits when they read back to the same float32, else nine."""
    six = float(f"{value:.6g}")
    try:
        same = _FLOAT32.unpack(_FLOAT32.pack(six))[0] == value
    except OverflowError:  # rounded past float32's largest value
        same = False
    return six if same else float(f"{value:.9g}")


def float32_json(array: np.ndarray) -> Any:
    """`float32_json_values` ready for a JSON writer: nested lists for small arrays of rank
    0-2 (no numpy round trip: one-row answers are most requests), a float64 array otherwise.

    Example:
        >>> float32_json(np.array([[0.73105857]], np.float32))
        [[0.731058598]]
    """
    if array.size > _SMALL_ARRAY or array.ndim > 2:
        return float32_json_values(array)
    # `_float32_as_written` inlined: this runs on every answer (0.6 us less for one value).
    pack, unpack, values = _FLOAT32.pack, _FLOAT32.unpack, []
    for value in array.ravel().tolist():
        six = float(f"{value:.6g}")  # never past float32's largest value: .6g rounds it down
        values.append(six if unpack(pack(six))[0] == value else float(f"{value:.9g}"))
    if array.ndim == 0:
        return values[0]
    if array.ndim == 1:
        return values
    rows, width = array.shape
    if rows == 1:
        return [values]
    return [values[row * width : (row + 1) * width] for row in range(rows)]


def float32_json_values(array: np.ndarray) -> np.ndarray:
    """The values TensorFlow Serving writes in JSON for a float32 array, as float64.

    TensorFlow Serving (`util/json_tensor.cc`, `WriteDecimal`) writes a float32
    with six significant digits (`absl::StrCat`) when they read back to the same
    float32, else with nine (`%.9g`): 0.1 is `0.1`, 0.73105857 is
    `0.731058598`. The float64 returned holds that decimal exactly as a JSON
    reader parses it, so a writer of shortest float64 decimals (orjson, `json`)
    writes the same number. Only the notation may differ: `9000000.0`, not
    `9e+06`.

    Args:
        array: A float32 array (any shape; NaN and infinities pass through).

    Returns:
        A float64 array of the same shape.

    Example:
        >>> float32_json_values(np.array([0.1, 0.73105857], np.float32)).tolist()
        [0.1, 0.731058598]
    """
    if array.size <= _SMALL_ARRAY:
        return np.array([_float32_as_written(v) for v in array.ravel().tolist()], np.float64).reshape(array.shape)
    x = array.astype(np.float64)
    magnitude = np.abs(x)
    exact = magnitude.min() >= _EXACT_LOW and magnitude.max() < _EXACT_HIGH  # False for NaN too
    index = np.searchsorted(_POWERS_OF_TEN, magnitude, side="right")
    # Values outside the exact range (0, inf, NaN, near float32's limits) may warn; they are redone below.
    with contextlib.nullcontext() if exact else np.errstate(all="ignore"):
        scale = _SIX_DIGITS_SCALE.take(index)
        six = np.rint(x * scale)
        six /= scale
        scale = _NINE_DIGITS_SCALE.take(index)
        nine = np.rint(x * scale)
        nine /= scale
        written = np.where(six.astype(np.float32) == array, six, nine)
    if not exact:
        inexact = ~((magnitude >= _EXACT_LOW) & (magnitude < _EXACT_HIGH))
        written[inexact] = [_float32_as_written(v) for v in array[inexact].tolist()]
    return written


def array_to_json(array: np.ndarray, alias: str) -> Any:
    """Converts a numpy output to nested JSON-ready Python values."""
    kind = array.dtype.kind
    if array.dtype == np.float32:
        written = float32_json(array)
        return written.tolist() if isinstance(written, np.ndarray) else written
    if array.dtype in _JSON_OUTPUT_DTYPES:
        return array.tolist()
    if kind in "OSU":
        as_b64 = alias.endswith(_BYTES_SUFFIX)
        return _bytes_to_json(array.tolist(), as_b64)
    raise InvalidArgument(
        message(
            f"Failed to write JSON value for tensor type: {numpy_dtype_name(array.dtype)}",
            expected="float, double, int8/16/32/64, uint8/32/64, bool or string outputs",
            received=f"output {alias!r} of dtype {array.dtype}",
            fix="Use the gRPC API for this output.",
        )
    )


def _bytes_to_json(value: Any, as_b64: bool) -> Any:
    if isinstance(value, list):
        return [_bytes_to_json(v, as_b64) for v in value]
    if isinstance(value, str):
        value = value.encode("utf-8")
    if not as_b64:
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            pass  # not text: fall back to b64 rather than write invalid JSON
    return {B64_KEY: base64.b64encode(value).decode("ascii")}


def json_outputs(
    outputs: Mapping[str, np.ndarray],
    fmt: str,
    convert: Callable[[np.ndarray, str], Any] = array_to_json,
) -> dict[str, Any]:
    """Builds the predict response body: `predictions` (rows) or `outputs`.

    Args:
        outputs: Output alias to value.
        fmt: `JsonFormat.ROW` or `JsonFormat.COLUMNAR`, the request's format.
        convert: Turns one output into its JSON value (`array_to_json`, or
            the identity for a writer that takes numpy arrays).

    Returns:
        The body as a dict.

    Raises:
        InvalidArgument: No outputs, row format with a scalar output, or
            outputs whose batch sizes differ.
    """
    names = sorted(outputs)
    if not names:
        raise InvalidArgument(
            message(
                "Cannot convert empty tensor map to JSON",
                expected="at least one output tensor",
                received="a signature call that returned no outputs",
                fix="Export the signature with at least one output.",
            )
        )
    if fmt == JsonFormat.COLUMNAR:
        if len(names) == 1:
            return {"outputs": convert(outputs[names[0]], names[0])}
        return {"outputs": {name: convert(outputs[name], name) for name in names}}
    sizes = {}
    for name in names:
        if outputs[name].ndim == 0:
            raise InvalidArgument(
                message(
                    f"Tensor name: {name} has no shape information",
                    expected="outputs with a batch dimension for row format",
                    received="a scalar output",
                    fix='Use the columnar format ({"inputs": ...}) for this signature.',
                )
            )
        sizes[name] = outputs[name].shape[0]
    if len(set(sizes.values())) > 1:
        first = names[0]
        name = next(n for n in names if sizes[n] != sizes[first])
        raise InvalidArgument(
            message(
                f"Tensor name: {name} has inconsistent batch size: {sizes[name]} expecting: {sizes[first]}",
                expected="the same first dimension for every output",
                received=f"{sizes}",
                fix='Use the columnar format ({"inputs": ...}) for this signature.',
            )
        )
    if len(names) == 1:
        return {"predictions": convert(outputs[names[0]], names[0])}
    columns = {name: convert(outputs[name], name) for name in names}
    rows = [{name: columns[name][i] for name in names} for i in range(next(iter(sizes.values())))]
    return {"predictions": rows}
