"""TF Serving's REST JSON layer, translated from its `tensorflow_serving/util/json_tensor_test.cc`.

Each TEST there is translated at the level where it is meaningful here: request bodies
through `tensors.json_inputs` (FillPredictRequestFromJson), classify/regress bodies through
`examples.examples_from_json` (FillClassificationRequestFromJson /
FillRegressionRequestFromJson), outputs through `json_codec.predict_body`
(MakeJsonFromTensors), and a representative subset end to end over HTTP against a real
embedded server: a TF2 model exported here with int32/float/double/string/bool inputs, and
TF Serving's own half_plus_two for Classify and Regress. Expected values and message
substrings are TF Serving's; where the embedded server answers differently on purpose the
test says so in its name and a comment.
"""

from __future__ import annotations

import base64
import json
import math
import sys

import numpy as np
import pytest
import tensorflow as tf
from serving_helpers import http
from tensorflow.core.example import example_pb2
from tfs_contract_helpers import HALF_PLUS_TWO, start_server, tfs_testdata

from serving import config as cfg
from serving.errors import InvalidArgument, Unimplemented
from serving.server.inference.methods import classification_results, regression_results
from serving.server.model.servable import Signature, TensorSpec
from serving.server.wire import json_codec
from serving.server.wire.examples import examples_from_json
from serving.server.wire.json_inputs import json_inputs
from serving.server.wire.json_outputs import float32_json, float32_json_values
from serving.server.wire.tensor_checks import JsonFormat

ROW, COLUMNAR = JsonFormat.ROW, JsonFormat.COLUMNAR
HELLO, WORLD = base64.b64encode(b"hello").decode(), base64.b64encode(b"world").decode()


def _signature(**dtypes: tf.DType) -> Signature:
    """A predict signature whose inputs have these dtypes and unknown shapes, as in
    TF Serving's test (its TensorInfos give a dtype only)."""
    return Signature(
        name="serving_default",
        method_name="tensorflow/serving/predict",
        inputs={alias: TensorSpec(alias, dtype, None) for alias, dtype in dtypes.items()},
        outputs={},
        function=lambda **kwargs: kwargs,
    )


def _inputs(body: str, **dtypes: tf.DType) -> tuple[dict[str, np.ndarray], str]:
    return json_inputs(json_codec.loads(body.encode()), _signature(**dtypes))


def _same(a, b) -> bool:
    """Equal JSON values, NaN equal to NaN, int and float apart."""
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


# --- FillPredictRequestFromJson: request bodies to tensors ------------------------------------

INT, FLOAT, DOUBLE, STRING = tf.int32, tf.float32, tf.float64, tf.string

# (TF Serving's TEST, input dtypes, body, format, {alias: (numpy dtype, shape, values)})
CONVERSIONS = [
    (
        "SingleUnnamedTensor",
        {"default": INT},
        '{"instances": [[1,2],[3,4],[5,6]]}',
        ROW,
        {"default": (np.int32, (3, 2), [[1, 2], [3, 4], [5, 6]])},
    ),
    (
        "MixedInputForFloatTensor",
        {"default": FLOAT},
        '{"instances": [1, 2.0, 3, 4, 5.003, 0.007, 0.0]}',
        ROW,
        {"default": (np.float32, (7,), np.array([1, 2.0, 3, 4, 5.003, 0.007, 0.0], np.float32).tolist())},
    ),
    (
        "MixedInputForDoubleTensor",
        {"default": DOUBLE},
        '{"instances": [1.0, 2, 3, 4, 0.662, 0, 0.0]}',
        ROW,
        {"default": (np.float64, (7,), [1.0, 2.0, 3.0, 4.0, 0.662, 0.0, 0.0])},
    ),
    (
        "SingleUnnamedTensorWithSignature",
        {"default": INT},
        '{"signature_name": "predict_images", "instances": [[1,2]]}',
        ROW,
        {"default": (np.int32, (1, 2), [[1, 2]])},
    ),
    (
        "SingleUnnamedTensorBase64Scalars",
        {"default": STRING},
        f'{{"instances": [ {{ "b64" : "{HELLO}" }}, {{ "b64": "{WORLD}" }} ]}}',
        ROW,
        {"default": (object, (2,), [b"hello", b"world"])},
    ),
    (
        "SingleUnnamedTensorBase64Lists",
        {"default": STRING},
        f'{{"instances": [ [{{ "b64" : "{HELLO}" }}], [{{ "b64": "{WORLD}" }}] ]}}',
        ROW,
        {"default": (object, (2, 1), [[b"hello"], [b"world"]])},
    ),
    (
        "SingleNamedTensorBase64",
        {"default": STRING},
        f'{{"instances": [{{"default": [ [{{ "b64" : "{HELLO}" }}], [{{ "b64": "{WORLD}" }}] ]}}]}}',
        ROW,
        {"default": (object, (1, 2, 1), [[[b"hello"], [b"world"]]])},
    ),
    (
        "MultipleNamedTensor",
        {"int_tensor": INT, "str_tensor": STRING, "float_tensor": FLOAT, "dbl_tensor": DOUBLE},
        """{"instances": [
            {"int_tensor": [[1,2],[3,4],[5,6]], "str_tensor": ["foo", "bar"],
             "float_tensor": [1.0, NaN], "dbl_tensor": [NaN]},
            {"int_tensor": [[7,8],[9,0],[1,2]], "str_tensor": ["baz", "bat"],
             "float_tensor": [2.0, Infinity], "dbl_tensor": [2.0]}]}""",
        ROW,
        {
            "int_tensor": (np.int32, (2, 3, 2), [[[1, 2], [3, 4], [5, 6]], [[7, 8], [9, 0], [1, 2]]]),
            "str_tensor": (object, (2, 2), [[b"foo", b"bar"], [b"baz", b"bat"]]),
            "float_tensor": (np.float32, (2, 2), [[1.0, math.nan], [2.0, math.inf]]),
            "dbl_tensor": (np.float64, (2, 1), [[math.nan], [2.0]]),
        },
    ),
    (
        "SingleUnnamedTensorColumnarFormat",
        {"int_tensor": INT},
        '{"inputs": {"int_tensor": [[[1,2],[3,4],[5,6]]]}}',
        COLUMNAR,
        {"int_tensor": (np.int32, (1, 3, 2), [[[1, 2], [3, 4], [5, 6]]])},
    ),
    (
        "SingleUnnamedTensorColumnarFormat (input name left out)",
        {"int_tensor": INT},
        '{"inputs": [[[1,2],[3,4],[5,6]]]}',
        COLUMNAR,
        {"int_tensor": (np.int32, (1, 3, 2), [[[1, 2], [3, 4], [5, 6]]])},
    ),
    (
        "MultipleNamedTensorColumnarFormat",
        {"int_tensor": INT, "str_tensor": STRING, "bin_tensor": STRING},
        f'{{"inputs": {{"int_tensor": [[[1,2],[3,4],[5,6]]], "str_tensor": ["foo", "bar"], '
        f'"bin_tensor": {{ "b64" : "{HELLO}" }}}}}}',
        COLUMNAR,
        {
            "int_tensor": (np.int32, (1, 3, 2), [[[1, 2], [3, 4], [5, 6]]]),
            "str_tensor": (object, (2,), [b"foo", b"bar"]),
            "bin_tensor": (object, (), b"hello"),  # a b64 object alone is a scalar (tensor_shape {})
        },
    ),
]


