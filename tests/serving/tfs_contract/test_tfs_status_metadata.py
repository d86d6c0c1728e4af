"""TF Serving's GetModelStatus, GetModelMetadata and Predict implementation tests, over gRPC.

Translated from tensorflow/serving's `model_servers/get_model_status_impl_test.cc`
(the two-versions model, specific policy 123 and 124),
`servables/tensorflow/get_model_metadata_impl_test.cc` and
`servables/tensorflow/predict_impl_test.cc` (half_plus_two served as
`test_model`, and the stateful counter). The `*WithModelSpec` override and
thread-pool-factory cases test a C++ API with no wire-visible effect and are not
translated.
"""

from __future__ import annotations

import grpc
import pytest
import tensorflow as tf
from google.protobuf import json_format
from serving_helpers import http
from tensorflow_serving.apis import get_model_metadata_pb2, get_model_status_pb2, predict_pb2
from tfs_contract_helpers import (
    COUNTER,
    HALF_PLUS_TWO,
    TWO_VERSIONS,
    Stubs,
    expected_metadata,
    start_server,
    tfs_testdata,
)

from serving import config as cfg

AVAILABLE = get_model_status_pb2.ModelVersionStatus.AVAILABLE
INVALID_ARGUMENT = grpc.StatusCode.INVALID_ARGUMENT
NOT_FOUND = grpc.StatusCode.NOT_FOUND
TEST_MODEL = "test_model"
SIGNATURE_DEF = "signature_def"


@pytest.fixture(scope="module")
def stubs(tmp_path_factory):
    data = tfs_testdata()
    models = [
        cfg.model_config(
            TWO_VERSIONS,
            data / TWO_VERSIONS,
            policy=cfg.specific_policy([123, 124]),
            labels={"stable": 123, "canary": 124},
        ),
        cfg.model_config(TEST_MODEL, data / HALF_PLUS_TWO),
        cfg.model_config("counter", data / COUNTER),
    ]
    server = start_server(tmp_path_factory.mktemp("tfs_status_metadata"), *models)
    stubs = Stubs(server.grpc_address)
    stubs.rest_url = server.rest_url
    yield stubs
    stubs.close()
    server.stop()


def _code(call, request) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.RpcError) as caught:
        call(request, timeout=20)
    return caught.value.code(), caught.value.details()


def _spec(request, name=None, version=None, label=None, signature_name=None):
    if name is not None:
        request.model_spec.name = name
    if version is not None:
        request.model_spec.version.value = version
    if label is not None:
        request.model_spec.version_label = label
    if signature_name is not None:
        request.model_spec.signature_name = signature_name
    return request


# -- GetModelStatus -------------------------------------------------------------


def _status_request(**spec) -> get_model_status_pb2.GetModelStatusRequest:
    return _spec(get_model_status_pb2.GetModelStatusRequest(), **spec)


def test_status_without_a_model_spec_is_invalid_argument(stubs):
    """MissingOrEmptyModelSpecFailure."""
    code, details = _code(stubs.model.GetModelStatus, get_model_status_pb2.GetModelStatusRequest())
    assert code == INVALID_ARGUMENT
    assert details.startswith("Missing ModelSpec")


@pytest.mark.parametrize(
    "spec, wanted",
    [
        ({"name": "nonexistent_model"}, "Could not find any versions of model nonexistent_model"),
        ({"name": TWO_VERSIONS, "version": 125}, f"Could not find version 125 of model {TWO_VERSIONS}"),
        ({"name": "nonexistent_model", "version": 3}, "Could not find version 3 of model nonexistent_model"),
    ],
    ids=["InvalidModelNameFailure", "InvalidModelVersionFailure", "unknown_model_with_a_version"],
)
def test_status_of_an_unknown_model_or_version_is_not_found(stubs, spec, wanted):
    code, details = _code(stubs.model.GetModelStatus, _status_request(**spec))
    assert (code, details.startswith(wanted)) == (NOT_FOUND, True), details


def test_status_of_all_versions(stubs):
    """AllVersionsSuccess: both versions, each AVAILABLE with an OK status and no message."""
    response = stubs.model.GetModelStatus(_status_request(name=TWO_VERSIONS), timeout=20)
    assert {s.version for s in response.model_version_status} == {123, 124}
    for status in response.model_version_status:
        assert (status.state, status.status.error_code, status.status.error_message) == (AVAILABLE, 0, "")


