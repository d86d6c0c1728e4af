"""EvalConfig building: binary and multi-class models, per-class and aggregated gates, the baseline gate."""

from __future__ import annotations

import json

import pytest
import tensorflow_model_analysis as tfma

from components.evaluator.eval_config import Baseline, EvaluationRequest, build_eval_config
from components.evaluator.executor import gated_metric_names

CLASSES = ["Adelie", "Chinstrap", "Gentoo"]


def _request(metrics, thresholds=None, task="classification", **kwargs) -> EvaluationRequest:
    return EvaluationRequest(
        label_key="species", task=task, metrics=tuple(metrics), thresholds=thresholds or {}, **kwargs
    )


def _gated_keys(config: tfma.EvalConfig) -> dict[str, list]:
    """Metric name -> the TFMA keys TFMA itself will validate (its own threshold lookup)."""
    config = tfma.utils.update_eval_config_with_defaults(config, has_baseline=False, rubber_stamp=True)
    keys: dict[str, list] = {}
    for key in tfma.metrics.metric_thresholds_from_metrics_specs(config.metrics_specs, eval_config=config):
        keys.setdefault(key.name, []).append(key)
    return keys


def _names(config: tfma.EvalConfig) -> list[str]:
    return [json.loads(m.config)["name"] for spec in config.metrics_specs for m in spec.metrics]


def test_binary_model_is_scored_on_probability_with_the_spec_thresholds():
    config = build_eval_config(
        _request(["binary_accuracy", "auc"], {"binary_accuracy": {"min": 0.6, "max_regression": 0.0}})
    )

    assert config.model_specs[0].prediction_key == "probability"
    assert config.model_specs[0].label_key == "species"
    assert _names(config) == ["binary_accuracy", "auc"]
    threshold = config.metrics_specs[0].metrics[0].threshold
    assert threshold.value_threshold.lower_bound.value == pytest.approx(0.6)
    assert threshold.change_threshold.direction == tfma.MetricDirection.HIGHER_IS_BETTER
    assert not config.metrics_specs[0].metrics[1].HasField("threshold")


def test_multiclass_model_is_scored_on_scores_with_a_metric_per_class():
    config = build_eval_config(_request(["accuracy", "precision", "recall", "macro_auc"]), CLASSES)

    assert config.model_specs[0].prediction_key == "scores"
    names = _names(config)
    for cls in CLASSES:
        assert f"precision@{cls}" in names and f"recall@{cls}" in names
    classes_by_spec = {
        json.loads(spec.metrics[0].config)["name"]: list(spec.binarize.class_ids.values)
        for spec in config.metrics_specs
        if spec.HasField("binarize")
    }
    assert classes_by_spec == {"precision@Adelie": [0], "precision@Chinstrap": [1], "precision@Gentoo": [2]}


def test_per_class_threshold_gates_only_the_named_class():
    config = build_eval_config(_request(["precision"], {"precision": {"min": 0.9, "classes": ["Gentoo"]}}), CLASSES)

    gated = _gated_keys(config)
    assert list(gated) == ["precision@Gentoo"]
    assert [k.sub_key.class_id for k in gated["precision@Gentoo"]] == [2]
    assert gated_metric_names(config) == {"precision@Gentoo"}


def test_per_class_threshold_without_classes_gates_every_class():
    config = build_eval_config(_request(["recall"], {"recall": {"min": 0.5}}), CLASSES)

    assert sorted(_gated_keys(config)) == ["recall@Adelie", "recall@Chinstrap", "recall@Gentoo"]


@pytest.mark.parametrize(
    "name,aggregation", [("macro_auc", "macro_average"), ("weighted_auc", "weighted_macro_average")]
)
def test_aggregated_auc_threshold_gates_the_average_only(name, aggregation):
    config = build_eval_config(_request([name], {name: {"min": 0.7}}), CLASSES)

    keys = _gated_keys(config)[name]
    assert len(keys) == 1
    assert getattr(keys[0].aggregation_type, aggregation)
    assert not keys[0].sub_key


def test_top_k_accuracy_uses_the_spec_k():
    config = build_eval_config(_request(["top_k_accuracy"], top_k=2), CLASSES)

    metric = config.metrics_specs[0].metrics[0]
    assert metric.class_name == "SparseTopKCategoricalAccuracy"
    assert json.loads(metric.config) == {"name": "top_k_accuracy", "k": 2}


def test_regression_model_is_scored_on_prediction():
    config = build_eval_config(_request(["mean_squared_error"], task="regression"))

    assert config.model_specs[0].prediction_key == "prediction"
    assert config.metrics_specs[0].metrics[0].class_name == "MeanSquaredError"


@pytest.mark.parametrize(
    "baseline,bound,value",
    [
        (Baseline("accuracy", 0.44, "majority-class baseline"), "lower_bound", 0.44),
        (Baseline("mean_squared_error", 2.5, "mean baseline"), "upper_bound", 2.5),
    ],
)
def test_baseline_becomes_a_strict_value_threshold_on_an_added_metric(baseline, bound, value):
    task = "regression" if baseline.metric == "mean_squared_error" else "classification"
    config = build_eval_config(
        _request(["example_count"], task=task), CLASSES if task == "classification" else None, baseline
    )

    gated = [m for spec in config.metrics_specs for m in spec.metrics if m.HasField("threshold")]
    assert [json.loads(m.config)["name"] for m in gated] == [baseline.metric]
    limit = getattr(gated[0].threshold.value_threshold, bound).value
    assert limit != value and limit == pytest.approx(value)
    # Strict: the baseline's own score must not pass.
    assert (limit > value) if bound == "lower_bound" else (limit < value)


def test_request_round_trips_through_the_executor_flag():
    request = _request(["precision"], {"precision": {"min": 0.9, "classes": ["Gentoo"]}}, classes=tuple(CLASSES))

    assert EvaluationRequest.from_flags(["--other=1", request.to_flag()]) == request
    assert EvaluationRequest.from_flags(["--other=1"]) is None


@pytest.mark.parametrize(
    "metrics,thresholds,classes,message",
    [
        (["auc"], {}, CLASSES, "metric `auc` scores a binary label, but the label has 3 classes. Use `macro_auc`"),
        (["binary_accuracy"], {}, CLASSES, "Use `accuracy`"),
        (["macro_auc"], {}, None, "metric `macro_auc` needs 3 or more classes, but the label has 2. Use `auc`"),
        (["top_k_accuracy"], {}, ["no", "yes"], "needs 3 or more classes"),
        (
            ["precision"],
            {"precision": {"min": 0.5, "classes": ["Emperor"]}},
            CLASSES,
            "names classes the label does not have: ['Emperor']. Expected some of: ['Adelie', 'Chinstrap', 'Gentoo']",
        ),
        (["precision"], {"precision": {"min": 0.5, "classes": ["yes"]}}, None, "Remove `classes`"),
        (["confusion_matrix"], {"confusion_matrix": {"min": 0.5}}, CLASSES, "cannot gate the blessing"),
        (["f1"], {}, CLASSES, "unknown metric `f1`"),
    ],
)
def test_bad_metric_for_the_label_is_a_clear_error(metrics, thresholds, classes, message):
    with pytest.raises(ValueError) as error:
        build_eval_config(_request(metrics, thresholds), classes)

    assert message in str(error.value)
