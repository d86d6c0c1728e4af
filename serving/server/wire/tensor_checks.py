"""Tensors against a signature: the JSON formats, the b64 wrapper, dtype and shape names, input checks.

The vocabulary the JSON and TensorProto codecs share (`json_values`, `json_inputs`, `json_outputs`,
`tensor_protos`): TensorFlow Serving's names for dtypes and shapes, and `check_inputs`, which checks
decoded inputs against the signature's aliases and dtypes with TensorFlow Serving's wording first
(its `util/json_tensor.cc` and `PreProcessPrediction`), then what was expected, received and the fix.
"""

from __future__ import annotations

import itertools
import json
import warnings
from collections.abc import Collection, Mapping
from collections.abc import Set as AbstractSet
from typing import Any

import numpy as np
import tensorflow as tf
from tensorflow.core.framework import types_pb2

from serving.errors import InvalidArgument, did_you_mean, message
from serving.server.model.servable import Signature

__all__ = [
    "FoundByTheSession",
    "B64_KEY",
    "JsonFormat",
    "check_aliases",
    "check_inputs",
    "cpp_dtype_name",
    "datatype_name",
    "dtype_error",
    "is_b64",
    "json_type_name",
    "json_value_text",
    "named_keys",
    "numpy_dtype_name",
    "shape_text",
    "short_repr",
]
# A cast of a too-large value to float32 is inf, as in TensorFlow Serving, without numpy's warning.
warnings.filterwarnings("ignore", message="overflow encountered in cast", category=RuntimeWarning, module=__name__)

B64_KEY = "b64"


class JsonFormat:
    ROW = "instances"
    COLUMNAR = "inputs"


def json_type_name(value: Any) -> str:
    """A parsed JSON value's type as TensorFlow Serving (rapidjson) names it in messages."""
    if value is None:
        return "Null"
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, Mapping):
        return "Object"
    if isinstance(value, list):
        return "Array"
    if isinstance(value, str):
        return "String"
    return "Number"


def json_value_text(value: Any, limit: int = 200) -> str:
    """`JSON Value: <value> `, TF Serving's `FormatError` prefix (json_tensor.cc): the value written as
    rapidjson's compact Writer writes it, cut after `limit` characters (a body may be 16 MiB; only what the
    message shows is written)."""
    parts, size = [], 0
    for token in _json_tokens(value, limit):
        parts.append(token)
        size += len(token)
        if size > limit:
            return f"JSON Value: {''.join(parts)[:limit]}... "
    return f"JSON Value: {''.join(parts)} "


def _json_tokens(value: Any, limit: int):
    if isinstance(value, dict):
        yield "{"
        for i, (key, item) in enumerate(value.items()):
            yield ("," if i else "") + json.dumps(str(key)[: limit + 1]) + ":"
            yield from _json_tokens(item, limit)
        yield "}"
    elif isinstance(value, list):
        yield "["
        for i, item in enumerate(value):
            if i:
                yield ","
            yield from _json_tokens(item, limit)
        yield "]"
    else:
        yield json.dumps(value[: limit + 1] if isinstance(value, str) else value, default=str)


def short_repr(value: Any, limit: int = 80) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."


# Keys a message names from a client's object: hostile bodies carry a million
# (sorting and writing them all held the event loop ~0.5 s).
_NAMED_KEYS = 32


def _some_sorted(keys: Collection[str]) -> list[str]:
    """The keys sorted, or the first `_NAMED_KEYS` of them sorted when there are more."""
    return sorted(keys) if len(keys) <= _NAMED_KEYS else sorted(itertools.islice(keys, _NAMED_KEYS))


def named_keys(keys: Collection[str]) -> str:
    """`[...]` for a message, at most `_NAMED_KEYS` of the keys named."""
    named = _some_sorted(keys)
    more = len(keys) - len(named)
    return f"{named}" + (f" and {more} more ({len(keys)} in all)" if more else "")


def is_b64(value: Any) -> bool:
    return isinstance(value, dict) and len(value) == 1 and isinstance(value.get(B64_KEY), str)


def shape_text(shape: tuple[int, ...]) -> str:
    """A shape as TensorFlow Serving writes it in messages: `[2,3]`."""
    return "[" + ",".join(str(size) for size in shape) + "]"


def check_aliases(signature: Signature, received: AbstractSet[str], model: str) -> None:
    """The request's input aliases against the signature's, in TensorFlow Serving's order and words:
    `VerifyRequestInputsSize` (predict_util.cc), then TensorFlow's `saved_model::GetInputValues`
    (cc/saved_model/util.cc), which takes an input the request leaves out from the SignatureDef's
    `defaults`."""
    if received == signature.inputs.keys():  # set-like comparison, no set built for the common case
        return
    received = set(received)
    problem = _alias_problem(signature, received)
    if problem is not None:
        raise _aliases_error(signature, received, model, problem)


def _braced(names: Collection[str]) -> str:
    """A set of names as TensorFlow Serving writes it: `{a,b}` (absl::StrJoin of a std::set),
    sorted; past `_NAMED_KEYS` names, the first of them and `...`."""
    return "{" + _joined(names) + "}"


def _joined(names: Collection[str]) -> str:
    named = _some_sorted(names)
    return ",".join(named) + (",..." if len(named) < len(names) else "")


