"""tensorflow_model_server's transport flags on the embedded server, as TF Serving's server.cc and
http_server.cc apply them, on TF Serving's own half_plus_two:

- `--grpc_socket_path`: gRPC also on a UNIX socket (`builder.AddListeningPort("unix:" + path)`);
- `--grpc_channel_arguments`: `key=value,...` handed to the gRPC server, an integer as an integer
  (`parseGrpcChannelArgs`);
- `--rest_api_enable_cors_support`: `AddCORSHeaders` (http_rest_api_util.cc) on every REST API answer,
  errors and CORS preflights included.
"""

from __future__ import annotations

import http.client
import json
import urllib.parse

import grpc
import numpy as np
import pytest
import tensorflow as tf
from tensorflow_serving.apis import predict_pb2, prediction_service_pb2_grpc
from tfs_contract_helpers import HALF_PLUS_TWO, start_server, tfs_testdata

from serving import config as cfg
from serving.server.grpc_service.api import parse_channel_arguments

MODEL = "half_plus_two"
CORS = {
    "Access-Control-Allow-Origin": "*",
    "Access-Control-Allow-Methods": "POST, GET",
    "Access-Control-Allow-Headers": "Content-Type",
}


def _model():
    return cfg.model_config(MODEL, tfs_testdata() / HALF_PLUS_TWO)


def _predict(channel: grpc.Channel, values: list[float]) -> list[float]:
    request = predict_pb2.PredictRequest()
    request.model_spec.name = MODEL
    request.inputs["x"].CopyFrom(tf.make_tensor_proto(np.array(values, np.float32).reshape(-1, 1)))
    response = prediction_service_pb2_grpc.PredictionServiceStub(channel).Predict(request, timeout=20)
    return tf.make_ndarray(response.outputs["y"]).ravel().tolist()


def test_grpc_also_listens_on_a_unix_socket(tmp_path):
    socket = tmp_path / "serving.sock"
    server = start_server(tmp_path / "config", _model(), grpc_socket_path=str(socket))
    try:
        with grpc.insecure_channel(f"unix:{socket}") as channel:
            assert _predict(channel, [1.0, 2.0]) == [2.5, 3.0]
        with grpc.insecure_channel(server.grpc_address) as channel:  # the TCP port still serves
            assert _predict(channel, [4.0]) == [4.0]
    finally:
        server.stop()


def test_a_unix_socket_alone_serves_grpc_without_a_port(tmp_path):
    socket = tmp_path / "only.sock"
    server = start_server(tmp_path / "config", _model(), grpc_socket_path=str(socket), grpc_port=None)
    try:
        assert server.grpc_address is None
        with grpc.insecure_channel(f"unix:{socket}") as channel:
            assert _predict(channel, [0.0]) == [2.0]
    finally:
        server.stop()


def test_channel_arguments_reach_the_grpc_server(tmp_path):
    """A receive limit of 200 bytes set by the flag replaces the server's own (16 MiB): a larger
    request is refused by gRPC itself, a small one is answered."""
    server = start_server(tmp_path / "config", _model(), grpc_channel_arguments="grpc.max_receive_message_length=200")
    try:
        with grpc.insecure_channel(server.grpc_address) as channel:
            assert _predict(channel, [1.0]) == [2.5]
            with pytest.raises(grpc.RpcError) as refused:
                _predict(channel, [1.0] * 100)
        assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    finally:
        server.stop()


def test_channel_arguments_are_parsed_as_tf_serving_parses_them():
    assert parse_channel_arguments("grpc.max_connection_age_ms=2000,grpc.primary_user_agent=tfs") == [
        ("grpc.max_connection_age_ms", 2000),
        ("grpc.primary_user_agent", "tfs"),
    ]
    assert parse_channel_arguments("") == []
    assert parse_channel_arguments("a=99999999999") == [("a", "99999999999")]  # past int32: text, as SimpleAtoi
    with pytest.raises(cfg.ConfigError, match="^Invalid gRPC channel argument 'grpc.keepalive_time_ms'"):
        parse_channel_arguments("grpc.keepalive_time_ms")


def _answer(url: str, method: str, path: str, body=None, headers=None) -> tuple[int, dict[str, str]]:
    """(status, response headers) of one REST request."""
    parsed = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=30)
    try:
        connection.request(method, path, body=None if body is None else json.dumps(body), headers=headers or {})
        response = connection.getresponse()
        response.read()
        return response.status, dict(response.getheaders())
    finally:
        connection.close()


def test_cors_headers_on_every_rest_answer_when_enabled(tmp_path):
    server = start_server(tmp_path / "config", _model(), rest_api_enable_cors_support=True)
    try:
        url = server.rest_url
        answers = [
            _answer(url, "POST", f"/v1/models/{MODEL}:predict", {"instances": [1.0]}),
            _answer(url, "GET", f"/v1/models/{MODEL}"),
            _answer(url, "POST", "/v1/models/nope:predict", {"instances": [1.0]}),
            _answer(url, "OPTIONS", f"/v1/models/{MODEL}:predict", headers={"Origin": "https://app.example"}),
            _answer(url, "OPTIONS", f"/v1/models/{MODEL}:predict"),  # no Origin: refused, headers still added
        ]
        assert [status for status, _ in answers] == [200, 200, 404, 200, 400]
        for _, headers in answers:
            assert {name: headers.get(name) for name in CORS} == CORS
    finally:
        server.stop()


def test_no_cors_headers_by_default(tmp_path):
    server = start_server(tmp_path / "config", _model())
    try:
        for method, headers in (("GET", {}), ("OPTIONS", {"Origin": "https://app.example"})):
            status, answer = _answer(server.rest_url, method, f"/v1/models/{MODEL}", headers=headers)
            assert status == 200
            assert not any(name in answer for name in CORS)
    finally:
        server.stop()


def _health(address: str, service: str):
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    with grpc.insecure_channel(address) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        return stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=10).status


def test_the_grpc_health_service_answers_as_tf_servings(tmp_path):
    """--enable_grpc_healthcheck_service: gRPC's default health service (SERVING for "") with ModelService
    and PredictionService set SERVING (server.cc); another name is NOT_FOUND. What a Kubernetes `grpc`
    probe or grpc_health_probe asks."""
    from grpc_health.v1 import health_pb2

    server = start_server(tmp_path / "config", _model(), enable_grpc_healthcheck_service=True)
    try:
        for service in ("", "ModelService", "PredictionService"):
            assert _health(server.grpc_address, service) == health_pb2.HealthCheckResponse.SERVING
        with pytest.raises(grpc.RpcError) as unknown:
            _health(server.grpc_address, "tensorflow.serving.PredictionService")
        assert unknown.value.code() == grpc.StatusCode.NOT_FOUND
    finally:
        server.stop()


def test_no_health_service_by_default(tmp_path):
    server = start_server(tmp_path / "config", _model())
    try:
        with pytest.raises(grpc.RpcError) as missing:
            _health(server.grpc_address, "")
        assert missing.value.code() == grpc.StatusCode.UNIMPLEMENTED
    finally:
        server.stop()
