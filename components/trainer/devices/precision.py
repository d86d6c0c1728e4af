"""Mixed precision: which Keras dtype policy the model is built under.

`training.mixed_precision`:
- `auto`: `mixed_float16` when every selected GPU has compute capability 7.0
  or more (Tensor Cores: V100, T4, A100, L4, H100...), else `float32`
  (CPU, older GPUs).
- `off`: `float32`.
- `float16`: `mixed_float16`; Keras wraps the optimizer in a
  `LossScaleOptimizer` (dynamic loss scaling) at `compile`.
- `bfloat16`: `mixed_bfloat16` (no loss scaling needed; Ampere GPUs, TPUs,
  recent CPUs).

The model's output layer is always float32 (`model_builder` builds the head
with `dtype="float32"`), so the loss and the exported predictions stay float32.

Example:
    >>> choose_policy("auto", [(8, 0)])
    'mixed_float16'
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Optional

import tensorflow as tf

__all__ = ["PRECISIONS", "choose_policy", "gpu_compute_capabilities", "policy_scope", "MIN_FLOAT16_CAPABILITY"]

PRECISIONS = ("auto", "off", "float16", "bfloat16")
MIN_FLOAT16_CAPABILITY = (7, 0)
_POLICIES = {"off": "float32", "float16": "mixed_float16", "bfloat16": "mixed_bfloat16"}


def choose_policy(requested: str, compute_capabilities: Sequence[Optional[tuple[int, int]]]) -> str:
    """The Keras policy name for `training.mixed_precision` on the selected GPUs.

    Args:
      requested: one of `PRECISIONS`.
      compute_capabilities: one (major, minor) per selected GPU (None when
        unknown); empty on CPU.

    Returns:
      `float32`, `mixed_float16` or `mixed_bfloat16`.

    Raises:
      ValueError: `requested` is unknown.
    """
    if requested not in PRECISIONS:
        raise ValueError(
            f"unknown mixed precision mode. Expected one of {', '.join(PRECISIONS)}. "
            f"Received: mixed_precision={requested!r}. Fix `training.mixed_precision`."
        )
    if requested != "auto":
        return _POLICIES[requested]
    fast = compute_capabilities and all(c is not None and c >= MIN_FLOAT16_CAPABILITY for c in compute_capabilities)
    return "mixed_float16" if fast else "float32"


def gpu_compute_capabilities(gpus: Sequence[int]) -> list[Optional[tuple[int, int]]]:
    """(major, minor) of each selected GPU, from TensorFlow's device details."""
    physical = tf.config.list_physical_devices("GPU")
    result = []
    for index in gpus:
        details = tf.config.experimental.get_device_details(physical[index]) if index < len(physical) else {}
        capability = details.get("compute_capability")
        result.append(tuple(capability) if capability else None)
    return result


@contextlib.contextmanager
def policy_scope(policy: str) -> Iterator[None]:
    """Builds layers under `policy`, then restores the global policy.

    The policy is process-wide in Keras; restoring it keeps it from leaking
    into what runs next in the same process (the Evaluator, other tests).
    """
    previous = tf.keras.mixed_precision.global_policy()
    tf.keras.mixed_precision.set_global_policy(policy)
    try:
        yield
    finally:
        tf.keras.mixed_precision.set_global_policy(previous)
