"""SignatureDef `defaults`: inputs a PredictRequest may leave out, as TensorFlow Serving takes them.

TF 2.x writes `SignatureDef.defaults` for a signature function's argument with a default value.
Since tensorflow/serving 45bc2916 (2023-08, "Enable the saved model default input value feature"),
`PreProcessPrediction` (predict_util.cc) lets a request send fewer inputs when the signature has
defaults (`VerifyRequestInputsSize`) and takes them with TensorFlow's
`saved_model::GetInputValues` (cc/saved_model/util.cc), whose messages are asserted here. REST's
JSON decoding (`util/json_tensor.cc`) still wants every input: defaults are a gRPC Predict (and
warm-up) feature. The model is exported here with `tf.saved_model.save`, as a TF 2.16 user would.
"""

from __future__ import annotations

import grpc
import numpy as np
import pytest
import tensorflow as tf
from serving_helpers import http
from tensorflow_serving.apis import get_model_metadata_pb2, predict_pb2
from tfs_contract_helpers import HALF_PLUS_TWO, start_server, tfs_testdata

from serving import config as cfg

MODEL = "scaled"
TFS_MODEL = "half_plus_two"


class _Scaled(tf.Module):
    @tf.function(
        input_signature=[tf.TensorSpec([None], tf.float32, name="x"), tf.TensorSpec([None], tf.float32, name="scale")]
    )
    def scaled(self, x, scale=tf.constant([10.0])):
        return {"y": x * scale}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    base = tmp_path_factory.mktemp("scaled")
    module = _Scaled()
    tf.saved_model.save(module, str(base / "1"), signatures={"serving_default": module.scaled})
    models = [cfg.model_config(MODEL, base), cfg.model_config(TFS_MODEL, tfs_testdata() / HALF_PLUS_TWO)]
    server = start_server(tmp_path_factory.mktemp("tfs_defaults"), *models)
    yield server
    server.stop()


def _predict(stubs, model: str = MODEL, **inputs) -> predict_pb2.PredictResponse:
    request = predict_pb2.PredictRequest()
    request.model_spec.name = model
    for alias, value in inputs.items():
        request.inputs[alias].CopyFrom(tf.make_tensor_proto(np.asarray(value, np.float32)))
    return stubs.prediction.Predict(request, timeout=20)


def _refused(stubs, model: str = MODEL, **inputs) -> str:
    with pytest.raises(grpc.RpcError) as caught:
        _predict(stubs, model, **inputs)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    return caught.value.details()


def test_the_export_writes_the_default_into_the_signature_def(stubs):
    """GetModelMetadata shows the SignatureDef as saved, `defaults` included."""
    request = get_model_metadata_pb2.GetModelMetadataRequest(metadata_field=["signature_def"])
    request.model_spec.name = MODEL
    response = stubs.prediction.GetModelMetadata(request, timeout=20)
    signatures = get_model_metadata_pb2.SignatureDefMap()
    response.metadata["signature_def"].Unpack(signatures)
    default = signatures.signature_def["serving_default"].defaults["scale"]
    assert tf.make_ndarray(default).tolist() == [10.0]


def test_a_request_leaving_out_an_input_with_a_default_gets_the_default(stubs):
    response = _predict(stubs, x=[1.0, 2.0])
    assert tf.make_ndarray(response.outputs["y"]).tolist() == [10.0, 20.0]


def test_a_request_sending_the_input_overrides_the_default(stubs):
    response = _predict(stubs, x=[1.0, 2.0], scale=[3.0, 4.0])
    assert tf.make_ndarray(response.outputs["y"]).tolist() == [3.0, 8.0]


def test_leaving_out_an_input_without_a_default_names_it_and_the_defaults(stubs):
    """GetInputValues: the first signature input neither sent nor defaulted."""
    details = _refused(stubs, scale=[3.0])
    assert details.startswith(
        "Signature input alias: x(feed name: serving_default_x:0) not found in request and no default value "
        "provided. Inputs expected to be in the request {scale}, or default input alias set: scale. "
    )


def test_an_unknown_input_beside_a_defaulted_one_is_an_invalid_name(stubs):
    """Sizes match (2 = 2), every signature input is found, one request input is not used."""
    details = _refused(stubs, x=[1.0], scael=[3.0])
    assert details.startswith("Inputs contains invalid name. Used request inputs: x, request input: scael,x. ")
    assert 'Did you mean "scale"?' not in details  # scale has a default: it is not missing


def test_more_inputs_than_the_signature_are_refused_by_size_first(stubs):
    details = _refused(stubs, x=[1.0], scale=[1.0], z=[1.0])
    assert details.startswith("input size does not match signature: 3!=2 len({scale,x,z}) != len({scale,x}).")


def test_without_defaults_a_renamed_input_is_reported_by_get_input_values(stubs):
    """TF Serving's half_plus_two has no defaults: one input under another name passes the size
    check and GetInputValues names the signature's input (TF Serving before 45bc2916 said
    "input tensor alias not found in signature")."""
    details = _refused(stubs, TFS_MODEL, key=[1.0])
    assert details.startswith(
        "Signature input alias: x(feed name: x:0) not found in request and no default value provided. "
        "Inputs expected to be in the request {key}, or default input alias set:. Expected inputs ['x']"
    )


def test_rest_still_wants_every_input(server):
    """json_tensor.cc builds the request from the signature's inputs: a missing one is refused
    before any default could apply."""
    status, body = http(server.rest_url, "POST", f"/v1/models/{MODEL}:predict", {"inputs": {"x": [1.0]}})
    assert status == 400
    assert body["error"].startswith("Missing named input: scale in 'inputs' object")
    status, body = http(server.rest_url, "POST", f"/v1/models/{MODEL}:predict", {"instances": [{"x": 1.0}]})
    assert status == 400
    assert "keys must be equal to: scale,x" in body["error"]