def test_status_of_one_version(stubs):
    """SingleVersionSuccess."""
    response = stubs.model.GetModelStatus(_status_request(name=TWO_VERSIONS, version=123), timeout=20)
    assert [
        (s.version, s.state, s.status.error_code, s.status.error_message) for s in response.model_version_status
    ] == [(123, AVAILABLE, 0, "")]


@pytest.mark.parametrize("label", ["canary", "stable", "nope"])
def test_status_by_label_ignores_the_label_as_tf_serving(stubs, label):
    """`GetModelStatusWithModelSpec` (model_servers/get_model_status_impl.cc) reads only
    `model_spec.version`: with a label, known or not, it answers every version, OK."""
    response = stubs.model.GetModelStatus(_status_request(name=TWO_VERSIONS, label=label), timeout=20)
    assert sorted(s.version for s in response.model_version_status) == [123, 124]


def test_rest_status_by_label_ignores_the_label_as_tf_serving(stubs):
    """The REST path `/labels/<l>` reaches the same `GetModelStatus` (http_rest_api_handler.cc)."""
    for label in ("canary", "nope"):
        status, body = http(stubs.rest_url, "GET", f"/v1/models/{TWO_VERSIONS}/labels/{label}")
        assert (status, sorted(s["version"] for s in body["model_version_status"])) == (200, ["123", "124"])


# -- GetModelMetadata -------------------------------------------------------------


def _metadata_request(fields=(SIGNATURE_DEF,), **spec) -> get_model_metadata_pb2.GetModelMetadataRequest:
    request = get_model_metadata_pb2.GetModelMetadataRequest(metadata_field=list(fields))
    return _spec(request, **spec)


@pytest.mark.parametrize(
    "fields, wanted",
    [
        ([], "GetModelMetadataRequest must specify at least one metadata_field"),
        (["some_stuff"], "Metadata field some_stuff is not supported"),
        ([SIGNATURE_DEF, "some_stuff"], "Metadata field some_stuff is not supported"),
    ],
)
def test_metadata_fields_other_than_signature_def_are_invalid_argument(stubs, fields, wanted):
    """EmptyOrInvalidMetadataFieldList, on a served model."""
    code, details = _code(stubs.prediction.GetModelMetadata, _metadata_request(fields, name=TEST_MODEL))
    assert (code, details.startswith(wanted)) == (INVALID_ARGUMENT, True), details


@pytest.mark.parametrize(
    "request_, code",
    [
        (get_model_metadata_pb2.GetModelMetadataRequest(metadata_field=[SIGNATURE_DEF]), INVALID_ARGUMENT),
        (_metadata_request(name=""), INVALID_ARGUMENT),
        (_metadata_request(name="test"), NOT_FOUND),
    ],
    ids=["no_model_spec", "no_name", "unknown_name"],
)
def test_metadata_without_a_model_name_is_invalid_argument(stubs, request_, code):
    """MissingOrEmptyModelSpec: no spec or no name is INVALID_ARGUMENT, an unknown name NOT_FOUND."""
    assert _code(stubs.prediction.GetModelMetadata, request_)[0] == code


def test_metadata_fields_are_checked_before_the_model(stubs):
    """TF Serving validates the request before it looks the model up: no field on an unknown model is
    INVALID_ARGUMENT, not NOT_FOUND."""
    code, details = _code(stubs.prediction.GetModelMetadata, _metadata_request((), name="test"))
    assert (code, details.startswith("GetModelMetadataRequest must specify")) == (INVALID_ARGUMENT, True)


def _signature_defs(response) -> dict:
    signature_def_map = get_model_metadata_pb2.SignatureDefMap()
    assert response.metadata[SIGNATURE_DEF].Unpack(signature_def_map)
    return json_format.MessageToDict(
        signature_def_map, preserving_proto_field_name=True, including_default_value_fields=True
    )


def test_metadata_returns_the_signatures_of_the_model(stubs):
    """ReturnsSignaturesForValidModel: the request's model spec back, one metadata entry, and every
    SignatureDef equal to TF Serving's expected answer for half_plus_two."""
    request = _metadata_request(name=TEST_MODEL, version=123)
    response = stubs.prediction.GetModelMetadata(request, timeout=20)
    assert response.model_spec == request.model_spec
    assert list(response.metadata) == [SIGNATURE_DEF]
    expected = expected_metadata("half_plus_two_model_metadata.json")["metadata"][SIGNATURE_DEF]
    received = _signature_defs(response)
    assert sorted(received[SIGNATURE_DEF]) == sorted(expected[SIGNATURE_DEF])
    for name in ("regress_x_to_y", "serving_default"):
        assert received[SIGNATURE_DEF][name] == expected[SIGNATURE_DEF][name]


