"""Tensors in and out of the REST JSON and gRPC TensorProto formats.

JSON follows TensorFlow Serving's REST API: row format (`instances`, one item
per example) and columnar format (`inputs`, one value per named input);
`{"b64": "..."}` for bytes; NaN and Infinity tokens accepted; float32 values
written as TensorFlow Serving writes them (six significant digits when those
read back to the same float32, else nine: `float32_json_values`); outputs
whose alias ends with `_bytes` written as `{"b64": ...}`.

Error messages start with TensorFlow Serving's own words (its
`util/json_tensor.cc`), which clients match on, then say what was expected,
what was received and how to fix it.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import itertools
import json
import math
import struct
import warnings
from collections.abc import Callable, Collection, Mapping
from collections.abc import Set as AbstractSet
from typing import Any

import numpy as np
import tensorflow as tf
from tensorflow.core.framework import tensor_pb2, types_pb2

from serving.errors import InvalidArgument, Unimplemented, did_you_mean, message
from serving.server.servable import Signature, TensorSpec

__all__ = [
    "JsonFormat",
    "array_to_json",
    "array_to_proto",
    "check_inputs",
    "datatype_name",
    "float32_json",
    "float32_json_values",
    "json_inputs",
    "json_outputs",
    "json_type_name",
    "proto_inputs",
    "proto_to_array",
    "shape_text",
]

_B64 = "b64"
_BYTES_SUFFIX = "_bytes"


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


def _short(value: Any, limit: int = 80) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."


# Keys a message names from a client's object: hostile bodies carry a million
# (sorting and writing them all held the event loop ~0.5 s).
_NAMED_KEYS = 32


def _some_sorted(keys: Collection[str]) -> list[str]:
    """The keys sorted, or the first `_NAMED_KEYS` of them sorted when there are more."""
    return sorted(keys) if len(keys) <= _NAMED_KEYS else sorted(itertools.islice(keys, _NAMED_KEYS))


def _named(keys: Collection[str]) -> str:
    """`[...]` for a message, at most `_NAMED_KEYS` of the keys named."""
    named = _some_sorted(keys)
    more = len(keys) - len(named)
    return f"{named}" + (f" and {more} more ({len(keys)} in all)" if more else "")


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
            f"JSON Value: {_short(value)} Type: {json_type_name(value)} is not of expected type: "
            f"{_cpp_dtype_name(spec.datatype_enum)} ({where})",
            expected=f"{spec.dtype.name} values for input {spec.alias!r}",
            received=f"a JSON {json_type_name(value)}",
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
# The input types TF Serving converts from JSON (`AddValueToTensor`, util/json_tensor.cc); others
# (half, bfloat16, uint16, complex, ...) are UNIMPLEMENTED there.
_JSON_INPUT_TYPES = frozenset(
    getattr(types_pb2, name)
    for name in (
        "DT_FLOAT",
        "DT_DOUBLE",
        "DT_INT32",
        "DT_INT16",
        "DT_INT8",
        "DT_UINT8",
        "DT_STRING",
        "DT_INT64",
        "DT_BOOL",
        "DT_UINT32",
        "DT_UINT64",
    )
)
# The output types TF Serving writes as JSON (`AddSingleValueAndAdvance`): the same set.
_JSON_OUTPUT_DTYPES = frozenset(
    np.dtype(t) for t in (np.float32, np.float64, np.int32, np.int16, np.int8, np.uint8, np.int64, np.bool_)
) | frozenset(np.dtype(t) for t in (np.uint32, np.uint64))
# 1e300 cast to float32 is inf, as in TensorFlow Serving, without numpy's warning; a filter for
# this module, not `np.errstate` around each cast (3 us a request).
warnings.filterwarnings("ignore", message="overflow encountered in cast", category=RuntimeWarning, module=__name__)
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
        if spec.datatype_enum not in _JSON_INPUT_TYPES:
            leaf = _first_bad_leaf(value, ())
            if leaf is not _NOTHING:  # TF Serving converts value by value: no value, no error
                raise Unimplemented(
                    message(
                        f"Conversion of JSON Value: {_short(leaf)} to type: {_cpp_dtype_name(spec.datatype_enum)}",
                        expected="float, double, int8/16/32/64, uint8/32/64, bool or string inputs",
                        received=f"input {spec.alias!r} of type {spec.dtype.name} ({where})",
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
        if kind in "iu" and array.dtype != spec.numpy_dtype and array.size:
            _check_integer_range(array, value, spec, where)
        array = array.astype(spec.numpy_dtype, copy=False)  # 1e300 into float32 is inf, as in TF Serving
    return array


def _check_integer_range(array: np.ndarray, value: Any, spec: TensorSpec, where: str) -> None:
    """Refuses integers the input's dtype cannot hold (numpy's cast would wrap them around)."""
    info = np.iinfo(spec.numpy_dtype)
    if array.min() >= info.min and array.max() <= info.max:
        return
    bad = next(v for v in _leaves(value) if not info.min <= v <= info.max)
    raise InvalidArgument(
        message(
            f"JSON Value: {_short(bad)} Type: {json_type_name(bad)} is not of expected type: {spec.dtype.name} ({where})",
            expected=f"integers from {info.min} to {info.max} for input {spec.alias!r}",
            received=_short(bad),
            fix=f"Send values in the range of {spec.dtype.name}, or export the input with a wider dtype.",
        )
    )


def _leaves(value: Any):
    if isinstance(value, list):
        for item in value:
            yield from _leaves(item)
    else:
        yield value


def _nesting_problem(value: Any, shape: tuple[int, ...], level: int = 0) -> str | None:
    """TensorFlow Serving's words for a list that does not fit the shape its first items give
    (`FillTensorProto`); None when the nested list is rectangular."""
    rank = len(shape)
    if not isinstance(value, list):
        if level != rank:
            return (
                f"JSON Value: {_short(value)} found at incorrect level: {level + 1} in the JSON DOM. "
                f"Expected at level: {rank}"
            )
        return None
    if level >= rank:
        return f"Encountered list at unexpected level: {level} expected < {rank}"
    if len(value) != shape[level]:
        return f"Encountered list at unexpected size: {len(value)} at level: {level} expected size: {shape[level]}"
    for item in value:
        problem = _nesting_problem(item, shape, level + 1)
        if problem is not None:
            return problem
    return None


def _shape_error(value: Any, where: str) -> InvalidArgument:
    problem = _nesting_problem(value, _json_shape(value)) or "Encountered list at unexpected size or nesting"
    return InvalidArgument(
        message(
            f"{problem} ({where})",
            expected="a rectangular nested list (every list at one level the same length)",
            received=_short(value),
            fix="Pad or trim the lists so the tensor is rectangular.",
        )
    )


def shape_text(shape: tuple[int, ...]) -> str:
    """A shape as TensorFlow Serving writes it in messages: `[2,3]`."""
    return "[" + ",".join(str(size) for size in shape) + "]"


def _instance_problem(items: list, key: str | None) -> str | None:
    """Why the items of 'instances' do not stack into one tensor, in TensorFlow Serving's words
    (`FillTensorMapFromInstancesList`, `AddInstanceItem`): each item must be rectangular and of
    the first item's size and shape. `key` names the input when items are objects' values."""
    first: tuple[int, ...] | None = None
    for index, item in enumerate(items):
        if key is None and isinstance(item, dict) and not _is_b64(item):
            return f"Expecting value/list but got object at item {index} of input list"
        shape = _json_shape(item)
        problem = _nesting_problem(item, shape)
        if problem is None and first is not None:
            size, first_size = math.prod(shape), math.prod(first)
            if size != first_size:
                problem = f"Expecting tensor size: {first_size} but got: {size}"
            elif shape != first:
                problem = f"Expecting shape {shape_text(first)} but got: {shape_text(shape)}"
        if problem is not None:
            element = f"{index}" if key is None else f"{index} key: {key}"
            return f"Failed to process element: {element} of 'instances' list. Error: INVALID_ARGUMENT: {problem}"
        first = shape if first is None else first
    return None


# Past this many items, a request whose items do not stack gets numpy's shape error: naming the
# item in TF Serving's words walks every item in Python (2M rows: 2.3 s on the event loop).
_ITEMS_NAMED_AT_MOST = 10_000


def _instances_error(items: list, key: str | None, names: list[str]) -> InvalidArgument | None:
    """TF Serving's words for 'instances' items that do not stack; None when the caller's own
    error stands (no item-level problem found, or too many items to look through)."""
    if len(items) > _ITEMS_NAMED_AT_MOST:
        return None
    problem = _instance_problem(items, key)
    if problem is None:
        return None
    return InvalidArgument(
        message(
            problem,
            expected="every item of 'instances' a value of one shape"
            + (f" for input {key!r}" if key else "")
            + ("" if key else f" (a plain value or list: the signature has one input, {names[0]!r})"),
            received=f"{len(items)} items",
            fix="Pad or trim each item to the shape of the first one; send objects only for several inputs.",
        )
    )


def _check_aliases(signature: Signature, received: AbstractSet[str], model: str) -> None:
    if received == signature.inputs.keys():  # set-like comparison, no set built for the common case
        return
    raise _aliases_error(signature, set(received), model)


def _braced(names: Collection[str]) -> str:
    """A set of names as TensorFlow Serving writes it: `{a,b}` (absl::StrJoin of a std::set),
    sorted; past `_NAMED_KEYS` names, the first of them and `...`."""
    named = _some_sorted(names)
    return "{" + ",".join(named) + (",..." if len(named) < len(names) else "") + "}"


def _aliases_error(signature: Signature, received: set[str], model: str) -> InvalidArgument:
    """The request's input aliases are not the signature's: TensorFlow Serving's words, then ours.

    Different counts: `VerifyRequestInputsSize` (predict_util.cc) names both sets, the
    extra and the missing aliases; the same count: its alias lookup names the first
    alias the signature lacks and the set of its inputs.
    """
    expected = sorted(signature.inputs)
    extra = received.difference(expected)
    first_extra = min(extra) if extra else None
    missing = sorted(set(expected).difference(received))
    if len(received) != len(expected):
        problem = (
            f"input size does not match signature: {len(received)}!={len(expected)} "
            f"len({_braced(received)}) != len({_braced(expected)}). "
            f"Sent extra: {_braced(extra)}. Missing but required: {_braced(missing)}."
        )
    else:
        problem = (
            f"input tensor alias not found in signature: {first_extra}. "
            f"Inputs expected to be in the set {_braced(expected)}."
        )
    hint = did_you_mean(first_extra, missing) if extra and missing else ""
    return InvalidArgument(
        message(
            problem,
            expected=f"inputs {expected} for signature {signature.name!r} of model {model!r}",
            received=_named(received),
            fix="Send exactly the inputs listed by GET /v1/models/<name>/metadata." + hint,
        )
    )


def _cpp_dtype_name(datatype_enum: int) -> str:
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


def _numpy_dtype_name(dtype: np.dtype) -> str:
    """TensorFlow's C++ name of the dtype a numpy value would be fed as (`float`, `string`)."""
    name = datatype_name(dtype)
    return name[3:].lower() if name.startswith("DT_") else name


