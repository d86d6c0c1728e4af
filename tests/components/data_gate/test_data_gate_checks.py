"""DataGate's label, skew/drift and unseen-category checks over real TFDV statistics and an inferred schema."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import tensorflow_data_validation as tfdv

from components.data_gate.drift import comparator_problems, with_comparators
from components.data_gate.label_stats import label_problems
from components.data_gate.unseen import tolerated_features


def _stats(frame: pd.DataFrame):
    return tfdv.generate_statistics_from_dataframe(frame)


@pytest.fixture(scope="module")
def train_eval():
    rng = np.random.default_rng(0)
    train = pd.DataFrame(
        {"x": rng.normal(0, 1, 400), "kind": rng.choice(["a", "b"], 400), "y": rng.integers(0, 2, 400)}
    )
    same = pd.DataFrame({"x": rng.normal(0, 1, 400), "kind": rng.choice(["a", "b"], 400), "y": rng.integers(0, 2, 400)})
    shifted = pd.DataFrame(
        {"x": rng.normal(5, 1, 400), "kind": rng.choice(["a", "b"], 400, p=[0.95, 0.05]), "y": rng.integers(0, 2, 400)}
    )
    train_stats = _stats(train)
    return train_stats, _stats(same), _stats(shifted), tfdv.infer_schema(train_stats)


@pytest.mark.parametrize(
    ("column", "task", "values", "expected"),
    [
        ("y", "classification", [1] * 20, "fewer than two classes in the train split: every value is 1"),
        ("y", "regression", [2.5] * 20, "fewer than two distinct values in the train split: every value is 2.5"),
        ("y", "classification", ["yes"] * 20, "fewer than two classes in the train split: 1 distinct value(s)"),
        ("y", "classification", [np.nan] * 20, "has no values in the train split (20 rows)"),
        ("label", "classification", [0, 1] * 10, "label column `label` is not in the train split"),
    ],
    ids=["one_int_class", "one_regression_value", "one_text_class", "no_values", "absent"],
)
def test_unusable_label_is_named_with_the_fix(column, task, values, expected):
    stats = _stats(pd.DataFrame({"y": values, "x": np.arange(20.0)}))
    lines = label_problems(stats, column, task)
    assert len(lines) == 1 and expected in lines[0], lines
    assert f"label column `{column}`" in lines[0] and "choose another label column" in lines[0]


def test_two_class_label_passes():
    assert label_problems(_stats(pd.DataFrame({"y": [0, 1] * 10})), "y", "classification") == []


def test_comparators_use_l_infinity_for_text_and_jensen_shannon_for_numbers(train_eval):
    schema = with_comparators(train_eval[3], 0.1, 0.2)
    kind = tfdv.get_feature(schema, "kind")
    x = tfdv.get_feature(schema, "x")
    assert kind.skew_comparator.infinity_norm.threshold == pytest.approx(0.1)
    assert kind.drift_comparator.infinity_norm.threshold == pytest.approx(0.2)
    assert x.skew_comparator.jensen_shannon_divergence.threshold == pytest.approx(0.1)
    assert not train_eval[3].feature[0].HasField("skew_comparator")  # the input schema is not changed


def test_same_distribution_is_within_the_limits(train_eval):
    train_stats, same, _, schema = train_eval
    assert comparator_problems(train_stats, same, schema, skew=0.3, drift=0.3) == []


def test_shifted_eval_split_is_reported_as_skew_and_drift(train_eval):
    train_stats, _, shifted, schema = train_eval
    lines = comparator_problems(train_stats, shifted, schema, skew=0.3, drift=0.3, features=["x", "kind"])
    assert any(line.startswith("feature `x`: skew") and "data.checks.skew: 0.3" in line for line in lines), lines
    assert any(line.startswith("feature `kind`: drift") and "data.checks.drift: 0.3" in line for line in lines), lines
    assert not any("feature `y`" in line for line in lines)  # not compared: not in `features`


def test_no_limits_no_checks(train_eval):
    train_stats, _, shifted, schema = train_eval
    assert comparator_problems(train_stats, shifted, schema, skew=None, drift=None) == []


def _unseen_case(eval_only_rows: int):
    train = pd.DataFrame({"kind": ["a", "b", "c"] * 100})
    evaluation = pd.DataFrame({"kind": ["a", "b", "c"] * 33 + ["new"] * eval_only_rows})
    schema = tfdv.infer_schema(_stats(train))
    eval_stats = _stats(evaluation)
    return tfdv.validate_statistics(eval_stats, schema), eval_stats, schema


@pytest.mark.parametrize(
    ("eval_only_rows", "limit", "tolerated"),
    [(1, 0.01, {"kind"}), (5, 0.01, set()), (1, 0.0, set()), (5, 0.1, {"kind"})],
    ids=["1pct_of_1_row", "1pct_of_5_rows", "strict", "10pct_of_5_rows"],
)
def test_rare_categories_only_in_eval_are_tolerated_up_to_the_limit(eval_only_rows, limit, tolerated):
    anomalies, eval_stats, schema = _unseen_case(eval_only_rows)
    assert "kind" in anomalies.anomaly_info  # TFDV flags any unseen value
    assert tolerated_features(anomalies, eval_stats, schema, limit) == tolerated


def test_new_texts_in_eval_are_no_anomaly_for_free_text_columns_only():
    from components.data_gate.component import _free_text_tolerance

    # Few distinct training texts: TFDV gives `review` a domain of them, as it does `kind`.
    train = pd.DataFrame({"review": [f"text number {i % 30}" for i in range(300)], "kind": ["a", "b", "c"] * 100})
    evaluation = pd.DataFrame({"review": [f"a new text {i}" for i in range(30)], "kind": ["a", "b", "new"] * 10})
    schema = tfdv.infer_schema(_stats(train))
    anomalies = tfdv.validate_statistics(_stats(evaluation), schema)
    assert {"review", "kind"} <= set(anomalies.anomaly_info)
    assert _free_text_tolerance(["review"])("eval", anomalies) == {"review"}
    assert _free_text_tolerance([])("eval", anomalies) == set()
    # It adds to another tolerance rather than replacing it.
    assert _free_text_tolerance(["review"], lambda split, found: {"kind"})("eval", anomalies) == {"review", "kind"}
