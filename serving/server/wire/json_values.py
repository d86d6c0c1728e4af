"""One JSON value to a numpy array of a signature input's dtype and shape, as TensorFlow Serving converts it.

`{"b64": ...}` for bytes; NaN and Infinity tokens accepted; integers range-checked; ragged or too deep
lists refused in TensorFlow Serving's words (`AddValueToTensor`, util/json_tensor.cc).
"""

from __future__ import annotations

import base64
import binascii
import warnings
from typing import Any

import numpy as np
from tensorflow.core.framework import types_pb2

from serving.errors import InvalidArgument, Unimplemented, message
from serving.server.model.servable import TensorSpec
from serving.server.wire.tensor_checks import B64_KEY, cpp_dtype_name, is_b64, json_type_name, short_repr

__all__ = ["json_shape", "json_to_array", "nesting_problem"]


def json_shape(value: Any) -> tuple[int, ...]:
    shape = []
    while isinstance(value, list):
        shape.append(len(value))
        if not value:
            break
        value = value[0]
    return tuple(shape)


def _type_error(value: Any, spec: TensorSpec, where: str) -> InvalidArgument:
    return InvalidArgument(
        message(
            f"JSON Value: {short_repr(value)} Type: {json_type_name(value)} is not of expected type: "
            f"{cpp_dtype_name(spec.datatype_enum)} ({where})",
            expected=f"{spec.dtype.name} values for input {spec.alias!r}",
            received=f"a JSON {json_type_name(value)}",
            fix='Send numbers for numeric inputs, strings or {"b64": "..."} for string inputs.',
        )
    )


def _first_bad_leaf(value: Any, ok: tuple[type, ...]) -> Any:
    if isinstance(value, list):
        for item in value:
            bad = _first_bad_leaf(item, ok)
            if bad is not _NOTHING:
                return bad
        return _NOTHING
    if isinstance(value, bool) and bool not in ok:
        return value
    return _NOTHING if isinstance(value, ok) else value


_NOTHING = object()
# The input types TF Serving converts from JSON (`AddValueToTensor`, util/json_tensor.cc); others
# (half, bfloat16, uint16, complex, ...) are UNIMPLEMENTED there.
_JSON_INPUT_TYPES = frozenset(
    getattr(types_pb2, name)
    for name in (
        "DT_FLOAT",
        "DT_DOUBLE",
        "DT_INT32",
        "DT_INT16",
        "DT_INT8",
        "DT_UINT8",
        "DT_STRING",
        "DT_INT64",
        "DT_BOOL",
        "DT_UINT32",
        "DT_UINT64",
    )
)


# 1e300 cast to float32 is inf, as in TensorFlow Serving, without numpy's warning; a filter for
# this module, not `np.errstate` around each cast (3 us a request).
warnings.filterwarnings("ignore", message="overflow encountered in cast", category=RuntimeWarning, module=__name__)
_MAX_RANK = 32  # numpy's NPY_MAXDIMS (1.x); deeper JSON lists cannot become an array


def _to_bytes(value: Any, spec: TensorSpec, where: str) -> Any:
    if isinstance(value, list):
        return [_to_bytes(v, spec, where) for v in value]
    if isinstance(value, str):
        return value.encode("utf-8")
    if is_b64(value):
        try:
            return base64.b64decode(value[B64_KEY], validate=True)
        except (binascii.Error, ValueError):
            raise InvalidArgument(
                message(
                    f"Unable to base64 decode ({where})",
                    expected="standard base64 text in the 'b64' field",
                    received=short_repr(value),
                    fix="Encode the bytes with base64 (RFC 4648).",
                )
            ) from None
    if isinstance(value, dict):
        raise InvalidArgument(
            message(
                f"JSON Value: {short_repr(value)} not formatted correctly for base64 data ({where})",
                expected='an object with the single key "b64"',
                received=short_repr(value),
                fix='Send bytes as {"b64": "<base64 text>"}.',
            )
        )
    raise _type_error(value, spec, where)


