"""TF Serving's Predict rules on a servable, over the wire.

Translated from tensorflow/serving's
`tensorflow_serving/servables/tensorflow/predict_util_test.cc` (PredictImplTest)
onto TF Serving's own test models served in place: `saved_model_half_plus_two_cpu`
(TF1, y = 0.5x + 2, also regress_x2_to_y3: y3 = 0.5x2 + 3) under the model name
`test_model`, and `saved_model_counter` under `counter`. Each test names the
C++ TEST_F it translates. The C++ tests call RunPredict on a bundle; here the
same requests go through a real embedded server's gRPC (and REST where the
case exists there), and the status code, message substring and the answer's
model_spec are what is asserted.
"""

from __future__ import annotations

import grpc
import pytest
import tensorflow as tf
from tensorflow.core.framework import types_pb2
from tensorflow_serving.apis import predict_pb2
from tfs_contract_helpers import COUNTER, HALF_PLUS_TWO, start_server, tfs_testdata

from serving import config as cfg

MODEL = "test_model"
VERSION = 123


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    data = tfs_testdata()
    models = [cfg.model_config(MODEL, data / HALF_PLUS_TWO), cfg.model_config("counter", data / COUNTER)]
    server = start_server(tmp_path_factory.mktemp("tfs_predict_util"), *models)
    yield server
    server.stop()


def _request(model=MODEL, signature_name="", version=VERSION, **inputs) -> predict_pb2.PredictRequest:
    request = predict_pb2.PredictRequest()
    request.model_spec.name = model
    if version is not None:
        request.model_spec.version.value = version
    if signature_name:
        request.model_spec.signature_name = signature_name
    for alias, proto in inputs.items():
        request.inputs[alias].CopyFrom(proto)
    return request


def _float(value: float) -> tf.make_tensor_proto:
    """TF Serving's test tensor: one float_val, no shape (a scalar)."""
    proto = tf.make_tensor_proto(0.0, tf.float32)
    proto.ClearField("float_val")
    proto.ClearField("tensor_content")
    proto.float_val.append(value)
    return proto


def _error(stubs, request) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as caught:
        stubs.prediction.Predict(request, timeout=20)
    return caught.value


def _scalar_answer(response, alias: str) -> float:
    proto = response.outputs[alias]
    assert proto.dtype == types_pb2.DT_FLOAT
    assert list(proto.tensor_shape.dim) == []  # a scalar in, a scalar out
    return float(tf.make_ndarray(proto))


@pytest.mark.parametrize(
    "model_spec_name",
    ["", None],
    ids=["empty_request", "model_name_cleared"],
)
def test_missing_or_empty_model_spec_is_invalid_argument(stubs, model_spec_name):
    """MissingOrEmptyModelSpec: a request without a model name is INVALID_ARGUMENT.

    (The C++ test's third case, a wrong name, still ran against the right bundle;
    over the wire an unknown model is NOT_FOUND, asserted in test_tfs_contract_models.)"""
    request = predict_pb2.PredictRequest()
    if model_spec_name is not None:
        request.model_spec.name = model_spec_name
    assert _error(stubs, request).code() == grpc.StatusCode.INVALID_ARGUMENT


def test_empty_input_list_is_invalid_argument(stubs):
    """EmptyInputList: a request with no inputs for half_plus_two's `x`."""
    error = _error(stubs, _request())
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "Missing but required: {x}" in error.details()


def test_inputs_that_do_not_match_the_signature_name_extra_and_missing(stubs):
    """InputTensorsDontMatchModelSpecInputs: two unknown inputs, `x` missing."""
    text = tf.make_tensor_proto(["any_value"], tf.string)
    error = _error(stubs, _request(unknown_key1=text, unknown_key2=tf.make_tensor_proto([1.0], tf.float32)))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "Sent extra: {unknown_key1,unknown_key2}" in error.details()
    assert "Missing but required: {x}" in error.details()


@pytest.mark.parametrize(
    "proto, text",
    [
        (tf.make_tensor_proto(True, tf.bool), "Expects arg[0] to be float but bool is provided"),
        (tf.make_tensor_proto(["any_value"], tf.string), "to be float but string is provided"),
    ],
    ids=["PredictionInvalidTensor_bool", "InputTensorsHaveWrongType_string"],
)
def test_input_of_the_wrong_dtype_is_invalid_argument(stubs, proto, text):
    """PredictionInvalidTensor, InputTensorsHaveWrongType: TensorFlow's own wording."""
    request = _request(x=proto)
    request.output_filter.append("y")
    error = _error(stubs, request)
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert text in error.details()


