"""TF Serving's contract on its other test models: two versions with labels, config
reload, a bad model, and a stateful model.

Translated from tensorflow/serving's `tensorflow_model_server_test.py`
(testGoodModelConfig, testModelConfigReload, _TestBadModel) and onto the
models of `servables/tensorflow/testdata`, served in place (zero-padded,
read-only version folders).
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import grpc
import pytest
import tensorflow as tf
from serving_helpers import http
from tensorflow_serving.apis import get_model_status_pb2, model_management_pb2, predict_pb2
from tfs_contract_helpers import (
    BAD,
    COUNTER,
    HALF_PLUS_THREE,
    HALF_PLUS_TWO,
    TWO_VERSIONS,
    Stubs,
    expected_metadata,
    sorted_object,
    start_server,
    tfs_testdata,
)

from serving import config as cfg
from serving.server.lifecycle.versions import State

AVAILABLE = get_model_status_pb2.ModelVersionStatus.AVAILABLE
END = get_model_status_pb2.ModelVersionStatus.END


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    data = tfs_testdata()
    models = [
        cfg.model_config(
            TWO_VERSIONS, data / TWO_VERSIONS, policy=cfg.all_policy(), labels={"stable": 123, "canary": 124}
        ),
        cfg.model_config("half_plus_two", data / HALF_PLUS_TWO),
        cfg.model_config("half_plus_three", data / HALF_PLUS_THREE),
        cfg.model_config("counter", data / COUNTER),
        cfg.model_config("bad", data / BAD),
    ]
    server = start_server(tmp_path_factory.mktemp("tfs_models"), *models)
    yield server
    server.stop()


def _predict(stubs, model, x=2.0, *, version=None, label=None, signature_name="", inputs=None):
    request = predict_pb2.PredictRequest()
    request.model_spec.name = model
    request.model_spec.signature_name = signature_name
    if version is not None:
        request.model_spec.version.value = version
    if label is not None:
        request.model_spec.version_label = label
    for alias, value in ({"x": tf.make_tensor_proto([x], dtype=tf.float32)} if inputs is None else inputs).items():
        request.inputs[alias].CopyFrom(value)
    return stubs.prediction.Predict(request, timeout=20)


def test_two_versions_are_both_available(server):
    """Zero-padded folders 00000123 and 00000124 are versions 123 and 124, newest first."""
    status, body = http(server.rest_url, "GET", f"/v1/models/{TWO_VERSIONS}")
    assert status == 200
    assert [(s["version"], s["state"]) for s in body["model_version_status"]] == [
        ("124", "AVAILABLE"),
        ("123", "AVAILABLE"),
    ]


@pytest.mark.parametrize(
    "where, expected_version",
    [
        ({}, 124),
        ({"version": 123}, 123),
        ({"version": 124}, 124),
        ({"label": "stable"}, 123),
        ({"label": "canary"}, 124),
    ],
    ids=["latest", "version_123", "version_124", "label_stable", "label_canary"],
)
def test_predict_picks_the_version_by_number_or_label(stubs, where, expected_version):
    """Unlabelled requests go to the highest version; versions and labels pick theirs (y = 0.5x + 2 in both)."""
    result = _predict(stubs, TWO_VERSIONS, **where)
    assert result.model_spec.version.value == expected_version
    assert tf.make_ndarray(result.outputs["y"]).tolist() == [3.0]


@pytest.mark.parametrize(
    "path", ["/v1/models/{m}/versions/123:predict", "/v1/models/{m}/labels/stable:predict"], ids=["version", "label"]
)
def test_rest_predict_by_version_and_label(server, path):
    status, body = http(server.rest_url, "POST", path.format(m=TWO_VERSIONS), {"instances": [2.0, 4.0]})
    assert (status, body) == (200, {"predictions": [3.0, 4.0]})


def test_two_versions_metadata_matches_tf_serving(server):
    """GET .../versions/123/metadata equals saved_model_half_plus_two_2_versions_metadata.json."""
    status, body = http(server.rest_url, "GET", f"/v1/models/{TWO_VERSIONS}/versions/123/metadata")
    assert status == 200
    assert sorted_object(body) == sorted_object(expected_metadata("saved_model_half_plus_two_2_versions_metadata.json"))


def test_good_model_config_serves_half_plus_two_and_half_plus_three(stubs):
    """testGoodModelConfig: two models from one config, with and without output filter."""
    two, three = _predict(stubs, "half_plus_two"), _predict(stubs, "half_plus_three")
    assert tf.make_ndarray(two.outputs["y"]).tolist() == [3.0]
    # half_plus_three's x has TensorInfo shape [] (a scalar): TF Serving feeds the [1] tensor as given.
    assert tf.make_ndarray(three.outputs["y"]).tolist() == [4.0]
    assert (two.model_spec.version.value, three.model_spec.version.value) == (123, 123)


def test_bad_model_is_reported_end_with_its_error(stubs, server):
    """bad_half_plus_two (a SessionBundle, no saved_model.pb) fails to load: state END with TF Serving's error."""
    request = get_model_status_pb2.GetModelStatusRequest()
    request.model_spec.name = "bad"
    result = stubs.model.GetModelStatus(request, timeout=20)
    assert [(s.version, s.state) for s in result.model_version_status] == [(123, END)]
    status = result.model_version_status[0].status
    assert status.error_code != 0
    assert "Session Bundle is deprecated and removed." in status.error_message
    assert "00000123" in status.error_message
    _, body = http(server.rest_url, "GET", "/v1/models/bad")
    assert body["model_version_status"][0]["state"] == "END"
    # The loader's own code and words, as TF Serving reports them: its `LoadSessionBundleOrSavedModelBundle`
    # (session_bundle/oss/session_bundle_util.cc) refuses an export.meta with UNIMPLEMENTED.
    assert status.error_code == grpc.StatusCode.UNIMPLEMENTED.value[0]
    assert status.error_message.startswith("Session Bundle is deprecated and removed.")
    assert body["model_version_status"][0]["status"]["error_code"] == "UNIMPLEMENTED"


