"""A Grafana dashboard over serving and training metrics.

Serving panels read the embedded server's `tfserving_*` metrics; a second row
reads the `:tensorflow:serving:*` metrics that the real tensorflow/serving
image exports, so the same dashboard works for both. The training row reads
`trainer_examples_per_second`, `trainer_step` and `trainer_loss`.
"""

from __future__ import annotations

from typing import Any

__all__ = ["DATASOURCE_UID", "dashboard"]

DATASOURCE_UID = "prometheus"
_DS = {"type": "prometheus", "uid": DATASOURCE_UID}
_SEL = 'model_name=~"$model"'


def _panel(panel_id: int, title: str, targets: list[tuple[str, str]], unit: str, x: int, y: int) -> dict[str, Any]:
    return {
        "id": panel_id,
        "type": "timeseries",
        "title": title,
        "datasource": _DS,
        "gridPos": {"h": 8, "w": 12, "x": x, "y": y},
        "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
        "targets": [
            {"refId": chr(ord("A") + i), "datasource": _DS, "expr": expr, "legendFormat": legend}
            for i, (expr, legend) in enumerate(targets)
        ],
    }


def _row(panel_id: int, title: str, y: int) -> dict[str, Any]:
    return {
        "id": panel_id,
        "type": "row",
        "title": title,
        "collapsed": False,
        "gridPos": {"h": 1, "w": 24, "x": 0, "y": y},
        "panels": [],
    }


def _latency(q: str) -> str:
    return (
        f"histogram_quantile({q}, sum by (le, model_name) "
        f"(rate(tfserving_request_latency_seconds_bucket{{{_SEL}}}[5m])))"
    )


def dashboard(model_name: str) -> dict[str, Any]:
    """The dashboard JSON (a dict), with a `model` variable defaulting to `model_name`."""
    panels = [
        _row(1, "Serving (embedded server)", 0),
        _panel(
            2,
            "Request rate",
            [
                (
                    f"sum by (model_name, model_version, api) (rate(tfserving_requests_total{{{_SEL}}}[1m]))",
                    "{{model_name}} v{{model_version}} {{api}}",
                )
            ],
            "reqps",
            0,
            1,
        ),
        _panel(
            3,
            "Latency p50 / p99",
            [(_latency("0.5"), "p50 {{model_name}}"), (_latency("0.99"), "p99 {{model_name}}")],
            "s",
            12,
            1,
        ),
        _panel(
            4,
            "Batch size (rows per batch)",
            [
                (
                    (
                        f"sum by (model_name) (rate(tfserving_batch_size_sum{{{_SEL}}}[5m])) / "
                        f"sum by (model_name) (rate(tfserving_batch_size_count{{{_SEL}}}[5m]))"
                    ),
                    "mean {{model_name}}",
                ),
                (
                    f"histogram_quantile(0.9, sum by (le, model_name) (rate(tfserving_batch_size_bucket{{{_SEL}}}[5m])))",
                    "p90 {{model_name}}",
                ),
            ],
            "short",
            0,
            9,
        ),
        _panel(
            5,
            "Errors",
            [
                (
                    f'sum by (model_name, status) (rate(tfserving_requests_total{{{_SEL}, status!="OK"}}[1m]))',
                    "{{model_name}} {{status}}",
                )
            ],
            "reqps",
            12,
            9,
        ),
        _row(6, "Serving (tensorflow/serving image)", 17),
        _panel(
            7,
            "Request rate by status",
            [
                (
                    f"sum by (model_name, status) (rate(:tensorflow:serving:request_count{{{_SEL}}}[1m]))",
                    "{{model_name}} {{status}}",
                )
            ],
            "reqps",
            0,
            18,
        ),
        _panel(
            8,
            "Latency p50 / p99",
            [
                (
                    (
                        f"histogram_quantile({q}, sum by (le, model_name) "
                        f"(rate(:tensorflow:serving:request_latency_bucket{{{_SEL}}}[5m]))) / 1e6"
                    ),
                    f"{name} {{{{model_name}}}}",
                )
                for q, name in (("0.5", "p50"), ("0.99", "p99"))
            ],
            "s",
            12,
            18,
        ),
        _row(9, "Training", 26),
        _panel(10, "Examples per second", [("trainer_examples_per_second", "{{job}}")], "short", 0, 27),
        _panel(11, "Step", [("trainer_step", "{{job}}")], "short", 12, 27),
        _panel(12, "Loss", [("trainer_loss", "{{job}}")], "short", 0, 35),
    ]
    return {
        "uid": f"serving-{model_name}"[:40],
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
        "panels": panels,
    }