@pytest.mark.parametrize(
    "spec, version",
    [({}, 124), ({"version": 123}, 123), ({"label": "stable"}, 123), ({"label": "canary"}, 124)],
    ids=["latest", "version", "label_stable", "label_canary"],
)
def test_metadata_names_the_version_it_answers_for(stubs, spec, version):
    response = stubs.prediction.GetModelMetadata(_metadata_request(name=TWO_VERSIONS, **spec), timeout=20)
    assert (response.model_spec.name, response.model_spec.version.value) == (TWO_VERSIONS, version)


@pytest.mark.parametrize(
    "spec, code, wanted",
    [
        ({"version": 125}, NOT_FOUND, f"Servable not found for request: Specific({TWO_VERSIONS}, 125)"),
        ({"label": "nope"}, INVALID_ARGUMENT, "Unrecognized servable version label: nope"),
    ],
)
def test_metadata_of_an_unknown_version_or_label(stubs, spec, code, wanted):
    received, details = _code(stubs.prediction.GetModelMetadata, _metadata_request(name=TWO_VERSIONS, **spec))
    assert (received, details.startswith(wanted)) == (code, True), details


# -- Predict ----------------------------------------------------------------------


def _float(value) -> tf.make_tensor_proto:
    """A float TensorProto as the C++ tests build it: one float_val, no shape (a scalar)."""
    return tf.make_tensor_proto(value, dtype=tf.float32, shape=[])


def _predict_request(inputs=None, output_filter=(), **spec) -> predict_pb2.PredictRequest:
    request = _spec(predict_pb2.PredictRequest(), **spec)
    for alias, tensor in (inputs or {}).items():
        request.inputs[alias].CopyFrom(tensor)
    request.output_filter.extend(output_filter)
    return request


def _outputs(response) -> dict:
    """The response's outputs, each with its (empty) `tensor_shape` marked present, as TF Serving
    writes a scalar (see `test_a_scalar_output_carries_an_empty_tensor_shape`)."""
    outputs = {}
    for alias, tensor in response.outputs.items():
        outputs[alias] = type(tensor)()
        outputs[alias].CopyFrom(tensor)
        outputs[alias].tensor_shape.SetInParent()
    return outputs


def _scalar(value: float):
    """The output TensorProto TF Serving answers: dtype float, an empty shape, one float_val."""
    proto = tf.make_tensor_proto(value, dtype=tf.float32, shape=[])
    proto.ClearField("tensor_content")
    proto.float_val[:] = [value]
    return proto


@pytest.mark.parametrize(
    "request_, code",
    [
        (predict_pb2.PredictRequest(), INVALID_ARGUMENT),
        (_predict_request(name=""), INVALID_ARGUMENT),
        (_predict_request(name="test"), NOT_FOUND),
    ],
    ids=["no_model_spec", "no_name", "unknown_name"],
)
def test_predict_without_a_model_name_is_invalid_argument(stubs, request_, code):
    """MissingOrEmptyModelSpec."""
    assert _code(stubs.prediction.Predict, request_)[0] == code


@pytest.mark.parametrize(
    "inputs, output_filter, wanted",
    [
        ({}, [], "Missing but required: {x}"),
        (
            {"key": tf.make_tensor_proto(["any_key"])},
            [],
            "Signature input alias: x(feed name: x:0) not found in request",
        ),
        ({"x": _float(2.0)}, ["output_filter"], "output tensor alias not found in signature: output_filter"),
        ({"x": tf.make_tensor_proto(["any_key"])}, ["y"], ""),
    ],
    ids=[
        "EmptyInputList",
        "InputTensorsDontMatchModelSpecInputs",
        "OutputFiltersDontMatch",
        "InputTensorsHaveWrongType",
    ],
)
def test_predict_request_errors_are_invalid_argument(stubs, inputs, output_filter, wanted):
    request = _predict_request(inputs, output_filter, name=TEST_MODEL, version=123)
    code, details = _code(stubs.prediction.Predict, request)
    assert (code, wanted in details) == (INVALID_ARGUMENT, True), details


def test_predict_with_an_empty_model_name_says_tf_servings_words(stubs):
    """ServerCore::ServableRequestFromModelSpec: "ModelSpec has no name specified."."""
    code, details = _code(stubs.prediction.Predict, _predict_request(name=""))
    assert (code, details.startswith("ModelSpec has no name specified. ")) == (INVALID_ARGUMENT, True), details


