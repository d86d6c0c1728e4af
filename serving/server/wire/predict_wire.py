"""Predict on the gRPC wire: requests parsed without building their `inputs` map, and
a PredictResponse's bytes written directly when every output is float32 or float64.

A protobuf map is a repeated (key, value) entry message on the wire. Parsed
as a map, the C++ extension here (protobuf 3.20, DynamicMessage) builds the
map on first access and copies each TensorProto into it: ~1.7 us of the
~3.9 us a one-input request takes to parse and walk. `PredictRequestEntries`
is PredictRequest with `inputs` declared as those entries, so the same bytes
parse to a list read in one pass (`input_protos`); a key sent twice keeps its
last value, as a parsed map does.

Building the message field by field and serializing it costs ~8 us a
request in the protobuf C++ extension; the bytes of a response whose
outputs are float tensors (most models: scores, probabilities, regressions)
are a few fixed headers around each array's own little-endian bytes. The
headers depend only on the outputs' aliases, dtypes and shapes, so they are
built once per layout (`_frames`) and a response is one concatenation,
~1 us. The bytes are those `SerializeToString(deterministic=True)` writes for the
message `predict_response` builds (map entries sorted by alias), so any
client parses the same response; other dtypes take the message path.

Example:
    >>> import numpy as np
    >>> data = predict_response_bytes("m", 3, "serving_default", {"y": np.ones((1, 1), np.float32)})
    >>> predict_pb2.PredictResponse.FromString(data).outputs["y"].float_val
    [1.0]
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping

import numpy as np
from google.protobuf import descriptor_pb2, descriptor_pool, symbol_database
from google.protobuf.message import Message
from tensorflow.core.framework import tensor_pb2
from tensorflow_serving.apis import predict_pb2

from serving.server.wire.responses import fill_model_spec
from serving.server.wire.tensor_protos import array_to_proto

__all__ = ["PredictRequestEntries", "input_protos", "predict_response", "predict_response_bytes"]

_ENTRIES_FILE = "yaml_tfx/serving/predict_request_entries.proto"
_ENTRIES_PACKAGE = "yaml_tfx.serving"


def _entries_request_class() -> type[Message]:
    """PredictRequest's descriptor, copied under our own package with its map entries made plain messages."""
    source = descriptor_pb2.FileDescriptorProto()
    predict_pb2.DESCRIPTOR.CopyToProto(source)
    request = next(message for message in source.message_type if message.name == "PredictRequest")
    file = descriptor_pb2.FileDescriptorProto(name=_ENTRIES_FILE, package=_ENTRIES_PACKAGE, syntax=source.syntax)
    file.dependency.extend([*source.dependency, source.name])  # TensorProto, ModelSpec, PredictStreamedOptions
    entries = file.message_type.add()
    entries.CopyFrom(request)
    entries.name = "PredictRequestEntries"
    own = f".{source.package}.PredictRequest."
    for nested in entries.nested_type:
        nested.options.ClearField("map_entry")  # InputsEntry: a message with key (1) and value (2)
    for field in entries.field:
        if field.type_name.startswith(own):
            field.type_name = f".{_ENTRIES_PACKAGE}.PredictRequestEntries.{field.type_name[len(own) :]}"
    pool = descriptor_pool.Default()
    try:
        descriptor = pool.FindMessageTypeByName(f"{_ENTRIES_PACKAGE}.PredictRequestEntries")
    except KeyError:
        pool.Add(file)
        descriptor = pool.FindMessageTypeByName(f"{_ENTRIES_PACKAGE}.PredictRequestEntries")
    return symbol_database.Default().GetPrototype(descriptor)  # the generated classes, not second copies


# PredictRequest's wire format with `inputs` as repeated entries (`entry.key`, `entry.value`).
PredictRequestEntries = _entries_request_class()


def input_protos(request: Message) -> dict[str, tensor_pb2.TensorProto]:
    """A PredictRequest's (or PredictRequestEntries') inputs, alias to TensorProto."""
    inputs = request.inputs
    if request.__class__ is PredictRequestEntries:
        return {entry.key: entry.value for entry in inputs}
    return {alias: inputs[alias] for alias in inputs}  # by key: a map's items() is 2x slower


# The TensorProto field each fixed-width dtype's values go to (TensorFlow Serving's
# default `AsProtoField`), with its DataType number: float_val (5) / DT_FLOAT (1),
# double_val (6) / DT_DOUBLE (2). Keys are numpy dtype strings ('<f4', '<f8').
_PACKED = {np.dtype(np.float32).str: (b"\x08\x01", 0x2A), np.dtype(np.float64).str: (b"\x08\x02", 0x32)}


