"""Prometheus metrics of the embedded server, under TensorFlow Serving's names.

Exposed at the monitoring config's path (`/monitoring/prometheus/metrics` by
default) in the Prometheus text format. The metrics TensorFlow Serving exports
keep its names, label names, label values and units (microseconds), as its
Prometheus exporter writes them (`/tensorflow/serving/request_count` becomes
`:tensorflow:serving:request_count`, counters without `_total`), so one
dashboard serves both servers:

* `:tensorflow:serving:request_count{model_name, status}`: Predict, Classify
  and Regress over gRPC, every request over REST; `status` is the canonical
  code name (OK, NOT_FOUND, ...);
* `:tensorflow:serving:request_latency{model_name, API, entrypoint}`:
  histogram in microseconds of successful requests; `API` is `Predict`,
  `Classify`, `Regress` over gRPC and the URL's verb over REST (`predict`,
  `classify`, `regress`, empty for GET), `entrypoint` `GRPC` or `REST`;
* `:tensorflow:serving:runtime_latency{model_name, API, runtime}`: the model
  call alone (with batching: queue plus batch), `runtime="TF1"`;
* `:tensorflow:serving:request_example_counts{model}` (histogram) and
  `:tensorflow:serving:request_example_count_total{model}`: examples per
  Classify/Regress request;
* `:tensorflow:serving:model_warmup_latency{model_path, status}` (microseconds)
  and `:tensorflow:serving:model_warmup_records_read{model_path, status}`;
* `:tensorflow:cc:saved_model:load_attempt_count{model_path, status}` with
  `status="success"` (a SavedModel that failed to load is reported in the
  model status, not counted here);
* `:tensorflow:serving:batching_session:wrapped_run_count` and
  `:tensorflow:serving:batching_session:queuing_latency{thread_pool_name}`
  (microseconds, one value per request, as TensorFlow Serving records it)
  with batching on;

plus the process metrics of prometheus_client (`process_resident_memory_bytes`,
`process_cpu_seconds_total`, ...) and this server's own, named the Prometheus
way: `tfserving_batch_size{model_name, model_version, signature_name}` (rows
per executed batch), `tfserving_model_version_available{model_name,
model_version}` (1 while a version serves) and
`tfserving_requests_rejected_total{entrypoint, reason}` (requests refused by
the limits: `memory_budget`, `json_depth`, `body_size`, `timeout`).

Each server owns its registry, so several servers can run in one process.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    ProcessCollector,
    generate_latest,
)
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.metrics_core import CounterMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString

__all__ = [
    "BATCHING_QUEUING_LATENCY",
    "BATCHING_WRAPPED_RUN_COUNT",
    "BATCH_SIZE",
    "CONTENT_TYPE_LATEST",
    "LOAD_ATTEMPT_COUNT",
    "MODEL_VERSION_AVAILABLE",
    "MODEL_WARMUP_LATENCY",
    "MODEL_WARMUP_RECORDS_READ",
    "REQUESTS_REJECTED",
    "REQUEST_COUNT",
    "REQUEST_EXAMPLE_COUNTS",
    "REQUEST_EXAMPLE_COUNT_TOTAL",
    "REQUEST_LATENCY",
    "RUNTIME_LATENCY",
    "ServingMetrics",
]

# TensorFlow Serving's metrics (tensorflow_serving/servables/tensorflow/util.cc,
# saved_model_warmup_util.cc, batching/batching_session.cc) and TensorFlow's
# SavedModel loader (tensorflow/cc/saved_model/loader.cc).
REQUEST_COUNT = ":tensorflow:serving:request_count"
REQUEST_LATENCY = ":tensorflow:serving:request_latency"
RUNTIME_LATENCY = ":tensorflow:serving:runtime_latency"
REQUEST_EXAMPLE_COUNTS = ":tensorflow:serving:request_example_counts"
REQUEST_EXAMPLE_COUNT_TOTAL = ":tensorflow:serving:request_example_count_total"
MODEL_WARMUP_LATENCY = ":tensorflow:serving:model_warmup_latency"
MODEL_WARMUP_RECORDS_READ = ":tensorflow:serving:model_warmup_records_read"
LOAD_ATTEMPT_COUNT = ":tensorflow:cc:saved_model:load_attempt_count"
BATCHING_WRAPPED_RUN_COUNT = ":tensorflow:serving:batching_session:wrapped_run_count"
BATCHING_QUEUING_LATENCY = ":tensorflow:serving:batching_session:queuing_latency"
# This server's own.
BATCH_SIZE = "tfserving_batch_size"
MODEL_VERSION_AVAILABLE = "tfserving_model_version_available"
REQUESTS_REJECTED = "tfserving_requests_rejected_total"

# Label values TensorFlow Serving writes.
GRPC, REST = "GRPC", "REST"
LOAD_SUCCESS = "success"
RUNTIME = "TF1"
BATCH_THREAD_POOL = ""  # the label TensorFlow Serving's model server writes (batching_session.cc)
_QUEUING_LABELS = (BATCH_THREAD_POOL,)


def _exponential(scale: float, growth: float, count: int) -> tuple[float, ...]:
    """TensorFlow's `monitoring::Buckets::Exponential` upper bounds (then +Inf)."""
    return tuple(round(scale * growth**i, 6) for i in range(count))


