"""Terminal text about spans for `runs` and `runs show`: the spans a run ingested and trained on, the blessed
models' metrics by span, and the drift between consecutive spans (the report draws the same numbers).

Example:
    >>> spans_text([1, 2, 3, 5])
    '1-3, 5'
"""

from __future__ import annotations

from tabulate import tabulate

from pipelines.report.span_history import SpanDrift, SpanMetrics

__all__ = ["spans_text", "across_spans_text"]


def spans_text(spans: list[int]) -> str:
    """`1-3, 5` for [1, 2, 3, 5]; `-` for none."""
    if not spans:
        return "-"
    ranges: list[list[int]] = []
    for span in sorted(spans):
        if ranges and span == ranges[-1][1] + 1:
            ranges[-1][1] = span
        else:
            ranges.append([span, span])
    return ", ".join(str(low) if low == high else f"{low}-{high}" for low, high in ranges)


def across_spans_text(metrics: list[SpanMetrics], drift: list[SpanDrift], limit: float | None) -> list[str]:
    """`runs show`'s two compact tables: blessed metrics by newest span trained on, and drift per span pair.

    Args:
        metrics: `span_history.span_metrics`, oldest span first.
        drift: `span_history.span_drift`, oldest pair first.
        limit: `data.checks.drift` (None: not set, no column of verdicts).

    Returns:
        Lines; empty when there is neither.
    """
    lines: list[str] = []
    if metrics:
        gated = sorted({name for point in metrics for name in point.gated})
        names = gated or sorted({name for point in metrics for name in point.metrics})
        rows = [
            [point.span, spans_text(point.trained), point.run_id, *(_number(point.metrics.get(n)) for n in names)]
            for point in metrics
        ]
        headers = ["SPAN", "TRAINED ON", "RUN", *(name.upper() for name in names)]
        lines += [
            "",
            "Blessed models by span:",
            tabulate(rows, headers=headers, tablefmt="plain", disable_numparse=True),
        ]
    if drift:
        rows = [
            [
                f"{d.previous} -> {d.span}",
                d.feature,
                f"{d.distance:.4f}",
                "-" if limit is None else ("over" if d.distance > limit else "within") + f" {limit:g}",
            ]
            for d in drift
        ]
        headers = ["SPANS", "WORST FEATURE", "DISTANCE", "LIMIT"]
        lines += ["", "Drift between spans:", tabulate(rows, headers=headers, tablefmt="plain", disable_numparse=True)]
    return lines


def _number(value) -> str:
    return "-" if value is None else f"{value:.4f}"
