"""Predict calls accepted by several loops at once (serving/server/grpc_service/accepts.py), on real servers."""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor

import grpc
import pytest
import tensorflow as tf
from serving_helpers import MODEL, logit
from tensorflow_serving.apis import predict_pb2, prediction_service_pb2_grpc

import compat
from compat import grpcio as compat_grpcio
from serving.server.grpc_service import accepts as grpc_accepts
from serving.server.grpc_service.accepts import ACCEPTS_IN_FLIGHT

X = [1.0, 2.0, 3.0]


def _request(x) -> predict_pb2.PredictRequest:
    request = predict_pb2.PredictRequest()
    request.model_spec.name = MODEL
    request.model_spec.signature_name = "serving_raw"
    request.inputs["x"].CopyFrom(tf.make_tensor_proto([x], dtype=tf.float32))
    return request


def _predict_concurrently(address: str, calls: int) -> list[float]:
    with grpc.insecure_channel(address) as channel:
        stub = prediction_service_pb2_grpc.PredictionServiceStub(channel)
        with ThreadPoolExecutor(16) as pool:
            futures = [pool.submit(stub.Predict, _request([float(i), 0.0, 1.0]), timeout=30) for i in range(calls)]
            return [tf.make_ndarray(f.result().outputs["logit"]).item() for f in futures]


def test_the_pinned_grpcio_has_what_the_accept_loops_call(server):
    # A grpcio upgrade that changes these private functions fails here, not silently slower.
    assert compat_grpcio.unsupported_reason() is None
    assert compat_grpcio.unsupported_reason(server._grpc) is None
    assert server.grpc_accepts.running == ACCEPTS_IN_FLIGHT


def test_concurrent_predict_calls_are_accepted_by_the_loops_and_answered(server):
    answers = _predict_concurrently(server.grpc_address, 200)
    assert answers == pytest.approx([logit(1, [float(i), 0.0, 1.0]) for i in range(200)], rel=1e-6)
    assert server.grpc_accepts.accepted >= 100  # most: grpc.aio's own loop posts one request, the loops 16
    assert server.grpc_accepts.running == ACCEPTS_IN_FLIGHT  # a loop goes on after each call


def test_errors_through_the_loops_are_the_methods_own(server):
    with grpc.insecure_channel(server.grpc_address) as channel:
        predict = channel.unary_unary("/tensorflow.serving.PredictionService/Predict")
        with pytest.raises(grpc.RpcError) as undecodable:
            predict(b"\xff\xff", timeout=10)
        stub = prediction_service_pb2_grpc.PredictionServiceStub(channel)
        unknown = _request(X)
        unknown.model_spec.name = "nope"
        with pytest.raises(grpc.RpcError) as not_found:
            stub.Predict(unknown, timeout=10)
    assert undecodable.value.code() == grpc.StatusCode.INTERNAL  # C++ gRPC's code, as TF Serving
    assert "PredictRequest" in undecodable.value.details()
    assert not_found.value.code() == grpc.StatusCode.NOT_FOUND
    assert server.grpc_accepts.accepted >= 1


def test_a_call_cancelled_by_its_client_leaves_the_loops_serving(server):
    with grpc.insecure_channel(server.grpc_address) as channel:
        stub = prediction_service_pb2_grpc.PredictionServiceStub(channel)
        for _ in range(20):
            stub.Predict.future(_request(X)).cancel()
    assert _predict_concurrently(server.grpc_address, 32) == pytest.approx(
        [logit(1, [float(i), 0.0, 1.0]) for i in range(32)], rel=1e-6
    )
    assert server.grpc_accepts.running == ACCEPTS_IN_FLIGHT


def test_the_loops_end_when_the_server_stops(make_server, model_dir, caplog):
    server = make_server(model_dir)
    _predict_concurrently(server.grpc_address, 32)
    accepts = server.grpc_accepts
    with caplog.at_level(logging.ERROR, logger=grpc_accepts.__name__):
        server.stop()  # raises TimeoutError where the loops do not end (30 s)
    assert accepts.running == 0
    assert not [r for r in caplog.records if r.name == grpc_accepts.__name__]  # ended quietly


def test_where_grpcio_differs_predict_is_served_by_grpc_aio_alone(make_server, model_dir, monkeypatch, caplog):
    monkeypatch.setitem(compat_grpcio._CALLED, "_handle_rpc", ("generic_handlers", "rpc_state", "loop"))
    monkeypatch.setattr(compat, "_warned", set())  # the fallback's one line is logged once per process
    with caplog.at_level(logging.WARNING, logger="compat"):
        server = make_server(model_dir)
    assert any("grpc.aio's own loop" in r.getMessage() and "_handle_rpc" in r.getMessage() for r in caplog.records)
    answers = _predict_concurrently(server.grpc_address, 32)
    assert answers == pytest.approx([logit(1, [float(i), 0.0, 1.0]) for i in range(32)], rel=1e-6)
    assert (server.grpc_accepts.accepted, server.grpc_accepts.running) == (0, 0)
