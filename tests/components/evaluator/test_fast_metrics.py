"""TFMA's binary metrics with the per-example fast path give TFMA's own numbers (components/evaluator/fast_metrics.py)."""

from __future__ import annotations

import json
import logging

import numpy as np
import pytest
import tensorflow_model_analysis as tfma
from tensorflow_model_analysis.metrics import metric_specs, metric_types, metric_util

import compat
from compat.tfma import fast_combiners
from components.evaluator import fast_metrics
from components.evaluator.eval_config import EvaluationRequest, build_eval_config

PREDICTION_KEY = "probability"
CONFIG = tfma.EvalConfig(model_specs=[tfma.ModelSpec(label_key="big_tipper", prediction_key=PREDICTION_KEY)])
METRICS = [
    ("BinaryAccuracy", {"name": "binary_accuracy"}),
    ("Precision", {"name": "precision"}),
    ("Recall", {"name": "recall", "thresholds": [0.3, 0.7]}),
    ("AUC", {"name": "auc"}),
    ("ConfusionMatrixAtThresholds", {"name": "matrix", "thresholds": [0.25, 0.5]}),
    ("CalibrationPlot", {"name": "calibration", "num_buckets": 20}),
]


def _inputs(label, score) -> metric_types.StandardMetricInputs:
    return metric_types.StandardMetricInputs(
        labels=label, predictions={PREDICTION_KEY: score, "logits": np.array([9.0])}, example_weights=None
    )


def _plain_examples(rows: int, seed: int = 0) -> list:
    random = np.random.default_rng(seed)
    labels = random.integers(0, 2, rows)
    scores = np.clip(labels * 0.3 + random.random(rows) * 0.7, 0, 1).astype(np.float32)
    scores[:5] = [0.0, 1.0, 0.5, 0.25, 0.7]  # on the thresholds and the histogram's edges
    return [_inputs(np.array([label]), np.array([score])) for label, score in zip(labels, scores)]


# Plain examples in other forms: read by the fast path, with TFMA's results.
ODD_PLAIN_EXAMPLES = [
    _inputs(np.array([[1]]), np.array([[0.4]], dtype=np.float32)),
    _inputs(np.array([True]), np.array([0.8], dtype=np.float32)),
    _inputs(np.array(0), np.array(0.65)),
]
# Examples only TFMA's general path reads: a fractional label, a label and a score as lists.
UNUSUAL_EXAMPLES = [
    _inputs(np.array([0.25]), np.array([0.6], dtype=np.float32)),
    _inputs([1], [0.9]),
]


def _compute(metric: metric_types.Metric, examples: list, config=CONFIG, model_names=("",)) -> dict:
    """What TFMA's evaluator computes for `metric` on `examples` (two accumulators merged, then the derived)."""
    computations = metric.computations(
        eval_config=config, model_names=list(model_names), output_names=[""], sub_keys=[None]
    )
    results: dict = {}
    for computation in computations:
        if isinstance(computation, metric_types.MetricComputation):
            combiner = computation.combiner
            halves = [combiner.create_accumulator(), combiner.create_accumulator()]
            for index, example in enumerate(examples):
                halves[index % 2] = combiner.add_input(halves[index % 2], example)
            results.update(combiner.extract_output(combiner.merge_accumulators(halves)))
        elif isinstance(computation, metric_types.DerivedMetricComputation):
            results.update(computation.result(results))
    return results


def _instance(class_name: str, config: dict, fast: bool, batched: bool = False) -> metric_types.Metric:
    eval_config = tfma.EvalConfig(
        metrics_specs=[tfma.MetricsSpec(metrics=[tfma.MetricConfig(class_name=class_name, config=json.dumps(config))])]
    )
    metric = eval_config.metrics_specs[0].metrics[0]
    if fast:
        fast_metrics.use_fast_metrics(eval_config)  # sets "batched" too: this one-metric config fits
        metric.config = json.dumps({**json.loads(metric.config), "batched": batched})
    return metric_specs.metric_instance(metric)


def _public(results: dict) -> dict:
    return {key: value for key, value in results.items() if not key.name.startswith("_")}


@pytest.mark.parametrize("class_name, config", METRICS, ids=[name for name, _ in METRICS])
def test_each_fast_metric_equals_tfmas_own(class_name, config):
    examples = _plain_examples(400) + ODD_PLAIN_EXAMPLES + UNUSUAL_EXAMPLES
    ours = _compute(_instance(class_name, config, fast=True), examples)
    theirs = _compute(_instance(class_name, config, fast=False), examples)
    assert _public(ours) and str(_public(ours)) == str(_public(theirs))
    assert ours.keys() == theirs.keys()


