"""Fast JSON for the REST API: orjson where it gives the same answer as `json`.

orjson parses and writes JSON in C, an order of magnitude faster than the
standard library for the small bodies of online predict calls. It is stricter
than TensorFlow Serving's REST API in two places, where the standard library
takes over:

* reading: `NaN`/`Infinity` tokens, numbers beyond a double's range, lone
  surrogates, encodings other than UTF-8 (orjson refuses them; `json.loads`
  accepts them, or reports the error the API has always reported);
* writing: non-finite floats (orjson writes `null`; TensorFlow Serving writes
  `NaN`), strings, bytes and dtypes orjson has no numpy writer for.

float32 outputs are written with the digits TensorFlow Serving writes
(`tensors.float32_json_values`: six significant digits when they read back
to the same float32, else nine), in orjson's notation (`9000000.0` where
TensorFlow Serving writes `9e+06`: the same number).

Example:
    >>> loads(b'{"instances": [[1.0, NaN]]}')
    {'instances': [[1.0, nan]]}
    >>> predict_body({"y": np.array([[0.5]], np.float32)}, "instances")
    b'{"predictions":[[0.5]]}'
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import numpy as np
import orjson

from serving.server.wire.json_outputs import array_to_json, float32_json, json_outputs

__all__ = ["dumps", "loads", "predict_body"]

# Dtypes orjson writes from numpy itself (float32 once turned into the float64 of
# the decimal TensorFlow Serving writes, as `array_to_json` does).
_NUMPY_NATIVE = frozenset(
    np.dtype(t) for t in (np.float32, np.float64, np.int8, np.int16, np.int32, np.int64, np.uint8)
) | frozenset(np.dtype(t) for t in (np.uint32, np.uint64, np.bool_))  # no uint16: TF Serving refuses it
_OPTIONS = orjson.OPT_SERIALIZE_NUMPY


def loads(raw: bytes) -> Any:
    """Parses a JSON body as `json.loads` does (NaN and Infinity allowed), up to the end of its
    first value: bytes after it are ignored, as TF Serving's parser ignores them.

    Args:
        raw: The body.

    Returns:
        The parsed value.

    Raises:
        json.JSONDecodeError: Not valid JSON (the standard library's message).
        UnicodeDecodeError: Not UTF-8, UTF-16 or UTF-32 text.
        RecursionError: Nested beyond the standard parser's recursion limit.
    """
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        pass
    text = raw.decode(json.detect_encoding(raw), "surrogatepass")  # as json.loads decodes bytes
    try:
        return json.loads(text)  # NaN, Infinity, 1e400, UTF-16: accepted or reported as before
    except json.JSONDecodeError as err:
        if err.msg != "Extra data":
            raise
    # TF Serving parses with rapidjson's kParseStopWhenDoneFlag (`ParseJson`, util/json_tensor.cc):
    # whatever follows the first value is not read.
    return json.JSONDecoder().raw_decode(text, json.decoder.WHITESPACE.match(text).end())[0]


def dumps(value: Any) -> bytes:
    """Writes `value` as JSON bytes; non-finite floats as `NaN`/`Infinity` tokens."""
    try:
        text = orjson.dumps(value)
    except TypeError:  # a type orjson does not write
        return json.dumps(value).encode()
    if b"null" in text and _has_non_finite(value):
        return json.dumps(value).encode()
    return text


def _has_non_finite(value: Any) -> bool:
    if isinstance(value, float):
        return value != value or value in (float("inf"), float("-inf"))
    if isinstance(value, dict):
        return any(_has_non_finite(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_non_finite(v) for v in value)
    return False


def _as_written(array: np.ndarray, alias: str) -> np.ndarray:
    return float32_json(array) if array.dtype == np.float32 else array


def predict_body(outputs: Mapping[str, np.ndarray], fmt: str) -> bytes:
    """The predict response body (`predictions` or `outputs`) as JSON bytes.

    Numeric outputs go to orjson as numpy arrays; when one holds a
    non-finite value, or any output is of another dtype, the body is written
    from `tensors.json_outputs` by `dumps`. Both write the same values.

    Args:
        outputs: Output alias to value.
        fmt: `JsonFormat.ROW` or `JsonFormat.COLUMNAR`, the request's format.

    Returns:
        The body.

    Raises:
        InvalidArgument: As `tensors.json_outputs`.
    """
    if all(value.dtype in _NUMPY_NATIVE for value in outputs.values()):
        try:
            body = orjson.dumps(json_outputs(outputs, fmt, convert=_as_written), option=_OPTIONS)
        except orjson.JSONEncodeError:  # an array orjson's numpy writer refuses (not C-contiguous, ...)
            body = None
        # orjson writes NaN and Infinity as null, which numbers never are otherwise.
        if body is not None and b"null" not in body:
            return body
    return dumps(json_outputs(outputs, fmt, convert=array_to_json))
