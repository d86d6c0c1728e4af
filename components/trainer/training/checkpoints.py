"""Fault tolerance: a killed training resumes from its last checkpoint.

Keras's `BackupAndRestore` writes the model and optimizer state (so
`optimizer.iterations`, the step counter, too) to
`<model_run_dir>/checkpoints` every N steps, restores it when `fit` starts
again, and deletes it when training completes. Under
`MultiWorkerMirroredStrategy` only the chief keeps its checkpoint; other
workers write to temporary directories (Keras's own multi-worker pattern).

Callbacks see one call per execution of `steps_per_execution` steps, so a
checkpoint is written every `max(1, every_steps // steps_per_execution)`
executions: `checkpoint_interval` says how many steps that is.

Resuming needs the same `model_run_dir`: a restarted process or pod of the
same run. A new TFX execution of the Trainer gets new artifact directories,
so it starts over.
"""

from __future__ import annotations

import os
from typing import Optional

import tensorflow as tf

__all__ = ["checkpoint_dir", "checkpoint_interval", "backup_callback", "remove_empty_checkpoint_dirs"]


def checkpoint_dir(model_run_dir: str) -> str:
    """Where the training state of a run is backed up."""
    return os.path.join(model_run_dir, "checkpoints")


def checkpoint_interval(every_steps: int, steps_per_execution: int) -> tuple[int, int]:
    """Returns (executions between checkpoints, steps between checkpoints).

    Example:
        >>> checkpoint_interval(500, 50)
        (10, 500)
    """
    executions = max(1, every_steps // steps_per_execution)
    return executions, executions * steps_per_execution


def backup_callback(
    model_run_dir: str, every_steps: Optional[int], steps_per_execution: int
) -> Optional[tf.keras.callbacks.BackupAndRestore]:
    """The `BackupAndRestore` callback for `training.checkpoint_every_steps` (None: off)."""
    if every_steps is None:
        return None
    executions, _ = checkpoint_interval(every_steps, steps_per_execution)
    return tf.keras.callbacks.BackupAndRestore(checkpoint_dir(model_run_dir), save_freq=executions)


def remove_empty_checkpoint_dirs(model_run_dir: str) -> None:
    """Removes the directories a completed run left empty (other workers' `workertemp_<i>`)."""
    root = checkpoint_dir(model_run_dir)
    if not os.path.isdir(root):
        return
    for directory, _, _ in sorted(os.walk(root), key=lambda entry: -len(entry[0])):
        try:
            os.rmdir(directory)  # only succeeds when empty
        except OSError:
            continue
