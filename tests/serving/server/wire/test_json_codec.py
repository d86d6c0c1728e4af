"""The REST API's fast JSON path writes and reads what the standard library does."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from serving.server.wire import json_codec
from serving.server.wire.json_outputs import json_outputs
from serving.server.wire.tensor_checks import JsonFormat

ROW, COLUMNAR = JsonFormat.ROW, JsonFormat.COLUMNAR


def _same(a, b) -> bool:
    """Equal JSON values, NaN equal to NaN."""
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


@pytest.mark.parametrize(
    ("outputs", "fmt"),
    [
        ({"y": np.array([[0.1], [1e-7], [3.4028235e38]], np.float32)}, ROW),
        ({"y": np.array([[0.1, 2.5]], np.float64)}, COLUMNAR),
        ({"y": np.array(3.5, np.float32)}, COLUMNAR),  # a scalar (0-d) output
        ({"a": np.array([1, 2], np.int64), "b": np.array([[0.5, 2], [3, 4]], np.float32)}, ROW),
        ({"a": np.array([1, 2], np.int64), "b": np.array([[0.5, 2], [3, 4]], np.float32)}, COLUMNAR),
        ({"y": np.array([True, False])}, COLUMNAR),
        ({"y": np.array([np.nan, 1.0], np.float32)}, ROW),
        ({"y": np.array([[np.inf, -np.inf]], np.float64)}, COLUMNAR),
        ({"y": np.arange(6, dtype=np.float32).reshape(2, 3).T}, ROW),  # not C-contiguous
        ({"s": np.array([b"x", b"\xff"], dtype=object)}, ROW),
        ({"s_bytes": np.array([b"x"], dtype=object), "p": np.array([0.25], np.float32)}, ROW),
    ],
)
def test_predict_body_holds_the_values_of_json_outputs(outputs, fmt):
    expected = json.loads(json.dumps(json_outputs(outputs, fmt)))

    body = json_codec.predict_body(outputs, fmt)

    assert _same(json.loads(body), expected), body


def test_predict_body_writes_non_finite_values_as_tensorflow_serving_does():
    body = json_codec.predict_body({"y": np.array([[np.nan], [np.inf]], np.float32)}, ROW)

    assert body == b'{"predictions": [[NaN], [Infinity]]}'


def test_predict_body_writes_float32_as_its_shortest_decimal():
    body = json_codec.predict_body({"y": np.array([[0.1]], np.float32)}, ROW)

    assert body == b'{"predictions":[[0.1]]}'


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (b'{"instances": [[1.0, 2]]}', {"instances": [[1.0, 2]]}),
        (b'{"instances": [NaN, Infinity, -Infinity]}', {"instances": [math.nan, math.inf, -math.inf]}),
        (b'{"instances": [1e400]}', {"instances": [math.inf]}),
        ('{"instances": ["\u00e9"]}'.encode("utf-16"), {"instances": ["\u00e9"]}),
        (b'{"a": 1, "a": 2}', {"a": 2}),
    ],
)
def test_loads_reads_what_the_standard_library_reads(raw, expected):
    assert _same(json_codec.loads(raw), expected)


@pytest.mark.parametrize("raw", [b'{"instances": [1,]}', b"{", b'{"a" 1}'])
def test_loads_reports_invalid_json_as_the_standard_library_does(raw):
    with pytest.raises(json.JSONDecodeError) as expected:
        json.loads(raw)

    with pytest.raises(json.JSONDecodeError) as received:
        json_codec.loads(raw)

    assert (received.value.msg, received.value.pos) == (expected.value.msg, expected.value.pos)


@pytest.mark.parametrize("raw", [b' {"a": [1]} x', b'{"a": [1]}}', b'{"a": [1]}{"a": 2}', b'{"a": [NaN]} 1'])
def test_loads_stops_after_the_first_value_as_tf_serving_does(raw):
    """rapidjson's kParseStopWhenDoneFlag (`ParseJson`, TF Serving's util/json_tensor.cc)."""
    assert _same(json_codec.loads(raw), {"a": [math.nan if b"NaN" in raw else 1]})


def test_dumps_writes_non_finite_floats_as_tokens():
    assert json.loads(json_codec.dumps({"error": "x", "v": [1.5]})) == {"error": "x", "v": [1.5]}
    assert json_codec.dumps({"v": [float("nan"), float("-inf")]}) == b'{"v": [NaN, -Infinity]}'