@pytest.mark.parametrize("class_name, config", METRICS, ids=[name for name, _ in METRICS])
def test_plain_examples_skip_tfmas_general_path_and_unusual_ones_take_it(monkeypatch, class_name, config):
    calls = []
    general = metric_util.to_label_prediction_example_weight

    def counting(*args, **kwargs):
        calls.append(1)
        return general(*args, **kwargs)

    metric = _instance(class_name, config, fast=True)
    computations = metric.computations(eval_config=CONFIG, model_names=[""], output_names=[""], sub_keys=[None])
    combiners = [c.combiner for c in computations if isinstance(c, metric_types.MetricComputation)]
    assert combiners and all(type(c).__module__ == fast_combiners.__name__ for c in combiners)
    monkeypatch.setattr(metric_util, "to_label_prediction_example_weight", counting)
    for combiner in combiners:
        if hasattr(combiner, "_extract_label_prediction_and_weight"):
            combiner._extract_label_prediction_and_weight = counting
        accumulator = combiner.create_accumulator()
        for example in _plain_examples(20) + ODD_PLAIN_EXAMPLES:
            accumulator = combiner.add_input(accumulator, example)
        assert not calls
        for example in UNUSUAL_EXAMPLES:
            accumulator = combiner.add_input(accumulator, example)
        assert len(calls) == len(UNUSUAL_EXAMPLES)
        calls.clear()


@pytest.mark.parametrize(
    "inputs, zero_or_one, expected",
    [
        (_inputs(np.array([1]), np.array([0.75], dtype=np.float32)), True, (1.0, 0.75)),
        (_inputs(np.array([0.0]), np.array([0.2])), True, (0.0, 0.2)),
        (_inputs(np.array([0.5]), np.array([0.2])), True, None),  # fractional: TFMA splits it into two halves
        (_inputs(np.array([3.5]), np.array([0.2])), False, (3.5, 0.2)),  # a regression label, not split
        (_inputs(np.array([1]), np.array([np.nan])), True, None),  # TFMA's path reports the NaN score itself
        (_inputs(np.array([b"yes"]), np.array([0.2])), True, None),  # a string label: TFMA's vocabulary lookup
        (_inputs(np.array([1, 0]), np.array([0.2, 0.3])), True, None),  # several values per example
        (metric_types.StandardMetricInputs(labels=np.array([1]), predictions={"scores": np.array([0.1])}), True, None),
        (metric_types.StandardMetricInputs(labels=np.array([1]), predictions=np.array([0.4])), True, (1.0, 0.4)),
    ],
    ids=[
        "int label",
        "float label",
        "fractional",
        "regression",
        "nan score",
        "string",
        "two values",
        "no key",
        "array",
    ],
)
def test_the_plain_case_is_recognised_and_nothing_else(inputs, zero_or_one, expected):
    pair = fast_combiners.plain_label_and_score(inputs, PREDICTION_KEY, zero_or_one=zero_or_one)
    if expected is None:
        assert pair is None
    else:
        assert pair == pytest.approx(expected)


def test_combiners_with_top_k_sub_keys_or_weights_keep_tfmas_path_and_a_class_id_takes_the_fast_one():
    metric = _instance("Precision", {"name": "precision"}, fast=True)

    def combiners(**kwargs) -> list:
        found = metric.computations(eval_config=CONFIG, model_names=[""], output_names=[""], **kwargs)
        return [c.combiner for c in found if isinstance(c, metric_types.MetricComputation)]

    weighted = combiners(example_weighted=True)
    top_k = combiners(sub_keys=[metric_types.SubKey(top_k=2)])
    per_class = combiners(sub_keys=[metric_types.SubKey(class_id=1)])
    assert weighted and top_k and all(c._plain is None for c in weighted + top_k)
    assert per_class and all(c._plain == ("", PREDICTION_KEY) for c in per_class)


def test_the_evaluators_config_names_the_fast_classes_and_leaves_others_alone():
    request = EvaluationRequest(
        label_key="big_tipper", task="classification", metrics=("binary_accuracy", "auc", "binary_crossentropy")
    )
    config = fast_metrics.use_fast_metrics(build_eval_config(request))
    names = {(m.class_name, m.module) for spec in config.metrics_specs for m in spec.metrics}
    assert names == {
        ("FastBinaryAccuracy", fast_metrics.__name__),
        ("FastAUC", fast_metrics.__name__),
        ("BinaryCrossentropy", ""),
    }