def _alias_problem(signature: Signature, received: set[str]) -> str | None:
    """TensorFlow Serving's message for aliases it refuses; None when the signature's defaults
    fill the inputs the request leaves out."""
    expected = signature.inputs
    defaults = signature.defaults
    if len(received) > len(expected) or (len(received) < len(expected) and not defaults):
        extra = received.difference(expected)
        missing = set(expected).difference(received)
        return (
            f"input size does not match signature: {len(received)}!={len(expected)} "
            f"len({_braced(received)}) != len({_braced(expected)}). "
            f"Sent extra: {_braced(extra)}. Missing but required: {_braced(missing)}."
        )
    # GetInputValues walks the signature's inputs (a protobuf map: sorted here, so the first named is stable).
    for alias in sorted(expected):
        if alias not in received and alias not in defaults:
            return (
                f"Signature input alias: {alias}(feed name: {expected[alias].tensor_name}) not found in request "
                f"and no default value provided. Inputs expected to be in the request {_braced(received)}, "
                f"or default input alias set: {_joined(defaults)}"
            )
    if received.difference(expected):
        return (
            f"Inputs contains invalid name. Used request inputs: {_joined(received.intersection(expected))}, "
            f"request input: {_joined(received)}"
        )
    return None


def _aliases_error(signature: Signature, received: set[str], model: str, problem: str) -> InvalidArgument:
    expected = sorted(signature.inputs)
    extra = received.difference(expected)
    missing = sorted(set(expected).difference(received, signature.defaults))
    hint = did_you_mean(min(extra), missing) if extra and missing else ""
    defaults = f" (defaults: {sorted(signature.defaults)})" if signature.defaults else ""
    return InvalidArgument(
        message(
            problem,
            expected=f"inputs {expected}{defaults} for signature {signature.name!r} of model {model!r}",
            received=named_keys(received),
            fix="Send exactly the inputs listed by GET /v1/models/<name>/metadata"
            + (", leaving out only those with defaults." if signature.defaults else ".")
            + hint,
        )
    )


def cpp_dtype_name(datatype_enum: int) -> str:
    """TensorFlow's C++ name of a DataType (`DataTypeString`): float, double, string, int64."""
    try:
        return types_pb2.DataType.Name(datatype_enum)[3:].lower()
    except ValueError:  # a number no DataType has
        return f"DataType({datatype_enum})"


def datatype_name(dtype: np.dtype) -> str:
    """The TensorFlow DataType (`DT_FLOAT`, `DT_STRING`, ...) a numpy value is fed or fetched as."""
    if dtype.kind in "OSU":
        return "DT_STRING"
    try:
        return types_pb2.DataType.Name(tf.dtypes.as_dtype(dtype).as_datatype_enum)
    except TypeError:
        return str(dtype)


def numpy_dtype_name(dtype: np.dtype) -> str:
    """TensorFlow's C++ name of the dtype a numpy value would be fed as (`float`, `string`)."""
    name = datatype_name(dtype)
    return name[3:].lower() if name.startswith("DT_") else name


class FoundByTheSession(InvalidArgument):
    """An input TensorFlow Serving's session refuses only when it runs (a dtype, a shape): TF
    Serving checks the output filter first (`PreProcessPrediction`, predict_util.cc, before
    `Session::Run`), so a Predict with a bad filter too reports the filter."""


def dtype_error(signature: Signature, alias: str, provided: str, received: str, fix: str) -> FoundByTheSession:
    """An input of the wrong dtype, in TensorFlow's words (the session's check of each feed):
    `arg[i]` is the input's position in the feed, the signature's aliases sorted
    (`session.SessionSignature`)."""
    spec = signature.inputs[alias]
    index = sorted(signature.inputs).index(alias)
    return FoundByTheSession(
        message(
            f"Expects arg[{index}] to be {cpp_dtype_name(spec.datatype_enum)} but {provided} is provided",
            expected=f"input {spec.describe()} (arg[{index}]: the inputs are fed sorted by alias)",
            received=received,
            fix=fix,
        )
    )


def check_inputs(signature: Signature, inputs: Mapping[str, np.ndarray], model: str) -> dict[str, np.ndarray]:
    """Checks input aliases, dtypes and shapes against the signature.

    Returns:
        The inputs, cast where a lossless cast is allowed (int to float).

    An input the request leaves out takes the signature's default (`Signature.defaults`).

    Raises:
        InvalidArgument: An alias is unknown or missing, a dtype is not the
            input's (and not an integer for a float input), or a shape does
            not fit.
    """
    check_aliases(signature, inputs.keys(), model)
    if len(inputs) < len(signature.inputs):  # the rest have defaults (check_aliases)
        inputs = {**{alias: signature.defaults[alias] for alias in signature.inputs if alias not in inputs}, **inputs}
    checked = {}
    for alias, value in inputs.items():
        spec = signature.inputs[alias]
        if value.dtype != spec.numpy_dtype:
            if value.dtype.kind in "iu" and spec.numpy_dtype.kind == "f":
                value = value.astype(spec.numpy_dtype)
            else:
                raise dtype_error(
                    signature,
                    alias,
                    numpy_dtype_name(value.dtype),
                    received=f"numpy dtype {value.dtype} for {alias!r}",
                    fix=f"Send {spec.dtype.name} values for {alias!r}.",
                )
        # TF1 graphs take any shape (a session feed is not checked against the
        # TensorInfo; the ops decide), as in TensorFlow Serving.
        if not signature.feeds_any_shape and not spec.fits(value.shape):
            raise FoundByTheSession(
                message(
                    f"Input {alias!r} has an incompatible shape",
                    expected=spec.describe(),
                    received=f"shape {list(value.shape)}",
                    fix="Send one value of the signature's shape per example (the first dimension is the batch).",
                )
            )
        checked[alias] = value
    return checked
