"""`confidence.py`: which value thresholds an interval's bound fails, and how the intervals are shown."""

from __future__ import annotations

import tensorflow_model_analysis as tfma

from components.evaluator.confidence import bound_failures, enable, interval_text, level_text

BOUNDED = {
    "binary_accuracy": [0.82, 0.78, 0.86],
    "mean_absolute_error": [2.0, 1.6, 2.4],
    "precision@Adelie": [0.9, 0.84, 0.96],
    "precision@Gentoo": [0.9, 0.84, 0.96],
}


def test_a_minimum_between_the_lower_bound_and_the_point_estimate_fails():
    (reason,) = bound_failures(BOUNDED, {"binary_accuracy": {"min": 0.8}}, 0.95)

    assert reason == (
        "binary_accuracy = 0.8200 clears the minimum 0.8000, but its lower 95% confidence bound 0.7800 does not "
        "(interval [0.7800, 0.8600]; evaluation.confidence)"
    )


def test_a_bound_that_clears_the_threshold_passes_and_a_failing_point_is_not_repeated():
    assert bound_failures(BOUNDED, {"binary_accuracy": {"min": 0.75}}, 0.95) == []
    assert bound_failures(BOUNDED, {"binary_accuracy": {"min": 0.85}}, 0.95) == []  # TFMA's own reason


def test_a_maximum_is_held_to_the_upper_bound():
    (reason,) = bound_failures(BOUNDED, {"mean_absolute_error": {"max": 2.2}}, 0.9)

    assert "clears the maximum 2.2000, but its upper 90% confidence bound 2.4000 does not" in reason


def test_a_per_class_gate_holds_only_on_its_classes():
    reasons = bound_failures(BOUNDED, {"precision": {"min": 0.88, "classes": ["Gentoo"]}}, 0.975)

    assert [r.split(" =")[0] for r in reasons] == ["precision@Gentoo"]
    assert "lower 97.5% confidence bound" in reasons[0]


def test_the_summary_line_shows_the_gated_metrics_intervals():
    text = interval_text({"level": 0.95, "intervals": BOUNDED, "gated": ["binary_accuracy"]})

    assert text == "Confidence (95%): binary_accuracy 0.8200 [0.7800, 0.8600]"
    assert interval_text({}) == "" and level_text(0.9) == "90%"


def test_enable_asks_tfma_for_jackknife_intervals():
    config = tfma.EvalConfig()

    enable(config)

    assert config.options.compute_confidence_intervals.value
    assert config.options.confidence_intervals.method == tfma.ConfidenceIntervalOptions.JACKKNIFE


def _metric_entry(name: str, value: float, low: float, high: float):
    from tensorflow_model_analysis.proto import metrics_for_slice_pb2

    entry = metrics_for_slice_pb2.MetricsForSlice.MetricKeyAndValue()
    entry.key.name = name
    entry.value.double_value.value = value
    entry.confidence_interval.lower_bound.double_value.value = low
    entry.confidence_interval.upper_bound.double_value.value = high
    entry.confidence_interval.degrees_of_freedom.value = 19
    return entry


def test_an_interval_is_cut_to_the_range_its_metric_can_take():
    """The jackknife's symmetric t-interval ran past 1 for a false positive rate of 0.99."""
    import pytest

    from components.evaluator.confidence import _interval

    def bounds(name, value, low, high):
        return _interval(_metric_entry(name, value, low, high), 0.95)[1:]

    assert bounds("false_positive_rate@0.3", 0.9915, 0.979, 1.0039) == [pytest.approx(0.979), 1.0]
    assert bounds("binary_accuracy", 0.02, -0.01, 0.05) == [0.0, pytest.approx(0.05)]
    assert bounds("mean_squared_error", 0.1, -0.2, 0.4) == [0.0, pytest.approx(0.4)]
    assert bounds("mean_prediction", 1.0, -0.5, 2.5) == [pytest.approx(-0.5), pytest.approx(2.5)]  # unbounded