_SMALL = [bytes((value,)) for value in range(0x80)]  # one-byte varints


def _varint(value: int) -> bytes:
    if value < 0x80:
        return _SMALL[value]
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _field(tag: int, payload: bytes, trailing: int = 0) -> bytes:
    """A length-delimited field: tag byte, length, payload. With `trailing`, the field's
    start only: its length counts `trailing` more bytes, written after it (an array's values)."""
    return bytes((tag,)) + _varint(len(payload) + trailing) + payload


def _tensor_head(shape: tuple[int, ...], dtype_field: bytes, values_tag: int, content_bytes: int) -> bytes:
    """A TensorProto's bytes up to its values (dtype, shape, the values field's tag and length)."""
    # TensorShapeProto.dim (2) entries: Dim.size (1) as a varint, absent when 0 (proto3).
    dims = b"".join(_field(0x12, b"\x08" + _varint(size) if size else b"") for size in shape)
    head = dtype_field + _field(0x12, dims)
    return head + _field(values_tag, b"", content_bytes) if content_bytes else head


def _model_spec_field(name: str, version: int, signature_name: str) -> bytes:
    # PredictResponse.model_spec (2). ModelSpec: name (1), version (2: Int64Value,
    # value (1)), signature_name (3).
    spec = _field(0x0A, name.encode()) if name else b""
    spec += _field(0x12, b"\x08" + _varint(version) if version else b"")
    if signature_name:
        spec += _field(0x1A, signature_name.encode())
    return _field(0x12, spec)


# A response's outputs: (alias, numpy dtype string, shape) each, in the order the signature returned them.
Layout = tuple[tuple[str, str, tuple[int, ...]], ...]


@functools.lru_cache(maxsize=1024)  # keys: served models, their signatures' outputs and request row counts
def _frames(
    name: str, version: int, signature_name: str, layout: Layout
) -> tuple[tuple[str, ...], tuple[bytes, ...]] | None:
    """The fixed bytes of a float response of this layout: the outputs' aliases in
    wire order (sorted), the bytes before each one's values, and the model spec
    after the last (the last of the returned byte strings). None when an output
    is not float32/float64 (or the version is not one a varint writes here)."""
    if version < 0:
        return None
    aliases, heads = [], []
    for alias, dtype, shape in sorted(layout):
        packed = _PACKED.get(dtype)
        if packed is None:
            return None
        content_bytes = math.prod(shape) * np.dtype(dtype).itemsize
        tensor = _tensor_head(shape, *packed, content_bytes)
        # PredictResponse.outputs (1): a map entry, key (1) then value (2).
        entry_head = _field(0x0A, alias.encode()) + _field(0x12, tensor, content_bytes)
        heads.append(_field(0x0A, entry_head, content_bytes))
        aliases.append(alias)
    heads.append(_model_spec_field(name, version, signature_name))
    return tuple(aliases), tuple(heads)


def predict_response(
    name: str, version: int, signature_name: str, outputs: Mapping[str, np.ndarray]
) -> predict_pb2.PredictResponse:
    """The PredictResponse naming the model that ran and carrying its outputs."""
    response = predict_pb2.PredictResponse()
    fill_model_spec(response.model_spec, name, version, signature_name)
    for alias, value in outputs.items():
        array_to_proto(value, response.outputs[alias])
    return response


def predict_response_bytes(name: str, version: int, signature_name: str, outputs: Mapping[str, np.ndarray]) -> bytes:
    """`predict_response(...)` serialized (deterministically); written directly for float outputs.

    The bytes around the values depend only on the outputs' aliases, dtypes
    and shapes (`_frames`, cached), so a response is those and each array's
    own bytes.
    """
    frames = _frames(name, version, signature_name, tuple((a, v.dtype.str, v.shape) for a, v in outputs.items()))
    if frames is None:
        return predict_response(name, version, signature_name, outputs).SerializeToString(deterministic=True)
    aliases, heads = frames
    if len(aliases) == 1:
        return heads[0] + outputs[aliases[0]].tobytes() + heads[1]
    parts = []
    for alias, head in zip(aliases, heads):
        parts += (head, outputs[alias].tobytes())
    parts.append(heads[-1])
    return b"".join(parts)