_LATENCY_BUCKETS_US = _exponential(10, 1.8, 33)  # 10 us .. ~20 minutes
_EXAMPLE_BUCKETS = _exponential(1, 2, 15)  # 1 .. 16384 examples
_QUEUING_BUCKETS_US = _exponential(100, 1.2, 52)  # 100 us .. ~1 s
_BATCH_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
# TensorFlow Serving's counters carry no `_total` suffix; prometheus_client adds one.
_BARE_COUNTERS = (REQUEST_COUNT, MODEL_WARMUP_RECORDS_READ, LOAD_ATTEMPT_COUNT, BATCHING_WRAPPED_RUN_COUNT)


class _Exported(Collector):
    """The metrics as TensorFlow Serving's exporter writes them: its counters
    without `_total`, and no `_created` series."""

    def __init__(self, source: CollectorRegistry) -> None:
        self._source = source

    def collect(self):
        for metric in self._source.collect():
            bare = metric.type == "counter" and metric.name in _BARE_COUNTERS
            exported = Metric(metric.name, metric.documentation, metric.type, metric.unit)
            for sample in metric.samples:
                if sample.name.endswith("_created"):
                    continue
                exported.samples.append(sample._replace(name=metric.name) if bare else sample)
            yield exported


class _PerRequest(Collector):
    """The metrics recorded on every request or batch (counters and
    histograms), kept as plain numbers and turned into Prometheus families
    when scraped.

    prometheus_client's `Counter.inc` and `Histogram.observe` take a lock per
    value and scan the buckets in Python, a visible share of the REST
    server's GIL time under load; here each is a dict lookup, a bisect and
    two additions. Only the server's event loop records them (the REST and
    gRPC handlers, `Runtime`'s calls and the batch workers run there); a
    scrape reads them on that loop too. The families come out as
    prometheus_client's own `Counter` and `Histogram` write them (same
    names, help, label order, `le` values, cumulative buckets, `_count` and
    `_sum`), minus `_created`, which `_Exported` drops anyway.
    """

    def __init__(
        self,
        name: str,
        documentation: str,
        labelnames: tuple[str, ...] = (),
        buckets=None,
        tensorflow_edges: bool = False,
    ) -> None:
        self.name, self.documentation, self.labelnames = name, documentation, labelnames
        # Upper bounds; the last bucket is +Inf. Prometheus's `le` is "value <= bound" (bisect_left);
        # TensorFlow's histograms, which TensorFlow Serving exports, put a value equal to a bound in
        # the next bucket (`std::upper_bound`, "value < bound": bisect_right).
        self._bucket = bisect_right if tensorflow_edges else bisect_left
        self._bounds = tuple(buckets) if buckets is not None else None
        self._le = None if buckets is None else [*(floatToGoString(b) for b in buckets), "+Inf"]
        self.cells: dict[tuple[str, ...], list] = {}  # label values -> [count] or [bucket counts, sum]

    def inc(self, labels: tuple[str, ...]) -> None:
        cell = self.cells.get(labels)
        if cell is None:
            cell = self.cells[labels] = [0]
        cell[0] += 1

    def observe(self, labels: tuple[str, ...], value: float) -> None:
        cell = self.cells.get(labels)
        if cell is None:
            cell = self.cells[labels] = [[0] * (len(self._bounds) + 1), 0.0]
        cell[0][self._bucket(self._bounds, value)] += 1
        cell[1] += value

    def observe_many(self, labels: tuple[str, ...], values, scale: float = 1.0) -> None:
        """Observes each of `values` times `scale`: one lookup for all of them."""
        cell = self.cells.get(labels)
        if cell is None:
            cell = self.cells[labels] = [[0] * (len(self._bounds) + 1), 0.0]
        counts, bounds, bucket, total = cell[0], self._bounds, self._bucket, 0.0
        for value in values:
            value *= scale
            counts[bucket(bounds, value)] += 1
            total += value
        cell[1] += total

    def describe(self):
        return [self._family()]

    def _family(self):
        if self._bounds is None:
            return CounterMetricFamily(self.name, self.documentation, labels=self.labelnames)
        return HistogramMetricFamily(self.name, self.documentation, labels=self.labelnames)

    def collect(self):
        family = self._family()
        for labels, cell in list(self.cells.items()):
            if self._bounds is None:
                family.add_metric(list(labels), float(cell[0]))
                continue
            counts, total, cumulative = list(cell[0]), cell[1], 0
            buckets = []
            for le, count in zip(self._le, counts):
                cumulative += count
                buckets.append((le, float(cumulative)))
            family.add_metric(list(labels), buckets, total)
        yield family