def test_predict_with_an_output_filter_answers_that_output(stubs):
    request = _predict_request({"x": _float(2.0)}, ["y"], name=TEST_MODEL, version=123)
    assert _outputs(stubs.prediction.Predict(request, timeout=20)) == {"y": _scalar(3.0)}


def test_predict_with_a_duplicate_output_filter_is_invalid_argument(stubs):
    request = _predict_request({"x": _float(2.0)}, ["y", "y"], name=TEST_MODEL, version=123)
    code, details = _code(stubs.prediction.Predict, request)
    assert (code, details.startswith("duplicate output tensor alias: y")) == (INVALID_ARGUMENT, True), details


@pytest.mark.parametrize(
    "signature_name, alias, output, value",
    [
        ("", "x", "y", 3.0),
        ("regress_x2_to_y3", "inputs", "outputs", 4.0),
    ],
    ids=["PredictionSuccess", "PredictionWithNamedRegressionSignature"],
)
def test_predict_answers_as_tf_serving(stubs, signature_name, alias, output, value):
    """The whole response: the model spec (version, and the signature that ran) and a scalar output."""
    request = _predict_request({alias: _float(2.0)}, name=TEST_MODEL, version=123, signature_name=signature_name)
    expected = predict_pb2.PredictResponse()
    expected.model_spec.CopyFrom(request.model_spec)
    expected.model_spec.signature_name = signature_name or "serving_default"
    response = stubs.prediction.Predict(request, timeout=20)
    assert response.model_spec == expected.model_spec
    assert _outputs(response) == {output: _scalar(value)}


def test_a_scalar_output_carries_an_empty_tensor_shape(stubs):
    """PredictionSuccess's expected output has `mutable_tensor_shape()` set: an empty shape, present."""
    request = _predict_request({"x": _float(2.0)}, name=TEST_MODEL, version=123)
    assert stubs.prediction.Predict(request, timeout=20).outputs["y"].HasField("tensor_shape")


def test_predict_runs_a_classification_signature(stubs):
    """PredictionWithNamedClassificationSignature, on the signature this model has (`classify_x_to_y`,
    a serialized tf.Example in; TF Serving's test model has a float `classify_x2_to_y3`)."""
    example = tf.train.Example(
        features=tf.train.Features(feature={"x": tf.train.Feature(float_list=tf.train.FloatList(value=[2.0]))})
    )
    inputs = {"inputs": tf.make_tensor_proto([example.SerializeToString()])}
    request = _predict_request(inputs, name=TEST_MODEL, version=123, signature_name="classify_x_to_y")
    response = stubs.prediction.Predict(request, timeout=20)
    assert response.model_spec.signature_name == "classify_x_to_y"
    assert {alias: tf.make_ndarray(t).tolist() for alias, t in response.outputs.items()} == {"scores": [[3.0]]}


def test_predict_runs_customized_stateful_signatures_in_order(stubs):
    """PredictionWithCustomizedSignatures: get, incr, reset, incr (filtered), incr_counter_by(3)."""
    calls = [
        ("get_counter", {}, [], 0.0),
        ("incr_counter", {}, [], 1.0),
        ("reset_counter", {}, [], 0.0),
        ("incr_counter", {}, ["output"], 1.0),
        ("incr_counter_by", {"delta": _float(3.0)}, [], 4.0),
    ]
    for signature_name, inputs, output_filter, value in calls:
        request = _predict_request(inputs, output_filter, name="counter", version=123, signature_name=signature_name)
        response = stubs.prediction.Predict(request, timeout=20)
        assert (response.model_spec.signature_name, _outputs(response)) == (
            signature_name,
            {"output": _scalar(value)},
        ), signature_name


# Version selection by number or label (predict_impl_test.cc): test_tfs_contract_models.py
# test_predict_picks_the_version_by_number_or_label.
@pytest.mark.parametrize(
    "spec, code, wanted",
    [
        ({"version": 125}, NOT_FOUND, f"Servable not found for request: Specific({TWO_VERSIONS}, 125)"),
        ({"label": "nope"}, INVALID_ARGUMENT, "Unrecognized servable version label: nope"),
    ],
)
def test_predict_on_an_unknown_version_or_label(stubs, spec, code, wanted):
    received, details = _code(stubs.prediction.Predict, _predict_request({"x": _float(2.0)}, name=TWO_VERSIONS, **spec))
    assert (received, details.startswith(wanted)) == (code, True), details
