"""The report's binary confusion matrix and residuals, read from real TFMA output and drawn in the page.

TFMA computes the Evaluator's report plots (`components/evaluator/report_plots.py`) on small tables
of labels and predictions (`tfma.analyze_raw_data`, TFMA's model-agnostic run); the expected numbers
are worked out from the same tables with numpy.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from components.evaluator.report_plots import CALIBRATION_BUCKETS, label_range, report_metrics_spec
from pipelines.report.collect import ReportData, RunFacts
from pipelines.report.dag import layout
from pipelines.report.eval_plots import binary_confusion, mean_residual, residual_buckets
from pipelines.report.render import render

RNG = np.random.default_rng(7)
BINARY_LABELS = RNG.integers(0, 2, 60)
# Scores that lean towards the label, never exactly 0.5 (TFMA counts a score above the threshold as positive).
BINARY_SCORES = np.clip(0.25 + 0.5 * BINARY_LABELS + RNG.normal(0, 0.25, 60), 0.01, 0.99).round(3)
BINARY_SCORES[BINARY_SCORES == 0.5] = 0.51
REGRESSION_LABELS = RNG.uniform(25, 346, 80).round(1)
REGRESSION_PREDICTIONS = REGRESSION_LABELS * 0.8 + 40 + RNG.normal(0, 15, 80)


def _off_the_edges(predictions, labels):
    """Predictions moved off the buckets' edges: TFMA buckets finely first, so an edge is exact to 1/10,000 only."""
    left, right = label_range(labels)
    fine = (right - left) / 10_000
    edges = left + np.arange(CALIBRATION_BUCKETS + 1) * (right - left) / CALIBRATION_BUCKETS
    near = np.abs(predictions[:, None] - edges[None, :]).min(axis=1) < 2 * fine
    return np.where(near, predictions + 3 * fine, predictions)


REGRESSION_PREDICTIONS = _off_the_edges(REGRESSION_PREDICTIONS, REGRESSION_LABELS)


def _analyze(labels, predictions, spec, folder) -> str:
    import pandas as pd
    import tensorflow_model_analysis as tfma

    config = tfma.EvalConfig(
        model_specs=[tfma.ModelSpec(label_key="label", prediction_key="prediction")],
        slicing_specs=[tfma.SlicingSpec()],
        metrics_specs=[spec, tfma.MetricsSpec(metrics=[tfma.MetricConfig(class_name="ExampleCount")])],
    )
    tfma.analyze_raw_data(pd.DataFrame({"label": labels, "prediction": predictions}), config, str(folder))
    return str(folder)


@pytest.fixture(scope="module")
def binary_uri(tmp_path_factory):
    spec = report_metrics_spec("classification", 2)
    return _analyze(BINARY_LABELS, BINARY_SCORES, spec, tmp_path_factory.mktemp("binary_eval"))


@pytest.fixture(scope="module")
def regression_uri(tmp_path_factory):
    spec = report_metrics_spec("regression", 0, label_range(REGRESSION_LABELS))
    return _analyze(REGRESSION_LABELS, REGRESSION_PREDICTIONS, spec, tmp_path_factory.mktemp("regression_eval"))


def _data(**fields) -> ReportData:
    run = RunFacts("2026-11-24T00:00:00", "succeeded", 12.0, "/logs/run.log", ["Evaluator"], {})
    return ReportData("taxi", run, layout(run.order, run.upstream, {"Evaluator": "executed"}, {}), **fields)


def test_the_binary_confusion_matrix_counts_each_outcome_at_one_half(binary_uri):
    matrix = binary_confusion(binary_uri)
    predicted = BINARY_SCORES > 0.5
    actual = BINARY_LABELS == 1
    assert matrix.threshold == pytest.approx(0.5)
    assert (matrix.true_positives, matrix.false_positives, matrix.true_negatives, matrix.false_negatives) == (
        np.sum(predicted & actual),
        np.sum(predicted & ~actual),
        np.sum(~predicted & ~actual),
        np.sum(~predicted & actual),
    )
    (tn, fp), (fn, tp) = matrix.rows
    assert tn[1] + fp[1] == pytest.approx(1.0) and fn[1] + tp[1] == pytest.approx(1.0)
    assert tp[1] == pytest.approx(np.sum(predicted & actual) / np.sum(actual))


