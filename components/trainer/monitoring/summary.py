"""The training summary: `<model_run_dir>/training_summary.json` and the Model artifact's properties.

Keys: `train_steps`, `epochs` and `train_examples` (with `training.epochs`;
else None), `seconds` (wall time of `fit`), `examples_per_second`
(steady state, all replicas), `mean_step_seconds`, `input_wait_fraction`,
`first_loss` (the mean loss of the first execution of the train step),
`strategy`, `replicas`, `workers`, `global_batch`, `learning_rate` (the
optimizer's, after `scale_learning_rate`), `gradient_accumulation_steps`,
`precision_policy`, `xla`,
`resumed_from_step` (0 unless restored from a checkpoint), `optimizer_steps`,
`peak_gpu_memory_bytes` (None on CPU), `accelerator_hours` (GPUs x wall hours
of the Trainer; 0 on CPU), `final` (last value of each Keras metric).
With `training.warm_start`: `warm_started_from` (the base model's path, or
None) and, when it started cold, `cold_start` (why); `warm_start_steps` when
it started warm and trained those steps instead of `train_steps`.
"""

from __future__ import annotations

import json
import math
import os
from typing import Any, Optional

import tensorflow as tf
from absl import logging

from components.trainer.devices.strategy import StrategyChoice
from components.trainer.monitoring.model_artifact import record_on_model_artifact
from components.trainer.monitoring.performance import PerformanceMonitor
from components.trainer.options import TrainingOptions

__all__ = ["training_summary", "write_summary", "profile_batches", "accelerator_hours", "peak_gpu_memory"]

SUMMARY_FILE = "training_summary.json"


def accelerator_hours(gpus_per_worker: int, workers: int, wall_seconds: float) -> float:
    """GPUs held x wall hours (0 on CPU).

    Example:
        >>> accelerator_hours(4, 2, 1800.0)
        4.0
    """
    return round(gpus_per_worker * workers * wall_seconds / 3600.0, 6)


def peak_gpu_memory(gpu_count: int) -> Optional[int]:
    """The highest peak memory (bytes) over this worker's GPUs; None without GPUs."""
    peaks = []
    for index in range(gpu_count):
        try:
            peaks.append(tf.config.experimental.get_memory_info(f"GPU:{index}")["peak"])
        except (ValueError, RuntimeError):
            continue
    return max(peaks) if peaks else None


def profile_batches(profile_steps, steps_per_execution: int) -> tuple[int, int] | int:
    """TensorBoard's `profile_batch` (it counts executions) for 1-based steps [first, last]; 0: off.

    Example:
        >>> profile_batches((101, 150), 50)
        (3, 3)
    """
    if not profile_steps:
        return 0
    first, last = profile_steps
    return math.ceil(first / steps_per_execution), math.ceil(last / steps_per_execution)


def training_summary(
    fn_args,
    options: TrainingOptions,
    choice: StrategyChoice,
    policy: str,
    monitor: PerformanceMonitor,
    history: tf.keras.callbacks.History,
    seconds: float,
    wall_seconds: float,
    workers: int,
    optimizer_steps: int,
    learning_rate: float,
    train_steps: int | None = None,
    epochs: int | None = None,
    train_examples: int | None = None,
) -> dict[str, Any]:
    """Everything the summary file records, as plain JSON-able values.

    `train_steps` defaults to the TFX arg; with `training.epochs`, the steps
    those epochs took, with `epochs` and the `train_examples` counted.
    """
    speed = monitor.report()
    return {
        "train_steps": train_steps if train_steps is not None else fn_args.train_steps,
        "epochs": epochs,
        "train_examples": train_examples,
        "seconds": round(seconds, 3),
        **speed,
        "strategy": choice.kind,
        "replicas": choice.replicas,
        "workers": workers,
        "global_batch": options.global_batch(choice.replicas),
        "learning_rate": float(f"{learning_rate:.7g}"),  # float32 -> the rate as written
        "gradient_accumulation_steps": options.gradient_accumulation_steps,
        "precision_policy": policy,
        "xla": options.xla,
        "resumed_from_step": monitor.resumed_from_step,
        "optimizer_steps": optimizer_steps,
        "peak_gpu_memory_bytes": peak_gpu_memory(len(choice.gpus)),
        "accelerator_hours": accelerator_hours(len(choice.gpus), workers, wall_seconds),
        "final": {k: float(v[-1]) for k, v in history.history.items()},
    }


def write_summary(fn_args, summary: dict[str, Any]) -> None:
    """Writes the JSON file and sets the scalar entries on the TFX Model artifact, when reachable."""
    tf.io.gfile.makedirs(fn_args.model_run_dir)
    with tf.io.gfile.GFile(os.path.join(fn_args.model_run_dir, SUMMARY_FILE), "w") as handle:
        handle.write(json.dumps(summary, indent=2))
    scalars = {f"training_{k}": v for k, v in summary.items() if not isinstance(v, dict)}
    if not record_on_model_artifact(fn_args.serving_model_dir, scalars):
        logging.info("No TFX Model artifact in the call stack: the summary is in %s only.", SUMMARY_FILE)
