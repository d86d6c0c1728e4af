"""The metric names the Grafana dashboard reads, in one place.

Serving: the embedded server's names from `serving.server.observability.metrics`, which are
TensorFlow Serving's own (`:tensorflow:serving:*`, latencies in microseconds,
histograms named without `_bucket`/`_sum`/`_count`) plus its `tfserving_*`
additions, so the same panels fill on either server (the additions and the
process metrics only on the embedded one).

Pipeline and training: the names that `pipelines/hooks/prometheus_hook.py`
(`PrometheusHook`) and `components/trainer/monitoring/prometheus.py` (`MetricsExporter`)
register. `serving` may not import those packages (import-linter contract in
pyproject.toml), so they are spelled out here and
`tests/serving/manifests/test_manifests_dashboard.py` checks them against both modules.
"""

from __future__ import annotations

from serving.server.observability.metrics import (
    BATCH_SIZE,  # histogram {model_name, model_version, signature_name}, embedded server only
    BATCHING_QUEUING_LATENCY,  # histogram, us {thread_pool_name}
    LOAD_ATTEMPT_COUNT,  # {model_path, status}
    MODEL_VERSION_AVAILABLE,  # {model_name, model_version}, embedded server only
    REQUEST_COUNT,  # {model_name, status}
    REQUEST_LATENCY,  # histogram, us {model_name, API, entrypoint}
    RUNTIME_LATENCY,  # histogram, us {model_name, API, runtime}
)

__all__ = [
    "BATCHING_QUEUING_LATENCY",
    "BATCH_SIZE",
    "LOAD_ATTEMPT_COUNT",
    "MODEL_VERSION_AVAILABLE",
    "PIPELINE_COMPONENT_RUNS",
    "PIPELINE_COMPONENT_SECONDS",
    "PIPELINE_RUN_FINISHED",
    "PIPELINE_RUN_SECONDS",
    "PIPELINE_RUN_STARTED",
    "PIPELINE_RUN_SUCCESS",
    "PROCESS_CPU_SECONDS",
    "PROCESS_RESIDENT_MEMORY",
    "REQUEST_COUNT",
    "REQUEST_LATENCY",
    "RUNTIME_LATENCY",
    "TRAINER_EXAMPLES",
    "TRAINER_EXAMPLES_PER_SECOND",
    "TRAINER_GPU_MEMORY_USED",
    "TRAINER_GPU_UTILIZATION",
    "TRAINER_LOSS",
    "TRAINER_STEPS",
]

# prometheus_client's process collector (the embedded server; tensorflow_model_server has none).
PROCESS_CPU_SECONDS = "process_cpu_seconds_total"
PROCESS_RESIDENT_MEMORY = "process_resident_memory_bytes"

# The pipeline hook (`hooks: [{uses: prometheus}]`), label `pipeline`; pushed one Pushgateway group per run,
# which adds `run_id` (and `job`) to every series.
PIPELINE_COMPONENT_SECONDS = "pipeline_component_seconds"  # {component, status}
PIPELINE_COMPONENT_RUNS = "pipeline_component_runs_total"  # {component, status}
PIPELINE_RUN_STARTED = "pipeline_run_started_timestamp_seconds"
PIPELINE_RUN_SECONDS = "pipeline_run_seconds"
PIPELINE_RUN_SUCCESS = "pipeline_run_success"
PIPELINE_RUN_FINISHED = "pipeline_run_finished_timestamp_seconds"

# The trainer's exporter (`training.metrics_port` / `training.pushgateway_url`); pushed as job `trainer`,
# one group per pipeline run (`pipeline`, `run_id`).
TRAINER_STEPS = "trainer_steps_total"  # counter
TRAINER_EXAMPLES = "trainer_examples_total"  # counter
TRAINER_EXAMPLES_PER_SECOND = "trainer_examples_per_second"
TRAINER_LOSS = "trainer_loss"
TRAINER_GPU_UTILIZATION = "trainer_gpu_utilization_ratio"  # {gpu}, 0-1
TRAINER_GPU_MEMORY_USED = "trainer_gpu_memory_used_bytes"  # {gpu}
