"""Per-request limits, checked before anything large is allocated.

A request is hostile when what it declares costs far more than what it sends:
a 601-byte TensorProto may claim shape [200000000] (TensorFlow fills a tensor
with its last value when fewer values are given), JSON may nest 100k deep.
These checks read only what is already in memory (the shape, the byte count)
and reject with INVALID_ARGUMENT (HTTP 400) before numpy or json allocate.
The limits a deployment declares (`limits.json`) are derived in `serving.deployment_limits`.

Example:
    >>> limits = RequestLimits(memory_budget_bytes=1024)
    >>> check_tensor_protos({"x": tf.make_tensor_proto([1.0] * 10)}, limits)
    40
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Mapping

import numpy as np
import tensorflow as tf
from tensorflow.core.framework import tensor_pb2, types_pb2

from serving.errors import InvalidArgument, message

__all__ = [
    "DEFAULT_BODY_TIMEOUT_S",
    "DEFAULT_HEADER_TIMEOUT_S",
    "DEFAULT_MAX_JSON_DEPTH",
    "DEFAULT_MEMORY_BUDGET_BYTES",
    "BudgetExceeded",
    "JsonTooDeep",
    "RequestLimits",
    "MAX_INPUT_TENSORS",
    "check_input_count",
    "check_json_depth",
    "check_tensor_protos",
]

DEFAULT_MEMORY_BUDGET_BYTES = 256 * 1024 * 1024
DEFAULT_MAX_JSON_DEPTH = 64
DEFAULT_HEADER_TIMEOUT_S = 30.0
DEFAULT_BODY_TIMEOUT_S = 60.0
# Input tensors one request may name. Signatures have a handful; a 16 MB gRPC
# message holds ~1M empty ones, which took ~4 s of the event loop to walk.
MAX_INPUT_TENSORS = 4096
# A string element costs a numpy object slot and a list slot (8 bytes each) even
# when TensorFlow repeats the last value; each sent value is a bytes object.
_STRING_SLOT_BYTES = 16
_BYTES_OBJECT_BYTES = 33
_STRING = tf.string.as_datatype_enum


@dataclasses.dataclass(frozen=True)
class RequestLimits:
    """What one request may cost.

    Attributes:
        memory_budget_bytes: Largest decoded size of a request's input tensors
            (sum over inputs: elements x dtype size; strings also count 16 bytes
            per element), checked against the declared shapes before decoding.
        max_json_depth: Deepest nesting of arrays/objects in a REST body.
        header_timeout_s: A connection that has not sent a complete request
            head this long after it opened (or after its last answer) is closed.
        body_timeout_s: Longest wait for a request body once its head arrived
            (HTTP 408 after it).
    """

    memory_budget_bytes: int = DEFAULT_MEMORY_BUDGET_BYTES
    max_json_depth: int = DEFAULT_MAX_JSON_DEPTH
    header_timeout_s: float = DEFAULT_HEADER_TIMEOUT_S
    body_timeout_s: float = DEFAULT_BODY_TIMEOUT_S

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if not value > 0:
                raise ValueError(
                    message(
                        f"Invalid request limit {field.name}",
                        expected="a positive number",
                        received=f"{field.name}={value!r}",
                        fix=f"Pass a positive {field.name}.",
                    )
                )


class BudgetExceeded(InvalidArgument):
    """A request whose declared tensors exceed the memory budget."""

    reason = "memory_budget"


class JsonTooDeep(InvalidArgument):
    """A REST body nested deeper than the limit."""

    reason = "json_depth"


def _mib(n: int) -> str:
    return f"{n / (1024 * 1024):.1f} MiB"


def _malformed(alias: str, problem: str, received: str) -> InvalidArgument:
    return InvalidArgument(
        message(
            f"Malformed TensorProto for input {alias!r}: {problem}",
            expected="a TensorProto whose shape has sizes >= 0 and whose tensor_content matches it",
            received=received,
            fix="Build it with tf.make_tensor_proto.",
        )
    )


_ITEMSIZE: dict[int, int] = {}  # DataType enum -> bytes per element, filled on first use


def _itemsize(alias: str, dtype: int) -> int:
    try:
        return np.dtype(tf.dtypes.as_dtype(dtype).as_numpy_dtype).itemsize
    except (TypeError, KeyError, ValueError):  # DT_INVALID, unknown numbers, DT_RESOURCE/DT_VARIANT
        name = types_pb2.DataType.Name(dtype) if dtype in types_pb2.DataType.values() else dtype
        raise InvalidArgument(
            message(
                f"tensor parsing error: {alias}",
                expected="a TensorProto with a dtype a request can carry (DT_FLOAT, DT_INT64, DT_STRING, ...)",
                received=f"dtype {name}",
                fix="Set TensorProto.dtype, e.g. with tf.make_tensor_proto(values, dtype=tf.float32).",
            )
        ) from None


def _declared_bytes(alias: str, proto: tensor_pb2.TensorProto) -> int:
    # Each field read once: every read of a protobuf field here builds a new Python object.
    sizes = [d.size for d in proto.tensor_shape.dim]
    if sizes and min(sizes) < 0:
        raise _malformed(alias, "negative dimension", f"shape {sizes}")
    elements = math.prod(sizes)
    dtype = proto.dtype
    if dtype == _STRING:
        sent = proto.string_val
        return elements * _STRING_SLOT_BYTES + len(sent) * _BYTES_OBJECT_BYTES + sum(map(len, sent))
    itemsize = _ITEMSIZE.get(dtype)
    if itemsize is None:
        itemsize = _ITEMSIZE[dtype] = _itemsize(alias, dtype)
    content = proto.tensor_content
    if content and len(content) != elements * itemsize:
        raise _malformed(
            alias,
            "tensor_content does not match the shape",
            f"{len(content)} bytes of tensor_content for shape {sizes} ({elements * itemsize} bytes)",
        )
    return elements * itemsize


def check_input_count(count: int) -> None:
    """Refuses a request naming more input tensors than any signature takes, before they are walked.

    Raises:
        InvalidArgument: More than `MAX_INPUT_TENSORS` inputs.
    """
    if count > MAX_INPUT_TENSORS:
        raise InvalidArgument(
            message(
                f"Request has {count} input tensors",
                expected=f"at most {MAX_INPUT_TENSORS} (one per input of the signature)",
                received=f"{count} entries in inputs",
                fix="Send one tensor per signature input; GET the model's metadata for their names.",
            )
        )


def check_tensor_protos(protos: Mapping[str, tensor_pb2.TensorProto], limits: RequestLimits) -> int:
    """Checks the declared size of a request's TensorProtos against the budget.

    Args:
        protos: The request's inputs by alias.
        limits: The server's limits.

    Returns:
        The declared decoded size in bytes.

    Raises:
        BudgetExceeded: The tensors would take more than the budget.
        InvalidArgument: A shape has a negative size, or tensor_content does
            not match the shape.
    """
    total, sizes = 0, {}
    for alias in protos:  # by key: a protobuf map's items() is collections.abc's generator, 2x slower
        sizes[alias] = _declared_bytes(alias, protos[alias])
        total += sizes[alias]
    budget = limits.memory_budget_bytes
    if total > budget:
        biggest = max(sizes, key=sizes.get)
        shape = [d.size for d in protos[biggest].tensor_shape.dim]
        raise BudgetExceeded(
            message(
                f"Request tensors need {total} bytes ({_mib(total)}), over the per-request memory budget",
                expected=f"at most {budget} bytes ({_mib(budget)}) of decoded input tensors",
                received=f"input {biggest!r} with shape {shape} ({sizes[biggest]} bytes)",
                fix="Send fewer rows per request, or start the server with a larger --request-memory-budget-mb.",
            )
        )
    return total


# A string literal; an unterminated one runs to the end of the text. The
# optional closing quote means every match succeeds on its first try (no
# backtracking), so the scan stays linear on hostile text such as '"\\"\\"...'.
_STRING_LITERAL = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"?')
_TO_PARENS = bytes.maketrans(b"[]{}", b"()()")
_NOT_BRACKET = bytes(set(range(256)) - set(b"[]{}"))


def json_brackets(text: bytes) -> bytes:
    """The brackets of a JSON text in order, string literals cut out (C-speed `re.sub` and
    `bytes.translate`; linear on hostile text)."""
    return _STRING_LITERAL.sub(b"", text).translate(None, _NOT_BRACKET)


def _deeper_than(raw: bytes, limit: int) -> bool:
    """Whether a JSON text nests arrays/objects deeper than `limit`, unparsed.

    String literals are cut out, every byte but a bracket is dropped (C-speed
    `re.sub` and `bytes.translate`), then each pass deletes the innermost
    `()` pairs: a text of depth d is empty after d passes. Unbalanced text is
    left for the parser to report.
    """
    parens = _STRING_LITERAL.sub(b"", raw).translate(_TO_PARENS, _NOT_BRACKET)
    for _ in range(limit):
        if not parens:
            return False
        shorter = parens.replace(b"()", b"")
        if len(shorter) == len(parens):
            return False  # unbalanced: the parser says where
        parens = shorter
    return b"()" in parens


def _too_deep(depth: str, limit: int) -> JsonTooDeep:
    return JsonTooDeep(
        message(
            "JSON Parse error: document nested too deep",
            expected=f"at most {limit} levels of nested arrays/objects",
            received=depth,
            fix="Send tensors as nested lists no deeper than their rank (+2 for the request object).",
        )
    )


def check_json_depth(raw: bytes, limit: int, parse) -> object:
    """Parses a JSON body with `parse`, refusing nesting deeper than `limit`.

    A body with no more brackets than `limit` cannot nest deeper (one byte
    count); others are measured by `_deeper_than` before they are parsed.

    Args:
        raw: The body.
        limit: The deepest nesting allowed.
        parse: The JSON parser (`json.loads`).

    Returns:
        The parsed body.

    Raises:
        JsonTooDeep: The body nests deeper than `limit`.
    """
    if raw.count(b"[") + raw.count(b"{") > limit and _deeper_than(raw, limit):
        raise _too_deep(f"more than {limit} levels", limit)
    try:
        return parse(raw)
    except RecursionError:  # only for input the scan misjudged (not valid JSON)
        raise _too_deep("more than the parser's recursion limit", limit) from None