class ServingMetrics:
    """The embedded server's metrics, in their own registry."""

    def __init__(self) -> None:
        # Whether a request's model name is one the server has (`ModelManager.knows`, set by the
        # server): other names are counted under "", so a stream of made-up names cannot grow the
        # metrics page without bound (TF Serving labels `request_count` with any name sent).
        self.model_known: Callable[[str], bool] = lambda name: True
        self._source = CollectorRegistry(auto_describe=True)
        self.registry = CollectorRegistry()
        self.registry.register(_Exported(self._source))
        ProcessCollector(registry=self.registry)
        source = self._source
        self.request_count = _PerRequest(REQUEST_COUNT, "The total number of requests.", ("model_name", "status"))
        self.request_latency = _PerRequest(
            REQUEST_LATENCY,
            "Distribution of wall time (in microseconds) for Tensorflow Serving request.",
            ("model_name", "API", "entrypoint"),
            buckets=_LATENCY_BUCKETS_US,
            tensorflow_edges=True,
        )
        self.runtime_latency = _PerRequest(
            RUNTIME_LATENCY,
            "Distribution of wall time (in microseconds) for Tensorflow runtime.",
            ("model_name", "API", "runtime"),
            buckets=_LATENCY_BUCKETS_US,
            tensorflow_edges=True,
        )
        # Recorded per batch and per batched request, on the event loop too.
        self.wrapped_runs = _PerRequest(
            BATCHING_WRAPPED_RUN_COUNT, "Total count of run calls on the wrapped session", labelnames=()
        )
        self.wrapped_runs.cells[()] = [0]  # an unlabelled counter reads 0 before its first batch
        self.queuing_latency = _PerRequest(
            BATCHING_QUEUING_LATENCY,
            "Distribution of wall time spent (in microseconds) in queuing",
            ("thread_pool_name",),
            buckets=_QUEUING_BUCKETS_US,
            tensorflow_edges=True,
        )
        self.example_counts = _PerRequest(
            REQUEST_EXAMPLE_COUNTS,
            "The number of tensorflow.Examples per request.",
            ("model",),
            buckets=_EXAMPLE_BUCKETS,
            tensorflow_edges=True,
        )
        self.batch_size = _PerRequest(
            BATCH_SIZE,
            "Rows per executed batch.",
            ("model_name", "model_version", "signature_name"),
            buckets=_BATCH_BUCKETS,
        )
        for collector in (
            self.request_count,
            self.request_latency,
            self.runtime_latency,
            self.wrapped_runs,
            self.queuing_latency,
            self.batch_size,
            self.example_counts,
        ):
            source.register(collector)
        self.example_count_total = Counter(
            REQUEST_EXAMPLE_COUNT_TOTAL, "The total number of tensorflow.Examples.", ["model"], registry=source
        )
        self.warmup_latency = Histogram(
            MODEL_WARMUP_LATENCY,
            "Distribution of wall time (in microseconds) for warming up the model.",
            ["model_path", "status"],
            buckets=_LATENCY_BUCKETS_US,
            registry=source,
        )
        self.warmup_records = Counter(
            MODEL_WARMUP_RECORDS_READ,
            "Total number of warmup records read during model warmup.",
            ["model_path", "status"],
            registry=source,
        )
        self.load_attempts = Counter(
            LOAD_ATTEMPT_COUNT,
            "The number of times a SavedModel was successfully loaded.",
            ["model_path", "status"],
            registry=source,
        )
        self.available = Gauge(
            MODEL_VERSION_AVAILABLE,
            "1 while the model version is AVAILABLE.",
            ["model_name", "model_version"],
            registry=source,
        )
        self.rejected = Counter(
            REQUESTS_REJECTED,
            "Requests refused by the server's limits, by entrypoint and reason.",
            ["entrypoint", "reason"],
            registry=source,
        )

    def observe_request(self, *, model: str, api: str, entrypoint: str, status: str, seconds: float) -> None:
        """Counts a request; records its latency when it succeeded (as TensorFlow Serving does).

        Args:
            model: The model name of the request ("" when the URL had none); a name
                `model_known` refuses is counted as "".
            api: `Predict`/`Classify`/`Regress` (gRPC) or the URL verb (REST).
            entrypoint: `GRPC` or `REST`.
            status: The canonical status code name, e.g. `OK`.
            seconds: Wall time inside the server.
        """
        if status != "OK" and model and not self.model_known(model):  # OK: a served model, no look-up
            model = ""
        self.request_count.inc((model, status))
        if status == "OK":
            self.request_latency.observe((model, api, entrypoint), seconds * 1e6)

    def observe_runtime(self, model: str, api: str, seconds: float) -> None:
        self.runtime_latency.observe((model, api, RUNTIME), seconds * 1e6)

    def observe_examples(self, model: str, count: int) -> None:
        self.example_counts.observe((model,), count)
        self.example_count_total.labels(model).inc(count)

    def observe_load(self, model_path: str) -> None:
        self.load_attempts.labels(model_path, LOAD_SUCCESS).inc()

    def observe_warmup(self, model_path: str, status: str, records: int, seconds: float) -> None:
        self.warmup_latency.labels(model_path, status).observe(seconds * 1e6)
        self.warmup_records.labels(model_path, status).inc(records)

    def observe_batch(self, servable, signature, size: int, waits: Sequence[float] = ()) -> None:
        """Records a batch that ran: its rows, one wrapped run, and each request's wait.

        Args:
            servable: The servable the batch ran on.
            signature: The signature it ran.
            size: Rows in the batch (before padding to an allowed batch size).
            waits: Seconds each request of the batch waited in the queue;
                TensorFlow Serving's `queuing_latency` has one value per request.
        """
        self.batch_size.observe((servable.name, str(servable.version), signature.name), size)
        self.wrapped_runs.inc(())
        self.queuing_latency.observe_many(_QUEUING_LABELS, waits, 1e6)

    def set_available(self, model: str, version: int, available: bool) -> None:
        self.available.labels(model, str(version)).set(1 if available else 0)

    def reject(self, entrypoint: str, reason: str) -> None:
        self.rejected.labels(entrypoint, reason).inc()

    def exposition(self) -> bytes:
        """The Prometheus text page."""
        text = generate_latest(self.registry)
        for name in _BARE_COUNTERS:  # the header lines name the counter as TensorFlow Serving does
            for kind in (b"HELP", b"TYPE"):
                text = text.replace(b"# %s %s_total " % (kind, name.encode()), b"# %s %s " % (kind, name.encode()))
        return text