class FoundByTheSession(InvalidArgument):
    """An input TensorFlow Serving's session refuses only when it runs (a dtype, a shape): TF
    Serving checks the output filter first (`PreProcessPrediction`, predict_util.cc, before
    `Session::Run`), so a Predict with a bad filter too reports the filter."""


def _dtype_error(signature: Signature, alias: str, provided: str, received: str, fix: str) -> FoundByTheSession:
    """An input of the wrong dtype, in TensorFlow's words (the session's check of each feed):
    `arg[i]` is the input's position in the feed, the signature's aliases sorted
    (`session.SessionSignature`)."""
    spec = signature.inputs[alias]
    index = sorted(signature.inputs).index(alias)
    return FoundByTheSession(
        message(
            f"Expects arg[{index}] to be {_cpp_dtype_name(spec.datatype_enum)} but {provided} is provided",
            expected=f"input {spec.describe()} (arg[{index}]: the inputs are fed sorted by alias)",
            received=received,
            fix=fix,
        )
    )


def check_inputs(signature: Signature, inputs: Mapping[str, np.ndarray], model: str) -> dict[str, np.ndarray]:
    """Checks input aliases, dtypes and shapes against the signature.

    Returns:
        The inputs, cast where a lossless cast is allowed (int to float).

    Raises:
        InvalidArgument: An alias is unknown or missing, a dtype is not the
            input's (and not an integer for a float input), or a shape does
            not fit.
    """
    _check_aliases(signature, inputs.keys(), model)
    checked = {}
    for alias, value in inputs.items():
        spec = signature.inputs[alias]
        if value.dtype != spec.numpy_dtype:
            if value.dtype.kind in "iu" and spec.numpy_dtype.kind == "f":
                value = value.astype(spec.numpy_dtype)
            else:
                raise _dtype_error(
                    signature,
                    alias,
                    _numpy_dtype_name(value.dtype),
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
                received=f"keys {_named(body)}",
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
                "Expecting 'instances' to be an list/array",
                expected="a JSON list, one item per example",
                received=f"a JSON {json_type_name(instances)}",
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
        try:
            return {alias: _json_to_array(instances, signature.inputs[alias], "'instances' list", bools)}
        except InvalidArgument as err:  # say which item does not fit, as TensorFlow Serving does
            raise _instances_error(instances, None, names) or err from None
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
            unknown = next((key for key in item if key not in signature.inputs), None)
            if unknown is not None:
                raise InvalidArgument(
                    message(
                        f"Failed to process element: {index} key: {unknown} of 'instances' list. "
                        f"Error: INVALID_ARGUMENT: JSON object: does not have named input: {unknown}",
                        expected=f"keys {names}",
                        received=f"keys {_named(item)}",
                        fix="Use the input names of GET /v1/models/<name>/metadata.",
                    )
                )
            raise InvalidArgument(
                message(
                    f"Failed to process element: {index} of 'instances' list. JSON object: {_short(item)} "
                    f"keys must be equal to: {','.join(names)}",
                    expected=f"keys {names}",
                    received=f"keys {_named(item)}",
                    fix="Give every example one value per signature input.",
                )
            )
        for name in names:
            columns[name].append(item[name])
    inputs = {}
    for name, values in columns.items():
        try:
            inputs[name] = _json_to_array(values, signature.inputs[name], f"key {name!r} of 'instances'", bools)
        except InvalidArgument as err:
            raise _instances_error(values, name, names) or err from None
    return inputs


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
                    received=f"keys {_named(inputs)}",
                    fix="Add the missing input.",
                )
            )
        result[name] = _json_to_array(inputs[name], signature.inputs[name], f"key {name!r} of 'inputs'", bools)
    return result


