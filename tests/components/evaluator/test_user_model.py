"""A module file's model: the Evaluator's ModelSpec follows the signatures the SavedModel really has."""

from __future__ import annotations

import pytest
import tensorflow as tf

from components.evaluator.eval_config import EvaluationRequest, build_eval_config
from components.evaluator.user_model import fit_user_model_spec, serving_signatures

_EXAMPLES = tf.TensorSpec([None], tf.string, name="examples")


def _save(path: str, outputs: tuple[str, ...], with_transform: bool, serving: bool = True) -> str:
    module = tf.Module()

    @tf.function(input_signature=[_EXAMPLES])
    def serve(examples):
        scores = tf.ones([tf.shape(examples)[0], 3])
        return {name: scores for name in outputs}

    @tf.function(input_signature=[_EXAMPLES])
    def transform(examples):
        return {"x_xf": tf.zeros([tf.shape(examples)[0]])}

    signatures = {"serving_default" if serving else "predict": serve}
    if with_transform:
        signatures["transform_features"] = transform
    tf.saved_model.save(module, path, signatures=signatures)
    return path


def _config() -> object:
    request = EvaluationRequest(label_key="species", task="classification", metrics=("accuracy",), user_model=True)
    return build_eval_config(request, classes=["0", "1", "2"])


def test_one_output_is_the_prediction_and_transform_features_runs_first(tmp_path):
    config = _config()
    fit_user_model_spec(config, _save(str(tmp_path / "m"), ("outputs",), with_transform=True))
    (spec,) = config.model_specs
    assert spec.prediction_key == "outputs" and list(spec.preprocessing_function_names) == ["transform_features"]
    assert spec.label_key == "species" and spec.signature_name == "serving_default"


def test_several_outputs_leave_the_lookup_to_tfma_and_no_transform_signature_means_none(tmp_path):
    config = _config()
    fit_user_model_spec(config, _save(str(tmp_path / "m"), ("probabilities", "logits"), with_transform=False))
    (spec,) = config.model_specs
    assert spec.prediction_key == "" and not spec.preprocessing_function_names


def test_a_model_without_serving_default_is_a_clear_error(tmp_path):
    path = _save(str(tmp_path / "m"), ("outputs",), with_transform=False, serving=False)
    assert set(serving_signatures(path)) == {"predict"}
    with pytest.raises(ValueError, match=r"no `serving_default` signature; it has \['predict'\]"):
        fit_user_model_spec(_config(), path)
