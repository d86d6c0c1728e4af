"""Accelerator memory per training step, estimated before training starts (the usual out-of-memory trap).

One training step holds, on each replica's device:
- weights: every model variable at its own dtype (float32 under mixed
  precision too), plus the half-precision copies a mixed policy casts them to;
- optimizer slots: per trainable weight, Adam 2 (first and second moment),
  RMSprop and Adagrad 1, SGD 0 (no momentum), as `float32` like the weights;
- gradients: one per trainable weight (float32), and one more accumulator per
  trainable weight with `gradient_accumulation_steps` > 1;
- activations: every layer's output (in the layer graph of a functional model,
  nested models such as a Keras Applications backbone included) x batch x its
  dtype's size, all kept for the backward pass. A `MultiHeadAttention` layer
  adds its query/key/value projections and its [heads, queries, keys]
  attention scores and probabilities (the sequence-length-squared term).

It is an approximation, meant to be right within a factor of about 1.5, not
to the byte: views (`Reshape`, `Flatten`) are not counted; XLA and cuDNN may
fuse layers (less) or need workspace (more); the CUDA context (a few hundred
MiB) is outside it; a subclassed model without a layer graph has no
activation figure. "Fits" therefore leaves 10% of the device's memory free.
Against the peak TensorFlow's allocator reports for two Adam steps (on the
CPU with `TF_CPU_ALLOCATOR_USE_BFC=true`, which counts tensors as the GPU
allocator does), the estimate is a little above the peak for the Keras
applications: on the safe side.

Example:
    >>> model = tf.keras.applications.MobileNetV2(weights=None, input_shape=(96, 96, 3), classes=10)
    >>> estimate(model, batch_size=64).largest_batch(16 * 2**30)
"""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
from collections.abc import Iterator, Sequence
from typing import Optional

import tensorflow as tf
from absl import logging

from compat import keras as compat_keras
from components.trainer.devices.gpu_monitor import GpuMonitor, nvml_indices

__all__ = [
    "MemoryEstimate",
    "estimate",
    "activation_bytes_per_example",
    "device_memory",
    "describe",
    "log_estimate",
    "OPTIMIZER_SLOTS",
    "USABLE_FRACTION",
]

OPTIMIZER_SLOTS = {"adam": 2, "rmsprop": 1, "adagrad": 1, "sgd": 0}
USABLE_FRACTION = 0.9  # of the device's memory: the rest is left for the CUDA context, cuDNN workspace, fragmentation
_VIEWS = (tf.keras.layers.Reshape, tf.keras.layers.Flatten)


