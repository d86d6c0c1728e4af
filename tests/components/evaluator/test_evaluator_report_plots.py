"""The Evaluator's report plots: which label gets which, never gated, and never a reason to fail the evaluation."""

from __future__ import annotations

import json

import pytest
import tensorflow_model_analysis as tfma

from components.evaluator.eval_config import EvaluationRequest, build_eval_config
from components.evaluator.executor import _add_report_plots, gated_metric_names
from components.evaluator.report_plots import CLASS_CALIBRATION, label_range, report_metrics_spec


@pytest.mark.parametrize(
    "task, num_classes, span, class_names",
    [
        ("classification", 2, None, ["ConfusionMatrixAtThresholds", "CalibrationPlot"]),
        ("regression", 0, (1.0, 2.0), ["CalibrationPlot"]),
        ("regression", 0, None, None),  # the labels could not be read: no plot
        ("classification", 3, None, ["CalibrationPlot"]),  # one per class (binarized); the spec's confusion_matrix
        ("classification", 20, None, ["CalibrationPlot"]),
        ("classification", 21, None, None),  # too many classes: the report says so
    ],
)
def test_the_report_plots_fit_the_label_and_carry_no_threshold(task, num_classes, span, class_names):
    spec = report_metrics_spec(task, num_classes, span)
    if class_names is None:
        assert spec is None
        return
    assert [m.class_name for m in spec.metrics] == class_names
    assert not any(m.HasField("threshold") for m in spec.metrics)
    if task == "classification" and num_classes > 2:
        assert list(spec.binarize.class_ids.values) == list(range(num_classes))
        assert json.loads(spec.metrics[0].config)["name"] == CLASS_CALIBRATION
    else:
        assert not spec.HasField("binarize")


@pytest.mark.parametrize(
    "labels, expected",
    [
        ([3.0, 1.0, 2.0], (1.0, 3.0)),
        ([2.0, 2.0], (1.5, 2.5)),
        ([float("nan"), 4.0, 5.0], (4.0, 5.0)),
        ([], None),
        ([float("nan")], None),
    ],
)
def test_the_label_range_spans_the_finite_labels(labels, expected):
    assert label_range(labels) == expected


def _request(task: str) -> EvaluationRequest:
    metric = "root_mean_squared_error" if task == "regression" else "binary_accuracy"
    return EvaluationRequest(label_key="y", task=task, metrics=(metric,), thresholds={metric: {"min": 0.1}})


def test_unreadable_labels_cost_a_regression_its_plot_and_nothing_else():
    def unreadable():
        raise ValueError("the eval split /data/eval holds no files")

    config = build_eval_config(_request("regression"))
    before = tfma.EvalConfig()
    before.CopyFrom(config)
    _add_report_plots(config, _request("regression"), None, unreadable)
    assert config == before


@pytest.mark.parametrize(
    "task, added",
    [("classification", ["ConfusionMatrixAtThresholds", "CalibrationPlot"]), ("regression", ["CalibrationPlot"])],
)
def test_the_added_plot_leaves_the_gates_as_they_were(task, added):
    config = build_eval_config(_request(task))
    gated = gated_metric_names(config)
    specs = len(config.metrics_specs)
    _add_report_plots(config, _request(task), None, lambda: [10.0, 20.0, 30.0])
    assert [m.class_name for m in config.metrics_specs[-1].metrics] == added
    assert len(config.metrics_specs) == specs + 1 and gated_metric_names(config) == gated
    settings = json.loads(config.metrics_specs[-1].metrics[0].config)
    if task == "regression":  # the buckets span the eval labels
        assert (settings["left"], settings["right"]) == (10.0, 30.0)
    else:
        assert settings["thresholds"] == [0.5]
