"""Bounded fuzzing of a real server process over REST bodies and gRPC
TensorProtos (hypothesis, derandomized so CI runs the same cases): every
request gets an answer that is not a server error, a good request keeps
working after each one, and the process RSS stays bounded."""

from __future__ import annotations

import json

import grpc
import pytest
import tensorflow as tf
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from server_process import MIB, predict_raw, start_linear_server
from serving_helpers import MODEL, http
from tensorflow.core.framework import tensor_pb2
from tensorflow_serving.apis import predict_pb2, prediction_service_pb2_grpc

RSS_GROWTH = 300 * MIB
FUZZ = settings(
    max_examples=400,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
SIGNATURES = ["serving_raw", "serving_default", "classification", "regression", "", "nope"]
# Answers a hostile request may get; never 5xx/INTERNAL/UNKNOWN.
REST_OK = {200, 400, 404, 413}
GRPC_OK = {
    grpc.StatusCode.OK,
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.NOT_FOUND,
    grpc.StatusCode.FAILED_PRECONDITION,
    grpc.StatusCode.UNIMPLEMENTED,
    grpc.StatusCode.RESOURCE_EXHAUSTED,
}


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    server = start_linear_server(tmp_path_factory.mktemp("fuzz"))
    server.channel = grpc.insecure_channel(server.grpc_address)
    server.stub = prediction_service_pb2_grpc.PredictionServiceStub(server.channel)
    yield server
    server.channel.close()
    server.close()


def _still_serving(served) -> None:
    assert served.alive(), served.log.read_text()[-2000:]
    status, body = predict_raw(served.rest_url, [[1.0, 2.0, 3.0]])
    assert status == 200, body


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12)
    | st.fixed_dictionaries({"b64": st.text(max_size=12)}),
    lambda children: st.lists(children, max_size=6) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=40,
)
rest_bodies = st.one_of(
    st.builds(
        lambda value, signature, key: json.dumps({"signature_name": signature, key: value}).encode(),
        json_values,
        st.sampled_from(SIGNATURES),
        st.sampled_from(["instances", "inputs", "examples", "context"]),
    ),
    json_values.map(lambda value: json.dumps(value).encode()),
    st.binary(max_size=300),
    st.integers(1, 5000).map(lambda depth: b'{"instances": ' + b"[" * depth + b"]" * depth + b"}"),
)


@FUZZ
@given(body=rest_bodies, verb=st.sampled_from(["predict", "classify", "regress"]))
def test_fuzzed_rest_bodies_get_client_errors_and_the_server_keeps_serving(served, body, verb):
    status, answer = http(served.rest_url, "POST", f"/v1/models/{MODEL}:{verb}", body)
    assert status in REST_OK, (status, answer, body[:200])
    if status != 200:
        assert answer["error"]
    _still_serving(served)


DTYPES = [tf.float32, tf.float64, tf.int32, tf.int64, tf.string, tf.bool, tf.float16, tf.uint8, tf.complex64]


@st.composite
def tensor_protos(draw) -> tensor_pb2.TensorProto:
    dtype = draw(st.sampled_from(DTYPES + [None]))
    proto = tensor_pb2.TensorProto(dtype=dtype.as_datatype_enum if dtype else draw(st.integers(0, 30)))
    for size in draw(st.lists(st.integers(-3, 2**62), max_size=4)):
        proto.tensor_shape.dim.add(size=size)
    for size in draw(st.lists(st.integers(0, 5), max_size=3)):  # small, realistic shapes too
        proto.tensor_shape.dim.add(size=size)
    kind = draw(st.sampled_from(["float_val", "int_val", "int64_val", "string_val", "bool_val", "content", "none"]))
    if kind == "content":
        proto.tensor_content = draw(st.binary(max_size=64))
    elif kind == "string_val":
        proto.string_val.extend(draw(st.lists(st.binary(max_size=8), max_size=6)))
    elif kind == "float_val":
        proto.float_val.extend(draw(st.lists(st.floats(width=32, allow_nan=True), max_size=8)))
    elif kind == "int_val":
        proto.int_val.extend(draw(st.lists(st.integers(-(2**31), 2**31 - 1), max_size=8)))
    elif kind == "int64_val":
        proto.int64_val.extend(draw(st.lists(st.integers(-(2**63), 2**63 - 1), max_size=8)))
    elif kind == "bool_val":
        proto.bool_val.extend(draw(st.lists(st.booleans(), max_size=8)))
    return proto


@FUZZ
@given(
    inputs=st.dictionaries(st.sampled_from(["x", "examples", "inputs", "y", ""]), tensor_protos(), max_size=2),
    signature=st.sampled_from(SIGNATURES),
    output_filter=st.lists(st.sampled_from(["logit", "probability", "nope"]), max_size=2),
)
def test_fuzzed_grpc_tensor_protos_get_client_errors_and_the_server_keeps_serving(
    served, inputs, signature, output_filter
):
    request = predict_pb2.PredictRequest()
    request.model_spec.name = MODEL
    request.model_spec.signature_name = signature
    request.output_filter.extend(output_filter)
    for alias, proto in inputs.items():
        request.inputs[alias].CopyFrom(proto)
    try:
        served.stub.Predict(request, timeout=60)
    except grpc.RpcError as err:
        assert err.code() in GRPC_OK, (err.code(), err.details(), request)
        assert err.details()
    _still_serving(served)


def test_rss_stays_bounded_after_fuzzing(served):
    """Runs after the fuzz tests above (pytest keeps file order)."""
    http(served.rest_url, "GET", f"/v1/models/{MODEL}")
    assert served.rss() < served.baseline + RSS_GROWTH, (served.baseline / MIB, served.rss() / MIB)
