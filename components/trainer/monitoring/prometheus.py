"""Training metrics for Prometheus: served on 127.0.0.1 or pushed to a Pushgateway.

Names follow Prometheus' conventions (base units, `_total` counters):

- counters `trainer_steps_total` (the optimizer's step count: a training
  resumed from a checkpoint starts from its step) and `trainer_examples_total`
  (steps x the global batch);
- gauges `trainer_examples_per_second`, `trainer_loss`, and per GPU (`gpu`
  label) `trainer_gpu_utilization_ratio` (0-1) and
  `trainer_gpu_memory_used_bytes`, when NVML can read them.

Pushes go to job `trainer`, grouped by `grouping` (`run_fn` passes the
pipeline and run id: one Pushgateway group per run). Each exporter has its
own registry, so several trainings in one process do not collide.

Example:
    >>> exporter = MetricsExporter(port=9464, examples_per_step=256)  # curl 127.0.0.1:9464/metrics
    >>> exporter.update(step=100, loss=0.4, examples_per_second=5000.0)
    >>> exporter.close()
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Optional

from absl import logging
from prometheus_client import CollectorRegistry, Counter, Gauge, push_to_gateway, start_http_server

from components.trainer.devices.gpu_monitor import GpuMonitor, GpuSample

__all__ = ["MetricsExporter", "TRAINER_JOB"]

TRAINER_JOB = "trainer"  # the Pushgateway job of every training push


class MetricsExporter:
    """Owns the metrics, the optional HTTP server and the optional Pushgateway pushes.

    Args:
      port: serve `/metrics` on 127.0.0.1:`port`; None: no server.
      pushgateway_url: push to this Pushgateway (job `trainer`); None: no push.
      grouping: Pushgateway grouping labels, e.g. `{"pipeline": "taxi", "run_id": "..."}`.
      gpus: TensorFlow GPU indices to read through NVML.
      push_interval_seconds: at most one push per interval (and one at `close`).
      examples_per_step: examples one optimizer step consumes (the global batch), for `trainer_examples_total`.

    Raises:
      OSError: `port` is taken.
    """

    def __init__(
        self,
        port: Optional[int] = None,
        pushgateway_url: Optional[str] = None,
        grouping: Optional[Mapping[str, str]] = None,
        gpus: Sequence[int] = (),
        push_interval_seconds: float = 10.0,
        examples_per_step: int = 0,
    ):
        self.registry = CollectorRegistry()
        self._steps = Counter("trainer_steps", "Optimizer steps done.", registry=self.registry)
        self._examples = Counter(
            "trainer_examples", "Training examples consumed (steps x global batch).", registry=self.registry
        )
        self._examples_per_second = Gauge(
            "trainer_examples_per_second", "Training examples per second.", registry=self.registry
        )
        self._loss = Gauge("trainer_loss", "Training loss (running mean of the epoch).", registry=self.registry)
        self._gpu_util = Gauge(
            "trainer_gpu_utilization_ratio", "GPU utilisation, 0-1 (NVML).", ["gpu"], registry=self.registry
        )
        self._gpu_memory = Gauge(
            "trainer_gpu_memory_used_bytes", "GPU memory in use (NVML).", ["gpu"], registry=self.registry
        )
        self._examples_per_step = examples_per_step
        self._counted_steps = 0
        self._gpus = GpuMonitor(gpus)
        self._pushgateway_url = pushgateway_url
        self._grouping = dict(grouping or {})
        self._push_interval = push_interval_seconds
        self._last_push: Optional[float] = None  # never: the first update pushes
        self._server = None
        if port is not None:
            try:
                self._server, _ = start_http_server(port, addr="127.0.0.1", registry=self.registry)
            except OSError as error:
                raise OSError(
                    f"the training metrics server could not listen on 127.0.0.1:{port} ({error.strerror}). "
                    "Expected a free port. Fix `training.metrics_port`, or set it to null."
                ) from error
            logging.info("Training metrics on http://127.0.0.1:%d/metrics", port)

    def update(self, step: int, loss: Optional[float], examples_per_second: Optional[float]) -> None:
        """Counts the steps done since the last update, sets the gauges, and pushes when a push is due.

        Args:
          step: the optimizer's step count now (a step count lower than the last one is not counted).
          loss: the running training loss, or None.
          examples_per_second: the throughput since the last update, or None.
        """
        done = step - self._counted_steps
        if done > 0:
            self._steps.inc(done)
            self._examples.inc(done * self._examples_per_step)
            self._counted_steps = step
        if loss is not None:
            self._loss.set(loss)
        if examples_per_second is not None:
            self._examples_per_second.set(examples_per_second)
        self._record_gpus(self._gpus.sample())
        if self._pushgateway_url and (
            self._last_push is None or time.monotonic() - self._last_push >= self._push_interval
        ):
            self.push()

    def _record_gpus(self, samples: list[GpuSample]) -> None:
        for sample in samples:
            self._gpu_util.labels(gpu=str(sample.gpu)).set(sample.utilization_percent / 100)
            self._gpu_memory.labels(gpu=str(sample.gpu)).set(sample.memory_used_bytes)

    def push(self) -> None:
        """Pushes every metric now (replacing this run's group); a failed push is logged, never fatal."""
        if not self._pushgateway_url:
            return
        self._last_push = time.monotonic()
        try:
            push_to_gateway(
                self._pushgateway_url,
                job=TRAINER_JOB,
                registry=self.registry,
                grouping_key=self._grouping,
                timeout=5,
            )
        except OSError as error:
            logging.warning("Pushgateway %s did not take the metrics: %s", self._pushgateway_url, error)

    def close(self) -> None:
        """Pushes the final values and stops the server."""
        self.push()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        self._gpus.close()
