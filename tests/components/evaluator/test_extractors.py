"""Each batch is cut to what the metrics read before TFMA splits it (components/evaluator/extractors.py)."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow_model_analysis as tfma
from multiclass_fixtures import (
    RECORD_ENV,
    RECORDING_EXTRACTORS,
    ROWS,
    TFMA_DEFAULT_EXTRACTORS,
    export_model,
    run_evaluator,
    write_eval_split,
)
from tensorflow_model_analysis import constants
from tensorflow_model_analysis.api import types
from tensorflow_model_analysis.slicer import slicer_lib
from tfx.components.evaluator import executor as tfx_evaluator_executor
from tfx.utils import import_utils

from components.evaluator import extractors
from components.evaluator.eval_config import EvaluationRequest, build_eval_config

REQUEST = EvaluationRequest(
    label_key="species",
    task="classification",
    metrics=("accuracy", "example_count", "macro_auc", "precision", "confusion_matrix"),
    thresholds={"accuracy": {"min": 0.1}},
)
CLASSES = ("Adelie", "Chinstrap", "Gentoo")
OUTPUT_KEYS = {constants.LABELS_KEY, constants.EXAMPLE_WEIGHTS_KEY, constants.PREDICTIONS_KEY}


def _batch() -> dict:
    return {
        constants.INPUT_KEY: np.array([b"a", b"b"], dtype=object),
        constants.FEATURES_KEY: {"x": np.array([1, 2])},
        constants.TRANSFORMED_FEATURES_KEY: {"x_xf": np.array([0.1, 0.2])},
        constants.LABELS_KEY: np.array([0, 1]),
        constants.EXAMPLE_WEIGHTS_KEY: None,
        constants.PREDICTIONS_KEY: {"scores": np.ones((2, 3)), "classes": np.array([[b"a"] * 3] * 2)},
    }


def test_a_batch_keeps_labels_weights_and_the_prediction_key_only():
    batch = _batch()
    trimmed = extractors.trim_extract(batch, {"": "scores"}, keep_features=False)
    assert set(trimmed) == {constants.LABELS_KEY, constants.EXAMPLE_WEIGHTS_KEY, constants.PREDICTIONS_KEY}
    assert list(trimmed[constants.PREDICTIONS_KEY]) == ["scores"]
    assert set(batch) == set(_batch())  # the input extract is left as it was


def test_each_models_own_prediction_key_is_kept_and_features_when_slicing_needs_them():
    batch = _batch()
    batch[constants.PREDICTIONS_KEY] = {"candidate": {"scores": 1, "label": 2}, "baseline": {"probability": 3, "x": 4}}
    trimmed = extractors.trim_extract(batch, {"candidate": "scores", "baseline": "probability"}, keep_features=True)
    assert trimmed[constants.PREDICTIONS_KEY] == {"candidate": {"scores": 1}, "baseline": {"probability": 3}}
    assert constants.FEATURES_KEY in trimmed and constants.TRANSFORMED_FEATURES_KEY not in trimmed


@pytest.mark.parametrize(
    "change, trims",
    [
        (lambda config: None, True),
        (lambda config: config.slicing_specs.add(feature_keys=["x"]), True),  # trims, keeping the features
        (lambda config: config.metrics_specs[0].metrics.add(class_name="NDCG"), False),  # reads a feature
        (lambda config: setattr(config.metrics_specs[0], "query_key", "x"), False),
    ],
    ids=["ours", "feature slice", "unknown metric", "query key"],
)
def test_the_trim_stage_is_added_only_for_metrics_that_read_outputs_alone(tmp_path, change, trims):
    config = build_eval_config(REQUEST, CLASSES, None)
    change(config)
    model = tfma.default_eval_shared_model(export_model(str(tmp_path / "model")), eval_config=config)
    stages = [e.stage_name for e in extractors.custom_extractors(model, config)]
    assert (extractors.TRIM_STAGE_NAME in stages) is trims
    if trims:
        assert stages.index(extractors.TRIM_STAGE_NAME) + 1 == stages.index("ExtractUnbatchedInputs")


def _metrics(evaluation_uri: str) -> dict:
    found = {}
    for slice_metrics in tfma.load_metrics(evaluation_uri):
        for item in slice_metrics.metric_keys_and_values:
            found[str(item.key)] = str(item.value)
    return found


def test_the_evaluator_gives_tfmas_own_metrics_with_trimmed_batches(tmp_path, monkeypatch):
    model_uri = str(tmp_path / "model")
    export_model(model_uri)
    examples = str(tmp_path / "examples")
    write_eval_split(examples, ROWS * 4)
    record = tmp_path / "trimmed_keys.txt"
    monkeypatch.setenv(RECORD_ENV, str(record))
    hook = {"custom_extractors": RECORDING_EXTRACTORS}
    trimmed = run_evaluator(str(tmp_path / "trimmed"), REQUEST, model_uri, examples, hook)
    batches = [set(line.split(",")) for line in record.read_text().split()]
    # Every batch of the run the metrics come from: labels, predictions and at most the (absent) weights.
    assert batches and all({"labels", "predictions"} <= keys <= OUTPUT_KEYS for keys in batches), batches
    tfmas = run_evaluator(
        str(tmp_path / "tfma"), REQUEST, model_uri, examples, {"custom_extractors": TFMA_DEFAULT_EXTRACTORS}
    )
    ours, theirs = _metrics(trimmed["evaluation"]), _metrics(tfmas["evaluation"])
    assert len(ours) >= 6 and ours == theirs  # accuracy, count, macro AUC, precision per class
    assert trimmed["blessed"] == tfmas["blessed"] == 1


def test_the_executor_names_the_hook_unless_one_is_given(tmp_path, monkeypatch):
    model_uri = str(tmp_path / "model")
    export_model(model_uri)
    examples = str(tmp_path / "examples")
    write_eval_split(examples, ROWS)
    handed: list[dict] = []

    def tfxs_do(self, input_dict, output_dict, exec_properties):
        handed.append(dict(exec_properties))
        raise _Stop

    monkeypatch.setattr(tfx_evaluator_executor.Executor, "Do", tfxs_do)
    for given in ({}, {"custom_extractors": TFMA_DEFAULT_EXTRACTORS}):
        with pytest.raises(_Stop):
            run_evaluator(str(tmp_path / f"run{len(handed)}"), REQUEST, model_uri, examples, given)
    assert [h["custom_extractors"] for h in handed] == [extractors.FUNCTION_PATH, TFMA_DEFAULT_EXTRACTORS]
    module, name = extractors.FUNCTION_PATH.rsplit(".", 1)
    assert import_utils.import_func_from_module(module, name).__qualname__ == "custom_extractors"


class _Stop(Exception):
    """Stops the executor where TFX's own `Do` would start."""


