"""gRPC TensorProtos to numpy arrays checked against a signature, and numpy arrays back to TensorProtos."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import tensorflow as tf
from tensorflow.core.framework import tensor_pb2

from serving.errors import InvalidArgument, message
from serving.server.model.servable import Signature, TensorSpec
from serving.server.wire.tensor_checks import FoundByTheSession, check_aliases, cpp_dtype_name, dtype_error

__all__ = ["array_to_proto", "proto_inputs", "proto_to_array"]


def proto_to_array(
    proto: tensor_pb2.TensorProto, spec: TensorSpec, signature: Signature, check_dtype: bool = True
) -> np.ndarray:
    """Converts a request TensorProto to numpy, checking its dtype.

    Args:
        proto: The request's tensor.
        spec: The signature's input it is for.
        signature: The signature (its feed order names the input in a dtype error).
        check_dtype: False to only parse it (`proto_inputs`' second pass).
    """
    dtype = proto.dtype
    if check_dtype and dtype != spec.datatype_enum:
        raise dtype_error(
            signature,
            spec.alias,
            cpp_dtype_name(dtype),
            received=f"a TensorProto of dtype {cpp_dtype_name(dtype)} for {spec.alias!r}",
            fix=f"Build the TensorProto with tf.make_tensor_proto(values, dtype=tf.{spec.dtype.name}).",
        )
    try:
        content = proto.tensor_content
        if content and not spec.is_string and dtype == spec.datatype_enum:
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
    """Converts the `inputs` map of a PredictRequest, checking its aliases and dtypes.

    Shapes are left to `check_inputs`, which its callers run on the result
    (`Runtime.predict`, the warm-up replay): it also casts integer tensors
    sent for float inputs.
    """
    # A dict's keys compare as a set without building one (a protobuf map's do not).
    check_aliases(signature, protos.keys() if protos.__class__ is dict else set(protos), model)
    # By key: a protobuf map's items() is collections.abc's generator, 2x slower.
    inputs = signature.inputs
    try:
        return {alias: proto_to_array(protos[alias], inputs[alias], signature) for alias in protos}
    except FoundByTheSession as wrong_dtype:
        # TF Serving parses every TensorProto (GetInputValues: "tensor parsing error") before the
        # session sees a dtype: another input's parse error comes first.
        for alias in protos:
            proto_to_array(protos[alias], inputs[alias], signature, check_dtype=False)
        raise wrong_dtype from None


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
        shape = array.shape
        if shape:
            dims = proto.tensor_shape.dim
            for size in shape:
                dims.add(size=size)
        else:  # a scalar's shape is present and empty (`tensor_shape {}`), as TensorFlow writes it
            proto.tensor_shape.SetInParent()
        return proto
    proto.CopyFrom(tf.make_tensor_proto(array))
    return proto