TWO_MODELS = tfma.EvalConfig(
    model_specs=[
        tfma.ModelSpec(name="candidate", label_key="big_tipper", prediction_key=PREDICTION_KEY),
        tfma.ModelSpec(name="baseline", label_key="big_tipper", prediction_key="scores", is_baseline=True),
    ]
)


@pytest.mark.parametrize("labels_per_model", [False, True], ids=["one label", "a label per model"])
@pytest.mark.parametrize("class_name, config", METRICS, ids=[name for name, _ in METRICS])
def test_a_candidate_and_its_baseline_each_get_tfmas_numbers(class_name, config, labels_per_model):
    examples = []
    for example in _plain_examples(300, seed=1):
        score = example.prediction[PREDICTION_KEY]
        label = {"candidate": example.label, "baseline": example.label} if labels_per_model else example.label
        predictions = {"candidate": {PREDICTION_KEY: score}, "baseline": {"scores": 1 - score}}
        examples.append(metric_types.StandardMetricInputs(labels=label, predictions=predictions))
    models = ("candidate", "baseline")
    ours = _compute(_instance(class_name, config, fast=True), examples, TWO_MODELS, models)
    theirs = _compute(_instance(class_name, config, fast=False), examples, TWO_MODELS, models)
    assert {key.model_name for key in _public(ours)} == set(models)
    assert str(_public(ours)) == str(_public(theirs))
    metric = _instance(class_name, config, fast=True)
    computations = metric.computations(eval_config=TWO_MODELS, model_names=list(models), output_names=[""])
    plain = [c.combiner._plain for c in computations if isinstance(c, metric_types.MetricComputation)]
    assert sorted(plain) == [("baseline", "scores"), ("candidate", PREDICTION_KEY)]
    for model_name, prediction_key in plain:  # and each example is read by the fast path
        assert all(fast_combiners.plain_label_and_score(e, prediction_key, True, model_name) for e in examples)


def _batches(examples: list, size: int) -> list:
    """`examples` joined `size` at a time into batch inputs, as the Evaluator gives them without TFMA's split."""
    batches = []
    for start in range(0, len(examples), size):
        part = examples[start : start + size]
        batches.append(
            metric_types.StandardMetricInputs(
                labels=np.stack([e.label for e in part]),
                predictions={key: np.stack([e.prediction[key] for e in part]) for key in part[0].prediction},
                example_weights=None,
            )
        )
    return batches


def _batched_instance(class_name: str, config: dict) -> metric_types.Metric:
    return _instance(class_name, config, fast=True, batched=True)


@pytest.mark.parametrize("class_name, config", METRICS, ids=[name for name, _ in METRICS])
def test_batches_give_tfmas_numbers_for_their_examples(class_name, config):
    examples = _plain_examples(403, seed=2)
    ours = _public(_compute(_batched_instance(class_name, config), _batches(examples, 64)))
    theirs = _public(_compute(_instance(class_name, config, fast=False), examples))
    assert ours.keys() == theirs.keys() and ours
    if class_name == "CalibrationPlot":  # its score sums are added up in another order: equal to rounding
        for key in ours:
            ours_buckets = ours[key].buckets
            for mine, tfmas in zip(ours_buckets, theirs[key].buckets):
                assert mine.num_weighted_examples.value == tfmas.num_weighted_examples.value
                assert mine.total_weighted_label.value == tfmas.total_weighted_label.value
                assert mine.total_weighted_refined_prediction.value == pytest.approx(
                    tfmas.total_weighted_refined_prediction.value, rel=1e-12
                )
    else:
        assert str(ours) == str(theirs)


@pytest.mark.parametrize("class_name, config", METRICS, ids=[name for name, _ in METRICS])
def test_a_batch_tfmas_path_must_read_is_split_into_its_examples(class_name, config):
    # A fractional label: the batch goes to TFMA's path example by example, with TFMA's numbers.
    examples = _plain_examples(40, seed=3)
    examples[7] = _inputs(np.array([0.25]), np.array([0.6], dtype=np.float32))
    ours = _public(_compute(_batched_instance(class_name, config), _batches(examples, 16)))
    theirs = _public(_compute(_instance(class_name, config, fast=False), examples))
    assert str(ours) == str(theirs)


