"""A Grafana dashboard over serving, pipeline-run and training metrics.

Three rows, each panel a PromQL query over names from `metric_names`:

* Serving: TensorFlow Serving's own metrics (`:tensorflow:serving:*`), which
  the embedded server exports too, so those panels fill on either server
  (panels marked "embedded server" read its additions). Latency histograms
  are in microseconds and shown in seconds. Prometheus scrapes the server as
  job `tfserving`.
* Pipeline runs: the `prometheus` hook's `pipeline_*` metrics (pushed to the
  Pushgateway one group per run, scraped with `honor_labels`, so each series
  has `pipeline` and `run_id`); the "last run" panels pick each pipeline's
  newest run with `topk by (pipeline) (1, <timestamp>)`.
* Training: the trainer's `trainer_*` counters and gauges (scraped, or pushed
  one group per run).

`$model` is a dashboard variable holding the model name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from serving.manifests import metric_names as m
from serving.manifests.compose import SERVING_JOB
from serving.manifests.names import instance_name

__all__ = ["DATASOURCE_UID", "PIPELINE_ROW", "SERVING_ROW", "TRAINING_ROW", "Panel", "dashboard", "rows"]

DATASOURCE_UID = "prometheus"
SERVING_ROW = "Serving"
PIPELINE_ROW = "Pipeline runs"
TRAINING_ROW = "Training"
_DS = {"type": "prometheus", "uid": DATASOURCE_UID}
_MODEL = 'model_name="$model"'
_WIDTH, _HEIGHT = 12, 8


@dataclass(frozen=True)
class Panel:
    """One time-series panel: a title, (PromQL, legend) pairs and a Grafana unit."""

    title: str
    targets: tuple[tuple[str, str], ...]
    unit: str = "short"


def _quantile_us(q: float, histogram: str, by: str = "", selector: str = _MODEL) -> tuple[str, str]:
    """(PromQL, legend) of quantile `q` of a microsecond histogram, in seconds, per label `by` (none: "")."""
    group = f"le, {by}" if by else "le"
    expr = f"histogram_quantile({q}, sum by ({group}) (rate({histogram}_bucket{{{selector}}}[5m]))) / 1e6"
    return expr, f"p{round(q * 100)}" + (f" {{{{{by}}}}}" if by else "")


def _serving() -> list[Panel]:
    requests = f"sum(rate({m.REQUEST_COUNT}{{{_MODEL}}}[1m]))"
    failed = f'sum(rate({m.REQUEST_COUNT}{{{_MODEL}, status!="OK"}}[1m]))'
    server = f'job="{SERVING_JOB}"'
    return [
        Panel(
            "Request rate by status",
            ((f"sum by (status) (rate({m.REQUEST_COUNT}{{{_MODEL}}}[1m]))", "{{status}}"),),
            "reqps",
        ),
        # `or on() vector(0)`: 0, not "No data", while every request succeeds
        Panel("Error ratio", ((f"({failed} or on() vector(0)) / {requests}", "errors"),), "percentunit"),
        Panel(
            "Request latency p50 / p99 (successful requests)",
            (_quantile_us(0.5, m.REQUEST_LATENCY, "API"), _quantile_us(0.99, m.REQUEST_LATENCY, "API")),
            "s",
        ),
        Panel(
            "Model runtime latency p50 / p99",
            (_quantile_us(0.5, m.RUNTIME_LATENCY, "API"), _quantile_us(0.99, m.RUNTIME_LATENCY, "API")),
            "s",
        ),
        Panel(
            "Mean request latency by entrypoint",
            (
                (
                    f"sum by (entrypoint) (rate({m.REQUEST_LATENCY}_sum{{{_MODEL}}}[5m])) / "
                    f"sum by (entrypoint) (rate({m.REQUEST_LATENCY}_count{{{_MODEL}}}[5m])) / 1e6",
                    "{{entrypoint}}",
                ),
            ),
            "s",
        ),
        Panel(
            "Batch queuing latency p50 / p99 (all models)",
            (
                _quantile_us(0.5, m.BATCHING_QUEUING_LATENCY, selector=server),
                _quantile_us(0.99, m.BATCHING_QUEUING_LATENCY, selector=server),
            ),
            "s",
        ),
        Panel(
            "Rows per batch (embedded server)",
            (
                (
                    f"sum(rate({m.BATCH_SIZE}_sum{{{_MODEL}}}[5m])) / sum(rate({m.BATCH_SIZE}_count{{{_MODEL}}}[5m]))",
                    "mean",
                ),
                (f"histogram_quantile(0.9, sum by (le) (rate({m.BATCH_SIZE}_bucket{{{_MODEL}}}[5m])))", "p90"),
            ),
        ),
        Panel(
            "Versions available (embedded server)",
            ((f"{m.MODEL_VERSION_AVAILABLE}{{{_MODEL}}}", "v{{model_version}}"),),
        ),
        Panel(
            "SavedModel loads (all models)",
            ((f"sum by (status) ({m.LOAD_ATTEMPT_COUNT}{{{server}}})", "{{status}}"),),
        ),
        Panel(
            "Server CPU (embedded server)",
            ((f"rate({m.PROCESS_CPU_SECONDS}{{{server}}}[1m])", "{{instance}}"),),
            "percentunit",
        ),
        Panel(
            "Server resident memory (embedded server)",
            ((f"{m.PROCESS_RESIDENT_MEMORY}{{{server}}}", "{{instance}}"),),
            "bytes",
        ),
    ]


def _latest(timestamp: str) -> str:
    """PromQL: of each pipeline, the series of `timestamp` from its newest run (the hook pushes one group per run)."""
    return f"topk by (pipeline) (1, {timestamp})"


def _pipeline() -> list[Panel]:
    finished = f"and on (pipeline, run_id) {_latest(m.PIPELINE_RUN_FINISHED)}"  # the last finished run
    started = f"and on (pipeline, run_id) {_latest(m.PIPELINE_RUN_STARTED)}"  # the run under way, or the last
    return [
        Panel("Last run succeeded (1) or failed (0)", ((f"{m.PIPELINE_RUN_SUCCESS} {finished}", "{{pipeline}}"),)),
        Panel("Last run duration", ((f"{m.PIPELINE_RUN_SECONDS} {finished}", "{{pipeline}}"),), "s"),
        Panel(
            "Since the last run ended",
            ((f"time() - max by (pipeline) ({m.PIPELINE_RUN_FINISHED})", "{{pipeline}}"),),
            "s",
        ),
        Panel(
            "Component duration (latest run)",
            ((f"{m.PIPELINE_COMPONENT_SECONDS} {started}", "{{pipeline}} {{component}} {{status}}"),),
            "s",
        ),
        Panel(
            "Run duration (each run the Pushgateway keeps)", ((m.PIPELINE_RUN_SECONDS, "{{pipeline}} {{run_id}}"),), "s"
        ),
        Panel(
            "Components by status, runs started in the last 24 h",
            (
                (
                    f"sum by (pipeline, status) ({m.PIPELINE_COMPONENT_RUNS} and on (pipeline, run_id) "
                    f"({m.PIPELINE_RUN_STARTED} > time() - 86400))",
                    "{{pipeline}} {{status}}",
                ),
            ),
        ),
    ]


def _training() -> list[Panel]:
    run = "{{pipeline}} {{run_id}} {{instance}}"  # pushed: pipeline and run; scraped: the trainer's address
    return [
        Panel("Examples per second", ((m.TRAINER_EXAMPLES_PER_SECOND, run),)),
        Panel("Optimizer steps", ((m.TRAINER_STEPS, run),)),
        Panel("Examples trained", ((m.TRAINER_EXAMPLES, run),)),
        Panel("Loss", ((m.TRAINER_LOSS, run),)),
        Panel("GPU utilisation", ((m.TRAINER_GPU_UTILIZATION, "GPU {{gpu}} {{run_id}}"),), "percentunit"),
        Panel("GPU memory used", ((m.TRAINER_GPU_MEMORY_USED, "GPU {{gpu}} {{run_id}}"),), "bytes"),
    ]


def rows() -> dict[str, list[Panel]]:
    """The dashboard's rows: {row title: panels}, in order.

    Returns:
        Serving, pipeline-run and training panels.
    """
    return {SERVING_ROW: _serving(), PIPELINE_ROW: _pipeline(), TRAINING_ROW: _training()}


def _panel_json(panel_id: int, panel: Panel, x: int, y: int) -> dict[str, Any]:
    return {
        "id": panel_id,
        "type": "timeseries",
        "title": panel.title,
        "datasource": _DS,
        "gridPos": {"h": _HEIGHT, "w": _WIDTH, "x": x, "y": y},
        "fieldConfig": {"defaults": {"unit": panel.unit}, "overrides": []},
        "targets": [
            {"refId": chr(ord("A") + i), "datasource": _DS, "expr": expr, "legendFormat": legend}
            for i, (expr, legend) in enumerate(panel.targets)
        ],
    }


def _row_json(panel_id: int, title: str, y: int) -> dict[str, Any]:
    return {
        "id": panel_id,
        "type": "row",
        "title": title,
        "collapsed": False,
        "gridPos": {"h": 1, "w": 24, "x": 0, "y": y},
        "panels": [],
    }


def _layout(layout: dict[str, list[Panel]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    y = 0
    for title, panels in layout.items():
        out.append(_row_json(len(out) + 1, title, y))
        y += 1
        for i, panel in enumerate(panels):
            out.append(_panel_json(len(out) + 1, panel, (i % 2) * _WIDTH, y + (i // 2) * _HEIGHT))
        y += -(-len(panels) // 2) * _HEIGHT
    return out


def dashboard(model_name: str) -> dict[str, Any]:
    """The dashboard JSON (a dict), with a `model` variable set to `model_name`.

    Args:
        model_name: The TensorFlow Serving model name the serving panels select.

    Returns:
        The dashboard, ready for `json.dumps` and Grafana's file provisioning.
    """
    return {
        "uid": f"serving-{instance_name(model_name)}"[:40],
        "title": f"TensorFlow Serving: {model_name}",
        "tags": ["serving", "tfx"],
        "timezone": "browser",
        "schemaVersion": 39,
        "version": 1,
        "refresh": "10s",
        "time": {"from": "now-1h", "to": "now"},
        "templating": {
            "list": [
                {
                    "name": "model",
                    "type": "custom",
                    "query": model_name,
                    "current": {"text": model_name, "value": model_name},
                    "options": [{"text": model_name, "value": model_name, "selected": True}],
                }
            ]
        },
        "panels": _layout(rows()),
    }