def test_residual_buckets_hold_each_buckets_mean_label_and_prediction(regression_uri):
    buckets = residual_buckets(regression_uri)
    assert sum(b.count for b in buckets) == len(REGRESSION_LABELS)
    assert [b.low for b in buckets] == sorted(b.low for b in buckets)
    for bucket in buckets:
        inside = (REGRESSION_PREDICTIONS >= bucket.low) & (REGRESSION_PREDICTIONS < bucket.high)
        assert bucket.count == inside.sum() > 0
        assert bucket.mean_label == pytest.approx(REGRESSION_LABELS[inside].mean())
        assert bucket.mean_prediction == pytest.approx(REGRESSION_PREDICTIONS[inside].mean(), rel=1e-6)
    assert mean_residual(buckets) == pytest.approx(REGRESSION_PREDICTIONS.mean() - REGRESSION_LABELS.mean())


def test_an_evaluation_without_the_report_plots_gives_none(binary_uri, regression_uri):
    assert residual_buckets(binary_uri) == []
    assert binary_confusion(regression_uri) is None
    assert mean_residual([]) is None


def test_the_verdict_reads_no_report_plot_as_a_metric(binary_uri, regression_uri):
    from components.evaluator.verdict import candidate_metrics

    assert candidate_metrics(binary_uri) == {"example_count": len(BINARY_LABELS)}
    assert candidate_metrics(regression_uri) == {"example_count": len(REGRESSION_LABELS)}


def test_the_page_shows_a_two_by_two_matrix_with_counts_and_shares(binary_uri):
    matrix = binary_confusion(binary_uri)
    html = render(_data(blessed=True, reasons=["all thresholds met"], binary_confusion=matrix))
    table = re.search(r'<table id="binary-confusion-matrix".*?</table>', html, flags=re.S).group(0)
    cells = dict(
        re.findall(r'data-cell="(\w\w)"><span class="cell-name">\w\w</span> <span class="count">(\d+)<', table)
    )
    assert cells == {
        "TP": f"{matrix.true_positives:.0f}",
        "FP": f"{matrix.false_positives:.0f}",
        "TN": f"{matrix.true_negatives:.0f}",
        "FN": f"{matrix.false_negatives:.0f}",
    }
    assert table.count("<tr>") == 3 and "predicted 1" in table and "actual 0" in table
    shares = re.findall(r'<span class="share">([\d.]+)%</span>', table)
    assert float(shares[0]) + float(shares[1]) == pytest.approx(100, abs=0.11)


def test_the_page_names_the_binary_classes_when_the_label_has_them(binary_uri):
    html = render(_data(blessed=True, classes=["no tip", "tip"], binary_confusion=binary_confusion(binary_uri)))
    assert "predicted tip" in html and "actual no tip" in html


def test_the_page_shows_the_residual_chart_table_and_mean_residual(regression_uri):
    buckets = residual_buckets(regression_uri)
    html = render(_data(blessed=True, residuals=buckets))
    assert re.search(r'<div class="residuals"><svg', html)
    rows = re.findall(r'<td class="num residual">([^<]+)</td>', html)
    assert rows == [f"{b.residual:+.4g}" for b in buckets]
    shown = re.search(r'id="mean-residual">[^<]*<strong>([^<]+)</strong>', html).group(1)
    assert float(shown) == pytest.approx(REGRESSION_PREDICTIONS.mean() - REGRESSION_LABELS.mean(), rel=1e-3)


def test_a_report_without_plots_draws_neither(binary_uri):
    html = render(_data(blessed=True))
    assert 'id="binary-confusion-matrix"' not in html and 'class="residuals"' not in html
