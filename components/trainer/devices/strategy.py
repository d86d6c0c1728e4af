"""Which `tf.distribute` strategy trains, on which devices.

`training.strategy`:
- `auto`: `multi_worker` when TF_CONFIG names more than one task (chief and
  workers), `mirrored` when more than one GPU is selected, else `one_device`.
- `one_device`: the first selected GPU, or the CPU. This is TensorFlow's
  default strategy (what a plain `model.fit` uses) when that device is the
  default one, else a one-device `MirroredStrategy` (Keras's
  `BackupAndRestore` does not support `OneDeviceStrategy`).
- `mirrored`: every selected GPU of this machine (synchronous all-reduce);
  without GPUs, every logical CPU device (one, unless configured otherwise).
- `multi_worker`: `MultiWorkerMirroredStrategy` over the TF_CONFIG cluster,
  each worker using its selected GPUs. It must be created before TensorFlow
  runs anything else in the process, so run each worker as its own process
  (`python -m components.trainer.worker`), not inside the local pipeline runner.

`training.gpus` lists GPU indices among the GPUs TensorFlow sees (after
CUDA_VISIBLE_DEVICES); null means all of them.

Example:
    >>> choose_strategy("auto", task_count=1, gpu_count=4)
    'mirrored'
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Mapping, Sequence
from typing import Any, Optional

import tensorflow as tf
from absl import logging

from compat import tensorflow as compat_tf

__all__ = [
    "STRATEGIES",
    "StrategyChoice",
    "choose_strategy",
    "cluster_task_count",
    "is_chief",
    "read_tf_config",
    "select_gpus",
    "configure_gpus",
    "create_strategy",
]

STRATEGIES = ("auto", "one_device", "mirrored", "multi_worker")
_TRAINING_TASKS = ("chief", "master", "worker")


@dataclasses.dataclass(frozen=True)
class StrategyChoice:
    """The strategy that was created and what it runs on."""

    kind: str
    strategy: tf.distribute.Strategy
    gpus: tuple[int, ...]
    is_chief: bool
    task: str

    @property
    def replicas(self) -> int:
        return self.strategy.num_replicas_in_sync


def read_tf_config(environ: Mapping[str, str] = os.environ) -> dict[str, Any]:
    """Parses TF_CONFIG (empty dict when unset).

    Raises:
      ValueError: TF_CONFIG is not JSON.
    """
    text = environ.get("TF_CONFIG") or ""
    if not text.strip():
        return {}
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(
            f"TF_CONFIG is not valid JSON ({error.msg}). Expected "
            '{"cluster": {"worker": ["host:port", ...]}, "task": {"type": "worker", "index": 0}}. '
            f"Received: {text[:200]!r}. Fix or unset TF_CONFIG."
        ) from None


def cluster_task_count(tf_config: Mapping[str, Any]) -> int:
    """How many training tasks (chief, master, worker) the cluster spec names."""
    cluster = tf_config.get("cluster") or {}
    return sum(len(cluster.get(kind) or []) for kind in _TRAINING_TASKS)


def is_chief(tf_config: Mapping[str, Any]) -> bool:
    """The chief writes the model: task `chief`/`master`, or worker 0 when there is no chief."""
    cluster = tf_config.get("cluster") or {}
    task = tf_config.get("task") or {}
    kind, index = task.get("type"), int(task.get("index", 0))
    if not cluster or kind is None:
        return True
    if kind in ("chief", "master"):
        return index == 0
    has_chief = bool(cluster.get("chief") or cluster.get("master"))
    return kind == "worker" and index == 0 and not has_chief


def _task_name(tf_config: Mapping[str, Any]) -> str:
    task = tf_config.get("task") or {}
    return f"{task['type']}_{task.get('index', 0)}" if task.get("type") else "local"


def choose_strategy(requested: str, task_count: int, gpu_count: int) -> str:
    """The strategy kind for a request, a cluster size and a number of selected GPUs.

    Args:
      requested: one of `STRATEGIES`.
      task_count: training tasks in TF_CONFIG (0 or 1: this process alone).
      gpu_count: GPUs selected on this machine.

    Returns:
      `one_device`, `mirrored` or `multi_worker`.

    Raises:
      ValueError: `requested` is unknown.
    """
    if requested not in STRATEGIES:
        raise ValueError(
            f"unknown strategy. Expected one of {', '.join(STRATEGIES)}. Received: strategy={requested!r}. "
            "Fix `training.strategy`."
        )
    if requested != "auto":
        return requested
    if task_count > 1:
        return "multi_worker"
    if gpu_count > 1:
        return "mirrored"
    return "one_device"


def select_gpus(requested: Optional[Sequence[int]], visible: int) -> tuple[int, ...]:
    """The GPU indices to use among `visible` GPUs: all of them when `requested` is None.

    Raises:
      ValueError: an index is not visible, or is listed twice.
    """
    if requested is None:
        return tuple(range(visible))
    wrong = [index for index in requested if not 0 <= index < visible]
    if wrong or len(set(requested)) != len(requested):
        raise ValueError(
            f"`training.gpus` names GPUs this machine does not have (or repeats one). Expected distinct indices "
            f"below {visible} ({visible} visible, after CUDA_VISIBLE_DEVICES). Received: gpus={list(requested)}. "
            "Fix `training.gpus`, or set it to null to use every visible GPU."
        )
    return tuple(requested)


def configure_gpus(requested: Optional[Sequence[int]], memory_growth: bool) -> tuple[int, ...]:
    """Selects GPUs and sets memory growth, if TensorFlow has not initialised them yet.

    Returns:
      The selected GPU indices (into the GPUs TensorFlow sees).
    """
    physical = tf.config.list_physical_devices("GPU")
    selected = select_gpus(requested, len(physical))
    if not physical:
        return selected
    try:
        tf.config.set_visible_devices([physical[i] for i in selected], "GPU")
        for index in selected:
            tf.config.experimental.set_memory_growth(physical[index], memory_growth)
    except RuntimeError:
        # GPUs were initialised earlier in this process (e.g. by Transform in
        # the local runner): the strategy still uses only `selected` devices.
        logging.warning(
            "GPU memory growth could not be set: TensorFlow already initialised its GPUs in this process. "
            "Set TF_FORCE_GPU_ALLOW_GROWTH=%s before starting it to apply `training.gpu_memory_growth`.",
            str(memory_growth).lower(),
        )
    return selected


def _device_names(selected: tuple[int, ...]) -> list[str]:
    if tf.config.get_visible_devices("GPU") and len(tf.config.get_visible_devices("GPU")) == len(selected):
        return [f"/gpu:{i}" for i in range(len(selected))]
    return [f"/gpu:{i}" for i in selected]


def create_strategy(
    requested: str,
    gpus: Optional[Sequence[int]] = None,
    memory_growth: bool = True,
    environ: Mapping[str, str] = os.environ,
) -> StrategyChoice:
    """Chooses and creates the strategy (call before TensorFlow runs anything for `multi_worker`).

    Args:
      requested: `training.strategy`.
      gpus: `training.gpus`.
      memory_growth: `training.gpu_memory_growth`.
      environ: where TF_CONFIG is read.

    Returns:
      The created strategy with its kind, GPUs and chief flag.

    Raises:
      ValueError: bad TF_CONFIG, strategy or GPU list.
      RuntimeError: `multi_worker` requested after TensorFlow started in this process.
    """
    tf_config = read_tf_config(environ)
    selected = configure_gpus(gpus, memory_growth)
    kind = choose_strategy(requested, cluster_task_count(tf_config), len(selected))
    devices = _device_names(selected)
    if kind == "one_device":
        default_device = not devices or devices[0] == "/gpu:0"
        strategy = tf.distribute.get_strategy() if default_device else _mirrored(devices[:1])
    elif kind == "mirrored":
        cpus = [device.name for device in tf.config.list_logical_devices("CPU")]
        strategy = _mirrored(devices or cpus)
    else:
        strategy = _multi_worker()
    return StrategyChoice(kind, strategy, selected, is_chief(tf_config), _task_name(tf_config))


def _mirrored(devices: Sequence[str]) -> tf.distribute.MirroredStrategy:
    """A MirroredStrategy whose collective keys differ from every earlier one in this process.

    Each MirroredStrategy numbers its all-reduce collectives from the same
    base key, and TensorFlow's collective executor remembers instances by
    key: a second strategy in one process (a second `run_fn`, another
    pipeline) then hits "Shape mismatch in the collective instance". Moving
    the base before each one (`compat.tensorflow.separate_collective_keys`)
    is what TensorFlow's own tests do.
    """
    compat_tf.separate_collective_keys()
    return tf.distribute.MirroredStrategy(list(devices))


def _multi_worker() -> tf.distribute.Strategy:
    communication = tf.distribute.experimental.CommunicationOptions(
        implementation=tf.distribute.experimental.CommunicationImplementation.AUTO
    )
    try:
        return tf.distribute.MultiWorkerMirroredStrategy(communication_options=communication)
    except RuntimeError as error:
        raise RuntimeError(
            f"`training.strategy: multi_worker` could not start: {error}. Expected a fresh process per worker "
            "(TensorFlow must not have run anything before). Received: a process where TensorFlow already ran "
            "(the local pipeline runner). Run each worker with `python -m components.trainer.worker FN_ARGS.json` "
            "and TF_CONFIG set."
        ) from error