@dataclasses.dataclass(frozen=True)
class MemoryEstimate:
    """Bytes one training step holds on one replica's device.

    Attributes:
      batch_size: the per-replica batch the estimate is for.
      weights: model variables plus mixed-precision compute copies.
      optimizer: optimizer slots.
      gradients: gradients (and the gradient accumulator).
      activations_per_example: activations of one example; None when the model
        has no layer graph to read them from (a subclassed model).
    """

    batch_size: int
    weights: int
    optimizer: int
    gradients: int
    activations_per_example: Optional[int]

    @property
    def fixed(self) -> int:
        """Bytes that do not grow with the batch."""
        return self.weights + self.optimizer + self.gradients

    def activations(self, batch_size: Optional[int] = None) -> int:
        """Activation bytes at `batch_size` (default: the estimate's own); 0 when unknown."""
        return (self.activations_per_example or 0) * (self.batch_size if batch_size is None else batch_size)

    def total(self, batch_size: Optional[int] = None) -> int:
        """All bytes of one step at `batch_size` (default: the estimate's own)."""
        return self.fixed + self.activations(batch_size)

    def largest_batch(self, memory_bytes: int, usable_fraction: float = USABLE_FRACTION) -> Optional[int]:
        """The largest per-replica batch whose step fits in `usable_fraction` of `memory_bytes`.

        Args:
          memory_bytes: the device's memory.
          usable_fraction: the part of it training may use.

        Returns:
          0 when not even the weights and optimizer fit; None when the activations
          are unknown (no bound can be given).
        """
        if not self.activations_per_example:
            return None
        room = int(memory_bytes * usable_fraction) - self.fixed
        return max(room // self.activations_per_example, 0)


def _element_bytes(tensor) -> int:
    dtype = tf.as_dtype(tensor.dtype)
    if not (dtype.is_floating or dtype.is_integer or dtype.is_bool):
        return 0  # strings and resources: not activations
    count = 1
    for dim in tensor.shape[1:]:
        count *= dim if dim is not None else 1  # an unknown length counts as 1
    return count * dtype.size


def _attention_bytes(layer: tf.keras.layers.MultiHeadAttention) -> int:
    """Per example: q/k/v projections, attention scores and probabilities, and the per-head context."""
    query, value, heads, key_dim, value_dim = compat_keras.attention_sizes(layer)
    if query is None or value is None:
        return 0
    queries, keys = query[1] or 1, value[1] or 1
    elements = heads * (queries * key_dim + keys * key_dim + keys * value_dim)  # projections
    elements += 2 * heads * queries * keys  # scores and softmax probabilities
    elements += heads * queries * value_dim  # context before the output projection
    return elements * tf.as_dtype(layer.compute_dtype).size


def _nodes(model: tf.keras.Model) -> Iterator:
    for nodes in compat_keras.nodes_by_depth(model).values():  # the functional model's layer graph
        yield from nodes


def _is_functional(model) -> bool:
    return compat_keras.nodes_by_depth(model) is not None


def _graph_bytes(model: tf.keras.Model, inner: bool) -> int:
    total = 0
    for node in _nodes(model):
        layer = node.layer
        if node.is_input and inner:
            continue  # a nested model's input is the outer model's tensor, counted there
        if _is_functional(layer):
            total += _graph_bytes(layer, inner=True)
            continue
        if not isinstance(layer, _VIEWS):
            total += sum(_element_bytes(t) for t in tf.nest.flatten(node.outputs))
        for sublayer in compat_keras.sublayers(layer):  # attention inside custom blocks too
            if isinstance(sublayer, tf.keras.layers.MultiHeadAttention):
                total += _attention_bytes(sublayer)
    return total


def activation_bytes_per_example(model: tf.keras.Model) -> Optional[int]:
    """Bytes of the activations one example keeps for the backward pass.

    Args:
      model: a functional (or Sequential) Keras model, nested models allowed.

    Returns:
      The sum over the layer graph's outputs of elements x dtype size, with
      attention terms; None for a model without a layer graph.
    """
    if not compat_keras.nodes_by_depth(model):
        return None
    return _graph_bytes(model, inner=False)


def _variable_bytes(variables) -> int:
    return sum(v.shape.num_elements() * v.dtype.size for v in variables)


def estimate(
    model: tf.keras.Model, batch_size: int, optimizer: str = "adam", accumulation_steps: int = 1
) -> MemoryEstimate:
    """Estimates one training step's memory on one replica.

    Args:
      model: the built Keras model, built under the precision policy it trains with.
      batch_size: examples per replica per step (`training.batch_size`).
      optimizer: `training.optimizer` (adam, sgd, rmsprop, adagrad).
      accumulation_steps: `training.gradient_accumulation_steps` (> 1 adds an accumulator).

    Returns:
      The `MemoryEstimate`.

    Raises:
      ValueError: `batch_size` is below 1 or `optimizer` is unknown.
    """
    if batch_size < 1:
        raise ValueError(f"`batch_size` must be at least 1. Received: batch_size={batch_size}.")
    if optimizer not in OPTIMIZER_SLOTS:
        raise ValueError(
            f"unknown optimizer. Expected one of {', '.join(OPTIMIZER_SLOTS)}. Received: optimizer={optimizer!r}."
        )
    trainable = _variable_bytes(model.trainable_weights)
    weights = _variable_bytes(model.weights)
    compute = tf.as_dtype(model.compute_dtype)
    if compute != tf.float32 and compute.is_floating:  # mixed policy: each step casts the weights
        weights += sum(v.shape.num_elements() for v in model.trainable_weights) * compute.size
    gradients = trainable * (2 if accumulation_steps > 1 else 1)
    return MemoryEstimate(
        batch_size=batch_size,
        weights=weights,
        optimizer=trainable * OPTIMIZER_SLOTS[optimizer],
        gradients=gradients,
        activations_per_example=activation_bytes_per_example(model),
    )


def _nvidia_smi_totals(indices: Sequence[int]) -> list[int]:
    if shutil.which("nvidia-smi") is None:
        return []
    query = ["nvidia-smi", "--query-gpu=memory.total", "--format=csv,noheader,nounits"]
    try:
        result = subprocess.run(query, capture_output=True, text=True, timeout=10, check=True)
    except (OSError, subprocess.SubprocessError):
        return []
    mebibytes = [int(line) for line in result.stdout.split() if line.strip().isdigit()]
    return [mebibytes[i] * 2**20 for i in indices if i < len(mebibytes)]


def device_memory(gpus: Sequence[int]) -> Optional[tuple[int, int]]:
    """(TensorFlow GPU index, total bytes) of the selected GPU with the least memory; None on CPU or unknown.

    Reads NVML (`pip install nvidia-ml-py`) when installed, else `nvidia-smi`.
    """
    if not gpus:
        return None
    monitor = GpuMonitor(gpus)
    try:
        totals = [(sample.gpu, sample.memory_total_bytes) for sample in monitor.sample()]
    finally:
        monitor.close()
    if not totals:
        totals = list(zip(gpus, _nvidia_smi_totals(nvml_indices(gpus))))
    return min(totals, key=lambda pair: pair[1]) if totals else None


def _size(count: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if count >= scale:
            return f"{count / scale:.1f} {unit}"
    return f"{count} B"


def _round_batch(batch: int) -> int:
    return batch // 8 * 8 if batch >= 8 else batch  # multiples of 8 suit Tensor Cores


def describe(memory: MemoryEstimate, device: Optional[tuple[int, int]], on_gpu: bool = False) -> tuple[str, bool]:
    """The log line for an estimate on a device.

    Args:
      memory: the estimate.
      device: (GPU index, total bytes), or None on CPU / when unknown.
      on_gpu: GPUs are selected (with `device` None: their memory could not be read).

    Returns:
      (message, fits): `fits` is False when the step is expected not to fit.
    """
    parts = (
        f"weights {_size(memory.weights)}, optimizer {_size(memory.optimizer)}, "
        f"gradients {_size(memory.gradients)}, "
        + (
            f"activations {_size(memory.activations())}"
            if memory.activations_per_example is not None
            else "activations unknown: the model has no layer graph"
        )
    )
    head = (
        f"Trainer: about {_size(memory.total())} of accelerator memory per step at batch {memory.batch_size} ({parts})"
    )
    if device is None and on_gpu:
        return f"{head}; the GPU's memory could not be read (pip install nvidia-ml-py) to say which batch fits.", True
    if device is None:
        return f"{head}; no accelerator: training runs on the CPU, in host memory.", True
    index, total = device
    largest = memory.largest_batch(total)
    if largest is None:
        return f"{head}; GPU {index} has {_size(total)}.", memory.fixed <= total * USABLE_FRACTION
    if largest >= memory.batch_size:
        return f"{head}; GPU {index} has {_size(total)}: batch {_round_batch(largest)} would fit.", True
    if largest == 0:
        fix = (
            "use a smaller model (e.g. `backbone: MobileNetV2`, fewer `hidden_units`) or an optimizer with fewer slots"
        )
        fit = "not even batch 1 fits: the weights, optimizer and gradients alone take " + _size(memory.fixed)
    else:
        fix = (
            f"set `training.batch_size: {_round_batch(largest)}` (with `gradient_accumulation_steps` to keep the "
            "global batch), `mixed_precision: float16`, or a smaller `image_size` / `sequence_length`"
        )
        fit = f"batch {_round_batch(largest)} would fit"
    return (
        f"{head}; GPU {index} has {_size(total)} ({_size(int(total * USABLE_FRACTION))} usable): training will "
        f"likely run out of memory (ResourceExhaustedError). Expected at most {_size(int(total * USABLE_FRACTION))} "
        f"per step. Received: {_size(memory.total())} at batch {memory.batch_size}; {fit}. Fix: {fix}.",
        False,
    )


def log_estimate(
    model: tf.keras.Model, batch_size: int, optimizer: str, accumulation_steps: int, gpus: Sequence[int]
) -> Optional[MemoryEstimate]:
    """Logs the estimate (a warning when it does not fit) before training starts; never fails the run.

    Args:
      model: the built model.
      batch_size: `training.batch_size` (per replica).
      optimizer: `training.optimizer`.
      accumulation_steps: `training.gradient_accumulation_steps`.
      gpus: the selected GPUs' TensorFlow indices (empty on CPU).

    Returns:
      The estimate, or None when it could not be made (the reason is logged).
    """
    try:
        memory = estimate(model, batch_size, optimizer, accumulation_steps)
    except (ValueError, AttributeError, TypeError) as error:  # advisory: a user model we cannot read
        logging.warning("Trainer: no accelerator memory estimate (%s).", error)
        return None
    message, fits = describe(memory, device_memory(gpus), on_gpu=bool(gpus))
    (logging.info if fits else logging.warning)(message)
    return memory
