"""A lifecycle hook that publishes pipeline run events as Prometheus metrics.

Served on 127.0.0.1:`port` for scraping, pushed to a Pushgateway after each
component and at the end of the run, or both. Metrics (label `pipeline`):

- `pipeline_component_seconds{component, status}`: last duration (status:
  executed, cached, resolved, failed)
- `pipeline_component_runs_total{component, status}`: count of finished components
- `pipeline_run_seconds`, `pipeline_run_success` (1/0) and
  `pipeline_run_finished_timestamp_seconds` for the last run

Declared in a spec:

    hooks:
      - uses: prometheus
        parameters: {pushgateway_url: "http://pushgateway:9091"}
"""

from __future__ import annotations

import time
from typing import Any, Optional

from prometheus_client import CollectorRegistry, Counter, Gauge, push_to_gateway, start_http_server

__all__ = ["PrometheusHook"]


class PrometheusHook:
    """Args:
      pushgateway_url: push to this Pushgateway under `job`; None: no push.
      port: serve `/metrics` on 127.0.0.1:`port` (0 picks a free port, see `.port`); None: no server.
      job: the Pushgateway job name.

    Raises:
      ValueError: neither `pushgateway_url` nor `port` is given.
      OSError: `port` is taken.
    """

    def __init__(self, pushgateway_url: Optional[str] = None, port: Optional[int] = None, job: str = "yaml_tfx"):
        if pushgateway_url is None and port is None:
            raise ValueError(
                "PrometheusHook has nowhere to publish. Expected `pushgateway_url` or `port`. Received neither. "
                "Add `pushgateway_url: http://host:9091` or `port: 9465`."
            )
        self.pushgateway_url = pushgateway_url
        self.job = job
        self.pipeline = ""
        self.registry = CollectorRegistry()
        labels = ["pipeline", "component", "status"]
        self._seconds = Gauge(
            "pipeline_component_seconds", "Last duration of a component.", labels, registry=self.registry
        )
        self._runs = Counter(
            "pipeline_component_runs", "Components finished, by status.", labels, registry=self.registry
        )
        self._run_seconds = Gauge(
            "pipeline_run_seconds", "Duration of the last run.", ["pipeline"], registry=self.registry
        )
        self._run_success = Gauge(
            "pipeline_run_success", "1 if the last run succeeded.", ["pipeline"], registry=self.registry
        )
        self._finished = Gauge(
            "pipeline_run_finished_timestamp_seconds", "When the last run ended.", ["pipeline"], registry=self.registry
        )
        self._server = None
        self.port = None
        if port is not None:
            self._server, _ = start_http_server(port, addr="127.0.0.1", registry=self.registry)
            self.port = self._server.server_port

    def _record(self, component_id: str, status: str, seconds: float) -> None:
        self._seconds.labels(self.pipeline, component_id, status).set(seconds)
        self._runs.labels(self.pipeline, component_id, status).inc()
        self._push()

    def _push(self) -> None:
        if self.pushgateway_url:
            grouping = {"pipeline": self.pipeline} if self.pipeline else None
            push_to_gateway(self.pushgateway_url, job=self.job, registry=self.registry, grouping_key=grouping)

    def before_run(self, *, pipeline_name: str, **_: Any) -> None:
        self.pipeline = pipeline_name

    def after_component(self, *, component_id: str, status: str, seconds: float, **_: Any) -> None:
        self._record(component_id, status, seconds)

    def on_failure(self, *, component_id: str, seconds: float, **_: Any) -> None:
        self._record(component_id, "failed", seconds)

    def after_run(self, *, pipeline_name: str, status: str, seconds: float, **_: Any) -> None:
        self.pipeline = pipeline_name
        self._run_seconds.labels(pipeline_name).set(seconds)
        self._run_success.labels(pipeline_name).set(1 if status == "succeeded" else 0)
        self._finished.labels(pipeline_name).set(time.time())
        self._push()

    def close(self) -> None:
        """Stops the `/metrics` server, if any."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
