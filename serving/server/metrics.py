"""Prometheus metrics of the embedded server, per model and version.

Exposed at the monitoring config's path (`/monitoring/prometheus/metrics` by
default) in the Prometheus text format:

* `tfserving_requests_total{model_name, model_version, api, entrypoint, status}`
  where `api` is predict/classify/regress/metadata/status, `entrypoint` REST or
  GRPC and `status` the canonical code name (OK, NOT_FOUND, ...);
* `tfserving_request_latency_seconds{model_name, model_version, api, entrypoint}`;
* `tfserving_batch_size{model_name, model_version, signature_name}`, rows per
  executed batch;
* `tfserving_model_version_available{model_name, model_version}`, 1 while a
  version serves.

Each server owns its registry, so several servers can run in one process.
"""

from __future__ import annotations

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from prometheus_client.exposition import CONTENT_TYPE_LATEST

__all__ = ["CONTENT_TYPE_LATEST", "ServingMetrics"]

_LATENCY_BUCKETS = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0)
_BATCH_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)


class ServingMetrics:
    """The embedded server's metrics, in their own registry."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "tfserving_requests",
            "Requests by model, version, API, entrypoint and status code.",
            ["model_name", "model_version", "api", "entrypoint", "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "tfserving_request_latency_seconds",
            "Request latency inside the server.",
            ["model_name", "model_version", "api", "entrypoint"],
            buckets=_LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.batch_size = Histogram(
            "tfserving_batch_size",
            "Rows per executed batch.",
            ["model_name", "model_version", "signature_name"],
            buckets=_BATCH_BUCKETS,
            registry=self.registry,
        )
        self.available = Gauge(
            "tfserving_model_version_available",
            "1 while the model version is AVAILABLE.",
            ["model_name", "model_version"],
            registry=self.registry,
        )

    def observe_request(
        self, *, model: str, version: int | None, api: str, entrypoint: str, status: str, seconds: float
    ) -> None:
        version_label = "" if version is None else str(version)
        self.requests.labels(model, version_label, api, entrypoint, status).inc()
        self.latency.labels(model, version_label, api, entrypoint).observe(seconds)

    def observe_batch(self, servable, signature, size: int) -> None:
        self.batch_size.labels(servable.name, str(servable.version), signature.name).observe(size)

    def set_available(self, model: str, version: int, available: bool) -> None:
        self.available.labels(model, str(version)).set(1 if available else 0)

    def exposition(self) -> bytes:
        return generate_latest(self.registry)