def test_only_configs_of_fast_unweighted_metrics_with_sql_slices_take_batches():
    request = EvaluationRequest(label_key="big_tipper", task="classification", metrics=("binary_accuracy", "auc"))

    def configured(change=None):
        config = build_eval_config(request)
        if change:
            change(config)
        return fast_metrics.batched_metrics(fast_metrics.use_fast_metrics(config))

    assert configured()
    assert configured(lambda c: c.slicing_specs.add(slice_keys_sql="SELECT STRUCT(`company`) FROM example.`company`"))
    assert not configured(lambda c: c.slicing_specs.add(feature_keys=["company"]))
    assert not configured(lambda c: c.cross_slicing_specs.add())
    assert configured(lambda c: c.metrics_specs[0].metrics.add(class_name="ExampleCount"))
    assert not configured(lambda c: c.metrics_specs[0].metrics.add(class_name="MeanLabel"))
    assert not configured(lambda c: setattr(c.model_specs[0], "example_weight_key", "w"))
    assert not configured(lambda c: c.metrics_specs[0].binarize.class_ids.values.append(1))


@pytest.mark.parametrize("class_name, config", METRICS, ids=[name for name, _ in METRICS])
def test_batches_of_a_candidate_and_its_baseline_give_tfmas_numbers(class_name, config):
    examples = []
    for example in _plain_examples(150, seed=4):
        score = example.prediction[PREDICTION_KEY]
        predictions = {"candidate": {PREDICTION_KEY: score}, "baseline": {"scores": 1 - score}}
        examples.append(metric_types.StandardMetricInputs(labels=example.label, predictions=predictions))
    batches = [
        metric_types.StandardMetricInputs(
            labels=np.stack([e.label for e in examples[start : start + 32]]),
            predictions={
                model: {key: np.stack([e.prediction[model][key] for e in examples[start : start + 32]])}
                for model, key in (("candidate", PREDICTION_KEY), ("baseline", "scores"))
            },
        )
        for start in range(0, len(examples), 32)
    ]
    models = ("candidate", "baseline")
    ours = _public(_compute(_batched_instance(class_name, config), batches, TWO_MODELS, models))
    theirs = _public(_compute(_instance(class_name, config, fast=False), examples, TWO_MODELS, models))
    assert {key.model_name for key in ours} == set(models)
    if class_name != "CalibrationPlot":  # its score sums: to rounding, as above
        assert str(ours) == str(theirs)


def test_where_tfma_lacks_the_private_combiners_the_metrics_stay_tfmas_own(monkeypatch, caplog):
    monkeypatch.setattr(compat, "_warned", set())  # the fallback's one line is logged once per process
    caplog.set_level(logging.WARNING, logger="compat")
    monkeypatch.setattr(fast_combiners, "_MATRIX_COMBINER", None)
    assert fast_combiners.shape_problem() is not None
    config = tfma.EvalConfig(
        model_specs=[tfma.ModelSpec(label_key="label")],
        metrics_specs=[tfma.MetricsSpec(metrics=[tfma.MetricConfig(class_name="AUC")])],
    )
    fast_metrics.use_fast_metrics(config)
    assert (config.metrics_specs[0].metrics[0].class_name, config.metrics_specs[0].metrics[0].module) == ("AUC", "")
    assert not fast_metrics.batched_metrics(config)
    assert len(caplog.records) == 1


def test_the_batched_example_count_counts_each_batchs_rows_as_tfma_counts_examples():
    examples = _plain_examples(150, seed=5)
    theirs = _public(_compute(_instance("ExampleCount", {"name": "example_count"}, fast=False), examples))
    ours = _public(_compute(fast_metrics.FastExampleCount(batched=True), _batches(examples, 16)))
    assert list(theirs.values()) == [150.0] and ours == theirs
    per_example = _public(_compute(fast_metrics.FastExampleCount(), examples))
    assert per_example == theirs


def test_an_example_count_becomes_the_batched_one_only_with_batches():
    request = EvaluationRequest(label_key="big_tipper", task="classification", metrics=("binary_accuracy",))
    config = build_eval_config(request)
    config.metrics_specs[0].metrics.add(class_name="ExampleCount", config=json.dumps({"name": "example_count"}))
    fast_metrics.use_fast_metrics(config)
    assert [m.class_name for m in config.metrics_specs[0].metrics][-1] == "FastExampleCount"
    weighted = build_eval_config(request)
    weighted.metrics_specs[0].metrics.add(class_name="ExampleCount")
    weighted.model_specs[0].example_weight_key = "w"
    assert fast_metrics.use_fast_metrics(weighted).metrics_specs[0].metrics[-1].class_name == "ExampleCount"


