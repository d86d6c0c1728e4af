"""Metric rows: gated metrics first, with their bounds and the verdict's outcome; then the rest."""

from __future__ import annotations

import pytest

from pipelines.report.evaluation import metric_rows
from pipelines.spec.models import ThresholdSpec

METRICS = {"auc": 0.93, "binary_accuracy": 0.86, "loss": 0.3}


def test_gated_metrics_come_first_with_their_bounds_and_change():
    rows = metric_rows(
        METRICS, {"binary_accuracy": -0.01}, {"binary_accuracy": ThresholdSpec(min=0.5, max_regression=0.02)}
    )
    assert [r.name for r in rows] == ["binary_accuracy", "auc", "loss"]
    first = rows[0]
    assert (first.value, first.minimum, first.maximum, first.max_regression, first.change, first.passed) == (
        0.86,
        0.5,
        None,
        0.02,
        -0.01,
        True,
    )
    assert [(r.passed, r.change, r.minimum) for r in rows[1:]] == [(None, None, None), (None, None, None)]


@pytest.mark.parametrize(
    "reasons, evaluated, passed",
    [
        (["binary_accuracy = 0.4000 is below the minimum 0.5000"], True, False),
        (["binary_accuracy changed by -0.0500 against the last blessed model; allowed ..."], True, False),
        (["binary_accuracy_top = 0.1 is below the minimum 0.5"], True, True),  # another metric's reason
        (["all thresholds met"], True, True),
        ([], False, None),
    ],
)
def test_the_outcome_is_the_verdicts(reasons, evaluated, passed):
    (row, *_) = metric_rows(METRICS, {}, {"binary_accuracy": ThresholdSpec(min=0.5)}, reasons, evaluated)
    assert row.passed is passed


def test_a_per_class_gate_shows_one_row_per_class_it_names():
    metrics = {"precision@Adelie": 0.9, "precision@Gentoo": 0.8, "precision@Chinstrap": 0.7, "accuracy": 0.9}
    rows = metric_rows(metrics, {}, {"precision": ThresholdSpec(min=0.6, classes=["Adelie", "Gentoo"])})
    assert [(r.name, r.minimum) for r in rows] == [
        ("precision@Adelie", 0.6),
        ("precision@Gentoo", 0.6),
        ("accuracy", None),
        ("precision@Chinstrap", None),
    ]


def test_a_gated_metric_that_was_not_computed_shows_no_value():
    (row, *_) = metric_rows({}, {}, {"auc": ThresholdSpec(min=0.7)}, ["auc is missing"], True)
    assert (row.name, row.value, row.passed) == ("auc", None, False)


def test_with_confidence_each_metric_row_carries_its_interval():
    from pipelines.report.evaluation import metric_rows
    from pipelines.spec.models import ThresholdSpec

    rows = metric_rows(
        {"auc": 0.9, "binary_accuracy": 0.8},
        {},
        {"auc": ThresholdSpec(min=0.7)},
        intervals={"auc": [0.9, 0.85, 0.95]},
    )

    assert [(r.name, r.interval) for r in rows] == [("auc", (0.85, 0.95)), ("binary_accuracy", None)]