@pytest.mark.parametrize(
    ("dtypes", "body", "fmt", "expected"), [case[1:] for case in CONVERSIONS], ids=[case[0] for case in CONVERSIONS]
)
def test_request_bodies_become_the_tensors_tensorflow_serving_builds(dtypes, body, fmt, expected):
    inputs, received_fmt = _inputs(body, **dtypes)

    assert received_fmt == fmt
    assert inputs.keys() == expected.keys()
    for alias, (dtype, shape, values) in expected.items():
        assert (inputs[alias].dtype, inputs[alias].shape) == (np.dtype(dtype), shape), alias
        assert _same(inputs[alias].tolist(), values), (alias, inputs[alias])


@pytest.mark.parametrize(
    ("literal", "expected"),
    [
        # FloatTensorWithPrecisionLoss: 1435774380 and 1435774380.0 both become the nearest float32.
        ("1435774380", np.float32(1435774380)),
        ("1435774380.0", np.float32(1435774380)),
        # FloatTensorThatExceedsMaxReturnsInf: beyond float32's range is +/-inf, not an error.
        (repr(sys.float_info.max), np.float32(np.inf)),
        (repr(-sys.float_info.max), np.float32(-np.inf)),
        # FloatTensorThatExceedsMinReturnsZero: below float32's smallest value is +/-0.
        (repr(sys.float_info.min), np.float32(0.0)),
        (repr(-sys.float_info.min), np.float32(-0.0)),
    ],
)
def test_float_inputs_round_to_float32_as_in_tensorflow_serving(literal, expected):
    inputs, _ = _inputs(f'{{ "instances": [{literal}] }}', default=FLOAT)

    value = inputs["default"]
    assert value.dtype == np.float32 and value.shape == (1,)
    assert value[0] == expected and np.signbit(value[0]) == np.signbit(expected)


@pytest.mark.parametrize(
    ("dtypes", "body", "substring"),
    [
        # SingleUnnamedTensorErrors
        (
            {"default": INT},
            '{"instances": [[1,2],[3,4],[5,6,7]], "inputs": [[1,2],[3,4],[5,6,7]]}',
            "Not formatted correctly",
        ),
        ({"default": INT}, '{"instances": [[1,2],[3,4],[5,6,7]]}', "Expecting tensor size"),
        ({"default": INT}, '{"instances": [[1,2],[3,4],[[5,6]]]}', "Expecting shape"),
        ({"default": INT}, '{"instances": [1, [1]]}', "Expecting shape"),
        ({"default": INT}, '{"instances": [[1,2],["a", "b"]]}', "not of expected type"),
        # MultipleNamedTensorErrors
        (
            {"int_tensor": INT, "str_tensor": STRING},
            '{"instances": [{"int_tensor": [[1,2],[3,4],[5,6]], "str_tensor": ["foo", "bar"]},'
            ' {"int_tensor": [[[7,8],[9,0],[1,2]]], "str_tensor": ["baz", "bat"]}]}',
            "Expecting shape",
        ),
        (
            {"int_tensor": INT, "str_tensor": STRING},
            '{"instances": [{"int_tensor": [[1,2],[3,4],[5,6],[7,8]], "str_tensor": ["foo", "bar"]},'
            ' {"int_tensor": [[7,8],[9,0],[1,2]], "str_tensor": ["baz", "bat"]}]}',
            "Expecting tensor size",
        ),
        (
            {"int_tensor": INT, "str_tensor": STRING},
            '{"instances": [{"int_tensor": [[1,2],[3,4],[5,6]], "str_tensor": ["foo", "bar"]}, [1, 20, 30],'
            ' {"int_tensor": [[[7,8],[9,0],[1,2]]], "str_tensor": ["baz", "bat"]}]}',
            "Expecting object but got list",
        ),
        (
            {"str_tensor": STRING},
            '{"instances": [["baz", "bar"], {"str_tensor": ["baz", "bat"]}]}',
            "Expecting value/list but got object",
        ),
        # json_tensor.cc's other messages, on the same paths
        ({"default": INT}, '{"instances": 5}', "Expecting 'instances' to be an list/array"),
        ({"default": INT}, '{"instances": []}', "No values in 'instances' array"),
        ({"default": INT}, '{"signature_name": "x"}', "Missing 'inputs' or 'instances' key"),
        (
            {"a": INT, "b": INT},
            '{"instances": [1, 2]}',
            "instances is a plain list, but expecting list of objects as multiple input tensors",
        ),
        (
            {"a": INT, "b": INT},
            '{"inputs": [1, 2]}',
            "inputs is a plain value/list, but expecting an object as multiple input tensors",
        ),
        ({"a": INT, "b": INT}, '{"inputs": {"a": [1]}}', "Missing named input: b in 'inputs' object"),
        (
            {"a": INT, "b": INT},
            '{"instances": [{"a": 1, "c": 2}]}',
            "Failed to process element: 0 key: c of 'instances' list. "
            "Error: INVALID_ARGUMENT: JSON object: does not have named input: c",
        ),
        ({"a": INT, "b": INT}, '{"instances": [{"a": 1}]}', "of 'instances' list. JSON object: "),
        ({"a": INT}, '{"inputs": {"a": [[1, 2], [3]]}}', "Encountered list at unexpected size: 1 at level: 1"),
        ({"a": INT}, '{"inputs": {"a": [[1, 2], 3]}}', "found at incorrect level: 2 in the JSON DOM"),
        ({"a": INT}, '{"inputs": {"a": [1, [2]]}}', "Encountered list at unexpected level: 1 expected < 1"),
        ({"a": STRING}, '{"inputs": {"a": [{"b64": "@@@"}]}}', "Unable to base64 decode"),
        ({"a": STRING}, '{"inputs": {"a": [{"b64": "aGk=", "x": 1}]}}', "not formatted correctly for base64 data"),
        ({"a": tf.bool}, '{"inputs": {"a": [true, 1]}}', "JSON Value: 1 Type: Number is not of expected type: bool"),
        ({"a": FLOAT}, '{"inputs": {"a": [true, 1.0]}}', "JSON Value: true Type: True is not of expected type"),
        ({"a": INT}, '{"inputs": {"a": [2.5]}}', "JSON Value: 2.5 Type: Number is not of expected type: int32"),
        # AddValueToTensor: IsInt / IsInt64 / IsUint: an integer the dtype cannot hold is a type error
        ({"a": INT}, '{"inputs": {"a": [3000000000]}}', "JSON Value: 3000000000 Type: Number is not of expected"),
        ({"a": tf.int64}, '{"inputs": {"a": [9223372036854775808]}}', "9223372036854775808 Type: Number is not"),
        ({"a": tf.uint32}, '{"inputs": {"a": [-1]}}', "JSON Value: -1 Type: Number is not of expected type: uint32"),
    ],
)
def test_bad_request_bodies_get_tensorflow_serving_errors(dtypes, body, substring):
    with pytest.raises(InvalidArgument) as raised:
        _inputs(body, **dtypes)

    assert substring in raised.value.text


