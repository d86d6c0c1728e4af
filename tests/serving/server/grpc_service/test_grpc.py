"""The gRPC API (PredictionService, ModelService) against a real embedded server."""

from __future__ import annotations

import grpc
import pytest
import tensorflow as tf
import uvloop
from serving_helpers import LABELS, MODEL, example, logit, probability, push
from tensorflow_serving.apis import (
    classification_pb2,
    get_model_metadata_pb2,
    get_model_status_pb2,
    model_management_pb2,
    model_service_pb2_grpc,
    predict_pb2,
    prediction_service_pb2_grpc,
    regression_pb2,
)

from serving import config as cfg

X = [1.0, 2.0, 3.0]


@pytest.fixture
def stubs(server):
    with grpc.insecure_channel(server.grpc_address) as channel:
        yield (
            prediction_service_pb2_grpc.PredictionServiceStub(channel),
            model_service_pb2_grpc.ModelServiceStub(channel),
        )


def _predict_request(signature: str = "serving_raw", **inputs) -> predict_pb2.PredictRequest:
    request = predict_pb2.PredictRequest()
    request.model_spec.name = MODEL
    request.model_spec.signature_name = signature
    for alias, value in inputs.items():
        request.inputs[alias].CopyFrom(value)
    return request


def test_predict_on_raw_features(stubs):
    prediction, _ = stubs
    response = prediction.Predict(_predict_request(x=tf.make_tensor_proto([X, [0, 0, 0]], dtype=tf.float32)))
    assert response.model_spec.version.value == 1
    assert response.model_spec.signature_name == "serving_raw"
    assert tf.make_ndarray(response.outputs["logit"]).tolist() == pytest.approx([logit(1, X), 0.1], rel=1e-6)


def test_predict_answers_in_tf_servings_fields_on_uvloop(stubs, server):
    # Predict's bytes are written directly for float outputs (serving/server/wire/predict_wire.py), on
    # uvloop's event loop; a client reads the fields TF Serving writes (float_val, not tensor_content).
    assert isinstance(server._loop, uvloop.Loop)
    prediction, _ = stubs
    response = prediction.Predict(_predict_request(x=tf.make_tensor_proto([X], dtype=tf.float32)))
    spec = response.model_spec
    assert (spec.name, spec.version.value, spec.signature_name) == (MODEL, 1, "serving_raw")
    assert "logit" in response.outputs
    for tensor in response.outputs.values():
        assert tensor.dtype == tf.float32.as_datatype_enum and not tensor.tensor_content
        assert [d.size for d in tensor.tensor_shape.dim][:1] == [1] and len(tensor.float_val) >= 1
    assert list(response.outputs["logit"].float_val) == pytest.approx([logit(1, X)], rel=1e-6)


def test_predict_default_signature_on_serialized_examples(stubs):
    prediction, _ = stubs
    request = _predict_request("", examples=tf.make_tensor_proto([example(X)], dtype=tf.string))
    response = prediction.Predict(request)
    assert response.model_spec.signature_name == "serving_default"
    assert tf.make_ndarray(response.outputs["probability"]).tolist() == pytest.approx([probability(1, X)])


def test_predict_output_filter_keeps_requested_outputs(stubs):
    prediction, _ = stubs
    request = _predict_request(x=tf.make_tensor_proto([X], dtype=tf.float32))
    request.output_filter.append("logit")
    assert list(prediction.Predict(request).outputs) == ["logit"]


def test_classify_and_regress(stubs):
    prediction, _ = stubs
    classify = classification_pb2.ClassificationRequest()
    classify.model_spec.name = MODEL
    classify.model_spec.signature_name = "classification"
    classify.input.example_list.examples.add().ParseFromString(example(X))
    [result] = prediction.Classify(classify).result.classifications
    assert [c.label for c in result.classes] == list(LABELS)
    assert result.classes[1].score == pytest.approx(probability(1, X), rel=1e-6)

    regress = regression_pb2.RegressionRequest()
    regress.model_spec.name = MODEL
    regress.model_spec.signature_name = "regression"
    regress.input.example_list.examples.add().ParseFromString(example(X))
    [regression] = prediction.Regress(regress).result.regressions
    assert regression.value == pytest.approx(logit(1, X), rel=1e-6)


def test_get_model_metadata_packs_signature_defs(stubs):
    prediction, _ = stubs
    request = get_model_metadata_pb2.GetModelMetadataRequest()
    request.model_spec.name = MODEL
    request.metadata_field.append("signature_def")
    response = prediction.GetModelMetadata(request)
    signatures = get_model_metadata_pb2.SignatureDefMap()
    response.metadata["signature_def"].Unpack(signatures)
    assert response.model_spec.version.value == 1
    assert signatures.signature_def["regression"].method_name == "tensorflow/serving/regress"