def test_metrics_that_take_whole_batches_get_them_without_the_per_example_split(tmp_path):
    from components.evaluator import fast_metrics

    binary = EvaluationRequest(label_key="species", task="classification", metrics=("binary_accuracy", "auc"))
    config = fast_metrics.use_fast_metrics(build_eval_config(binary))
    assert fast_metrics.batched_metrics(config)
    model = tfma.default_eval_shared_model(export_model(str(tmp_path / "model")), eval_config=config)
    stages = [e.stage_name for e in extractors.custom_extractors(model, config)]
    assert extractors.TRIM_STAGE_NAME in stages and "ExtractUnbatchedInputs" not in stages
    assert stages[-1] == "ExtractSliceKeys"


CASH, CARD = (("payment_type", "Cash"),), (("payment_type", "Card"),)


def _sliced_batch() -> dict:
    keys = [[CASH], [CARD], [], [CASH]]  # the third row has no value in the slice column
    return {
        constants.FEATURES_KEY: {"payment_type": np.array([b"Cash", b"Card", b"", b"Cash"], dtype=object)},
        constants.LABELS_KEY: np.array([1, 0, 1, 0]),
        constants.EXAMPLE_WEIGHTS_KEY: None,
        constants.PREDICTIONS_KEY: {"probability": np.array([0.9, 0.1, 0.8, 0.3])},
        constants.SLICE_KEY_TYPES_KEY: types.VarLenTensorValue.from_dense_rows(
            [slicer_lib.slice_keys_to_numpy_array(row) for row in keys]
        ),
    }


