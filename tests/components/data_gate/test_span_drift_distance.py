"""`worst_drift`: the feature that moved most between two spans, with TFDV's distance, within the limit too."""

from __future__ import annotations

import pandas as pd
import pytest
import tensorflow_data_validation as tfdv

from components.data_gate.drift import span_drift_problems, worst_drift


def _stats(frame: pd.DataFrame):
    return tfdv.generate_statistics_from_dataframe(frame)


@pytest.fixture(scope="module")
def spans():
    previous = pd.DataFrame({"payment": ["cash"] * 60 + ["card"] * 40, "miles": [float(i % 10) for i in range(100)]})
    moved = pd.DataFrame({"payment": ["cash"] * 45 + ["card"] * 55, "miles": [float(i % 10) for i in range(100)]})
    previous_stats = _stats(previous)
    return previous_stats, _stats(moved), _stats(previous), tfdv.infer_schema(previous_stats)


def test_the_categorical_feature_that_moved_is_the_worst_with_its_l_infinity_distance(spans):
    previous, moved, _, schema = spans
    feature, distance = worst_drift(moved, previous, schema)
    # L-infinity over the category shares: cash 0.60 -> 0.45, card 0.40 -> 0.55.
    assert feature == "payment" and distance == pytest.approx(0.15, abs=1e-6)


def test_a_distance_within_the_limit_is_measured_and_is_no_problem(spans):
    previous, moved, _, schema = spans
    assert span_drift_problems(moved, previous, schema, 0.3, (2, 1)) == []
    assert worst_drift(moved, previous, schema)[1] < 0.3


def test_the_same_data_drifts_by_nothing(spans):
    previous, _, same, schema = spans
    _, distance = worst_drift(same, previous, schema)
    assert distance == pytest.approx(0.0, abs=1e-9)
