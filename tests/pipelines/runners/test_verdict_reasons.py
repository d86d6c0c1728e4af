"""Every blessing verdict carries a reason: failed thresholds, the baseline, NaN metrics."""

from __future__ import annotations

import math

import pytest
from tensorflow_model_analysis.proto import config_pb2, metrics_for_slice_pb2, validation_result_pb2

from components.evaluator.eval_config import Baseline
from components.evaluator.verdict import describe_failure, explain, read_verdict, write_verdict
from pipelines.outcome.summary import RunSummary, format_summary


def _failure(name: str, value: float, lower=None, upper=None, change=None, is_diff=False):
    threshold = config_pb2.MetricThreshold()
    if lower is not None:
        threshold.value_threshold.lower_bound.value = lower
    if upper is not None:
        threshold.value_threshold.upper_bound.value = upper
    if change is not None:
        threshold.change_threshold.absolute.value = change
    return validation_result_pb2.ValidationFailure(
        metric_key=metrics_for_slice_pb2.MetricKey(name=name, is_diff=is_diff),
        metric_threshold=threshold,
        metric_value=metrics_for_slice_pb2.MetricValue(double_value={"value": value}),
    )


def _validation(ok: bool, *failures) -> validation_result_pb2.ValidationResult:
    result = validation_result_pb2.ValidationResult(validation_ok=ok)
    if failures:
        result.metric_validations_per_slice.add(failures=failures)
    return result


@pytest.mark.parametrize(
    "failure,text",
    [
        (_failure("precision@Adelie", 0.7143, lower=0.9), "precision@Adelie = 0.7143 is below the minimum 0.9000"),
        (_failure("mean_squared_error", 3.5, upper=2.0), "mean_squared_error = 3.5000 is above the maximum 2.0000"),
        (
            _failure("auc", -0.03, change=-0.01, is_diff=True),
            "auc changed by -0.0300 against the last blessed model; allowed at worst -0.0100 (max_regression)",
        ),
    ],
)
def test_failed_threshold_reads_value_against_bound(failure, text):
    assert describe_failure(failure) == text


def test_failed_thresholds_are_the_reasons():
    blessed, reasons = explain(_validation(False, _failure("accuracy", 0.4, lower=0.8)), {"accuracy": 0.4}, None)

    assert (blessed, reasons) == (False, ["accuracy = 0.4000 is below the minimum 0.8000"])


def test_all_thresholds_met_is_the_reason_for_a_blessing():
    assert explain(_validation(True), {"accuracy": 0.9}, None) == (True, ["all thresholds met"])


def test_nan_metric_voids_a_blessing_that_tfma_gave():
    blessed, reasons = explain(_validation(True), {"accuracy": 0.9, "binary_crossentropy": math.nan}, None)

    assert not blessed
    assert reasons[0].startswith("binary_crossentropy is nan on the eval split: the labels or the model's scores")


def test_ungated_per_class_nan_does_not_void_a_blessing():
    # precision of a class the model never predicts is 0/0.
    metrics = {"accuracy": 0.9, "precision@Gentoo": math.nan}

    assert explain(_validation(True), metrics, None)[0]
    assert not explain(_validation(True), metrics, None, gated=frozenset({"precision@Gentoo"}))[0]


@pytest.mark.parametrize(
    "ok,value,text",
    [
        (
            True,
            0.91,
            "no thresholds declared: accuracy 0.9100 beat the majority-class baseline 0.4400 on the eval split",
        ),
        (
            False,
            0.41,
            "no thresholds declared: accuracy 0.4100 did not beat the majority-class baseline 0.4400 on the eval split",
        ),
    ],
)
def test_baseline_verdict_names_the_baseline(ok, value, text):
    baseline = Baseline("accuracy", 0.44, "majority-class baseline")

    assert explain(_validation(ok), {"accuracy": value}, baseline) == (ok, [text])


def test_no_validation_is_not_blessed_with_a_reason():
    blessed, reasons = explain(None, {"accuracy": 0.9}, None)

    assert not blessed
    assert "no thresholds were checked" in reasons[0] and "Add `evaluation.thresholds`" in reasons[0]


def test_verdict_round_trips_through_the_blessing_folder(tmp_path):
    write_verdict(str(tmp_path), False, ["recall@Chinstrap = 0.5000 is below the minimum 0.9000"])

    assert read_verdict(str(tmp_path)) == {
        "blessed": False,
        "reasons": ["recall@Chinstrap = 0.5000 is below the minimum 0.9000"],
    }
    assert read_verdict(str(tmp_path / "missing")) is None


def test_summary_never_prints_a_verdict_without_a_reason():
    line = format_summary(RunSummary(blessed=False), 1.0, "/logs/run.log").splitlines()[0]

    assert line == "Model: NOT BLESSED (the Evaluator recorded no reason: see its log)"
