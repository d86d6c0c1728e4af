"""Client objects with a million keys: error messages name a few of them and the count,
instead of sorting and writing them all (which held the event loop ~0.5 s a request)."""

from __future__ import annotations

import re

import pytest
import tensorflow as tf

from serving.errors import InvalidArgument
from serving.server.model.servable import Signature, TensorSpec
from serving.server.wire.json_inputs import json_inputs
from serving.server.wire.tensor_protos import proto_inputs

MANY = 200_000
KEYS = {f"k{i}": [1.0] for i in range(MANY)}


def _signature(*aliases: str) -> Signature:
    return Signature(
        name="serving_default",
        method_name="tensorflow/serving/predict",
        inputs={alias: TensorSpec(alias, tf.float32, None) for alias in aliases},
        outputs={},
        function=lambda **kwargs: kwargs,
    )


@pytest.mark.parametrize(
    ("case", "body"),
    [
        ("inputs object", {"inputs": KEYS}),
        ("instance object", {"instances": [KEYS]}),
        ("second instance", {"instances": [{"x": [1.0]}, {"x": [1.0], **KEYS}]}),
        ("top-level keys", KEYS),
    ],
)
def test_a_million_keys_are_named_by_a_few_and_their_count(case, body):
    with pytest.raises(InvalidArgument) as caught:
        json_inputs(body, _signature("x"))
    text = caught.value.text
    assert len(text) < 4096, case
    assert "more (" in text and "in all)" in text, case


def test_a_few_keys_are_all_named_sorted():
    with pytest.raises(InvalidArgument, match=r"keys \['a', 'b'\]"):
        json_inputs({"inputs": {"b": [1.0], "a": [1.0]}}, _signature("x"))


def test_thousands_of_extra_aliases_keep_tf_servings_words_with_a_bounded_list():
    protos = {f"k{i}": tf.make_tensor_proto([1.0]) for i in range(5_000)}
    with pytest.raises(InvalidArgument) as caught:
        proto_inputs(protos, _signature("x"), "m")
    text = caught.value.text
    assert re.match(r"input size does not match signature: 5000!=1 len\(\{k\d+,.*,\.\.\.\}\) != len\(\{x\}\)\. ", text)
    assert re.search(r"Sent extra: \{k\d+,[^}]*,\.\.\.\}\.", text)
    assert "Missing but required: {x}." in text
    assert len(text) < 4096