@pytest.mark.parametrize(
    "dtype, name", [(tf.float16, "half"), (tf.bfloat16, "bfloat16"), (tf.uint16, "uint16"), (tf.complex64, "complex64")]
)
def test_json_to_other_input_types_is_unimplemented_as_in_tensorflow_serving(dtype, name):
    """`AddValueToTensor` (util/json_tensor.cc) converts float, double, int8/16/32/64, uint8/32/64,
    bool and string; any other type is `Unimplemented("Conversion of JSON Value: ", value, " to
    type: ", DataTypeString(dtype))`."""
    with pytest.raises(Unimplemented) as raised:
        _inputs('{"instances": [1.5, 2.0]}', default=dtype)

    assert raised.value.text.startswith(f"Conversion of JSON Value: 1.5 to type: {name}. Expected ")


@pytest.mark.parametrize("dtype, name", [(np.float16, "half"), (np.uint16, "uint16"), (np.complex64, "complex64")])
def test_other_output_types_cannot_be_written_as_in_tensorflow_serving(dtype, name):
    """`AddSingleValueAndAdvance` (util/json_tensor.cc) writes the types JSON input takes; any
    other is INVALID_ARGUMENT "Failed to write JSON value for tensor type: <type>"."""
    with pytest.raises(InvalidArgument) as raised:
        json_codec.predict_body({"y": np.array([1, 2], dtype)}, JsonFormat.ROW)

    assert raised.value.text.startswith(f"Failed to write JSON value for tensor type: {name}. Expected ")


def test_int8_beyond_its_range_is_refused_where_tensorflow_serving_wraps_it_around():
    # Deliberate difference: TF Serving checks IsInt() (the int32 range) and casts 300 to the
    # int8 44; silently changed values are worse than a 400.
    with pytest.raises(InvalidArgument, match="JSON Value: 300 Type: Number is not of expected type: int8"):
        _inputs('{"instances": [300]}', default=tf.int8)


# --- MakeJsonFromTensors: output tensors to the response body ---------------------------------

INT_2x3x2 = np.array([[[1, 2], [3, 4], [5, 6]], [[7, 8], [9, 0], [1, 2]]], np.int32)
BYTES_2x2 = np.array([[b"hello", b"world"], [b"tf", b"serving"]], object)
BYTES_2x2_B64 = [[{"b64": "aGVsbG8="}, {"b64": "d29ybGQ="}], [{"b64": "dGY="}, {"b64": "c2VydmluZw=="}]]
NAMED_OUTPUTS = {
    "int_tensor": INT_2x3x2,
    "str_tensor": np.array([[b"foo", b"bar"], [b"baz", b"bat"]], object),
    "float_tensor": np.array([[1.0], [2.0]], np.float32),
    "double_scalar_tensor": np.array([8.0, 9.0], np.float64),
    "str_tensor_bytes": BYTES_2x2,
}

