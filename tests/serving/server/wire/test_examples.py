"""tf.Example inputs of Classify and Regress: the per-example feature cap, on both front ends' inputs."""

from __future__ import annotations

import pytest
from tensorflow.core.example import example_pb2
from tensorflow_serving.apis import input_pb2

from serving.errors import InvalidArgument
from serving.server.wire.examples import (
    MAX_FEATURES_PER_EXAMPLE,
    examples_from_input,
    examples_from_json,
    feature_dict_to_example,
)


def _wide(count: int) -> dict[str, int]:
    return {f"k{i}": 1 for i in range(count)}


def test_json_example_at_the_cap_converts_and_one_more_is_refused():
    example = feature_dict_to_example(_wide(MAX_FEATURES_PER_EXAMPLE))
    assert len(example.features.feature) == MAX_FEATURES_PER_EXAMPLE
    with pytest.raises(InvalidArgument) as caught:
        examples_from_json({"examples": [{"x": 1.0}, _wide(MAX_FEATURES_PER_EXAMPLE + 1)]})
    text = caught.value.text
    assert text.startswith("Too many features in an example. Expected at most 100000 features per example.")
    assert f"Received: {MAX_FEATURES_PER_EXAMPLE + 1} features." in text


def test_json_context_is_capped_too():
    with pytest.raises(InvalidArgument, match="Too many features in the context example"):
        examples_from_json({"context": _wide(MAX_FEATURES_PER_EXAMPLE + 1), "examples": [{}]})


@pytest.mark.parametrize("with_context", [False, True])
def test_grpc_input_over_the_cap_names_the_example(with_context):
    wide = example_pb2.Example()
    for i in range(MAX_FEATURES_PER_EXAMPLE + 1):
        wide.features.feature[f"k{i}"].int64_list.value.append(1)
    request_input = input_pb2.Input()
    if with_context:
        request_input.example_list_with_context.context.CopyFrom(wide)
        request_input.example_list_with_context.examples.add()
        where = "the context example"
    else:
        request_input.example_list.examples.add()
        request_input.example_list.examples.append(wide)
        where = "example 1"
    with pytest.raises(InvalidArgument) as caught:
        examples_from_input(request_input)
    assert caught.value.text.startswith(f"Too many features in {where}.")


def test_examples_under_the_cap_serialize_with_the_context_first():
    examples = examples_from_json({"context": {"c": "a"}, "examples": [{"x": [1.0, 2.0]}, {"x": 3}]})
    merged = example_pb2.Example.FromString(examples[1])
    assert merged.features.feature["c"].bytes_list.value == [b"a"]
    assert merged.features.feature["x"].int64_list.value == [3]
