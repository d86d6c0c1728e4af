"""`fairness.py`: the rates TFMA computes per slice, the gaps between slices of one spec, and their lines."""

from __future__ import annotations

import json
import math

import tensorflow_model_analysis as tfma
from tensorflow_model_analysis.metrics import metric_types

from components.evaluator.eval_config import EvaluationRequest
from components.evaluator.fairness import add_fairness, fairness_gaps, fairness_lines, gap_reasons

FAIRNESS = {"thresholds": [0.5], "max_gap": {"false_positive_rate": 0.1}, "min_examples": 30}
NAMES = {("region",): ["region=A", "region=B", "region=C"], ("hour",): ["hour=1", "hour=2"]}


def _row(name, count, fpr, positive=0.5):
    return {
        "slice": name,
        "example_count": count,
        "metrics": {"false_positive_rate@0.5": fpr, "positive_rate@0.5": positive, "false_negative_rate@0.5": 0.1},
    }


def test_every_rate_at_every_cut_is_a_tfma_metric_named_rate_at_cut():
    config = tfma.EvalConfig()

    add_fairness(config, {"thresholds": [0.3, 0.7]})

    names = [(m.class_name, json.loads(m.config)) for m in config.metrics_specs[0].metrics]
    assert names == [
        ("FPR", {"name": "false_positive_rate@0.3", "thresholds": [0.3]}),
        ("FNR", {"name": "false_negative_rate@0.3", "thresholds": [0.3]}),
        ("PredictedPositiveRate", {"name": "positive_rate@0.3", "thresholds": [0.3]}),
        ("FPR", {"name": "false_positive_rate@0.7", "thresholds": [0.7]}),
        ("FNR", {"name": "false_negative_rate@0.7", "thresholds": [0.7]}),
        ("PredictedPositiveRate", {"name": "positive_rate@0.7", "thresholds": [0.7]}),
    ]
    known = metric_types.registered_metrics()  # TFMA finds a MetricConfig's class here by its name
    assert all(metric.class_name in known for metric in config.metrics_specs[0].metrics)


def test_the_request_carries_fairness_through_the_executor_flag():
    request = EvaluationRequest(label_key="y", task="classification", metrics=("auc",), fairness=FAIRNESS)

    assert EvaluationRequest.from_flags([request.to_flag()]) == request


def test_a_gap_is_taken_within_one_slice_spec_over_slices_big_enough():
    rows = [
        _row("region=A", 100, 0.05),
        _row("region=B", 100, 0.30),
        _row("region=C", 10, 0.90),  # too small: not compared
        _row("hour=1", 100, 0.0),  # another spec: not compared with the regions
        _row("hour=2", 100, 0.02),
    ]

    gaps = {(g["metric"], tuple(g["slices"])): g for g in fairness_gaps(rows, NAMES, FAIRNESS)}

    region = gaps[("false_positive_rate@0.5", ("region",))]
    assert (region["high"], region["low"], region["gap"], region["breach"]) == ("region=B", "region=A", 0.25, True)
    assert not gaps[("false_positive_rate@0.5", ("hour",))]["breach"]
    assert gaps[("positive_rate@0.5", ("region",))]["max_gap"] is None
    (reason,) = gap_reasons(gaps.values())
    assert reason == (
        "fairness: false_positive_rate@0.5 differs by 0.2500 between region=B (0.3000) and region=A (0.0500); "
        "allowed at most 0.1000 (max_gap)"
    )


def test_a_slice_where_the_rate_is_undefined_is_left_out():
    rows = [_row("region=A", 100, 0.05), _row("region=B", 100, math.nan), _row("region=C", 100, 0.1)]

    (gap,) = [g for g in fairness_gaps(rows, NAMES, FAIRNESS) if g["rate"] == "false_positive_rate"]

    assert (gap["high"], gap["low"], gap["breach"]) == ("region=C", "region=A", False)


def test_a_gap_exactly_at_max_gap_holds():
    rows = [_row("region=A", 100, 0.25), _row("region=B", 100, 0.35)]

    (gap,) = [g for g in fairness_gaps(rows, NAMES, FAIRNESS) if g["rate"] == "false_positive_rate"]

    assert gap["gap"] == 0.1 and not gap["breach"]


def test_the_lines_show_each_rates_widest_gap_breached_first():
    rows = [_row("region=A", 100, 0.05, 0.4), _row("region=B", 100, 0.30, 0.45), _row("hour=1", 100, 0.0, 0.9)]
    rows.append(_row("hour=2", 100, 0.02, 0.2))

    lines = fairness_lines(fairness_gaps(rows, NAMES, FAIRNESS))

    assert lines == [
        "Fairness: false_positive_rate@0.5 gap 0.2500 (region=B 0.3000, region=A 0.0500), max_gap 0.1000: BREACHED",
        "Fairness: false_negative_rate@0.5 gap 0.0000 (region=B 0.1000, region=A 0.1000), not gated",
        "Fairness: positive_rate@0.5 gap 0.7000 (hour=1 0.9000, hour=2 0.2000), not gated",
    ]
