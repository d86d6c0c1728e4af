"""Which requests can share a batch, and padding of variable-length inputs to the batch's largest.

TensorFlow Serving's rules (`batching_util.cc`, `BatchingSession`): inputs with different first
dimensions, scalars and empty inputs are refused with its words; with `pad_variable_length_inputs`
tensors of rank 1 to 6 are padded at the end of dimensions 1+ with their own first value.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from serving.errors import InvalidArgument, message

__all__ = ["check_batchable", "pad_to_largest", "unbatchable"]

# TensorFlow Serving pads tensors of rank 1 to 6 only (batching_util.cc).
_MAX_PADDED_RANK = 6


def unbatchable(problem: str, inputs: Mapping[str, np.ndarray]) -> InvalidArgument:
    return InvalidArgument(
        message(
            problem,
            expected="inputs with a batch dimension, of one size across the inputs (batching is on)",
            received=", ".join(f"{alias}: shape {list(value.shape)}" for alias, value in sorted(inputs.items()))
            or "no inputs",
            fix="Send every input with the same number of rows as its first dimension.",
        )
    )


def check_batchable(inputs: Mapping[str, np.ndarray]) -> None:
    """TF Serving's `ComputeTensorBatchSize` (batching/batching_util.h), which its batching
    session runs on every request before queueing it: INVALID_ARGUMENT otherwise."""
    if not inputs:
        raise unbatchable("Batching Run() must have at least one input tensor", inputs)
    sizes = set()
    for value in inputs.values():
        if not value.ndim:
            raise unbatchable("Batching Run() input tensors must have at least one dimension", inputs)
        sizes.add(value.shape[0])
        if len(sizes) > 1:
            raise unbatchable("Batching Run() input tensors must have equal 0th-dimension size", inputs)


def pad_to_largest(alias: str, parts: list[np.ndarray]) -> list[np.ndarray]:
    """Pads each request's tensor at the end of dimensions 1+ to the largest
    size in the batch, with that tensor's own first value (TensorFlow
    Serving's `pad_variable_length_inputs`, batching_util.cc).

    Raises:
        InvalidArgument: A tensor to pad is empty, or its rank is over 6
            (TensorFlow Serving's words first).
    """
    largest = np.max([part.shape for part in parts], axis=0)
    padded = []
    for part in parts:
        missing = largest[1:] - part.shape[1:]
        if not missing.any():
            padded.append(part)
            continue
        if part.ndim > _MAX_PADDED_RANK:
            raise InvalidArgument(
                message(
                    "Only tensors with rank from 1 to 6 can be padded.",
                    expected=f"input {alias!r} of rank 1 to {_MAX_PADDED_RANK} to pad it to the batch's shape",
                    received=f"rank {part.ndim}, shape {list(part.shape)}",
                    fix="Send inputs of equal shapes, or serve this model without pad_variable_length_inputs.",
                )
            )
        if part.size == 0:
            raise InvalidArgument(
                message(
                    "Got empty tensor in batch of non-empty tensors.",
                    expected=f"input {alias!r} with values to pad it with (its first value)",
                    received=f"shape {list(part.shape)}",
                    fix="Send at least one value, or inputs of the batch's shape.",
                )
            )
        widths = [(0, 0), *((0, int(n)) for n in missing)]
        padded.append(np.pad(part, widths, constant_values=part.flat[0]))
    return padded
