"""Unparsable gRPC requests: INTERNAL (TF Serving's C++ gRPC code for a request that does not
parse) with a message naming the message type, on every method of both services, and the server
keeps answering."""

from __future__ import annotations

import grpc
import pytest
import tensorflow as tf
from serving_helpers import MODEL, logit
from tensorflow.core.framework import tensor_pb2
from tensorflow_serving.apis import model_service_pb2, predict_pb2, prediction_service_pb2, prediction_service_pb2_grpc

from serving.server.grpc_service.api import MODEL_METHODS, MODEL_SERVICE, PREDICTION_METHODS, PREDICTION_SERVICE
from serving.server.grpc_service.handlers import Undecodable, lenient
from serving.server.guards.request_checks import MAX_INPUT_TENSORS

# Not a PredictRequest (nor any message): a field tag with wire type 7, which does not exist.
GARBAGE = b"\xff\xff\xff\xff"


def test_lenient_parses_a_message_and_flags_garbage():
    request = predict_pb2.PredictRequest()
    request.model_spec.name = MODEL
    deserialize = lenient(predict_pb2.PredictRequest)
    assert deserialize(request.SerializeToString()) == request
    flagged = deserialize(GARBAGE)
    assert isinstance(flagged, Undecodable)
    assert (flagged.type_name, flagged.size) == ("tensorflow.serving.PredictRequest", 4)
    assert flagged.error_text().startswith("Could not parse the request as tensorflow.serving.PredictRequest")


@pytest.mark.parametrize(
    ("module", "service", "methods"),
    [
        (prediction_service_pb2, PREDICTION_SERVICE, PREDICTION_METHODS),
        (model_service_pb2, MODEL_SERVICE, MODEL_METHODS),
    ],
)
def test_method_tables_match_tf_serving_service_definitions(module, service, methods):
    descriptor = module.DESCRIPTOR.services_by_name[service.rsplit(".", 1)[1]]
    assert descriptor.full_name == service
    expected = {m.name: (m.input_type.full_name, m.output_type.full_name) for m in descriptor.methods}
    assert {name: (a.DESCRIPTOR.full_name, b.DESCRIPTOR.full_name) for name, (a, b) in methods.items()} == expected


def test_garbage_to_every_method_is_internal_and_the_server_keeps_serving(server):
    """C++ gRPC's `GenericDeserialize` (grpcpp impl/codegen/proto_utils.h), under TF Serving:
    `Status(StatusCode::INTERNAL, msg->InitializationErrorString())`, that string empty in proto3;
    our message follows."""
    calls = [(PREDICTION_SERVICE, name, request) for name, (request, _) in PREDICTION_METHODS.items()]
    calls += [(MODEL_SERVICE, name, request) for name, (request, _) in MODEL_METHODS.items()]
    with grpc.insecure_channel(server.grpc_address) as channel:
        for service, name, request in calls:
            with pytest.raises(grpc.RpcError) as caught:
                channel.unary_unary(f"/{service}/{name}")(GARBAGE, timeout=30)
            assert caught.value.code() == grpc.StatusCode.INTERNAL, name
            details = caught.value.details()
            assert details.startswith(f"Could not parse the request as {request.DESCRIPTOR.full_name}: "), details
            assert "4 bytes that are not one" in details

        good = predict_pb2.PredictRequest()
        good.model_spec.name = MODEL
        good.model_spec.signature_name = "serving_raw"
        x = [1.0, 2.0, 3.0]
        good.inputs["x"].CopyFrom(tensor_pb2.TensorProto(dtype=tf.float32.as_datatype_enum, float_val=x))
        good.inputs["x"].tensor_shape.dim.add(size=1)
        good.inputs["x"].tensor_shape.dim.add(size=3)
        answer = prediction_service_pb2_grpc.PredictionServiceStub(channel).Predict(good, timeout=30)
    assert answer.outputs["logit"].float_val[0] == pytest.approx(logit(1, x), rel=1e-6)


def test_a_predict_naming_thousands_of_inputs_is_refused_before_they_are_walked(server):
    # ~1M empty inputs fit a 16 MB message; walking them held the event loop ~4 s.
    request = predict_pb2.PredictRequest()
    request.model_spec.name = MODEL
    for i in range(MAX_INPUT_TENSORS + 1):
        request.inputs[f"x{i}"].dtype = tf.float32.as_datatype_enum
    with grpc.insecure_channel(server.grpc_address) as channel:
        stub = prediction_service_pb2_grpc.PredictionServiceStub(channel)
        with pytest.raises(grpc.RpcError) as caught:
            stub.Predict(request, timeout=30)
        assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert caught.value.details().startswith(f"Request has {MAX_INPUT_TENSORS + 1} input tensors")
