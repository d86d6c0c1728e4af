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