def _class_examples(rows: int, classes: int = 3, seed: int = 1) -> list:
    """A multi-class label (a class index) and a score per class, as the Evaluator reads a multi-class model."""
    random = np.random.default_rng(seed)
    labels = random.integers(0, classes, rows)
    scores = random.dirichlet(np.ones(classes), rows).astype(np.float32)
    scores[0] = [0.5, 0.25, 0.25]  # on the thresholds and the histogram's edges
    return [_inputs(np.array([label]), score) for label, score in zip(labels, scores)]


# Read by TFMA's path only: a label outside the classes, a NaN score, a one-hot label, a single score.
UNUSUAL_CLASS_EXAMPLES = [
    _inputs(np.array([7]), np.array([0.2, 0.3, 0.5], dtype=np.float32)),
    _inputs(np.array([1]), np.array([0.2, np.nan, 0.5], dtype=np.float32)),
    _inputs(np.array([0, 1, 0]), np.array([0.2, 0.3, 0.5], dtype=np.float32)),
    _inputs(np.array([1]), np.array([0.3], dtype=np.float32)),
]
PER_CLASS = [m for m in METRICS if m[0] in ("Precision", "Recall", "CalibrationPlot", "AUC")]


def _per_class(metric: metric_types.Metric, examples: list) -> tuple[dict, int]:
    """Each class's results of `metric` (TFMA's `class_id` sub keys), and how often TFMA's general path read one."""
    calls = []
    general = metric_util.to_label_prediction_example_weight

    def counting(*args, **kwargs):
        calls.append(1)
        return general(*args, **kwargs)

    results: dict = {}
    sub_keys = [metric_types.SubKey(class_id=c) for c in range(3)]
    computations = metric.computations(eval_config=CONFIG, model_names=[""], output_names=[""], sub_keys=sub_keys)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(metric_util, "to_label_prediction_example_weight", counting)
        for computation in computations:
            if isinstance(computation, metric_types.MetricComputation):
                combiner = computation.combiner
                if getattr(combiner, "_extract_label_prediction_and_weight", None) is general:
                    combiner._extract_label_prediction_and_weight = counting
                accumulator = combiner.create_accumulator()
                for example in examples:
                    accumulator = combiner.add_input(accumulator, example)
                results.update(combiner.extract_output(accumulator))
            elif isinstance(computation, metric_types.DerivedMetricComputation):
                results.update(computation.result(results))
    return results, len(calls)


@pytest.mark.parametrize("class_name, config", PER_CLASS, ids=[name for name, _ in PER_CLASS])
def test_a_metric_per_class_reads_class_scores_on_the_fast_path_with_tfmas_numbers(class_name, config):
    plain = _class_examples(300)
    ours, ours_general = _per_class(_instance(class_name, config, fast=True, batched=False), plain)
    theirs, _ = _per_class(_instance(class_name, config, fast=False), plain)
    mixed, mixed_general = _per_class(_instance(class_name, config, fast=True), plain + UNUSUAL_CLASS_EXAMPLES[:1])

    assert {key.sub_key.class_id for key in _public(ours)} == {0, 1, 2}
    assert ours_general == 0  # every plain example skipped TFMA's general path
    if class_name == "CalibrationPlot":  # its score sums: to rounding, as above
        assert ours.keys() == theirs.keys()
    else:
        assert str(_public(ours)) == str(_public(theirs))
    assert mixed_general >= 1  # a label outside the classes goes to TFMA's path


def test_a_class_example_reads_as_that_class_against_the_rest_and_unusual_ones_are_left_to_tfma():
    scores = np.array([0.2, 0.3, 0.5], dtype=np.float32)

    assert fast_combiners.plain_label_and_score(_inputs(np.array([1]), scores), PREDICTION_KEY, True, class_id=1) == (
        1.0,
        pytest.approx(0.3),
    )
    assert fast_combiners.plain_label_and_score(_inputs(np.array([2]), scores), PREDICTION_KEY, True, class_id=1) == (
        0.0,
        pytest.approx(0.3),
    )
    for example in UNUSUAL_CLASS_EXAMPLES:
        assert fast_combiners.plain_label_and_score(example, PREDICTION_KEY, True, class_id=1) is None