def test_bad_model_predict_is_not_found_with_the_load_error_and_the_server_stays_up(stubs):
    """_TestBadModel: Predict fails and the other models keep serving.

    That test (disabled in TF Serving) expects FAILED_PRECONDITION; TF Serving today answers
    NOT_FOUND "Servable not found for request" (basic_manager.cc), as we do, adding the load error.
    """
    with pytest.raises(grpc.RpcError) as caught:
        _predict(stubs, "bad")
    assert caught.value.code() == grpc.StatusCode.NOT_FOUND
    assert "Servable not found for request: Latest(bad)" in caught.value.details()
    assert "versions [123] failed to load" in caught.value.details()
    assert "Session Bundle is deprecated and removed." in caught.value.details()
    assert tf.make_ndarray(_predict(stubs, "half_plus_two").outputs["y"]).tolist() == [3.0]


def _counter(stubs, signature, **inputs):
    protos = {alias: tf.make_tensor_proto(value) for alias, value in inputs.items()}
    result = _predict(stubs, "counter", signature_name=signature, inputs=protos)
    return int(tf.make_ndarray(result.outputs["output"]))


def test_counter_keeps_state_across_calls(stubs):
    """saved_model_counter: signatures without inputs change a variable that later calls read."""
    assert _counter(stubs, "reset_counter") == 0
    assert [_counter(stubs, "incr_counter") for _ in range(3)] == [1, 2, 3]
    assert _counter(stubs, "get_counter") == 3
    assert _counter(stubs, "incr_counter_by", delta=tf.constant(4.0, tf.float32)) == 7
    assert _counter(stubs, "reset_counter") == 0
    assert _counter(stubs, "get_counter") == 0


def test_counter_over_rest_needs_inputs(server):
    """TF Serving's REST API has no form for a signature without inputs (json_tensor.cc)."""
    status, body = http(server.rest_url, "POST", "/v1/models/counter:predict", {"signature_name": "get_counter"})
    assert status == 400
    assert "Failed to get input map for signature: get_counter" in body["error"]


