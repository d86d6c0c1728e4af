"""Eval metrics against the spec's thresholds and the last blessed model, one row per metric.

Whether a gated metric passed comes from the Evaluator's verdict (TFMA's validation result, as
the run summary's reasons), not from a second reading of the thresholds here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

__all__ = ["MetricRow", "metric_rows"]


@dataclasses.dataclass
class MetricRow:
    """One metric: its value, the bounds it is held to, the change against the baseline, and the outcome.

    `passed` is None when no threshold applies or the model was not evaluated; `change` is None
    without a blessed baseline; `interval` (lower, upper) is None without `evaluation.confidence`.
    """

    name: str
    value: float | None
    minimum: float | None = None
    maximum: float | None = None
    max_regression: float | None = None
    change: float | None = None
    passed: bool | None = None
    interval: tuple[float, float] | None = None


def _gated_names(name: str, gate, metrics: Mapping[str, float]) -> list[str]:
    """`precision` gated per class is scored as `precision@<class>`: one row per class."""
    per_class = sorted(m for m in metrics if m.startswith(f"{name}@"))
    classes = getattr(gate, "classes", None)
    if classes:
        per_class = [m for m in per_class if m.split("@", 1)[1] in {str(c) for c in classes}]
    return per_class if name not in metrics and per_class else [name]


def metric_rows(
    metrics: Mapping[str, float],
    changes: Mapping[str, float],
    thresholds: Mapping,
    reasons: Sequence[str] = (),
    evaluated: bool = True,
    intervals: Mapping[str, Sequence[float]] | None = None,
) -> list[MetricRow]:
    """Every gated metric (first) and every other computed one.

    Args:
        metrics: the candidate's metrics (`RunSummary.metrics`).
        changes: metric -> change against the last blessed model (`RunSummary.changes`).
        thresholds: `spec.evaluation.thresholds` (metric name -> ThresholdSpec).
        reasons: the verdict's reasons (`RunSummary.reasons`); a failed gate's reason starts with its name.
        evaluated: whether the Evaluator gave a verdict (`RunSummary.blessed is not None`).
        intervals: metric -> [value, lower, upper] (`RunSummary.confidence["intervals"]`), or None.

    Returns:
        The rows; a gated metric that was not computed has value None.
    """
    rows = []
    gated = set()
    for name, gate in thresholds.items():
        for metric in _gated_names(name, gate, metrics):
            gated.add(metric)
            failed = any(reason.startswith(f"{metric} ") for reason in reasons)
            rows.append(
                MetricRow(
                    metric,
                    metrics.get(metric),
                    gate.min,
                    gate.max,
                    gate.max_regression,
                    changes.get(metric),
                    (not failed) if evaluated else None,
                )
            )
    rows.extend(MetricRow(m, metrics[m], change=changes.get(m)) for m in sorted(metrics) if m not in gated)
    for row in rows:
        bounds = (intervals or {}).get(row.name)
        row.interval = (bounds[1], bounds[2]) if bounds else None
    return rows