@pytest.mark.parametrize(
    "output_filter, text",
    [
        (
            ["output_filter"],
            "output tensor alias not found in signature: output_filter Outputs expected to be in the set {y}.",
        ),
        (["y", "y"], "duplicate output tensor alias: y"),
        # Alias by alias, the first problem wins: the repeated `y` before the unknown `z`.
        (["y", "y", "z"], "duplicate output tensor alias: y"),
    ],
    ids=["unknown", "duplicate", "duplicate_before_unknown"],
)
def test_output_filter_that_does_not_match_the_signature_outputs(stubs, output_filter, text):
    """OutputFiltersDontMatchModelSpecOutputs: an unknown alias, then `y` twice."""
    request = _request(x=_float(2.0))
    request.output_filter.extend(output_filter)
    error = _error(stubs, request)
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert text in error.details()


def test_a_bad_output_filter_is_reported_before_a_wrong_dtype(stubs):
    """TF Serving's `PreProcessPrediction` (servables/tensorflow/predict_util.cc) checks the output filter
    before `Session::Run`, which is where a dtype is refused: with both wrong, the filter error is the answer."""
    request = _request(x=tf.make_tensor_proto(["any_value"], tf.string))
    request.output_filter.append("output_filter")
    error = _error(stubs, request)
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert error.details().startswith("output tensor alias not found in signature: output_filter")


def test_output_filter_naming_y_once_succeeds(stubs):
    """OutputFiltersDontMatchModelSpecOutputs, the valid middle step."""
    request = _request(x=_float(2.0))
    request.output_filter.append("y")
    assert _scalar_answer(stubs.prediction.Predict(request, timeout=20), "y") == 3.0


def test_prediction_success_fills_in_the_model_spec(stubs):
    """PredictionSuccess (and ThreadPoolOptions, same answer): x = 2 gives y = 3, a scalar;
    the answer's model_spec is the request's, with signature_name `serving_default` filled in."""
    response = stubs.prediction.Predict(_request(x=_float(2.0)), timeout=20)
    assert list(response.outputs) == ["y"]
    assert _scalar_answer(response, "y") == 3.0
    spec = response.model_spec
    assert (spec.name, spec.version.value, spec.signature_name) == (MODEL, VERSION, "serving_default")


def test_prediction_without_a_version_names_the_version_that_ran(stubs):
    """MakeModelSpec: the version of the servable that answered, even when the request named none."""
    response = stubs.prediction.Predict(_request(version=None, x=_float(2.0)), timeout=20)
    assert (response.model_spec.version.value, response.model_spec.signature_name) == (VERSION, "serving_default")


def test_prediction_with_a_named_regression_signature(stubs):
    """PredictionWithNamedRegressionSignature: Predict runs a regress signature (inputs -> outputs)."""
    response = stubs.prediction.Predict(_request(signature_name="regress_x2_to_y3", inputs=_float(2.0)), timeout=20)
    assert list(response.outputs) == ["outputs"]
    assert _scalar_answer(response, "outputs") == 4.0
    spec = response.model_spec
    assert (spec.name, spec.version.value, spec.signature_name) == (MODEL, VERSION, "regress_x2_to_y3")


def test_prediction_with_a_named_classification_signature(stubs):
    """PredictionWithNamedClassificationSignature: Predict runs a classify signature too. (The C++
    test's classify_x2_to_y3 is not in this half_plus_two; classify_x_to_y takes tf.Examples.)"""
    example = tf.train.Example()
    example.features.feature["x"].float_list.value.append(2.0)
    inputs = tf.make_tensor_proto([example.SerializeToString()], tf.string)
    response = stubs.prediction.Predict(_request(signature_name="classify_x_to_y", inputs=inputs), timeout=20)
    assert list(response.outputs) == ["scores"]
    assert tf.make_ndarray(response.outputs["scores"]).ravel().tolist() == [3.0]
    assert response.model_spec.signature_name == "classify_x_to_y"


def test_prediction_with_customized_signatures_keeps_the_counter_state(stubs):
    """PredictionWithCustomizedSignatures: get 0, incr 1, reset 0, incr 1 (with output_filter),
    incr_counter_by(3) 4; each answer names its signature."""
    calls = [
        ("reset_counter", {}, []),  # the module's other tests may have moved it
        ("get_counter", {}, []),
        ("incr_counter", {}, []),
        ("reset_counter", {}, []),
        ("incr_counter", {}, ["output"]),
        ("incr_counter_by", {"delta": _float(3.0)}, []),
    ]
    answers = []
    for signature_name, inputs, output_filter in calls:
        request = _request(model="counter", signature_name=signature_name, **inputs)
        request.output_filter.extend(output_filter)
        response = stubs.prediction.Predict(request, timeout=20)
        assert response.model_spec.signature_name == signature_name
        assert (response.model_spec.name, response.model_spec.version.value) == ("counter", VERSION)
        answers.append(_scalar_answer(response, "output"))
    assert answers == [0.0, 0.0, 1.0, 0.0, 1.0, 4.0]