def _by_slice(batches: list) -> dict:
    found = {}
    for batch in batches:
        (key,) = batch[constants.SLICE_KEY_TYPES_KEY].tolist()
        assert key not in found and constants.FEATURES_KEY not in batch
        found[key] = (batch[constants.LABELS_KEY].tolist(), batch[constants.PREDICTIONS_KEY]["probability"].tolist())
    return found


def test_each_sql_slice_gets_its_rows_of_a_batch_and_the_overall_slice_all_of_them():
    assert _by_slice(extractors.slice_batch(_sliced_batch(), overall=True)) == {
        (): ([1, 0, 1, 0], [0.9, 0.1, 0.8, 0.3]),
        CASH: ([1, 0], [0.9, 0.3]),
        CARD: ([0], [0.1]),
    }
    assert set(_by_slice(extractors.slice_batch(_sliced_batch(), overall=False))) == {CASH, CARD}


BINARY_CLASSES = ["No", "Yes"]
BINARY_ROWS = [("No", 0)] * 30 + [("Yes", 1)] * 20 + [("Yes", 0)] * 10 + [("No", 1)] * 5
SLICED = EvaluationRequest(
    label_key="species",
    task="classification",
    metrics=("binary_accuracy", "auc"),
    thresholds={"binary_accuracy": {"min": 0.1, "per_slice": True, "min_examples": 5}},
    slices=(("x",), ("species", "x")),
)


def _metrics_per_slice(evaluation_uri: str) -> dict:
    return {
        (str(slice_metrics.slice_key), str(item.key)): str(item.value)
        for slice_metrics in tfma.load_metrics(evaluation_uri)
        for item in slice_metrics.metric_keys_and_values
    }


def test_sql_slices_of_whole_batches_give_tfmas_numbers_per_slice(tmp_path):
    from components.evaluator import fast_metrics, slicing

    model_uri = str(tmp_path / "model")
    export_dir = export_model(model_uri, BINARY_CLASSES)
    config = build_eval_config(SLICED, tuple(BINARY_CLASSES), None)
    plan, per_spec = slicing.make_plan(SLICED.slices, {"x": [0, 1], "species": ["No", "Yes"]}, 4)
    slicing.add_slicing(config, SLICED.slices, plan, per_spec, SLICED.thresholds)
    fast_metrics.use_fast_metrics(config)
    assert fast_metrics.batched_metrics(config)  # example_count included
    model = tfma.default_eval_shared_model(export_dir, eval_config=config)
    labels = [getattr(e.ptransform, "label", "") for e in extractors.custom_extractors(model, config)]
    assert "SliceBatches" in labels and "ExtractUnbatchedInputs" not in labels

    examples = str(tmp_path / "examples")
    write_eval_split(examples, BINARY_ROWS * 3)
    ours = run_evaluator(str(tmp_path / "ours"), SLICED, model_uri, examples)
    theirs = run_evaluator(
        str(tmp_path / "tfma"), SLICED, model_uri, examples, {"custom_extractors": TFMA_DEFAULT_EXTRACTORS}
    )
    ours_metrics, their_metrics = _metrics_per_slice(ours["evaluation"]), _metrics_per_slice(theirs["evaluation"])
    slices = {slice_key for slice_key, _ in ours_metrics}
    assert len(slices) == 1 + 2 + 4, slices  # overall, x=0/1, each species and x
    assert ours_metrics == their_metrics
    overall_counts = [v for (s, k), v in ours_metrics.items() if not s.strip() and "example_count" in k]
    assert overall_counts and all("195.0" in count for count in overall_counts)  # every row, counted once


def test_a_batch_with_values_that_cannot_be_cut_by_rows_is_split_into_examples_with_their_keys():
    batch = _sliced_batch()
    batch[constants.SLICE_KEY_TYPES_KEY + "_odd"] = types.VarLenTensorValue.from_dense_rows([np.array([1])] * 4)
    examples = extractors.slice_batch(batch, overall=True)
    assert [e[constants.SLICE_KEY_TYPES_KEY].tolist() for e in examples] == [[(), CASH], [(), CARD], [()], [(), CASH]]
    assert [e[constants.LABELS_KEY].tolist() for e in examples] == [[1], [0], [1], [0]]
