"""A REST request body to named input arrays: row format (`instances`, one item per example) and
columnar format (`inputs`, one value per named input), as TensorFlow Serving's REST API reads them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from serving.errors import InvalidArgument, message
from serving.server.model.servable import Signature
from serving.server.wire.json_values import json_shape, json_to_array, nesting_problem
from serving.server.wire.tensor_checks import (
    JsonFormat,
    is_b64,
    json_type_name,
    json_value_text,
    named_keys,
    shape_text,
    short_repr,
)

__all__ = ["json_inputs"]


def _instance_problem(items: list, key: str | None) -> str | None:
    """Why the items of 'instances' do not stack into one tensor, in TensorFlow Serving's words
    (`FillTensorMapFromInstancesList`, `AddInstanceItem`): each item must be rectangular and of
    the first item's size and shape. `key` names the input when items are objects' values."""
    first: tuple[int, ...] | None = None
    for index, item in enumerate(items):
        if key is None and isinstance(item, dict) and not is_b64(item):
            return f"Expecting value/list but got object at item {index} of input list"
        shape = json_shape(item)
        problem = nesting_problem(item, shape)
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
            json_value_text(body)
            + "Not formatted correctly expecting only one of 'inputs' or 'instances' keys to exist"
            if has_rows
            else "Missing 'inputs' or 'instances' key"
        )
        raise InvalidArgument(
            message(
                problem,
                expected='either "instances" (row format) or "inputs" (columnar format)',
                received=f"keys {named_keys(body)}",
                fix='Send {"instances": [...]} or {"inputs": {...}}.',
            )
        )
    if has_rows:
        return _row_inputs(body, signature, names, may_contain_bools), JsonFormat.ROW
    return _columnar_inputs(body[JsonFormat.COLUMNAR], signature, names, may_contain_bools), JsonFormat.COLUMNAR


def _row_inputs(body: dict, signature: Signature, names: list[str], bools: bool) -> dict[str, np.ndarray]:
    instances = body[JsonFormat.ROW]
    if not isinstance(instances, list):
        raise InvalidArgument(
            message(
                json_value_text(body) + "Expecting 'instances' to be an list/array",
                expected="a JSON list, one item per example",
                received=f"a JSON {json_type_name(instances)}",
                fix='Wrap the examples in a list: {"instances": [...]}.',
            )
        )
    if not instances:
        raise InvalidArgument(
            message(
                json_value_text(body) + "No values in 'instances' array",
                expected="at least one example",
                received="[]",
                fix="Send one or more examples.",
            )
        )
    as_objects = isinstance(instances[0], dict) and not is_b64(instances[0])
    if not as_objects:
        if len(names) > 1:
            raise InvalidArgument(
                message(
                    "instances is a plain list, but expecting list of objects as multiple input tensors "
                    "required as per tensorinfo_map",
                    expected=f"objects with keys {names}",
                    received=f"item 0 = {short_repr(instances[0])}",
                    fix='Send {"instances": [{"' + '": ..., "'.join(names) + '": ...}]}.',
                )
            )
        alias = names[0]
        try:
            return {alias: json_to_array(instances, signature.inputs[alias], "'instances' list", bools)}
        except InvalidArgument as err:  # say which item does not fit, as TensorFlow Serving does
            raise _instances_error(instances, None, names) or err from None
    columns: dict[str, list] = {name: [] for name in names}
    for index, item in enumerate(instances):
        if not isinstance(item, dict) or is_b64(item):
            raise InvalidArgument(
                message(
                    f"Expecting object but got list at item {index} of input list",
                    expected=f"every item an object with keys {names}",
                    received=short_repr(item),
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
                        received=f"keys {named_keys(item)}",
                        fix="Use the input names of GET /v1/models/<name>/metadata.",
                    )
                )
            raise InvalidArgument(
                message(
                    f"Failed to process element: {index} of 'instances' list. JSON object: {short_repr(item)} "
                    f"keys must be equal to: {','.join(names)}",
                    expected=f"keys {names}",
                    received=f"keys {named_keys(item)}",
                    fix="Give every example one value per signature input.",
                )
            )
        for name in names:
            columns[name].append(item[name])
    inputs = {}
    for name, values in columns.items():
        try:
            inputs[name] = json_to_array(values, signature.inputs[name], f"key {name!r} of 'instances'", bools)
        except InvalidArgument as err:
            raise _instances_error(values, name, names) or err from None
    return inputs


def _columnar_inputs(inputs: Any, signature: Signature, names: list[str], bools: bool) -> dict[str, np.ndarray]:
    if not isinstance(inputs, dict) or is_b64(inputs):
        if len(names) > 1:
            raise InvalidArgument(
                message(
                    "inputs is a plain value/list, but expecting an object as multiple input tensors "
                    "required as per tensorinfo_map",
                    expected=f"an object with keys {names}",
                    received=short_repr(inputs),
                    fix='Send {"inputs": {"' + '": [...], "'.join(names) + '": [...]}}.',
                )
            )
        alias = names[0]
        return {alias: json_to_array(inputs, signature.inputs[alias], "'inputs'", bools)}
    result = {}
    for name in names:
        if name not in inputs:
            raise InvalidArgument(
                message(
                    f"Missing named input: {name} in 'inputs' object",
                    expected=f"keys {names}",
                    received=f"keys {named_keys(inputs)}",
                    fix="Add the missing input.",
                )
            )
        result[name] = json_to_array(inputs[name], signature.inputs[name], f"key {name!r} of 'inputs'", bools)
    return result
