"""tf.Example inputs for Classify and Regress.

REST sends examples as JSON feature dicts (`{"x": [1.0, 2.0], "tag": "a"}`),
gRPC as an `Input` proto. Both become a vector of serialized tf.Example
strings, the one input classify and regress signatures take. As in TensorFlow
Serving, a shared `context` example is merged into each example by
concatenating the serialized protos (protobuf merge semantics).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any

import numpy as np
from tensorflow.core.example import example_pb2, feature_pb2
from tensorflow_serving.apis import input_pb2

from serving.errors import InvalidArgument, message
from serving.server.wire.tensor_checks import json_type_name, json_value_text

__all__ = [
    "MAX_FEATURES_PER_EXAMPLE",
    "example_count",
    "examples_from_input",
    "examples_from_json",
    "feature_dict_to_example",
]

_FIX = 'Send features as numbers, strings, {"b64": "..."} or flat lists of one kind.'
# Far above any model's feature count. Past it one example's protobuf map costs seconds to
# build, serialize and free, each a C call that holds the GIL, so the server answers no one
# meanwhile (1M features in a 12 MB body: 3 s + 2 s + 1.6 s).
MAX_FEATURES_PER_EXAMPLE = 100_000


def _check_feature_count(count: int, where: str) -> None:
    if count > MAX_FEATURES_PER_EXAMPLE:
        raise InvalidArgument(
            message(
                f"Too many features in {where}",
                expected=f"at most {MAX_FEATURES_PER_EXAMPLE} features per example",
                received=f"{count} features",
                fix="Send only the features the model reads (GET /v1/models/<name>/metadata lists its inputs); "
                "put many values of one feature in one list.",
            )
        )


# TensorFlow Serving's names for a Feature's kinds, in its messages.
_KIND_NAMES = {"bytes_list": "bytes", "float_list": "float", "int64_list": "int64"}


def _kind_error(name: str, kind: str) -> InvalidArgument:
    return InvalidArgument(
        message(
            f"Unexpected element type in feature: {name} expecting type: {_KIND_NAMES.get(kind, kind)}",
            expected=f"every value of feature {name!r} of one kind (int, float or bytes)",
            received="a mix of kinds",
            fix=_FIX,
        )
    )


def _add_value(feature: feature_pb2.Feature, name: str, value: Any) -> None:
    kind = feature.WhichOneof("kind")
    if isinstance(value, bool):
        value = int(value)
    if isinstance(value, dict) and len(value) == 1 and isinstance(value.get("b64"), str):
        try:
            value = base64.b64decode(value["b64"], validate=True)
        except (binascii.Error, ValueError):
            raise InvalidArgument(
                message(
                    f"Unable to base64 decode feature {name}",
                    expected="base64 text",
                    received=str(value)[:80],
                    fix="Encode the bytes with base64 (RFC 4648).",
                )
            ) from None
    if isinstance(value, str):
        value = value.encode("utf-8")
    if isinstance(value, bytes):
        if kind not in (None, "bytes_list"):
            raise _kind_error(name, kind)
        feature.bytes_list.value.append(value)
    elif isinstance(value, float):
        if kind not in (None, "float_list"):
            raise _kind_error(name, kind)
        feature.float_list.value.append(value)
    elif isinstance(value, int):
        if kind not in (None, "int64_list"):
            raise _kind_error(name, kind)
        if not -(2**63) <= value < 2**63:
            raise InvalidArgument(
                message(
                    f"Feature: {name} has uint64_t element. Only int64_t is supported.",
                    expected="integers in the int64 range",
                    received=str(value),
                    fix="Send it as a float or a string.",
                )
            )
        feature.int64_list.value.append(value)
    else:
        raise InvalidArgument(
            message(
                f"Feature: {name} has element with unexpected JSON type: {json_type_name(value)}",
                expected='a number, a string, {"b64": ...} or a flat list of them',
                received=str(value)[:80],
                fix=_FIX,
            )
        )


def feature_dict_to_example(features: Mapping[str, Any], where: str = "an example") -> example_pb2.Example:
    """Converts one JSON feature dict to a tf.Example.

    JSON integers become int64_list, decimals float_list, strings and
    {"b64": ...} bytes_list, booleans int64 (0/1), as TensorFlow Serving does.
    """
    if not isinstance(features, Mapping):
        raise InvalidArgument(
            message(
                f"Example must be JSON object but got JSON {json_type_name(features)}",
                expected="an object of feature name to value(s)",
                received=str(features)[:80],
                fix='Send examples like {"x": [1.0, 2.0], "tag": "a"}.',
            )
        )
    _check_feature_count(len(features), where)
    example = example_pb2.Example()
    for name, content in features.items():
        feature = example.features.feature[name]
        for value in content if isinstance(content, list) else [content]:
            _add_value(feature, name, value)
    return example


def examples_from_json(body: Mapping[str, Any]) -> np.ndarray:
    """Reads `examples` (and optional `context`) from a classify/regress body.

    The context is read first, then the examples, in TensorFlow Serving's
    order (`FillClassifyRegressRequestFromJson`), so a body with both wrong
    gets its error.

    Returns:
        A 1-D object array of serialized tf.Example strings.

    Raises:
        InvalidArgument: No `examples` list, an empty one, or a feature
            value TensorFlow Serving refuses.
    """
    context = b""
    if "context" in body:
        context = feature_dict_to_example(body["context"], "the context example").SerializeToString()
    examples = body.get("examples")
    if examples is None:
        raise InvalidArgument(
            message(
                json_value_text(body) + "When method is classify, key 'examples' is expected and was not found",
                expected='a body like {"examples": [{"x": 1.0}]}',
                received=f"keys {sorted(body)}",
                fix="Add the 'examples' list.",
            )
        )
    if not isinstance(examples, list) or not examples:
        raise InvalidArgument(
            message(
                json_value_text(body)
                + (
                    "'examples' value is an empty array"
                    if examples == []
                    else "Expecting 'examples' value to be an list/array"
                ),
                expected="a non-empty list of feature objects",
                received=str(examples)[:80],
                fix='Send {"examples": [{"x": 1.0}, ...]}.',
            )
        )
    return np.array([context + feature_dict_to_example(e).SerializeToString() for e in examples], dtype=object)


def _check_features(examples) -> None:
    for index, example in enumerate(examples):
        _check_feature_count(len(example.features.feature), f"example {index}")


def example_count(request_input: input_pb2.Input) -> int:
    """How many examples a gRPC `Input` carries, without reading them."""
    kind = request_input.WhichOneof("kind")
    if kind == "example_list":
        return len(request_input.example_list.examples)
    if kind == "example_list_with_context":
        return len(request_input.example_list_with_context.examples)
    return 0


def examples_from_input(request_input: input_pb2.Input) -> np.ndarray:
    """Reads the examples of a gRPC ClassificationRequest/RegressionRequest."""
    kind = request_input.WhichOneof("kind")
    if kind == "example_list":
        examples = request_input.example_list.examples
        _check_features(examples)
        serialized = [e.SerializeToString() for e in examples]
    elif kind == "example_list_with_context":
        with_context = request_input.example_list_with_context
        _check_feature_count(len(with_context.context.features.feature), "the context example")
        _check_features(with_context.examples)
        context = with_context.context.SerializeToString()
        serialized = [context + e.SerializeToString() for e in with_context.examples]
    else:
        serialized = []
    if not serialized:
        raise InvalidArgument(
            message(
                "Input is empty",
                expected="at least one tf.Example in input.example_list",
                received="no examples",
                fix="Add examples to request.input.example_list.examples.",
            )
        )
    return np.array(serialized, dtype=object)
