"""Measures training speed while `fit` runs, and says when input is the bottleneck.

`PerformanceMonitor` is a Keras callback. Figures are steady state: from
the end of the first execution (tracing, XLA compilation and the first
filling of the input cache done) to the end of the last one. The input-wait
fraction comes from the in-graph `StepTimer`: time blocked in
`next(iterator)` over step time.

Example:
    >>> monitor = PerformanceMonitor(global_batch=256, timer=timer)
    >>> model.fit(..., callbacks=[monitor])
    >>> monitor.report()["examples_per_second"]
"""

from __future__ import annotations

import time
from typing import Any, Optional

import tensorflow as tf

from components.trainer.monitoring.input_wait import INPUT_WAIT_WARNING, input_wait_is_actionable
from components.trainer.monitoring.prometheus import MetricsExporter
from components.trainer.training.trainer_model import StepTimer

__all__ = ["PerformanceMonitor", "INPUT_WAIT_WARNING", "input_bound_advice"]


def input_bound_advice(
    fraction: float,
    materialized: bool,
    cached: bool,
    mean_step_seconds: Optional[float] = None,
    on_accelerator: Optional[bool] = None,
) -> Optional[str]:
    """The warning to log when more than 10% of step time waits for input and that is actionable, else None.

    Args:
        fraction: time blocked on input over step time.
        materialized: whether training reads materialized (transformed) examples.
        cached: whether the training split is cached in memory.
        mean_step_seconds: the mean step time; with `on_accelerator`, it decides whether the wait is
            actionable (see `input_wait_is_actionable`). Both None: only the share is looked at.
        on_accelerator: whether training ran on a GPU/TPU.

    Returns:
        The advice, or None.
    """
    if fraction <= INPUT_WAIT_WARNING:
        return None
    if (mean_step_seconds is not None or on_accelerator is not None) and not input_wait_is_actionable(
        fraction, mean_step_seconds, bool(on_accelerator)
    ):
        return None
    fixes = []
    if not cached:
        fixes.append("raise `training.cache_budget_mb` so the split is cached in memory")
        if not materialized:
            fixes.append("set `transform.materialize: true` so the Transform graph does not run on every batch")
    fixes.append("raise `training.batch_size` or `training.steps_per_execution`")
    fixes.append("give the trainer more CPU cores for tf.data")
    return (
        f"the training step waited for input {fraction:.0%} of the time (more than {INPUT_WAIT_WARNING:.0%}): "
        f"the accelerator is starved. Likely fix: {'; or '.join(fixes)}."
    )


class PerformanceMonitor(tf.keras.callbacks.Callback):
    """Times executions of the train function and feeds the metrics exporter.

    Args:
      global_batch: examples per optimizer step, all replicas together.
      timer: the model's `StepTimer` (None: input wait not measured).
      exporter: where step, loss and examples/sec go (None: nowhere).
    """

    def __init__(
        self, global_batch: int, timer: Optional[StepTimer] = None, exporter: Optional[MetricsExporter] = None
    ):
        super().__init__()
        self.global_batch = global_batch
        self.timer = timer
        self.exporter = exporter
        self.resumed_from_step = 0
        self.first_loss: Optional[float] = None
        self._started = self._warm_time = self._last_time = 0.0
        self._warm_step = self._last_step = 0
        self._warm_timer: dict[str, float] = {}

    def _step(self) -> int:
        return int(self.model.optimizer.iterations.numpy())

    def on_train_begin(self, logs=None):
        # After BackupAndRestore (listed before this callback) restored a checkpoint.
        self.resumed_from_step = self._step()
        self._started = self._last_time = time.perf_counter()
        self._last_step = self.resumed_from_step
        self._warm_time = 0.0

    def on_train_batch_end(self, batch, logs=None):
        now, step = time.perf_counter(), self._step()
        if not self._warm_time:
            self._warm_time, self._warm_step = now, step
            loss = (logs or {}).get("loss")
            # The mean loss of the first execution: a warm start shows here as a lower start.
            self.first_loss = None if loss is None else round(float(loss), 6)
            self._warm_timer = self.timer.totals() if self.timer is not None else {}
        rate = (step - self._last_step) * self.global_batch / max(now - self._last_time, 1e-9)
        self._last_time, self._last_step = now, step
        if self.exporter is not None:
            loss = (logs or {}).get("loss")
            self.exporter.update(step, None if loss is None else float(loss), rate)

    def report(self) -> dict[str, Any]:
        """Steady-state throughput, mean step time and input-wait fraction of the last `fit`."""
        steps = self._last_step - self._warm_step
        seconds = self._last_time - self._warm_time
        warm_timer = self._warm_timer
        if steps <= 0 or seconds <= 0:  # a single execution: count it all.
            steps, seconds = self._last_step - self.resumed_from_step, self._last_time - self._started
            warm_timer = {}
        result: dict[str, Any] = {
            "examples_per_second": round(steps * self.global_batch / seconds, 1) if seconds > 0 else None,
            "mean_step_seconds": round(seconds / steps, 6) if steps > 0 else None,
            "input_wait_fraction": None,
            "first_loss": self.first_loss,
        }
        if self.timer is not None:
            totals = self.timer.totals()
            step_seconds = totals["step_seconds"] - warm_timer.get("step_seconds", 0.0)
            input_seconds = totals["input_seconds"] - warm_timer.get("input_seconds", 0.0)
            if step_seconds > 0:
                result["input_wait_fraction"] = round(input_seconds / step_seconds, 4)
        return result