_FLOAT32 = struct.Struct("f")
# Powers of ten across float32's range (1.4e-45 .. 3.4e38): a value's index among them gives its
# decimal exponent, and the scales that put 6 or 9 significant digits left of the point.
_LOWEST_POWER = -46
_POWERS_OF_TEN = 10.0 ** np.arange(_LOWEST_POWER, 40, dtype=np.float64)
_EXPONENTS = np.arange(_LOWEST_POWER - 1, 40, dtype=np.float64)  # by searchsorted index
_SIX_DIGITS_SCALE, _NINE_DIGITS_SCALE = 10.0 ** (5 - _EXPONENTS), 10.0 ** (8 - _EXPONENTS)
# Within [1e-4, 1e6) a float32 times those scales (10**k, k <= 12) is exact in float64, so
# rounding it in numpy is exact; other values go through Python's formatting.
_EXACT_LOW, _EXACT_HIGH = 1e-4, 1e6
_SMALL_ARRAY = 8  # up to this many values, formatting each is cheaper than numpy's passes


def _float32_as_written(value: float) -> float:
    """TensorFlow Serving's `WriteDecimal` for one float32 (as a Python float): six significant
    digits when they read back to the same float32, else nine."""
    six = float(f"{value:.6g}")
    try:
        same = _FLOAT32.unpack(_FLOAT32.pack(six))[0] == value
    except OverflowError:  # rounded past float32's largest value
        same = False
    return six if same else float(f"{value:.9g}")