def test_get_model_status(stubs):
    _, models = stubs
    request = get_model_status_pb2.GetModelStatusRequest()
    request.model_spec.name = MODEL
    [status] = models.GetModelStatus(request).model_version_status
    assert (status.version, status.state) == (1, get_model_status_pb2.ModelVersionStatus.AVAILABLE)


def _spec(request, **fields):
    for key, value in fields.items():
        if key == "version":
            request.model_spec.version.value = value
        else:
            setattr(request.model_spec, key, value)
    return request


BAD_CALLS = [
    # (case, request, expected code, text)
    (
        "unknown model",
        _spec(predict_pb2.PredictRequest(), name="nope"),
        grpc.StatusCode.NOT_FOUND,
        "Servable not found for request: Latest(nope)",
    ),
    (
        "unknown version",
        _spec(predict_pb2.PredictRequest(), name=MODEL, version=5),
        grpc.StatusCode.NOT_FOUND,
        "Specific(lin, 5)",
    ),
    (
        "unknown label",
        _spec(predict_pb2.PredictRequest(), name=MODEL, version_label="stable"),
        grpc.StatusCode.INVALID_ARGUMENT,  # TF Serving's ServerCore::GetModelVersionForLabel
        "Unrecognized servable version label: stable",
    ),
    (
        "missing input",
        _spec(predict_pb2.PredictRequest(), name=MODEL, signature_name="serving_raw"),
        grpc.StatusCode.INVALID_ARGUMENT,
        "Missing but required: {x}",
    ),
    (
        "wrong dtype",
        _predict_request(x=tf.make_tensor_proto([["a", "b", "c"]])),
        grpc.StatusCode.INVALID_ARGUMENT,
        "Expects arg[0] to be float but string is provided",
    ),
    (
        "unknown alias",
        _predict_request(y=tf.make_tensor_proto([X], dtype=tf.float32)),
        grpc.StatusCode.INVALID_ARGUMENT,
        "Signature input alias: x(feed name: serving_raw_x:0) not found in request and no default value provided",
    ),
    (
        "unknown signature",
        _spec(predict_pb2.PredictRequest(), name=MODEL, signature_name="nope"),
        grpc.StatusCode.FAILED_PRECONDITION,  # as TF Serving's predict_util.cc
        'Serving signature key "nope" not found.',
    ),
]


@pytest.mark.parametrize(("case", "request_proto", "code", "text"), BAD_CALLS, ids=[row[0] for row in BAD_CALLS])
def test_bad_predict_gets_status_code_and_message(stubs, case, request_proto, code, text):
    prediction, _ = stubs
    with pytest.raises(grpc.RpcError) as caught:
        prediction.Predict(request_proto)
    assert caught.value.code() == code
    assert text in caught.value.details()
    assert "Expected" in caught.value.details()


def test_reload_config_loads_new_version_and_labels(make_server, model_dir, exports):
    server = make_server(model_dir, policy=cfg.specific_policy([1]), allow_config_reload=True)
    push(model_dir, 2, exports[2])
    with grpc.insecure_channel(server.grpc_address) as channel:
        models = model_service_pb2_grpc.ModelServiceStub(channel)
        reload = model_management_pb2.ReloadConfigRequest()
        model = cfg.model_config(MODEL, model_dir, policy=cfg.specific_policy([1, 2]), labels={"canary": 2})
        reload.config.CopyFrom(cfg.server_config(model))
        with pytest.raises(grpc.RpcError) as caught:  # version 2 is not loaded yet
            models.HandleReloadConfigRequest(reload)
        assert caught.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert "not currently available for inference" in caught.value.details()

        reload.config.model_config_list.config[0].version_labels.clear()
        assert models.HandleReloadConfigRequest(reload).status.error_code == 0
        server.manager.wait_for(MODEL, 2, get_model_status_pb2.ModelVersionStatus.AVAILABLE, timeout=30)
        reload.config.model_config_list.config[0].version_labels["canary"] = 2
        models.HandleReloadConfigRequest(reload)
        prediction = prediction_service_pb2_grpc.PredictionServiceStub(channel)
        request = _predict_request(x=tf.make_tensor_proto([X], dtype=tf.float32))
        request.model_spec.version_label = "canary"
        response = prediction.Predict(request)
        assert response.model_spec.version.value == 2
        assert tf.make_ndarray(response.outputs["logit"])[0] == pytest.approx(logit(2, X), rel=1e-6)


def test_message_over_size_limit_is_resource_exhausted(make_server, model_dir):
    server = make_server(model_dir, max_request_bytes=4096)
    request = _predict_request(x=tf.make_tensor_proto([X] * 1000, dtype=tf.float32))
    with grpc.insecure_channel(server.grpc_address) as channel:
        with pytest.raises(grpc.RpcError) as caught:
            prediction_service_pb2_grpc.PredictionServiceStub(channel).Predict(request)
    assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
