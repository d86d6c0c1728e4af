"""`runs` / `runs show` text about spans: span lists as ranges, the blessed metrics and drift tables."""

from __future__ import annotations

import pytest

from pipelines.history.span_tables import across_spans_text, spans_text
from pipelines.report.span_history import SpanDrift, SpanMetrics


@pytest.mark.parametrize(
    ("spans", "text"),
    [([], "-"), ([4], "4"), ([1, 2, 3], "1-3"), ([5, 1, 2, 3], "1-3, 5"), ([2, 4, 6], "2, 4, 6")],
)
def test_spans_read_as_ranges(spans, text):
    assert spans_text(spans) == text


def test_the_blessed_metrics_table_has_a_row_per_span_and_a_column_per_gated_metric():
    metrics = [
        SpanMetrics(2, "run-a", [1, 2], {"auc": 0.81, "binary_accuracy": 0.7}, ["auc"]),
        SpanMetrics(3, "run-b", [2, 3], {"auc": 0.845, "binary_accuracy": 0.75}, ["auc"]),
    ]
    lines = across_spans_text(metrics, [], None)
    assert lines[1] == "Blessed models by span:"
    header, first, second = lines[2].splitlines()
    assert header.split() == ["SPAN", "TRAINED", "ON", "RUN", "AUC"]  # only the gated metric
    assert first.split() == ["2", "1-2", "run-a", "0.8100"]
    assert second.split() == ["3", "2-3", "run-b", "0.8450"]


def test_without_gated_names_every_metric_is_a_column():
    metrics = [SpanMetrics(1, "r", [1], {"auc": 0.8, "loss": 0.4}, [])]
    header = across_spans_text(metrics, [], None)[2].splitlines()[0]
    assert header.split()[-2:] == ["AUC", "LOSS"]


def test_the_drift_table_says_within_or_over_the_limit():
    drift = [SpanDrift(1, 2, "payment_type", 0.05), SpanDrift(2, 3, "trip_miles", 0.41)]
    lines = across_spans_text([], drift, 0.3)
    assert lines[1] == "Drift between spans:"
    _, first, second = lines[2].splitlines()
    assert first.split() == ["1", "->", "2", "payment_type", "0.0500", "within", "0.3"]
    assert second.split() == ["2", "->", "3", "trip_miles", "0.4100", "over", "0.3"]
    assert across_spans_text([], drift, None)[2].splitlines()[1].split()[-1] == "-"


def test_nothing_across_spans_gives_no_lines():
    assert across_spans_text([], [], 0.3) == []