def float32_json(array: np.ndarray) -> Any:
    """`float32_json_values` ready for a JSON writer: nested lists for small arrays of rank
    0-2 (no numpy round trip: one-row answers are most requests), a float64 array otherwise.

    Example:
        >>> float32_json(np.array([[0.73105857]], np.float32))
        [[0.731058598]]
    """
    if array.size > _SMALL_ARRAY or array.ndim > 2:
        return float32_json_values(array)
    # `_float32_as_written` inlined: this runs on every answer (0.6 us less for one value).
    pack, unpack, values = _FLOAT32.pack, _FLOAT32.unpack, []
    for value in array.ravel().tolist():
        six = float(f"{value:.6g}")  # never past float32's largest value: .6g rounds it down
        values.append(six if unpack(pack(six))[0] == value else float(f"{value:.9g}"))
    if array.ndim == 0:
        return values[0]
    if array.ndim == 1:
        return values
    rows, width = array.shape
    if rows == 1:
        return [values]
    return [values[row * width : (row + 1) * width] for row in range(rows)]


def float32_json_values(array: np.ndarray) -> np.ndarray:
    """The values TensorFlow Serving writes in JSON for a float32 array, as float64.

    TensorFlow Serving (`util/json_tensor.cc`, `WriteDecimal`) writes a float32
    with six significant digits (`absl::StrCat`) when they read back to the same
    float32, else with nine (`%.9g`): 0.1 is `0.1`, 0.73105857 is
    `0.731058598`. The float64 returned holds that decimal exactly as a JSON
    reader parses it, so a writer of shortest float64 decimals (orjson, `json`)
    writes the same number. Only the notation may differ: `9000000.0`, not
    `9e+06`.

    Args:
        array: A float32 array (any shape; NaN and infinities pass through).

    Returns:
        A float64 array of the same shape.

    Example:
        >>> float32_json_values(np.array([0.1, 0.73105857], np.float32)).tolist()
        [0.1, 0.731058598]
    """
    if array.size <= _SMALL_ARRAY:
        return np.array([_float32_as_written(v) for v in array.ravel().tolist()], np.float64).reshape(array.shape)
    x = array.astype(np.float64)
    magnitude = np.abs(x)
    exact = magnitude.min() >= _EXACT_LOW and magnitude.max() < _EXACT_HIGH  # False for NaN too
    index = np.searchsorted(_POWERS_OF_TEN, magnitude, side="right")
    # Values outside the exact range (0, inf, NaN, near float32's limits) may warn; they are redone below.
    with contextlib.nullcontext() if exact else np.errstate(all="ignore"):
        scale = _SIX_DIGITS_SCALE.take(index)
        six = np.rint(x * scale)
        six /= scale
        scale = _NINE_DIGITS_SCALE.take(index)
        nine = np.rint(x * scale)
        nine /= scale
        written = np.where(six.astype(np.float32) == array, six, nine)
    if not exact:
        inexact = ~((magnitude >= _EXACT_LOW) & (magnitude < _EXACT_HIGH))
        written[inexact] = [_float32_as_written(v) for v in array[inexact].tolist()]
    return written