def json_to_array(value: Any, spec: TensorSpec, where: str, may_contain_bools: bool = True) -> np.ndarray:
    kind = spec.numpy_dtype.kind
    expected_shape = json_shape(value)
    if len(expected_shape) > _MAX_RANK:
        raise InvalidArgument(
            message(
                f"Tensor rank {len(expected_shape)} is too high ({where})",
                expected=f"at most {_MAX_RANK} nested list levels (numpy's limit)",
                received=f"a list nested {len(expected_shape)} levels deep",
                fix="Send each input with the rank of its signature (GET /v1/models/<name>/metadata).",
            )
        )
    if spec.is_string:
        if 0 in expected_shape:
            return np.empty(expected_shape, dtype=object)
        array = np.array(_to_bytes(value, spec, where), dtype=object)
        if array.shape != expected_shape:  # ragged lists become object arrays of lists
            raise _shape_error(value, where)
    else:
        try:
            array = np.asarray(value)
        except ValueError:
            raise _shape_error(value, where) from None
        allowed = {"f": "fiu", "i": "iu", "u": "iu", "b": "b"}.get(kind)
        if spec.datatype_enum not in _JSON_INPUT_TYPES:
            leaf = _first_bad_leaf(value, ())
            if leaf is not _NOTHING:  # TF Serving converts value by value: no value, no error
                raise Unimplemented(
                    message(
                        f"Conversion of JSON Value: {short_repr(leaf)} to type: {cpp_dtype_name(spec.datatype_enum)}",
                        expected="float, double, int8/16/32/64, uint8/32/64, bool or string inputs",
                        received=f"input {spec.alias!r} of type {spec.dtype.name} ({where})",
                        fix="Use the gRPC API for this input type.",
                    )
                )
        if array.size and array.dtype.kind not in allowed:
            ok = {"f": (int, float), "i": (int,), "u": (int,), "b": (bool,)}[kind]
            bad = _first_bad_leaf(value, ok)
            raise _type_error(value if bad is _NOTHING else bad, spec, where)
        if array.dtype.kind == "O":
            raise _shape_error(value, where)
        if may_contain_bools and kind != "b":  # numpy turns [true, 1.0] into [1.0, 1.0]
            bad = _first_bad_leaf(value, (int, float))
            if bad is not _NOTHING:
                raise _type_error(bad, spec, where)
        if kind in "iu" and array.dtype != spec.numpy_dtype and array.size:
            _check_integer_range(array, value, spec, where)
        array = array.astype(spec.numpy_dtype, copy=False)  # 1e300 into float32 is inf, as in TF Serving
    return array


def _check_integer_range(array: np.ndarray, value: Any, spec: TensorSpec, where: str) -> None:
    """Refuses integers the input's dtype cannot hold (numpy's cast would wrap them around)."""
    info = np.iinfo(spec.numpy_dtype)
    if array.min() >= info.min and array.max() <= info.max:
        return
    bad = next(v for v in _leaves(value) if not info.min <= v <= info.max)
    raise InvalidArgument(
        message(
            f"JSON Value: {short_repr(bad)} Type: {json_type_name(bad)} is not of expected type: {spec.dtype.name} ({where})",
            expected=f"integers from {info.min} to {info.max} for input {spec.alias!r}",
            received=short_repr(bad),
            fix=f"Send values in the range of {spec.dtype.name}, or export the input with a wider dtype.",
        )
    )


def _leaves(value: Any):
    if isinstance(value, list):
        for item in value:
            yield from _leaves(item)
    else:
        yield value


def nesting_problem(value: Any, shape: tuple[int, ...], level: int = 0) -> str | None:
    """TensorFlow Serving's words for a list that does not fit the shape its first items give
    (`FillTensorProto`); None when the nested list is rectangular."""
    rank = len(shape)
    if not isinstance(value, list):
        if level != rank:
            return (
                f"JSON Value: {short_repr(value)} found at incorrect level: {level + 1} in the JSON DOM. "
                f"Expected at level: {rank}"
            )
        return None
    if level >= rank:
        return f"Encountered list at unexpected level: {level} expected < {rank}"
    if len(value) != shape[level]:
        return f"Encountered list at unexpected size: {len(value)} at level: {level} expected size: {shape[level]}"
    for item in value:
        problem = nesting_problem(item, shape, level + 1)
        if problem is not None:
            return problem
    return None


def _shape_error(value: Any, where: str) -> InvalidArgument:
    problem = nesting_problem(value, json_shape(value)) or "Encountered list at unexpected size or nesting"
    return InvalidArgument(
        message(
            f"{problem} ({where})",
            expected="a rectangular nested list (every list at one level the same length)",
            received=short_repr(value),
            fix="Pad or trim the lists so the tensor is rectangular.",
        )
    )