def test_model_config_reload(tmp_path):
    """testModelConfigReload: the config file is polled; half_plus_two is replaced by half_plus_three.

    HandleReloadConfigRequest is opt-in here (`allow_config_reload`); TF Serving always serves it.
    """
    data = tfs_testdata()
    server = start_server(
        tmp_path / "cfg",
        cfg.model_config("half_plus_two", data / HALF_PLUS_TWO),
        model_config_file_poll_wait_seconds=0.2,
        allow_config_reload=True,
        allowed_model_roots=(str(data),),
    )
    stubs = Stubs(server.grpc_address)
    try:
        assert tf.make_ndarray(_predict(stubs, "half_plus_two").outputs["y"]).tolist() == [3.0]
        cfg.write_text_proto(
            server.config_path, cfg.server_config(cfg.model_config("half_plus_three", data / HALF_PLUS_THREE))
        )
        server.manager.wait_for("half_plus_three", 123, State.AVAILABLE, timeout=30)
        assert tf.make_ndarray(_predict(stubs, "half_plus_three").outputs["y"]).tolist() == [4.0]
        with pytest.raises(grpc.RpcError) as caught:
            _predict(stubs, "half_plus_two")
        assert caught.value.code() == grpc.StatusCode.NOT_FOUND

        # HandleReloadConfigRequest back to half_plus_two is applied, then the file wins again: TF Serving's
        # `Server::PollFilesystemAndReloadConfig` (model_servers/server.cc) applies the file every period,
        # changed or not.
        request = model_management_pb2.ReloadConfigRequest()
        request.config.CopyFrom(cfg.server_config(cfg.model_config("half_plus_two", data / HALF_PLUS_TWO)))
        assert stubs.model.HandleReloadConfigRequest(request, timeout=20).status.error_code == 0
        deadline = time.monotonic() + 30
        while [m.name for m in server.manager.config.model_config_list.config] != ["half_plus_three"]:
            assert time.monotonic() < deadline, "the file's config was not applied again"
            time.sleep(0.05)
        server.manager.wait_for("half_plus_three", 123, State.AVAILABLE, timeout=30)
        assert tf.make_ndarray(_predict(stubs, "half_plus_three").outputs["y"]).tolist() == [4.0]
    finally:
        stubs.close()
        server.stop()


def test_batching_on_a_tf1_model(tmp_path):
    """_TestPredict with a batching parameters file: concurrent requests of TF1 shapes ([2], not the TensorInfo's
    [-1, 1]) go through the batch scheduler and each gets its own rows back."""
    params = cfg.batching_parameters(max_batch_size=16, batch_timeout_micros=20000, num_batch_threads=1)
    server = start_server(
        tmp_path / "cfg", cfg.model_config("default", tfs_testdata() / HALF_PLUS_TWO), batching=params
    )
    try:
        bodies = [{"instances": [float(i), float(i) + 2.0]} for i in range(6)]
        with ThreadPoolExecutor(len(bodies)) as pool:
            answers = list(
                pool.map(lambda body: http(server.rest_url, "POST", "/v1/models/default:predict", body), bodies)
            )
        assert answers == [(200, {"predictions": [0.5 * i + 2.0, 0.5 * i + 3.0]}) for i in range(6)]
        stubs = Stubs(server.grpc_address)
        try:
            assert list(_predict(stubs, "default").outputs["y"].float_val) == [3.0]
        finally:
            stubs.close()
    finally:
        server.stop()


def test_api_rest_md_regress_example_on_half_plus_three(server, stubs):
    """api_rest.md's Regress example: half_plus_three's regress SignatureDef declares `inputs` DT_FLOAT
    while its graph's placeholder takes serialized tf.Examples; TF Serving's PreProcessRegression checks
    no dtype (regressor.cc) and the session runs it: {"results": [3.5, 4.0]}, over REST and gRPC."""
    from tensorflow_serving.apis import regression_pb2

    body = {"signature_name": "tensorflow/serving/regress", "examples": [{"x": 1.0}, {"x": 2.0}]}
    assert http(server.rest_url, "POST", "/v1/models/half_plus_three:regress", body) == (200, {"results": [3.5, 4.0]})
    request = regression_pb2.RegressionRequest()
    request.model_spec.name = "half_plus_three"
    request.model_spec.signature_name = "tensorflow/serving/regress"
    for x in (1.0, 2.0):
        request.input.example_list.examples.add().features.feature["x"].float_list.value.append(x)
    response = stubs.prediction.Regress(request, timeout=20)
    assert [r.value for r in response.result.regressions] == [3.5, 4.0]


@pytest.mark.parametrize("dtype", [tf.int32, tf.int64])
def test_grpc_predict_refuses_an_integer_tensor_for_a_float_input(stubs, dtype):
    """The session checks each feed's dtype (predict_util.cc runs it as given): an int tensor for half_plus_two's
    float `x` is INVALID_ARGUMENT "Expects arg[0] to be float but int32 is provided", not cast. (A JSON number
    over REST is converted by the TensorInfo's dtype, as json_tensor.cc does.)"""
    request = predict_pb2.PredictRequest()
    request.model_spec.name = "half_plus_two"
    request.inputs["x"].CopyFrom(tf.make_tensor_proto([[1]], dtype=dtype))
    with pytest.raises(grpc.RpcError) as refused:
        stubs.prediction.Predict(request, timeout=20)
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert refused.value.details().startswith(f"Expects arg[0] to be float but {dtype.name} is provided")
