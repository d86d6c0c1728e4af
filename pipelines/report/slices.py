"""The report's slices page: the per-slice table in every sort order, and one bar chart per metric.

The page holds no script (the report loads and runs nothing): "sort by" is a
row of radio buttons, each showing the table sorted its way (CSS `:checked`),
and the bars are HTML with their width in percent, so slice names stay HTML
text, escaped like every value from the data. A gated metric's chart draws its
bound as a line across the bars; a gated slice on the wrong side of it is
marked failed.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import Any, Optional

__all__ = ["SliceBar", "SliceChart", "SlicesView", "slices_view"]


@dataclasses.dataclass
class SliceBar:
    """One slice in one metric's chart: its value, the bar's width (% of the chart) and the outcome."""

    slice: str
    value: float
    width: float
    gated: bool
    failed: bool


@dataclasses.dataclass
class SliceChart:
    """One metric over the slices, with its bound (`min` or `max` of the threshold) as `bound_at` % of the chart."""

    metric: str
    bars: list[SliceBar]
    bound: Optional[float] = None
    bound_kind: str = ""
    bound_at: Optional[float] = None


@dataclasses.dataclass
class SlicesView:
    """What the slices page draws: the metric columns, the rows per sort key, and the charts."""

    metrics: list[str]
    orders: dict[str, list[dict[str, Any]]]
    charts: list[SliceChart]
    fairness: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    bounded: bool = False  # rows carry confidence intervals (`evaluation.confidence`)


def _bound(gate) -> tuple[Optional[float], str]:
    if gate is None:
        return None, ""
    if gate.min is not None:
        return gate.min, "min"
    if gate.max is not None:
        return gate.max, "max"
    return None, ""


def _fails(value: float, bound: Optional[float], kind: str) -> bool:
    if bound is None:
        return False
    return value < bound if kind == "min" else value > bound


def _chart(metric: str, rows: Sequence[dict], gate) -> SliceChart:
    scored = [row for row in rows if isinstance(row["metrics"].get(metric), (int, float))]
    bound, kind = _bound(gate)
    values = [row["metrics"][metric] for row in scored if math.isfinite(row["metrics"][metric])]
    top = max([*values, bound or 0.0, 0.0])
    top = 1.0 if top <= 1.0 else top * 1.05  # shares and AUCs on a 0-1 axis; others up to their largest value
    bars = []
    for row in scored:
        value = row["metrics"][metric]
        gated = metric in (row.get("gated") or [])
        width = 100.0 * max(0.0, min(value, top)) / top if math.isfinite(value) else 0.0
        bars.append(SliceBar(row["slice"], value, round(width, 2), gated, gated and _fails(value, bound, kind)))
    bound_at = round(100.0 * bound / top, 2) if bound is not None and 0 <= bound <= top else None
    return SliceChart(metric, bars, bound, kind, bound_at)


def slices_view(slices: Sequence[dict], thresholds: Mapping, fairness: Sequence[dict] = ()) -> Optional[SlicesView]:
    """The slices page for a run's per-slice rows (`RunSummary.slices`), or None without slices.

    Args:
        slices: rows `{"slice", "example_count", "metrics", "gated"}`, and `intervals` with `evaluation.confidence`.
        thresholds: `spec.evaluation.thresholds` (metric name -> ThresholdSpec), for the bounds drawn.
        fairness: the gaps between slices (`RunSummary.fairness`), breached and gated ones first.

    Returns:
        The view; its `orders` map `slice`, `rows` and each metric to the rows sorted by it (metrics ascending).
    """
    if not slices:
        return None
    metrics = sorted({name for row in slices for name in row.get("metrics", {})})
    orders = {
        "slice": list(slices),
        "rows": sorted(slices, key=lambda row: -row["example_count"]),
    }
    for metric in metrics:
        orders[metric] = sorted(slices, key=lambda row, m=metric: row["metrics"].get(m, math.inf))
    gated_first = sorted(metrics, key=lambda m: (m not in thresholds, m))
    gaps = sorted(fairness, key=lambda g: (not g["breach"], g["max_gap"] is None, g["metric"], -g["gap"]))
    charts = [_chart(m, slices, thresholds.get(m)) for m in gated_first]
    return SlicesView(metrics, orders, charts, gaps, bounded=any(row.get("intervals") for row in slices))