# (TF Serving's TEST, outputs, format, the answer TF Serving's test expects)
ANSWERS = [
    (
        "FromJsonSingleTensor",
        {"int_tensor": INT_2x3x2},
        ROW,
        {"predictions": [[[1, 2], [3, 4], [5, 6]], [[7, 8], [9, 0], [1, 2]]]},
    ),
    (
        "FromJsonSingleTensor",
        {"int_tensor": INT_2x3x2},
        COLUMNAR,
        {"outputs": [[[1, 2], [3, 4], [5, 6]], [[7, 8], [9, 0], [1, 2]]]},
    ),
    (
        "FromJsonSingleScalarTensor",
        {"int_tensor": np.arange(1, 6, dtype=np.int32)},
        ROW,
        {"predictions": [1, 2, 3, 4, 5]},
    ),
    (
        "FromJsonSingleScalarTensor",
        {"int_tensor": np.arange(1, 6, dtype=np.int32)},
        COLUMNAR,
        {"outputs": [1, 2, 3, 4, 5]},
    ),
    ("FromJsonSingleBytesTensor", {"str_tensor_bytes": BYTES_2x2}, ROW, {"predictions": BYTES_2x2_B64}),
    (
        "FromJsonSingleFloatTensorNonFinite",
        {"float_tensor": np.array([[np.nan, np.inf], [3, -np.inf]], np.float32)},
        ROW,
        {"predictions": [[math.nan, math.inf], [3.0, -math.inf]]},
    ),
    (
        "FromJsonMultipleNamedTensors",
        NAMED_OUTPUTS,
        ROW,
        {
            "predictions": [
                {
                    "double_scalar_tensor": 8.0,
                    "float_tensor": [1.0],
                    "int_tensor": [[1, 2], [3, 4], [5, 6]],
                    "str_tensor": ["foo", "bar"],
                    "str_tensor_bytes": [{"b64": "aGVsbG8="}, {"b64": "d29ybGQ="}],
                },
                {
                    "double_scalar_tensor": 9.0,
                    "float_tensor": [2.0],
                    "int_tensor": [[7, 8], [9, 0], [1, 2]],
                    "str_tensor": ["baz", "bat"],
                    "str_tensor_bytes": [{"b64": "dGY="}, {"b64": "c2VydmluZw=="}],
                },
            ]
        },
    ),
    (
        "FromJsonMultipleNamedTensors",
        NAMED_OUTPUTS,
        COLUMNAR,
        {
            "outputs": {
                "double_scalar_tensor": [8.0, 9.0],
                "float_tensor": [[1.0], [2.0]],
                "int_tensor": [[[1, 2], [3, 4], [5, 6]], [[7, 8], [9, 0], [1, 2]]],
                "str_tensor": [["foo", "bar"], ["baz", "bat"]],
                "str_tensor_bytes": BYTES_2x2_B64,
            }
        },
    ),
    ("FromJsonSingleZeroBatchTensor", {"int_tensor": np.zeros((0, 2), np.int32)}, ROW, {"predictions": []}),
    (
        "FromJsonMultipleZeroBatchTensors",
        {"str_tensor": np.zeros((0, 1, 2), object), "float_tensor": np.zeros((0, 3, 4), np.float32)},
        ROW,
        {"predictions": []},
    ),
]


@pytest.mark.parametrize(
    ("outputs", "fmt", "expected"), [case[1:] for case in ANSWERS], ids=[f"{c[0]}-{c[2]}" for c in ANSWERS]
)
def test_outputs_are_written_as_tensorflow_serving_writes_them(outputs, fmt, expected):
    body = json_codec.predict_body(outputs, fmt)

    assert _same(json.loads(body), expected), body


def test_float32_outputs_carry_tensorflow_serving_six_digit_values():
    # FromJsonSingleFloatTensorSixDigitPrecision: TF Serving writes 9e+06, 999999.0, 0.5, 0.0003,
    # 3e-05, 555557.5 (StrCat's six digits, as they read back to the same float32).
    outputs = {"float_tensor": np.array([[9000000, 999999, 0.5], [0.0003, 0.00003, 555557.5]], np.float32)}

    body = json_codec.predict_body(outputs, ROW)

    assert json.loads(body) == {"predictions": [[9e06, 999999.0, 0.5], [0.0003, 3e-05, 555557.5]]}
    # Deliberate difference, notation only: orjson spells 9e+06 as 9000000.0 and 3e-05 as
    # 0.00003; every JSON reader reads the same numbers.
    assert body == b'{"predictions":[[9000000.0,999999.0,0.5],[0.0003,0.00003,555557.5]]}'


@pytest.mark.parametrize("shape", [(), (2,), (2, 3), (3, 0), (9,), (2, 2, 2), (1, 9)])
def test_float32_json_writes_the_values_of_float32_json_values_in_every_shape(shape):
    # float32_json skips the numpy round trip for small arrays of rank 0-2 (most answers).
    array = np.random.default_rng(7).standard_normal(shape).astype(np.float32)

    written = float32_json(array)

    expected = float32_json_values(array).tolist()
    assert (written.tolist() if isinstance(written, np.ndarray) else written) == expected


def test_classify_and_regress_results_carry_tensorflow_serving_digits():
    # MakeJsonFromClassificationResult / MakeJsonFromRegressionResult write scores and values with
    # WriteDecimal too: 0.73105857 as 0.731058598, not the shortest float32 decimal 0.7310586.
    scores = np.array([[0.73105857, 0.1]], np.float32)
    classes = np.array([[b"a", b"b"]])

    classified = classification_results({"classes": classes, "scores": scores}, 1)
    regressed = regression_results({"outputs": np.array([0.73105857], np.float32)}, 1)

    assert classified == [[("a", 0.731058598), ("b", 0.1)]]
    assert regressed == [0.731058598]


@pytest.mark.parametrize(
    ("value", "written"),
    [
        (0.1, 0.1),  # six digits read back: 0.1, not 0.10000000149011612
        (0.73105857, 0.731058598),  # six digits do not read back: %.9g
        (1.2345678, 1.23456776),
        (1435774380.0, 1435774340.0),  # FloatTensorWithPrecisionLoss's value, as TF Serving answers it
        (3.4028235e38, 3.40282347e38),
        (1e-45, 1.4013e-45),  # the smallest subnormal: six digits read back
    ],
)
@pytest.mark.parametrize("extra", [{}, {"s": np.array([b"x"], object)}], ids=["orjson", "json"])
def test_float32_outputs_have_the_digits_tensorflow_serving_writes(value, written, extra):
    # Both writers: orjson for numeric outputs, `json` once an output is bytes.
    body = json.loads(json_codec.predict_body({"y": np.array([value], np.float32), **extra}, COLUMNAR))

    assert (body["outputs"]["y"] if extra else body["outputs"]) == [written], body


