"""TF Serving's own contract on TF Serving's own TF1 model, half_plus_two (y = 0.5x + 2).

Each test translates a test of tensorflow/serving's
`tensorflow_serving/model_servers/tensorflow_model_server_test.py` (named in
the docstring) onto the embedded server, serving
`saved_model_half_plus_two_cpu/00000123` in place, as shipped (zero-padded
version folder, read-only files), under the model name `default`.
"""

from __future__ import annotations

import grpc
import numpy as np
import pytest
import tensorflow as tf
from serving_helpers import http
from tensorflow.core.framework import types_pb2
from tensorflow_serving.apis import (
    classification_pb2,
    get_model_metadata_pb2,
    get_model_status_pb2,
    inference_pb2,
    predict_pb2,
    regression_pb2,
)
from tfs_contract_helpers import HALF_PLUS_TWO, expected_metadata, sorted_object, start_server, tfs_testdata

from serving import config as cfg

MODEL = "default"
VERSION = 123  # the folder is 00000123


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    model = cfg.model_config(MODEL, tfs_testdata() / HALF_PLUS_TWO)
    server = start_server(tmp_path_factory.mktemp("tfs_predict"), model)
    yield server
    server.stop()


def _predict_request(signature_name="serving_default", specify_output=True, batch_input=False):
    # TF Serving's VerifyPredictRequest: x = [2.0] (shape [1], or [1, 1] with batch_input).
    request = predict_pb2.PredictRequest()
    request.model_spec.name = MODEL
    request.model_spec.signature_name = signature_name
    request.inputs["x"].dtype = types_pb2.DT_FLOAT
    request.inputs["x"].float_val.append(2.0)
    request.inputs["x"].tensor_shape.dim.add().size = 1
    if batch_input:
        request.inputs["x"].tensor_shape.dim.add().size = 1
    if specify_output:
        request.output_filter.append("y")
    return request


def _examples_input(request, x=2.0):
    example = request.input.example_list.examples.add()
    example.features.feature["x"].float_list.value.extend([x])


def test_zero_padded_version_folder_is_version_123(server):
    """Version folders are parsed as integers: 00000123 is version 123, loaded from 00000123/."""
    servable = server.manager.acquire(MODEL)
    try:
        assert servable.version == VERSION
        assert servable.path == tfs_testdata() / HALF_PLUS_TWO / "00000123"
    finally:
        servable.release()


def test_get_model_status(stubs):
    """testGetModelStatus."""
    request = get_model_status_pb2.GetModelStatusRequest()
    request.model_spec.name = MODEL
    result = stubs.model.GetModelStatus(request, timeout=20)
    assert [s.version for s in result.model_version_status] == [VERSION]
    assert result.model_version_status[0].state == get_model_status_pb2.ModelVersionStatus.AVAILABLE
    assert result.model_version_status[0].status.error_code == 0


def test_get_status_rest(server):
    """testGetStatusREST: the exact body."""
    assert http(server.rest_url, "GET", f"/v1/models/{MODEL}") == (
        200,
        {
            "model_version_status": [
                {"version": "123", "state": "AVAILABLE", "status": {"error_code": "OK", "error_message": ""}}
            ]
        },
    )


def test_get_model_metadata(stubs):
    """testGetModelMetadata, and the signature defs equal TF Serving's half_plus_two_model_metadata.json."""
    request = get_model_metadata_pb2.GetModelMetadataRequest()
    request.model_spec.name = MODEL
    request.metadata_field.append("signature_def")
    result = stubs.prediction.GetModelMetadata(request, timeout=20)
    assert result.model_spec.name == MODEL
    assert result.model_spec.version.value == VERSION
    assert list(result.metadata) == ["signature_def"]
    signature_defs = get_model_metadata_pb2.SignatureDefMap()
    result.metadata["signature_def"].Unpack(signature_defs)
    expected = expected_metadata("half_plus_two_model_metadata.json")["metadata"]["signature_def"]["signature_def"]
    assert sorted(signature_defs.signature_def) == sorted(expected)
    assert signature_defs.signature_def["serving_default"].inputs["x"].name == "x:0"


def test_get_model_metadata_rest(server):
    """testGetModelMetadataREST: the body equals half_plus_two_model_metadata.json (order-free)."""
    status, body = http(server.rest_url, "GET", f"/v1/models/{MODEL}/metadata")
    assert status == 200
    assert sorted_object(body) == sorted_object(expected_metadata("half_plus_two_model_metadata.json"))


