"""Predict on the gRPC wire. Responses: bytes written directly are exactly the protobuf
library's deterministic serialization of the message the slow path builds, for any float
outputs, and the message path for every other dtype. Requests: parsed as entries, the
same inputs as the parsed map, the last of a repeated key winning."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from tensorflow.core.framework import tensor_pb2
from tensorflow_serving.apis import model_pb2, predict_pb2

from serving.server.wire.predict_wire import (
    PredictRequestEntries,
    input_protos,
    predict_response,
    predict_response_bytes,
)

FLOAT_DTYPES = [np.float32, np.float64]

aliases = st.text(min_size=1, max_size=12)
float_arrays = hnp.arrays(
    dtype=st.sampled_from(FLOAT_DTYPES),
    shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4),
    elements={"allow_nan": False, "allow_subnormal": True},
)


@settings(max_examples=300, deadline=None)
@given(
    outputs=st.dictionaries(aliases, float_arrays, min_size=1, max_size=3),
    name=st.text(max_size=10),
    version=st.integers(min_value=0, max_value=2**63 - 1),
    signature_name=st.text(max_size=20),
)
def test_float_outputs_are_the_deterministic_serialization(outputs, name, version, signature_name):
    expected = predict_response(name, version, signature_name, outputs).SerializeToString(deterministic=True)
    assert predict_response_bytes(name, version, signature_name, outputs) == expected


def test_the_bytes_parse_to_the_values_and_shapes_sent():
    outputs = {
        "probability": np.array([[0.25], [0.75]], np.float32),
        "logits": np.arange(6, dtype=np.float64).reshape(2, 3),
        "scalar": np.float32(-0.0).reshape(()),
    }
    parsed = predict_pb2.PredictResponse.FromString(predict_response_bytes("mlp", 7, "serving_default", outputs))
    assert (parsed.model_spec.name, parsed.model_spec.version.value) == ("mlp", 7)
    assert parsed.model_spec.signature_name == "serving_default"
    assert list(parsed.outputs["probability"].float_val) == [0.25, 0.75]
    assert [d.size for d in parsed.outputs["probability"].tensor_shape.dim] == [2, 1]
    assert list(parsed.outputs["logits"].double_val) == [0, 1, 2, 3, 4, 5]
    assert parsed.outputs["scalar"].HasField("tensor_shape") and not parsed.outputs["scalar"].tensor_shape.dim
    assert np.signbit(parsed.outputs["scalar"].float_val[0])


def test_a_row_of_a_batch_output_is_written_as_its_own_tensor():
    batch = np.arange(12, dtype=np.float32).reshape(4, 3)
    parsed = predict_pb2.PredictResponse.FromString(predict_response_bytes("m", 1, "", {"y": batch[2:3]}))
    assert list(parsed.outputs["y"].float_val) == [6, 7, 8]
    fortran = np.asfortranarray(batch)  # not C order: the bytes must still be in row order
    assert predict_response_bytes("m", 1, "", {"y": fortran}) == predict_response(
        "m", 1, "", {"y": batch}
    ).SerializeToString(deterministic=True)


@pytest.mark.parametrize(
    "value",
    [
        np.array([[1, -2]], np.int64),
        np.array([3], np.int32),
        np.array([True, False]),
        np.array([1.5], np.float16),
        np.array([1.0], np.dtype(">f4")),  # big-endian: not the wire's byte order
        np.array([b"a", b"bc"], object),
    ],
    ids=["int64", "int32", "bool", "float16", "big-endian-float32", "string"],
)
def test_other_dtypes_take_the_message_path(value):
    outputs = {"y": value, "p": np.array([0.5], np.float32)}
    expected = predict_response("m", 2, "s", outputs).SerializeToString(deterministic=True)
    assert predict_response_bytes("m", 2, "s", outputs) == expected


def _request(**inputs: np.ndarray) -> predict_pb2.PredictRequest:
    request = predict_pb2.PredictRequest()
    request.model_spec.name = "mlp"
    request.output_filter.append("probability")
    for alias, value in inputs.items():
        request.inputs[alias].CopyFrom(tf.make_tensor_proto(value))
    return request


def test_a_request_parsed_as_entries_has_the_same_inputs_and_fields():
    request = _request(x=np.ones((2, 3), np.float32), ids=np.array([b"a"], object))
    entries = PredictRequestEntries.FromString(request.SerializeToString())
    assert entries.DESCRIPTOR.full_name == "yaml_tfx.serving.PredictRequestEntries"
    # The entries hold the generated classes: a second class per message would confuse
    # TensorFlow's own decoding (tf.saved_model.load failed on TensorShapeProto dims).
    assert entries.inputs[0].value.__class__ is tensor_pb2.TensorProto
    assert entries.model_spec.__class__ is model_pb2.ModelSpec
    assert input_protos(entries) == input_protos(request) == {alias: request.inputs[alias] for alias in request.inputs}
    assert (entries.model_spec, list(entries.output_filter)) == (request.model_spec, ["probability"])
    assert entries.SerializeToString() == request.SerializeToString()


def test_a_key_sent_twice_keeps_its_last_value_as_a_parsed_map_does():
    first, second = _request(x=np.zeros(1, np.float32)), _request(x=np.ones(2, np.float32))
    data = first.SerializeToString() + second.SerializeToString()  # concatenated messages merge
    as_map = predict_pb2.PredictRequest.FromString(data)
    entries = PredictRequestEntries.FromString(data)
    assert len(entries.inputs) == 2
    assert input_protos(entries) == {"x": as_map.inputs["x"]} == {"x": second.inputs["x"]}
