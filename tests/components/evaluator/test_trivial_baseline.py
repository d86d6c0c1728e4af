"""The trivial baseline a spec without thresholds is held to."""

from __future__ import annotations

import numpy as np
import pytest

from components.evaluator.eval_config import EvaluationRequest
from components.evaluator.trivial_baseline import choose_baseline

CLASSES = ["Adelie", "Chinstrap", "Gentoo"]


def _request(metrics, task="classification") -> EvaluationRequest:
    return EvaluationRequest(label_key="y", task=task, metrics=tuple(metrics))


def _labels(*values):
    return lambda: np.array(values)


def _never():
    raise AssertionError("the labels were read, but this baseline needs no pass over the data")


def test_multiclass_baseline_is_the_majority_share_as_accuracy():
    baseline = choose_baseline(_request(["precision"]), CLASSES, _labels(0, 0, 0, 1, 2, 2, 0, 1))

    assert (baseline.metric, baseline.value) == ("accuracy", 0.5)
    assert baseline.name == "majority-class baseline"


def test_binary_with_auc_must_beat_chance_without_reading_the_data():
    baseline = choose_baseline(_request(["binary_accuracy", "auc"]), None, _never)

    assert (baseline.metric, baseline.value, baseline.name) == ("auc", 0.5, "chance-level baseline")


def test_binary_without_auc_gates_the_declared_binary_accuracy():
    baseline = choose_baseline(_request(["binary_accuracy"]), None, _labels(1, 0, 0, 0))

    assert (baseline.metric, baseline.value) == ("binary_accuracy", 0.75)


def test_single_class_label_cannot_be_beaten_and_says_why():
    baseline = choose_baseline(_request(["accuracy"]), ["0", "1"], _labels(1, 1, 1))

    assert baseline.value == 1.0
    assert baseline.note == "its labels hold one class only, so no model can beat this baseline"


def test_regression_baseline_is_the_mse_of_predicting_the_mean():
    baseline = choose_baseline(_request(["mean_absolute_error"], task="regression"), None, _labels(1.0, 2.0, 3.0, 6.0))

    assert baseline.metric == "mean_squared_error"
    assert baseline.value == pytest.approx(np.var([1.0, 2.0, 3.0, 6.0]))
    assert baseline.note == "the mean label is 3"


def test_empty_eval_split_is_a_clear_error():
    with pytest.raises(ValueError, match="the eval split holds no examples.*Give the `eval` split more weight"):
        choose_baseline(_request(["accuracy"]), CLASSES, _labels())