@pytest.mark.parametrize("specify_output", [True, False], ids=["output_filter", "all_outputs"])
@pytest.mark.parametrize("batch_input", [False, True], ids=["x_shape_1", "x_shape_1x1"])
def test_predict(stubs, specify_output, batch_input):
    """testPredictSavedModel (_TestPredict / VerifyPredictRequest): y = 3.0 in float_val, model spec echoed.

    The input shape [1] is not the TensorInfo's [-1, 1]: TF Serving feeds the
    tensor x:0 as given (a TF1 session does not check a feed's shape), so do we.
    """
    result = stubs.prediction.Predict(
        _predict_request(specify_output=specify_output, batch_input=batch_input), timeout=20
    )
    assert list(result.outputs) == ["y"]
    assert result.outputs["y"].dtype == types_pb2.DT_FLOAT
    assert list(result.outputs["y"].float_val) == [3.0]
    assert (result.model_spec.name, result.model_spec.signature_name, result.model_spec.version.value) == (
        MODEL,
        "serving_default",
        VERSION,
    )


def test_predict_unknown_output_filter_is_rejected(stubs):
    """PreProcessPrediction: an output_filter alias not in the signature is INVALID_ARGUMENT."""
    request = _predict_request(specify_output=False)
    request.output_filter.append("z")
    with pytest.raises(grpc.RpcError) as caught:
        stubs.prediction.Predict(request, timeout=20)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "output tensor alias not found in signature: z" in caught.value.details()


@pytest.mark.parametrize(
    "body, expected",
    [
        ({"instances": [2.0, 3.0, 4.0]}, {"predictions": [3.0, 3.5, 4.0]}),  # testPredictREST
        ({"inputs": [2.0, 3.0, 4.0]}, {"outputs": [3.0, 3.5, 4.0]}),  # testPredictColumnarREST
        ({"instances": [1.0, 2.0, 5.0]}, {"predictions": [2.5, 3.0, 4.5]}),
        ({"instances": [[1.0], [2.0]]}, {"predictions": [[2.5], [3.0]]}),  # the TensorInfo's own shape
        ({"signature_name": "serving_default", "inputs": {"x": [[4.0]]}}, {"outputs": [[4.0]]}),
    ],
)
def test_predict_rest(server, body, expected):
    """REST predict in row and columnar form, with the shapes TF Serving accepts."""
    assert http(server.rest_url, "POST", f"/v1/models/{MODEL}:predict", body) == (200, expected)


def test_predict_rest_still_checks_dtypes(server):
    """Any shape goes in, but a string for the float input x is still rejected with TF Serving's wording."""
    status, body = http(server.rest_url, "POST", f"/v1/models/{MODEL}:predict", {"instances": ["a"]})
    assert status == 400
    assert 'JSON Value: "a" Type: String is not of expected type: float' in body["error"]


def test_classify(stubs):
    """testClassify: one example x = 2.0 scores 3.0 (classify_x_to_y has scores only)."""
    request = classification_pb2.ClassificationRequest()
    request.model_spec.name = MODEL
    request.model_spec.signature_name = "classify_x_to_y"
    _examples_input(request)
    result = stubs.prediction.Classify(request, timeout=20)
    assert len(result.result.classifications) == 1
    assert [(c.label, c.score) for c in result.result.classifications[0].classes] == [("", 3.0)]
    assert (result.model_spec.name, result.model_spec.signature_name, result.model_spec.version.value) == (
        MODEL,
        "classify_x_to_y",
        VERSION,
    )


def test_regress(stubs):
    """testRegress: one example x = 2.0 regresses to 3.0."""
    request = regression_pb2.RegressionRequest()
    request.model_spec.name = MODEL
    request.model_spec.signature_name = "regress_x_to_y"
    _examples_input(request)
    result = stubs.prediction.Regress(request, timeout=20)
    assert [r.value for r in result.result.regressions] == [3.0]
    assert (result.model_spec.name, result.model_spec.signature_name, result.model_spec.version.value) == (
        MODEL,
        "regress_x_to_y",
        VERSION,
    )


@pytest.mark.parametrize(
    "api, body, expected",
    [
        ("classify", {"signature_name": "classify_x_to_y", "examples": [{"x": 2.0}]}, {"results": [[["", 3.0]]]}),
        ("regress", {"signature_name": "regress_x_to_y", "examples": [{"x": 2.0}]}, {"results": [3.0]}),
        (
            "regress",
            {"signature_name": "regress_x_to_y2", "examples": [{"x": 2.0}, {"x": 4.0}]},
            {"results": [4.0, 5.0]},
        ),
    ],
    ids=["testClassifyREST", "testRegressREST", "regress_x_to_y2"],
)
def test_classify_and_regress_rest(server, api, body, expected):
    """testClassifyREST, testRegressREST (y2 = 0.5x + 3)."""
    assert http(server.rest_url, "POST", f"/v1/models/{MODEL}:{api}", body) == (200, expected)


