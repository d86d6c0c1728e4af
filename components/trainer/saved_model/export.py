"""Exports a trained model as a SavedModel that takes raw features.

Signatures:
- `serving_default` (Predict): serialized tf.Example `examples` -> outputs,
  with the tf.Transform graph inside. When a data column is itself named
  `examples`, the input is `serialized_examples` here and in
  `transform_features` (`serialized_input_name`): TFMA feeds a signature's
  one string input the feature of the same name when there is one.
- `serving_raw` (Predict): one [batch] tensor per raw feature column, for
  JSON clients.
- `classification` / `regression`: TF Serving's Classify/Regress signatures
  (`inputs` -> `classes`,`scores` / `outputs`), their method names written
  into saved_model.pb because TF2's saver only writes Predict signatures.
- `transform_features`: serialized tf.Example -> transformed features and
  label, used by the Evaluator (TFMA) to compute labels.

Outputs (`class_outputs`): classification `scores` [batch, classes], `classes`
(the class names), `label` (the predicted class name) and, for binary
models, `probability` [batch]; regression `prediction` [batch].
"""

from __future__ import annotations

import os

import tensorflow as tf
import tensorflow_transform as tft
from absl import logging
from tensorflow.core.protobuf import saved_model_pb2

from components.common.names import tensor_name
from components.trainer.models import model_inputs
from components.trainer.saved_model import class_outputs
from components.trainer.saved_model.signature_names import rename_signature_inputs
from components.transform.config import TransformConfig

__all__ = ["export_serving_model", "serialized_input_name", "CLASSIFY_METHOD", "REGRESS_METHOD"]

CLASSIFY_METHOD = "tensorflow/serving/classify"
REGRESS_METHOD = "tensorflow/serving/regress"


def serialized_input_name(columns) -> str:
    """The input name of the signatures taking serialized tf.Examples: `examples` (TFX's and TF Serving's
    name), prefixed with `serialized_` until it is no column of the data."""
    name = "examples"
    while name in columns:
        name = f"serialized_{name}"
    return name


def _raw_tensors_to_parsed(raw: dict, spec: dict) -> dict:
    """Turns [batch] tensors into what parse_example would give for `spec`."""
    parsed = {}
    for name, tensor in raw.items():
        feature = spec[name]
        if isinstance(feature, tf.io.VarLenFeature):
            rows = tf.shape(tensor, out_type=tf.int64)[0]
            indices = tf.stack([tf.range(rows), tf.zeros([rows], tf.int64)], axis=1)
            values = tensor
            if tensor.dtype.is_floating:
                # NaN (JSON `null` or `NaN`) is a missing cell, imputed like an absent tf.Example feature.
                present = tf.logical_not(tf.math.is_nan(tensor))
                indices, values = tf.boolean_mask(indices, present), tf.boolean_mask(tensor, present)
            parsed[name] = tf.SparseTensor(indices, values, tf.stack([rows, tf.constant(1, tf.int64)]))
        else:
            parsed[name] = tf.reshape(tensor, [-1, *feature.shape])
    return parsed