def _reference(value: float) -> float:
    """WriteDecimal as json_tensor.cc states it: StrCat's six digits when they read back to the
    same float, else %.9g."""
    six = f"{value:.6g}"
    return float(six) if np.float32(six) == np.float32(value) else float(f"{value:.9g}")


def test_float32_json_values_follow_write_decimal_across_float32s_range():
    rng = np.random.default_rng(7)
    values = rng.integers(0, 2**32, 50_000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    values = values[np.isfinite(values)]
    edges = np.array([1e-4, 1e-3, 0.1, 1, 10, 1e5, 1e6, 999999.94, 99999.99, 9.9999e-5, 0.0, -0.0], np.float32)
    values = np.concatenate([values, edges, np.nextafter(edges, np.float32(1)), np.nextafter(edges, np.float32(-1))])

    written = float32_json_values(values)  # numpy's path (many values)
    one_by_one = np.concatenate([float32_json_values(values[i : i + 1]) for i in range(0, 400)])

    expected = np.array([_reference(v) for v in values.tolist()])
    assert np.array_equal(written, expected) and np.array_equal(np.signbit(written), np.signbit(expected))
    assert np.array_equal(one_by_one, expected[:400])


@pytest.mark.parametrize(
    ("outputs", "fmt", "substring"),
    [
        # FromJsonSingleTensorErrors
        ({}, ROW, "empty tensor map"),
        ({"tensor": np.array([1, 2], np.complex64)}, ROW, "tensor type: complex64"),
        ({"tensor": np.array(1, np.int32)}, ROW, "no shape information"),
        # FromJsonMultipleNamedTensorsErrors
        (
            {"int_tensor": np.ones((2, 3), np.int32), "str_tensor": np.array([[b"foo", b"bar", b"baz"]], object)},
            ROW,
            "inconsistent batch size",
        ),
        # FromJsonMultipleZeroBatchTensorsErrors
        (
            {"int_tensor": np.zeros((0, 2), np.int32), "str_tensor": np.array([[b"foo", b"bar"]], object)},
            ROW,
            "inconsistent batch size",
        ),
    ],
)
def test_outputs_json_cannot_hold_get_tensorflow_serving_errors(outputs, fmt, substring):
    with pytest.raises(InvalidArgument) as raised:
        json_codec.predict_body(outputs, fmt)

    assert substring in raised.value.text


@pytest.mark.parametrize("text", ['Bad key: "key"', "Bad key: 'key'"])
def test_error_bodies_escape_quotes(text):
    # MakeJsonFromTensors.StatusError
    assert json.loads(json_codec.dumps({"error": text})) == {"error": text}


# --- FillClassificationRequestFromJson / FillRegressionRequestFromJson ------------------------


def _example(**features) -> example_pb2.Example:
    example = example_pb2.Example()
    for name, (kind, values) in features.items():
        getattr(example.features.feature[name], kind).value.extend(values)
    return example


def _read_examples(body: str) -> list[example_pb2.Example]:
    """The tf.Examples a classify/regress body becomes, the context merged into each."""
    return [example_pb2.Example.FromString(s) for s in examples_from_json(json_codec.loads(body.encode()))]


def _same_example(received: example_pb2.Example, expected: example_pb2.Example) -> bool:
    features, wanted = received.features.feature, expected.features.feature
    if features.keys() != wanted.keys():
        return False
    for name in wanted:
        kind = wanted[name].WhichOneof("kind")
        if features[name].WhichOneof("kind") != kind:
            return False
        got = list(getattr(features[name], kind).value)
        want = list(getattr(wanted[name], kind).value)
        if kind == "float_list":
            if not np.array_equal(np.array(got, np.float32), np.array(want, np.float32), equal_nan=True):
                return False
        elif got != want:
            return False
    return True


def test_examples_without_context_become_tf_examples():
    # ClassifyRegressRequestTest.RequestNoContext
    examples = _read_examples("""{"examples": [
        {"names": [ "foo", "bar" ], "ratings": [ 8.0, 9.0 ], "age": 20},
        {"names": [ "baz" ], "ratings": 6.0}]}""")

    expected = [
        _example(names=("bytes_list", [b"foo", b"bar"]), ratings=("float_list", [8.0, 9.0]), age=("int64_list", [20])),
        _example(names=("bytes_list", [b"baz"]), ratings=("float_list", [6.0])),
    ]
    assert len(examples) == 2
    assert all(_same_example(got, want) for got, want in zip(examples, expected)), examples


def test_examples_with_context_carry_its_features():
    # ClassifyRegressRequestTest.RequestWithContextAndSignature: b64 bytes, NaN and
    # +/-Infinity floats, booleans as int64 0/1. TF Serving keeps the context beside the
    # examples (example_list_with_context); its model sees each example merged with it, as here.
    examples = _read_examples(f"""{{
        "signature_name": "custom_signture",
        "context": {{"query": "pizza", "location": [ "sfo" ]}},
        "examples": [
            {{"names": [ "foo", "bar" ], "ratings": [ 8.0, 9.0, NaN, Infinity ], "age": 20}},
            {{"names": [ "baz", {{ "b64": "{HELLO}" }} ], "ratings": 6.0, "intboolmix": [ 1, true, false ]}},
            {{"names": "bar", "ratings": -Infinity}}]}}""")

    context = {"query": ("bytes_list", [b"pizza"]), "location": ("bytes_list", [b"sfo"])}
    expected = [
        _example(
            **context,
            names=("bytes_list", [b"foo", b"bar"]),
            ratings=("float_list", [8.0, 9.0, math.nan, math.inf]),
            age=("int64_list", [20]),
        ),
        _example(
            **context,
            names=("bytes_list", [b"baz", b"hello"]),
            ratings=("float_list", [6.0]),
            intboolmix=("int64_list", [1, 1, 0]),
        ),
        _example(**context, names=("bytes_list", [b"bar"]), ratings=("float_list", [-math.inf])),
    ]
    assert len(examples) == 3
    assert all(_same_example(got, want) for got, want in zip(examples, expected)), examples


@pytest.mark.parametrize(
    ("body", "substring"),
    [
        # ClassifyRegressRequestTest.JsonErrors ('signature_name' is rest.py's: tested over HTTP below)
        ('{"context": [ { "names": [ "foo", "bar" ] } ]}', "Example must be JSON object"),
        ('{"examples": { "names": [ "foo", "bar" ] }}', "list/array"),
        ('{"examples": [ [ { "names": [ "foo", "bar" ] } ] ]}', "Example must be JSON object"),
        ('{"examples": [ { "names": [ 10, null ] } ]}', "names has element with unexpected JSON type: Null"),
        ('{"examples": [ { "names": [ 10, 10.0 ] } ]}', "feature: names expecting type: int64"),
        (
            '{"examples": [ { "names": [ 10, { "test": 10 } ] } ]}',
            "names has element with unexpected JSON type: Object",
        ),
        ('{"examples": [ { "names": [ [10], 20 ] } ]}', "names has element with unexpected JSON type: Array"),
        ('{"examples": [ { "names": [ 20, 18446744073709551603 ] } ]}', "Only int64_t is supported"),
        # json_tensor.cc's other classify/regress messages
        (
            '{"examples": [ { "names": [ "a", 1.5 ] } ]}',
            "Unexpected element type in feature: names expecting type: bytes",
        ),
        (
            '{"examples": [ { "names": [ 1.5, "a" ] } ]}',
            "Unexpected element type in feature: names expecting type: float",
        ),
        ('{"examples": [ { "names": { "b64": "@@" } } ]}', "Unable to base64 decode"),
        ('{"examples": []}', "'examples' value is an empty array"),
        ('{"context": {"a": 1}}', "When method is classify, key 'examples' is expected and was not found"),
        ('{"examples": [ 5 ]}', "Example must be JSON object but got JSON Number"),
    ],
)
def test_bad_classify_and_regress_bodies_get_tensorflow_serving_errors(body, substring):
    with pytest.raises(InvalidArgument) as raised:
        _read_examples(body)

    assert substring in raised.value.text


# --- End to end over HTTP ---------------------------------------------------------------------

DTYPES = "dtypes"
HALF = "half_plus_two"


class _Dtypes(tf.Module):
    """Echoes inputs of each dtype the REST API converts."""

    @tf.function(
        input_signature=[
            tf.TensorSpec([None, None, 2], tf.int32, name="int_tensor"),
            tf.TensorSpec([None, None], tf.string, name="str_tensor"),
            tf.TensorSpec([None, None], tf.float32, name="float_tensor"),
            tf.TensorSpec([None, None], tf.float64, name="dbl_tensor"),
            tf.TensorSpec([None], tf.bool, name="bool_tensor"),
        ]
    )
    def named(self, int_tensor, str_tensor, float_tensor, dbl_tensor, bool_tensor):
        return {
            "int_tensor": tf.identity(int_tensor),
            "str_tensor": tf.identity(str_tensor),
            "str_tensor_bytes": tf.identity(str_tensor),
            "float_tensor": tf.identity(float_tensor),
            "dbl_tensor": tf.identity(dbl_tensor),
            "bool_tensor": tf.logical_not(bool_tensor),
        }

    @tf.function(input_signature=[tf.TensorSpec(None, tf.int32, name="x")])
    def ints(self, x):
        return {"y": tf.identity(x)}

    @tf.function(input_signature=[tf.TensorSpec(None, tf.float32, name="x")])
    def floats(self, x):
        return {"y": tf.identity(x)}

    @tf.function(input_signature=[tf.TensorSpec(None, tf.float64, name="x")])
    def doubles(self, x):
        return {"y": tf.identity(x)}

    @tf.function(input_signature=[tf.TensorSpec(None, tf.string, name="x")])
    def strings(self, x):
        return {"y": tf.identity(x), "y_bytes": tf.identity(x)}

    @tf.function(input_signature=[tf.TensorSpec([None], tf.int32, name="x")])
    def scalar(self, x):
        return {"total": tf.reduce_sum(x)}

    @tf.function(input_signature=[tf.TensorSpec([None], tf.int32, name="x")])
    def ragged_batch(self, x):
        return {"all": tf.identity(x), "first": x[:1]}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("tfs_json_tensor")
    module = _Dtypes()
    signatures = {
        name: getattr(module, name).get_concrete_function()
        for name in ("named", "ints", "floats", "doubles", "strings", "scalar", "ragged_batch")
    }
    signatures["serving_default"] = signatures.pop("named")
    tf.saved_model.save(module, str(root / DTYPES / "1"), signatures=signatures)
    server = start_server(
        root / "cfg",
        cfg.model_config(DTYPES, root / DTYPES),
        cfg.model_config(HALF, tfs_testdata() / HALF_PLUS_TWO),
    )
    yield server
    server.stop()


def _post(server, body, verb="predict", model=DTYPES) -> tuple[int, dict]:
    payload = body if isinstance(body, bytes) else body.encode() if isinstance(body, str) else body
    return http(server.rest_url, "POST", f"/v1/models/{model}:{verb}", payload)


def test_named_tensors_of_every_dtype_round_trip_over_http(server):
    # MultipleNamedTensor's request, answered as FromJsonMultipleNamedTensors writes rows.
    status, body = _post(
        server,
        """{"instances": [
        {"int_tensor": [[1,2],[3,4],[5,6]], "str_tensor": ["foo", "bar"], "float_tensor": [1.0, NaN],
         "dbl_tensor": [NaN], "bool_tensor": true},
        {"int_tensor": [[7,8],[9,0],[1,2]], "str_tensor": ["baz", "bat"], "float_tensor": [2.0, Infinity],
         "dbl_tensor": [2.0], "bool_tensor": false}]}""",
    )

    assert status == 200, body
    assert _same(
        body,
        {
            "predictions": [
                {
                    "bool_tensor": False,
                    "dbl_tensor": [math.nan],
                    "float_tensor": [1.0, math.nan],
                    "int_tensor": [[1, 2], [3, 4], [5, 6]],
                    "str_tensor": ["foo", "bar"],
                    "str_tensor_bytes": [{"b64": "Zm9v"}, {"b64": "YmFy"}],
                },
                {
                    "bool_tensor": True,
                    "dbl_tensor": [2.0],
                    "float_tensor": [2.0, math.inf],
                    "int_tensor": [[7, 8], [9, 0], [1, 2]],
                    "str_tensor": ["baz", "bat"],
                    "str_tensor_bytes": [{"b64": "YmF6"}, {"b64": "YmF0"}],
                },
            ]
        },
    ), body


def test_columnar_requests_get_columnar_answers_over_http(server):
    # MultipleNamedTensorColumnarFormat / FromJsonMultipleNamedTensors (columnar).
    status, body = _post(
        server,
        {
            "inputs": {
                "int_tensor": [[[1, 2], [3, 4], [5, 6]]],
                "str_tensor": [["foo", {"b64": HELLO}]],
                "float_tensor": [[0.5]],
                "dbl_tensor": [[0.662]],
                "bool_tensor": [False],
            }
        },
    )

    assert status == 200, body
    assert body == {
        "outputs": {
            "bool_tensor": [True],
            "dbl_tensor": [[0.662]],
            "float_tensor": [[0.5]],
            "int_tensor": [[[1, 2], [3, 4], [5, 6]]],
            "str_tensor": [["foo", "hello"]],
            "str_tensor_bytes": [[{"b64": "Zm9v"}, {"b64": HELLO}]],
        }
    }


@pytest.mark.parametrize(
    ("signature", "body", "expected"),
    [
        ("ints", '{"instances": [[1,2],[3,4],[5,6]]}', {"predictions": [[1, 2], [3, 4], [5, 6]]}),
        ("ints", '{"inputs": [[[1,2],[3,4],[5,6]]]}', {"outputs": [[[1, 2], [3, 4], [5, 6]]]}),
        (
            "floats",
            '{"instances": [1, 2.0, 3, 4, 5.003, 0.007, 0.0]}',
            {"predictions": [1.0, 2.0, 3.0, 4.0, 5.003, 0.007, 0.0]},
        ),
        (
            "doubles",
            '{"instances": [1.0, 2, 3, 4, 0.662, 0, 0.0]}',
            {"predictions": [1.0, 2.0, 3.0, 4.0, 0.662, 0.0, 0.0]},
        ),
        # FloatTensorWithPrecisionLoss: the float32 nearest 1435774380, written with TF Serving's 9 digits
        ("floats", '{"instances": [1435774380]}', {"predictions": [1435774340.0]}),
        ("floats", '{"instances": [1435774380.0]}', {"predictions": [1435774340.0]}),
        ("floats", '{"instances": [0.73105857]}', {"predictions": [0.731058598]}),
        # FloatTensorThatExceedsMaxReturnsInf / ...MinReturnsZero
        (
            "floats",
            f'{{"instances": [{sys.float_info.max!r}, {-sys.float_info.max!r}]}}',
            {"predictions": [math.inf, -math.inf]},
        ),
        ("floats", f'{{"instances": [{sys.float_info.min!r}, {-sys.float_info.min!r}]}}', {"predictions": [0.0, -0.0]}),
        # SingleUnnamedTensorBase64Scalars / ...Lists, FromJsonSingleBytesTensor
        (
            "strings",
            f'{{"instances": [{{"b64": "{HELLO}"}}, {{"b64": "{WORLD}"}}]}}',
            {"predictions": [{"y": "hello", "y_bytes": {"b64": HELLO}}, {"y": "world", "y_bytes": {"b64": WORLD}}]},
        ),
        (
            "strings",
            f'{{"instances": [[{{"b64": "{HELLO}"}}], [{{"b64": "{WORLD}"}}]]}}',
            {
                "predictions": [
                    {"y": ["hello"], "y_bytes": [{"b64": HELLO}]},
                    {"y": ["world"], "y_bytes": [{"b64": WORLD}]},
                ]
            },
        ),
        # a scalar output in columnar format (FromJsonSingleTensorErrors has it fail in rows)
        ("scalar", '{"inputs": [1, 2, 3]}', {"outputs": 6}),
        ("ragged_batch", '{"inputs": [1, 2]}', {"outputs": {"all": [1, 2], "first": [1]}}),
    ],
)
def test_unnamed_tensors_round_trip_over_http(server, signature, body, expected):
    status, answer = _post(server, json.dumps({"signature_name": signature, **json.loads(body)}))

    assert status == 200, answer
    assert _same(answer, expected), answer


@pytest.mark.parametrize(
    ("body", "substring"),
    [
        (b"", "document is empty"),
        ('{"signature_name": 5, "instances": [[1,2],[3,4],[5,6,7]]}', "'signature_name' key must be a string value"),
        ('{"signature_name": "ints", "instances": [[1,2]], "inputs": [[1,2]]}', "Not formatted correctly"),
        ('{"signature_name": "ints", "instances": [[1,2],[3,4],[5,6,7]]}', "Expecting tensor size"),
        ('{"signature_name": "ints", "instances": [[1,2],[3,4],[[5,6]]]}', "Expecting shape"),
        ('{"signature_name": "ints", "instances": [1, [1]]}', "Expecting shape"),
        ('{"signature_name": "ints", "instances": [[1,2],["a", "b"]]}', "not of expected type"),
        (
            '{"signature_name": "strings", "instances": [["baz"], {"x": ["bat"]}]}',
            "Expecting value/list but got object",
        ),
        # FromJsonSingleTensorErrors / FromJsonMultipleNamedTensorsErrors, from a model's outputs
        ('{"signature_name": "scalar", "instances": [1, 2, 3]}', "has no shape information"),
        ('{"signature_name": "ragged_batch", "instances": [1, 2]}', "inconsistent batch size"),
    ],
)
def test_bad_predict_requests_get_tensorflow_serving_errors_over_http(server, body, substring):
    status, answer = _post(server, body)

    assert status == 400, answer
    assert substring in answer["error"], answer


@pytest.mark.parametrize(
    "body",
    [
        # DeeplyNestedWellFormed: TF Serving reads it and ignores "nested".
        '{"instances": [1], "nested": ' + "[" * 5000 + "]" * 5000 + "}",
        # DeeplyNestedMalformed: TF Serving answers "'signature_name' key must be a string value".
        '{"signature_name": ' + "[" * 5000 + "]" * 5000 + "}",
    ],
)
def test_deeply_nested_bodies_are_refused_by_the_depth_limit_unlike_tensorflow_serving(server, body):
    # Deliberate difference: bodies nested deeper than --max-json-depth (64) are refused before
    # parsing (README, "Security and limits"); TF Serving's iterative parser takes 500,000 levels.
    status, answer = _post(server, body)

    assert status == 400, answer
    assert "document nested too deep" in answer["error"] and "at most 64 levels" in answer["error"], answer


def test_classify_and_regress_take_context_and_examples_over_http(server):
    # RequestWithContextAndSignature on half_plus_two (y = 0.5 x + 2): the context's x is
    # every example's x unless the example has its own.
    body = {"context": {"x": 4.0}, "examples": [{"x": 2.0}, {"tag": "no x"}, {"x": [6.0]}]}

    regress = _post(server, json.dumps({"signature_name": "regress_x_to_y", **body}), "regress", HALF)
    classify = _post(server, json.dumps({"signature_name": "classify_x_to_y", **body}), "classify", HALF)

    assert regress == (200, {"results": [3.0, 4.0, 5.0]})
    assert classify == (200, {"results": [[["", 3.0]], [["", 4.0]], [["", 5.0]]]})


def test_regression_results_write_non_finite_values_over_http(server):
    # JsonFromRegressionResultWithNonFinite: 0.5 * (Infinity, -Infinity, NaN) + 2.
    raw = b'{"signature_name": "regress_x_to_y", "examples": [{"x": Infinity}, {"x": -Infinity}, {"x": NaN}]}'
    status, body = _post(server, raw, "regress", HALF)

    assert status == 200
    assert _same(body, {"results": [math.inf, -math.inf, math.nan]}), body


@pytest.mark.parametrize(
    ("body", "substring"),
    [
        ('{"signature_name": [ "hello" ], "examples": [ { "x": [ 1.0 ] } ]}', "'signature_name' key must be a string"),
        ('{"context": [ { "x": [ 1.0 ] } ]}', "Example must be JSON object"),
        ('{"examples": { "x": [ 1.0 ] }}', "list/array"),
        ('{"examples": [ { "x": [ 20, 18446744073709551603 ] } ]}', "Only int64_t is supported"),
        # Both wrong: TF Serving reads `signature_name` first.
        ('{"signature_name": 7, "examples": {"x": 1.0}}', "'signature_name' key must be a string"),
    ],
)
@pytest.mark.parametrize("api", ["regress", "classify"])
def test_bad_regress_requests_get_tensorflow_serving_errors_over_http(server, body, substring, api):
    status, answer = _post(server, body, api, HALF)

    assert status == 400, answer
    assert substring in answer["error"], answer


def test_items_that_do_not_stack_in_a_huge_request_get_the_generic_shape_error():
    """Naming the failing item walks every item in Python; past 10,000 items numpy's shape error
    stands, so a hostile body does not hold the event loop for seconds."""
    signature = Signature("s", "m", {"x": TensorSpec("x", tf.float32, (None, 2))}, {}, None)
    small = {"instances": [[1.0, 2.0]] * 3 + [[1.0]]}
    huge = {"instances": [[1.0, 2.0]] * 20_000 + [[1.0]]}

    with pytest.raises(InvalidArgument, match="Expecting tensor size: 2 but got: 1"):
        json_inputs(small, signature)
    with pytest.raises(InvalidArgument, match="unexpected size") as raised:
        json_inputs(huge, signature)
    assert "Failed to process element" not in str(raised.value)


@pytest.mark.parametrize(
    ("body", "verb", "start"),
    [
        ('{"instances": []}', "predict", "JSON Value: {\"instances\":[]} No values in 'instances' array"),
        ('{"instances": 5}', "predict", "JSON Value: {\"instances\":5} Expecting 'instances' to be an list/array"),
        (
            '{"instances": [1], "inputs": [1]}',
            "predict",
            'JSON Value: {"instances":[1],"inputs":[1]} Not formatted correctly expecting only one of',
        ),
        (
            '{"signature_name": 5}',
            "predict",
            "JSON Value: {\"signature_name\":5} not formatted correctly. 'signature_name' key must be a string",
        ),
        ('{"examples": []}', "regress", "JSON Value: {\"examples\":[]} 'examples' value is an empty array"),
        ('{"context": {}}', "classify", "JSON Value: {\"context\":{}} When method is classify, key 'examples'"),
    ],
)
def test_format_errors_start_with_the_json_value_as_tf_serving_writes_it(server, body, verb, start):
    """json_tensor.cc's FormatError: `JSON Value: <the document, compact> <what is wrong>`."""
    model = HALF if verb != "predict" else DTYPES
    status, answer = _post(server, body, verb=verb, model=model)
    assert status == 400
    assert answer["error"].startswith(start), answer["error"]


def test_the_json_value_of_a_large_body_is_cut():
    from serving.server.wire.tensor_checks import json_value_text

    text = json_value_text({"instances": list(range(100_000))}, limit=50)
    assert text == 'JSON Value: {"instances":[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,1... '  # 50 characters