def array_to_json(array: np.ndarray, alias: str) -> Any:
    """Converts a numpy output to nested JSON-ready Python values."""
    kind = array.dtype.kind
    if array.dtype == np.float32:
        written = float32_json(array)
        return written.tolist() if isinstance(written, np.ndarray) else written
    if array.dtype in _JSON_OUTPUT_DTYPES:
        return array.tolist()
    if kind in "OSU":
        as_b64 = alias.endswith(_BYTES_SUFFIX)
        return _bytes_to_json(array.tolist(), as_b64)
    raise InvalidArgument(
        message(
            f"Failed to write JSON value for tensor type: {_numpy_dtype_name(array.dtype)}",
            expected="float, double, int8/16/32/64, uint8/32/64, bool or string outputs",
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
        InvalidArgument: No outputs, row format with a scalar output, or
            outputs whose batch sizes differ.
    """
    names = sorted(outputs)
    if not names:
        raise InvalidArgument(
            message(
                "Cannot convert empty tensor map to JSON",
                expected="at least one output tensor",
                received="a signature call that returned no outputs",
                fix="Export the signature with at least one output.",
            )
        )
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
        first = names[0]
        name = next(n for n in names if sizes[n] != sizes[first])
        raise InvalidArgument(
            message(
                f"Tensor name: {name} has inconsistent batch size: {sizes[name]} expecting: {sizes[first]}",
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
    if (
        check_dtype
        and dtype != spec.datatype_enum
        and not (tf.dtypes.as_dtype(dtype).is_integer and spec.dtype.is_floating)
    ):
        raise _dtype_error(
            signature,
            spec.alias,
            _cpp_dtype_name(dtype),
            received=f"a TensorProto of dtype {_cpp_dtype_name(dtype)} for {spec.alias!r}",
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
    _check_aliases(signature, protos.keys() if protos.__class__ is dict else set(protos), model)
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