def test_multi_inference(stubs):
    """testMultiInference: a regress and a classify task on one example, both 3.0, specs echoed."""
    request = inference_pb2.MultiInferenceRequest()
    request.tasks.add().model_spec.name = MODEL
    request.tasks[0].model_spec.signature_name = "regress_x_to_y"
    request.tasks[0].method_name = "tensorflow/serving/regress"
    request.tasks.add().model_spec.name = MODEL
    request.tasks[1].model_spec.signature_name = "classify_x_to_y"
    request.tasks[1].method_name = "tensorflow/serving/classify"
    _examples_input(request)
    result = stubs.prediction.MultiInference(request, timeout=20)
    assert len(result.results) == 2
    assert result.results[0].regression_result.regressions[0].value == 3.0
    assert result.results[1].classification_result.classifications[0].classes[0].score == 3.0
    for task, got in zip(request.tasks, result.results):
        assert (got.model_spec.name, got.model_spec.signature_name, got.model_spec.version.value) == (
            MODEL,
            task.model_spec.signature_name,
            VERSION,
        )


def _task(request, model, signature, method):
    task = request.tasks.add()
    task.model_spec.name = model
    task.model_spec.signature_name = signature
    task.method_name = method


REGRESS, CLASSIFY = "tensorflow/serving/regress", "tensorflow/serving/classify"


@pytest.mark.parametrize(
    "tasks, code, text",
    [
        ([], grpc.StatusCode.INVALID_ARGUMENT, "MultiInferenceRequest has no tasks"),
        (
            [(MODEL, "regress_x_to_y", REGRESS), ("other", "classify_x_to_y", CLASSIFY)],
            grpc.StatusCode.INVALID_ARGUMENT,
            "All ModelSpecs in a MultiInferenceRequest must access the same model name",
        ),
        (
            [(MODEL, "regress_x_to_y", REGRESS), (MODEL, "regress_x_to_y", REGRESS)],
            grpc.StatusCode.INVALID_ARGUMENT,
            "Duplicate evaluation of signature: regress_x_to_y",
        ),
        (
            [(MODEL, "serving_default", "tensorflow/serving/predict")],
            grpc.StatusCode.UNIMPLEMENTED,
            "Unsupported signature method_name: tensorflow/serving/predict",
        ),
        (
            [(MODEL, "classify_x_to_y", REGRESS)],
            grpc.StatusCode.INVALID_ARGUMENT,
            "No regression outputs found in SignatureDef",  # PreProcessRegression; method names are not checked
        ),
        (
            [(MODEL, "nope", REGRESS)],
            grpc.StatusCode.INVALID_ARGUMENT,
            "Requested signature not found in model graph: nope",
        ),
    ],
    ids=["no_tasks", "two_models", "duplicate_signature", "predict_method", "wrong_method", "unknown_signature"],
)
def test_multi_inference_rejects_bad_tasks(stubs, tasks, code, text):
    """MultiInference's rules (multi_inference.cc), with TF Serving's codes and wording."""
    request = inference_pb2.MultiInferenceRequest()
    for task in tasks:
        _task(request, *task)
    _examples_input(request)
    with pytest.raises(grpc.RpcError) as caught:
        stubs.prediction.MultiInference(request, timeout=20)
    assert caught.value.code() == code
    assert text in caught.value.details()


def test_regress_on_a_float_input_signature_fails_inside_the_model(server):
    """regress_x2_to_y3 takes floats on x2:0, not tf.Examples: TF Serving's PreProcessRegression checks no
    dtype, so the serialized examples reach the session, which refuses them as a float feed."""
    status, body = http(
        server.rest_url,
        "POST",
        f"/v1/models/{MODEL}:regress",
        {"signature_name": "regress_x2_to_y3", "examples": [{"x": 2.0}]},
    )
    assert status == 400
    assert "to be float but string is provided" in body["error"], body


def test_predict_response_tensor_reads_back_with_make_ndarray(stubs):
    """Typed fields carry the shape too: tf.make_ndarray gives the [1, 1] answer."""
    result = stubs.prediction.Predict(_predict_request(batch_input=True), timeout=20)
    np.testing.assert_array_equal(tf.make_ndarray(result.outputs["y"]), np.array([[3.0]], np.float32))