def export_serving_model(
    model: tf.keras.Model, tf_transform_output: tft.TFTransformOutput, config: TransformConfig, export_dir: str
) -> None:
    """Saves `model` with the transform graph and all serving signatures."""
    raw_spec = tf_transform_output.raw_feature_spec()
    serving_spec = {name: raw_spec[name] for name in config.features}
    model.tft_layer = tf_transform_output.transform_features_layer()
    # The keys the Trainer fed: `<column>_xf` and a user transform's extra outputs.
    feature_keys = model_inputs.input_keys(model_inputs.from_transform_output(config, tf_transform_output, {}))
    classification = config.task == "classification"

    # One tf.function: the signatures that parse the same features share one
    # trace of the transform layer and the model instead of tracing it each.
    @tf.function(autograph=False)
    def predict_transformed(parsed: dict) -> tf.Tensor:
        transformed = model.tft_layer(parsed)
        return model({k: transformed[k] for k in feature_keys})

    names = class_outputs.class_names(config, tf_transform_output)

    def outputs(prediction: tf.Tensor) -> dict:
        if classification:
            return class_outputs.predict_outputs(prediction, names)
        return class_outputs.regression_outputs(prediction)

    examples_name = serialized_input_name(raw_spec)

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name=examples_name)])
    def serve_examples(examples):
        return outputs(predict_transformed(tf.io.parse_example(examples, serving_spec)))

    # TensorFlow-safe argument names; the SignatureDef keys are set back to the column names below.
    raw_signature = [
        tf.TensorSpec([None], serving_spec[name].dtype, name=tensor_name(name)) for name in config.features
    ]

    @tf.function(input_signature=raw_signature)
    def serve_raw(*tensors):
        raw = dict(zip(config.features, tensors))
        return outputs(predict_transformed(_raw_tensors_to_parsed(raw, serving_spec)))

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name=examples_name)])
    def transform_features(examples):
        return model.tft_layer(tf.io.parse_example(examples, raw_spec))

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="inputs")])
    def classify(inputs):
        return class_outputs.classify_outputs(predict_transformed(tf.io.parse_example(inputs, serving_spec)), names)

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="inputs")])
    def regress(inputs):
        prediction = predict_transformed(tf.io.parse_example(inputs, serving_spec))
        return {"outputs": class_outputs.regression_outputs(prediction)["prediction"]}

    signatures = {
        "serving_default": serve_examples,
        "serving_raw": serve_raw,
        "transform_features": transform_features,
    }
    if classification:
        signatures["classification"] = classify
    else:
        signatures["regression"] = regress
    _save(model, export_dir, signatures)
    _set_method_names(export_dir, {"classification": CLASSIFY_METHOD, "regression": REGRESS_METHOD})
    rename_signature_inputs(export_dir, "serving_raw", {tensor_name(name): name for name in config.features})


def _save(model: tf.keras.Model, export_dir: str, signatures: dict) -> None:
    """Saves the signatures with the model's variables and the transform layer only.

    Saving the Keras model itself makes Keras trace every layer's call for its
    own metadata (about half the export's time) and makes every later
    `tf.saved_model.load` revive those layers (most of the load's time). Nothing
    here loads the export as a Keras model: TF Serving, TFMA (`tf_generic`) and
    our server use the signatures. A user model whose call captures other
    resources (a lookup table in a `StringLookup` layer, say) is saved the
    Keras way, so that those resources are tracked.
    """
    root = tf.Module()
    root.model_variables = list(model.variables)
    root.tft_layer = model.tft_layer
    try:
        tf.saved_model.save(root, export_dir, signatures=signatures)
    except AssertionError as error:
        if "untracked" not in str(error):
            raise
        logging.info("The model captures resources besides its variables; saving it as a Keras model.")
        if tf.io.gfile.exists(export_dir):
            tf.io.gfile.rmtree(export_dir)
        tf.saved_model.save(model, export_dir, signatures=signatures)


def _set_method_names(export_dir: str, methods: dict[str, str]) -> None:
    """Rewrites signature method names in saved_model.pb (atomically)."""
    path = os.path.join(export_dir, "saved_model.pb")
    saved_model = saved_model_pb2.SavedModel()
    with tf.io.gfile.GFile(path, "rb") as handle:
        saved_model.ParseFromString(handle.read())
    for meta_graph in saved_model.meta_graphs:
        for name, method in methods.items():
            if name in meta_graph.signature_def:
                meta_graph.signature_def[name].method_name = method
    tmp = path + ".tmp"
    with tf.io.gfile.GFile(tmp, "wb") as handle:
        handle.write(saved_model.SerializeToString())
    tf.io.gfile.rename(tmp, path, overwrite=True)
