"""A lifecycle hook that publishes pipeline run events as Prometheus metrics.

Served on 127.0.0.1:`port` for scraping, pushed to a Pushgateway after each
component and at the end of the run, or both. Metrics (label `pipeline`):

- `pipeline_component_seconds{component, status}`: duration (status:
  executed, cached, resolved, failed)
- `pipeline_component_runs_total{component, status}`: components finished
- `pipeline_run_started_timestamp_seconds`, `pipeline_run_seconds`,
  `pipeline_run_success` (1/0) and `pipeline_run_finished_timestamp_seconds`

Pushes go to job `job`, one group per run: grouping key `{pipeline, run_id}`,
so the Pushgateway keeps each run's series apart (a later run no longer
overwrites the last) and adds both labels to every series. The latest
finished run of each pipeline is the group with the newest end, the run under
way the one with the newest start (PromQL, as the Grafana dashboard asks):

    pipeline_run_success and on (pipeline, run_id)
      topk by (pipeline) (1, pipeline_run_finished_timestamp_seconds)
    pipeline_component_seconds and on (pipeline, run_id)
      topk by (pipeline) (1, pipeline_run_started_timestamp_seconds)

The Pushgateway keeps groups until they are deleted, so after each run the
hook deletes this pipeline's groups beyond the newest `keep_runs`, its own
and the trainer's (job `trainer`, also grouped by pipeline and run).

Declared in a spec:

    hooks:
      - uses: prometheus
        parameters: {pushgateway_url: "http://pushgateway:9091", keep_runs: 10}
"""

from __future__ import annotations

import logging
import sys
import time
from typing import Any, Optional

from prometheus_client import CollectorRegistry, Counter, Gauge, push_to_gateway, start_http_server

from components.trainer.monitoring.prometheus import TRAINER_JOB
from pipelines.hooks.pushgateway_groups import prune_runs

__all__ = ["PrometheusHook"]

_log = logging.getLogger(__name__)


class PrometheusHook:
    """Args:
      pushgateway_url: push to this Pushgateway under `job`, grouped by pipeline and run; None: no push.
      port: serve `/metrics` on 127.0.0.1:`port` (0 picks a free port, see `.port`); None: no server.
      job: the Pushgateway job name.
      keep_runs: after a run, delete this pipeline's Pushgateway groups (the hook's and the trainer's)
        beyond the newest `keep_runs` runs; None: keep every run.

    Raises:
      ValueError: neither `pushgateway_url` nor `port` is given, or `keep_runs` is below 1.
      OSError: `port` is taken.
    """

    def __init__(
        self,
        pushgateway_url: Optional[str] = None,
        port: Optional[int] = None,
        job: str = "yaml_tfx",
        keep_runs: Optional[int] = 10,
    ):
        if pushgateway_url is None and port is None:
            raise ValueError(
                "PrometheusHook has nowhere to publish. Expected `pushgateway_url` or `port`. Received neither. "
                "Add `pushgateway_url: http://host:9091` or `port: 9465`."
            )
        if keep_runs is not None and keep_runs < 1:
            raise ValueError(
                f"`keep_runs` must be at least 1. Received: keep_runs={keep_runs}. Write `keep_runs: null` "
                "to keep every run's Pushgateway group."
            )
        self.pushgateway_url = pushgateway_url
        self.job = job
        self.keep_runs = keep_runs
        self.pipeline = ""
        self.run_id = ""
        self._push_failed = False
        self.registry = CollectorRegistry()
        labels = ["pipeline", "component", "status"]
        self._seconds = Gauge("pipeline_component_seconds", "Duration of a component.", labels, registry=self.registry)
        self._runs = Counter(
            "pipeline_component_runs", "Components finished, by status.", labels, registry=self.registry
        )
        self._started = Gauge(
            "pipeline_run_started_timestamp_seconds", "When the run started.", ["pipeline"], registry=self.registry
        )
        self._run_seconds = Gauge("pipeline_run_seconds", "Duration of the run.", ["pipeline"], registry=self.registry)
        self._run_success = Gauge(
            "pipeline_run_success", "1 if the run succeeded, 0 if it failed.", ["pipeline"], registry=self.registry
        )
        self._finished = Gauge(
            "pipeline_run_finished_timestamp_seconds", "When the run ended.", ["pipeline"], registry=self.registry
        )
        self._metrics = (self._seconds, self._runs, self._started, self._run_seconds, self._run_success, self._finished)
        self._server = None
        self.port = None
        if port is not None:
            self._server, _ = start_http_server(port, addr="127.0.0.1", registry=self.registry)
            self.port = self._server.server_port

    def _record(self, component_id: str, status: str, seconds: float) -> None:
        self._seconds.labels(self.pipeline, component_id, status).set(seconds)
        self._runs.labels(self.pipeline, component_id, status).inc()
        self._push()

    def _grouping(self) -> dict[str, str]:
        grouping = {"pipeline": self.pipeline} if self.pipeline else {}
        if self.run_id:
            grouping["run_id"] = self.run_id
        return grouping

    def _push(self) -> None:
        """Replaces this run's group; a failed push is logged (and reported once), never fatal to the run."""
        if not self.pushgateway_url:
            return
        try:
            push_to_gateway(
                self.pushgateway_url, job=self.job, registry=self.registry, grouping_key=self._grouping(), timeout=5
            )
        except OSError as error:
            _log.warning("Pushgateway %s did not take the run metrics: %s", self.pushgateway_url, error)
            if not self._push_failed:
                print(
                    f"warning: the Pushgateway at {self.pushgateway_url} did not take the run metrics ({error}). "
                    "Check that it runs and that `pushgateway_url` names it.",
                    file=sys.stderr,
                    flush=True,
                )
            self._push_failed = True

    def _prune(self) -> None:
        if not self.pushgateway_url or self.keep_runs is None or not self.pipeline or self._push_failed:
            return
        for job in (self.job, TRAINER_JOB):
            try:
                deleted = prune_runs(self.pushgateway_url, job, self.pipeline, self.keep_runs)
            except (OSError, ValueError) as error:
                _log.warning("Could not prune old runs of job %s on %s: %s", job, self.pushgateway_url, error)
                return
            if deleted:
                _log.info("Deleted the Pushgateway groups of job %s, runs %s", job, deleted)

    def before_run(self, *, pipeline_name: str, run_id: str = "", **_: Any) -> None:
        self.pipeline, self.run_id = pipeline_name, run_id
        for metric in self._metrics:  # a hook reused for another run publishes that run only
            metric.clear()
        self._started.labels(pipeline_name).set(time.time())

    def after_component(self, *, component_id: str, status: str, seconds: float, **_: Any) -> None:
        self._record(component_id, status, seconds)

    def on_failure(self, *, component_id: str, seconds: float, **_: Any) -> None:
        self._record(component_id, "failed", seconds)

    def after_run(self, *, pipeline_name: str, status: str, seconds: float, run_id: str = "", **_: Any) -> None:
        self.pipeline = pipeline_name
        self.run_id = run_id or self.run_id
        self._run_seconds.labels(pipeline_name).set(seconds)
        self._run_success.labels(pipeline_name).set(1 if status == "succeeded" else 0)
        self._finished.labels(pipeline_name).set(time.time())
        self._push()
        self._prune()

    def close(self) -> None:
        """Stops the `/metrics` server, if any."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
