"""Tensors in and out of the REST JSON and gRPC TensorProto formats.

JSON follows TensorFlow Serving's REST API: row format (`instances`, one item
per example) and columnar format (`inputs`, one value per named input);
`{"b64": "..."}` for bytes; NaN and Infinity tokens accepted; float32 values
written with the shortest decimal that reads back to the same float32; outputs
whose alias ends with `_bytes` written as `{"b64": ...}`.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Mapping
from collections.abc import Set as AbstractSet
from typing import Any

import numpy as np
import tensorflow as tf
from tensorflow.core.framework import tensor_pb2

from serving.errors import InvalidArgument, Unimplemented, message
from serving.server.servable import Signature, TensorSpec

__all__ = [
    "JsonFormat",
    "array_to_json",
    "array_to_proto",
    "check_inputs",
    "json_inputs",
    "json_outputs",
    "proto_inputs",
    "proto_to_array",
]

_B64 = "b64"
_BYTES_SUFFIX = "_bytes"


class JsonFormat:
    ROW = "instances"
    COLUMNAR = "inputs"


def _json_type(value: Any) -> str:
    if value is None:
        return "Null"
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, dict):
        return "Object"
    if isinstance(value, list):
        return "Array"
    if isinstance(value, str):
        return "String"
    return "Number"


def _short(value: Any, limit: int = 80) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _is_b64(value: Any) -> bool:
    return isinstance(value, dict) and len(value) == 1 and isinstance(value.get(_B64), str)


def _json_shape(value: Any) -> tuple[int, ...]:
    shape = []
    while isinstance(value, list):
        shape.append(len(value))
        if not value:
            break
        value = value[0]
    return tuple(shape)


def _type_error(value: Any, spec: TensorSpec, where: str) -> InvalidArgument:
    return InvalidArgument(
        message(
            f"JSON Value: {_short(value)} Type: {_json_type(value)} is not of expected type: "
            f"{spec.dtype.name} ({where})",
            expected=f"{spec.dtype.name} values for input {spec.alias!r}",
            received=f"a JSON {_json_type(value)}",
            fix='Send numbers for numeric inputs, strings or {"b64": "..."} for string inputs.',
        )
    )


def _first_bad_leaf(value: Any, ok: tuple[type, ...]) -> Any:
    if isinstance(value, list):
        for item in value:
            bad = _first_bad_leaf(item, ok)
            if bad is not _NOTHING:
                return bad
        return _NOTHING
    if isinstance(value, bool) and bool not in ok:
        return value
    return _NOTHING if isinstance(value, ok) else value


_NOTHING = object()
_MAX_RANK = 32  # numpy's NPY_MAXDIMS (1.x); deeper JSON lists cannot become an array


def _to_bytes(value: Any, spec: TensorSpec, where: str) -> Any:
    if isinstance(value, list):
        return [_to_bytes(v, spec, where) for v in value]
    if isinstance(value, str):
        return value.encode("utf-8")
    if _is_b64(value):
        try:
            return base64.b64decode(value[_B64], validate=True)
        except (binascii.Error, ValueError):
            raise InvalidArgument(
                message(
                    f"Unable to base64 decode ({where})",
                    expected="standard base64 text in the 'b64' field",
                    received=_short(value),
                    fix="Encode the bytes with base64 (RFC 4648).",
                )
            ) from None
    if isinstance(value, dict):
        raise InvalidArgument(
            message(
                f"JSON Value: {_short(value)} not formatted correctly for base64 data ({where})",
                expected='an object with the single key "b64"',
                received=_short(value),
                fix='Send bytes as {"b64": "<base64 text>"}.',
            )
        )
    raise _type_error(value, spec, where)


def _json_to_array(value: Any, spec: TensorSpec, where: str, may_contain_bools: bool = True) -> np.ndarray:
    kind = spec.numpy_dtype.kind
    expected_shape = _json_shape(value)
    if len(expected_shape) > _MAX_RANK:
        raise InvalidArgument(
            message(
                f"Tensor rank {len(expected_shape)} is too high ({where})",
                expected=f"at most {_MAX_RANK} nested list levels (numpy's limit)",
                received=f"a list nested {len(expected_shape)} levels deep",
                fix="Send each input with the rank of its signature (GET /v1/models/<name>/metadata).",
            )
        )
    if spec.is_string:
        if 0 in expected_shape:
            return np.empty(expected_shape, dtype=object)
        array = np.array(_to_bytes(value, spec, where), dtype=object)
        if array.shape != expected_shape:  # ragged lists become object arrays of lists
            raise _shape_error(value, where)
    else:
        try:
            array = np.asarray(value)
        except ValueError:
            raise _shape_error(value, where) from None
        allowed = {"f": "fiu", "i": "iu", "u": "iu", "b": "b"}.get(kind)
        if allowed is None:
            raise Unimplemented(
                message(
                    f"Conversion of JSON to type: {spec.dtype.name} is not supported ({where})",
                    expected="float, double, int, uint, bool or string inputs",
                    received=f"input {spec.alias!r} of type {spec.dtype.name}",
                    fix="Use the gRPC API for this input type.",
                )
            )
        if array.size and array.dtype.kind not in allowed:
            ok = {"f": (int, float), "i": (int,), "u": (int,), "b": (bool,)}[kind]
            bad = _first_bad_leaf(value, ok)
            raise _type_error(value if bad is _NOTHING else bad, spec, where)
        if array.dtype.kind == "O":
            raise _shape_error(value, where)
        if may_contain_bools and kind != "b":  # numpy turns [true, 1.0] into [1.0, 1.0]
            bad = _first_bad_leaf(value, (int, float))
            if bad is not _NOTHING:
                raise _type_error(bad, spec, where)
        array = array.astype(spec.numpy_dtype, copy=False)
    return array


def _shape_error(value: Any, where: str) -> InvalidArgument:
    return InvalidArgument(
        message(
            f"Encountered list at unexpected size or nesting ({where})",
            expected="a rectangular nested list (every list at one level the same length)",
            received=_short(value),
            fix="Pad or trim the lists so the tensor is rectangular.",
        )
    )


def _check_aliases(signature: Signature, received: AbstractSet[str], model: str) -> None:
    if received == signature.inputs.keys():  # set-like comparison, no set built for the common case
        return
    received, expected = set(received), set(signature.inputs)
    unknown = sorted(received - expected)
    missing = sorted(expected - received)
    if unknown:
        problem = f"input tensor alias not found in signature: {', '.join(unknown)}"
    else:
        problem = (
            f"Request inputs do not match required inputs for model `{model}`. "
            f"Missing but required: {{{', '.join(missing)}}}"
        )
    raise InvalidArgument(
        message(
            problem,
            expected=f"inputs {sorted(expected)} for signature {signature.name!r}",
            received=f"{sorted(received)}",
            fix="Send exactly the inputs listed by GET /v1/models/<name>/metadata.",
        )
    )


def check_inputs(signature: Signature, inputs: Mapping[str, np.ndarray], model: str) -> dict[str, np.ndarray]:
    """Checks input aliases, dtypes and shapes against the signature.

    Returns:
        The inputs, cast where a lossless cast is allowed (int to float).

    Raises:
        InvalidArgument: An alias is unknown or missing, or a shape does not fit.
    """
    _check_aliases(signature, inputs.keys(), model)
    checked = {}
    for alias, value in inputs.items():
        spec = signature.inputs[alias]
        if value.dtype != spec.numpy_dtype:
            if value.dtype.kind in "iu" and spec.numpy_dtype.kind == "f":
                value = value.astype(spec.numpy_dtype)
            else:
                raise InvalidArgument(
                    message(
                        f"Expects arg[{alias}] to be {spec.dtype.name} but "
                        f"{tf.dtypes.as_dtype(value.dtype).name if value.dtype != object else 'string'} is provided",
                        expected=spec.describe(),
                        received=f"dtype {value.dtype}",
                        fix=f"Send {spec.dtype.name} values for {alias!r}.",
                    )
                )
        # TF1 graphs take any shape (a session feed is not checked against the
        # TensorInfo; the ops decide), as in TensorFlow Serving.
        if (
            not signature.feeds_any_shape
            and spec.shape is not None
            and (
                value.ndim != len(spec.shape) or any(d is not None and d != v for d, v in zip(spec.shape, value.shape))
            )
        ):
            raise InvalidArgument(
                message(
                    f"Input {alias!r} has an incompatible shape",
                    expected=spec.describe(),
                    received=f"shape {list(value.shape)}",
                    fix="Send one value of the signature's shape per example (the first dimension is the batch).",
                )
            )
        checked[alias] = value
    return checked


def json_inputs(
    body: Mapping[str, Any], signature: Signature, may_contain_bools: bool = True
) -> tuple[dict[str, np.ndarray], str]:
    """Converts a predict request body to numpy inputs.

    Args:
        body: The parsed JSON object (its `signature_name` already read).
        signature: The signature the request targets.
        may_contain_bools: False when the raw body has no `true`/`false`
            token; skips a per-value scan that numpy's conversion needs to
            reject booleans in numeric inputs.

    Returns:
        (inputs by alias, JsonFormat.ROW or JsonFormat.COLUMNAR).

    Raises:
        InvalidArgument: The body does not fit TensorFlow Serving's formats.
    """
    has_rows, has_columns = JsonFormat.ROW in body, JsonFormat.COLUMNAR in body
    names = sorted(signature.inputs)
    if not names:
        raise InvalidArgument(
            message(
                f"Failed to get input map for signature: {signature.name or 'DEFAULT'}",
                expected="a signature with at least one input (the REST API has no form for none)",
                received=f"signature {signature.name!r} without inputs",
                fix="Call it through gRPC Predict with an empty inputs map.",
            )
        )
    if has_rows == has_columns:
        problem = (
            "Not formatted correctly expecting only one of 'inputs' or 'instances' keys to exist"
            if has_rows
            else "Missing 'inputs' or 'instances' key"
        )
        raise InvalidArgument(
            message(
                problem,
                expected='either "instances" (row format) or "inputs" (columnar format)',
                received=f"keys {sorted(body)}",
                fix='Send {"instances": [...]} or {"inputs": {...}}.',
            )
        )
    if has_rows:
        return _row_inputs(body[JsonFormat.ROW], signature, names, may_contain_bools), JsonFormat.ROW
    return _columnar_inputs(body[JsonFormat.COLUMNAR], signature, names, may_contain_bools), JsonFormat.COLUMNAR


def _row_inputs(instances: Any, signature: Signature, names: list[str], bools: bool) -> dict[str, np.ndarray]:
    if not isinstance(instances, list):
        raise InvalidArgument(
            message(
                "Excepting 'instances' to be an list/array",
                expected="a JSON list, one item per example",
                received=f"a JSON {_json_type(instances)}",
                fix='Wrap the examples in a list: {"instances": [...]}.',
            )
        )
    if not instances:
        raise InvalidArgument(
            message(
                "No values in 'instances' array",
                expected="at least one example",
                received="[]",
                fix="Send one or more examples.",
            )
        )
    as_objects = isinstance(instances[0], dict) and not _is_b64(instances[0])
    if not as_objects:
        if len(names) > 1:
            raise InvalidArgument(
                message(
                    "instances is a plain list, but expecting list of objects as multiple input tensors "
                    "required as per tensorinfo_map",
                    expected=f"objects with keys {names}",
                    received=f"item 0 = {_short(instances[0])}",
                    fix='Send {"instances": [{"' + '": ..., "'.join(names) + '": ...}]}.',
                )
            )
        alias = names[0]
        return {alias: _json_to_array(instances, signature.inputs[alias], "'instances' list", bools)}
    columns: dict[str, list] = {name: [] for name in names}
    for index, item in enumerate(instances):
        if not isinstance(item, dict) or _is_b64(item):
            raise InvalidArgument(
                message(
                    f"Expecting object but got list at item {index} of input list",
                    expected=f"every item an object with keys {names}",
                    received=_short(item),
                    fix="Use the same form for every item of 'instances'.",
                )
            )
        if set(item) != set(names):
            raise InvalidArgument(
                message(
                    f"Failed to process element: {index} of 'instances' list. JSON object: {_short(item)} "
                    f"keys must be equal to: {','.join(names)}",
                    expected=f"keys {names}",
                    received=f"keys {sorted(item)}",
                    fix="Give every example one value per signature input.",
                )
            )
        for name in names:
            columns[name].append(item[name])
    return {
        name: _json_to_array(values, signature.inputs[name], f"key {name!r} of 'instances'", bools)
        for name, values in columns.items()
    }


def _columnar_inputs(inputs: Any, signature: Signature, names: list[str], bools: bool) -> dict[str, np.ndarray]:
    if not isinstance(inputs, dict) or _is_b64(inputs):
        if len(names) > 1:
            raise InvalidArgument(
                message(
                    "inputs is a plain value/list, but expecting an object as multiple input tensors "
                    "required as per tensorinfo_map",
                    expected=f"an object with keys {names}",
                    received=_short(inputs),
                    fix='Send {"inputs": {"' + '": [...], "'.join(names) + '": [...]}}.',
                )
            )
        alias = names[0]
        return {alias: _json_to_array(inputs, signature.inputs[alias], "'inputs'", bools)}
    result = {}
    for name in names:
        if name not in inputs:
            raise InvalidArgument(
                message(
                    f"Missing named input: {name} in 'inputs' object",
                    expected=f"keys {names}",
                    received=f"keys {sorted(inputs)}",
                    fix="Add the missing input.",
                )
            )
        result[name] = _json_to_array(inputs[name], signature.inputs[name], f"key {name!r} of 'inputs'", bools)
    return result


def array_to_json(array: np.ndarray, alias: str) -> Any:
    """Converts a numpy output to nested JSON-ready Python values."""
    kind = array.dtype.kind
    if kind == "f":
        if array.dtype.itemsize < 8:
            # Shortest decimal that reads back to the same float32 (as
            # TensorFlow Serving writes it), instead of float64 noise digits.
            return array.astype(str).astype(np.float64).tolist()
        return array.tolist()
    if kind in "iub":
        return array.tolist()
    if kind in "OSU":
        as_b64 = alias.endswith(_BYTES_SUFFIX)
        return _bytes_to_json(array.tolist(), as_b64)
    raise InvalidArgument(
        message(
            f"Failed to write JSON value for tensor type: {array.dtype}",
            expected="float, int, bool or string outputs",
            received=f"output {alias!r} of dtype {array.dtype}",
            fix="Use the gRPC API for this output.",
        )
    )


def _bytes_to_json(value: Any, as_b64: bool) -> Any:
    if isinstance(value, list):
        return [_bytes_to_json(v, as_b64) for v in value]
    if isinstance(value, str):
        value = value.encode("utf-8")
    if not as_b64:
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            pass  # not text: fall back to b64 rather than write invalid JSON
    return {_B64: base64.b64encode(value).decode("ascii")}


def json_outputs(
    outputs: Mapping[str, np.ndarray],
    fmt: str,
    convert: Callable[[np.ndarray, str], Any] = array_to_json,
) -> dict[str, Any]:
    """Builds the predict response body: `predictions` (rows) or `outputs`.

    Args:
        outputs: Output alias to value.
        fmt: `JsonFormat.ROW` or `JsonFormat.COLUMNAR`, the request's format.
        convert: Turns one output into its JSON value (`array_to_json`, or
            the identity for a writer that takes numpy arrays).

    Returns:
        The body as a dict.

    Raises:
        InvalidArgument: Row format with a scalar output, or outputs whose
            batch sizes differ.
    """
    names = sorted(outputs)
    if fmt == JsonFormat.COLUMNAR:
        if len(names) == 1:
            return {"outputs": convert(outputs[names[0]], names[0])}
        return {"outputs": {name: convert(outputs[name], name) for name in names}}
    sizes = {}
    for name in names:
        if outputs[name].ndim == 0:
            raise InvalidArgument(
                message(
                    f"Tensor name: {name} has no shape information",
                    expected="outputs with a batch dimension for row format",
                    received="a scalar output",
                    fix='Use the columnar format ({"inputs": ...}) for this signature.',
                )
            )
        sizes[name] = outputs[name].shape[0]
    if len(set(sizes.values())) > 1:
        raise InvalidArgument(
            message(
                "Tensor outputs have inconsistent batch sizes",
                expected="the same first dimension for every output",
                received=f"{sizes}",
                fix='Use the columnar format ({"inputs": ...}) for this signature.',
            )
        )
    if len(names) == 1:
        return {"predictions": convert(outputs[names[0]], names[0])}
    columns = {name: convert(outputs[name], name) for name in names}
    rows = [{name: columns[name][i] for name in names} for i in range(next(iter(sizes.values())))]
    return {"predictions": rows}


def proto_to_array(proto: tensor_pb2.TensorProto, spec: TensorSpec) -> np.ndarray:
    """Converts a request TensorProto to numpy, checking its dtype."""
    if proto.dtype != spec.datatype_enum and not (
        tf.dtypes.as_dtype(proto.dtype).is_integer and spec.dtype.is_floating
    ):
        raise InvalidArgument(
            message(
                f"Expects arg[{spec.alias}] to be {spec.dtype.name} but "
                f"{tf.dtypes.as_dtype(proto.dtype).name if proto.dtype else 'DT_INVALID'} is provided",
                expected=spec.describe(),
                received=f"dtype {proto.dtype}",
                fix=f"Build the TensorProto with tf.make_tensor_proto(values, dtype=tf.{spec.dtype.name}).",
            )
        )
    try:
        content = proto.tensor_content
        if content and not spec.is_string and proto.dtype == spec.datatype_enum:
            # Fast path for what tf.make_tensor_proto writes for numpy arrays.
            shape = [d.size for d in proto.tensor_shape.dim]
            return np.frombuffer(content, dtype=spec.numpy_dtype).reshape(shape)
        return tf.make_ndarray(proto)
    except (TypeError, ValueError) as err:
        raise InvalidArgument(
            message(
                f"Malformed TensorProto for input {spec.alias!r}",
                expected="a TensorProto whose values match its shape",
                received=str(err),
                fix="Build it with tf.make_tensor_proto.",
            )
        ) from None


def proto_inputs(
    protos: Mapping[str, tensor_pb2.TensorProto], signature: Signature, model: str
) -> dict[str, np.ndarray]:
    """Converts and checks the `inputs` map of a PredictRequest."""
    _check_aliases(signature, set(protos), model)
    # By key: a protobuf map's items() is collections.abc's generator, 2x slower.
    arrays = {alias: proto_to_array(protos[alias], signature.inputs[alias]) for alias in protos}
    return check_inputs(signature, arrays, model)


# The typed TensorProto field TensorFlow's Tensor::AsProtoField writes per dtype.
_PROTO_FIELD = {
    np.dtype(np.float32): "float_val",
    np.dtype(np.float64): "double_val",
    np.dtype(np.int32): "int_val",
    np.dtype(np.int16): "int_val",
    np.dtype(np.int8): "int_val",
    np.dtype(np.uint8): "int_val",
    np.dtype(np.uint16): "int_val",
    np.dtype(np.int64): "int64_val",
    np.dtype(np.uint32): "uint32_val",
    np.dtype(np.uint64): "uint64_val",
    np.dtype(np.bool_): "bool_val",
}


def _datatype_enum(dtype: np.dtype) -> int:
    enum = _DATATYPE_ENUM.get(dtype)
    if enum is None:
        enum = _DATATYPE_ENUM[dtype] = tf.dtypes.as_dtype(dtype).as_datatype_enum
    return enum


_DATATYPE_ENUM: dict[np.dtype, int] = {}  # numpy dtype -> TensorProto dtype, filled on first use


def array_to_proto(array: np.ndarray, proto: tensor_pb2.TensorProto | None = None) -> tensor_pb2.TensorProto:
    """Converts a numpy output to a TensorProto.

    Numbers go into the typed repeated field (`float_val`, `int64_val`, ...),
    as TensorFlow Serving writes them by default (its
    `--enable_serialization_as_tensor_content` is off), so clients that read
    `outputs["y"].float_val` work; other numeric dtypes go into tensor_content.

    Args:
        array: The value.
        proto: An empty TensorProto to fill in place (e.g. a response's
            `outputs[alias]`, which saves a copy); a new one when None.

    Returns:
        The filled TensorProto.
    """
    if proto is None:
        proto = tensor_pb2.TensorProto()
    if array.dtype.kind in "fiub":
        proto.dtype = _datatype_enum(array.dtype)
        field = _PROTO_FIELD.get(array.dtype)
        if field is None:
            proto.tensor_content = np.ascontiguousarray(array).tobytes()
        else:
            getattr(proto, field).extend(array.ravel().tolist())
        dims = proto.tensor_shape.dim
        for size in array.shape:
            dims.add(size=size)
        return proto
    proto.CopyFrom(tf.make_tensor_proto(array))
    return proto
