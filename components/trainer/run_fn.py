"""The built-in Trainer `run_fn`: trains the model the spec declares.

TFX's Trainer calls `run_fn(fn_args)`. `fn_args.custom_config` carries:
- `transform`: the feature table (`TransformConfig.to_dict()`),
- `model`: the spec's model section,
- `training`: the spec's training section,
- `materialized`: whether `fn_args.train_files` are transformed examples
  (else raw examples, transformed on the fly in the tf.data pipeline).
"""

from __future__ import annotations

import json
import os
import time

import tensorflow as tf
import tensorflow_transform as tft
from absl import logging

from components.common.autograph_rules import skip_autograph_for_tf_keras
from components.trainer import export, input_pipeline, model_builder
from components.transform.config import TransformConfig, transformed_name

__all__ = ["run_fn", "build_datasets", "compile_model"]

skip_autograph_for_tf_keras()

_OPTIMIZERS = {
    "adam": tf.keras.optimizers.Adam,
    "sgd": tf.keras.optimizers.SGD,
    "rmsprop": tf.keras.optimizers.RMSprop,
    "adagrad": tf.keras.optimizers.Adagrad,
}
_KERAS_METRICS = {
    "binary_accuracy": lambda: tf.keras.metrics.BinaryAccuracy(name="binary_accuracy"),
    "auc": lambda: tf.keras.metrics.AUC(name="auc"),
    "precision": lambda: tf.keras.metrics.Precision(name="precision"),
    "recall": lambda: tf.keras.metrics.Recall(name="recall"),
    "mean_squared_error": lambda: tf.keras.metrics.MeanSquaredError(name="mean_squared_error"),
    "mean_absolute_error": lambda: tf.keras.metrics.MeanAbsoluteError(name="mean_absolute_error"),
    "root_mean_squared_error": lambda: tf.keras.metrics.RootMeanSquaredError(name="root_mean_squared_error"),
}


def build_datasets(fn_args, config: TransformConfig, tf_transform_output, training: dict, materialized: bool):
    """Returns (train, eval) datasets of (features, [batch, 1] float labels)."""
    feature_keys = [transformed_name(name) for name in config.features]
    if materialized:
        spec = tf_transform_output.transformed_feature_spec()
        transform = None
    else:
        spec = tf_transform_output.raw_feature_spec()
        layer = tf_transform_output.transform_features_layer()
        transform = layer

    def make(patterns, shuffle):
        options = input_pipeline.InputOptions(
            batch_size=training["batch_size"], shuffle=shuffle, seed=training.get("seed")
        )
        dataset = input_pipeline.make_dataset(
            patterns, spec, config.label_name, options, transform=transform, feature_keys=feature_keys
        )
        return dataset.map(lambda x, y: (x, tf.reshape(tf.cast(y, tf.float32), [-1, 1])))

    return make(fn_args.train_files, True), make(fn_args.eval_files, False)


def compile_model(model: tf.keras.Model, config: TransformConfig, training: dict, metrics: list[str]) -> None:
    optimizer = _OPTIMIZERS[training.get("optimizer", "adam")](learning_rate=training["learning_rate"])
    loss = "binary_crossentropy" if config.task == "classification" else "mean_squared_error"
    model.compile(
        optimizer=optimizer,
        loss=loss,
        metrics=[_KERAS_METRICS[m]() for m in metrics if m in _KERAS_METRICS],
        steps_per_execution=training.get("steps_per_execution", 1),
    )


def _vocabulary_sizes(config: TransformConfig, tf_transform_output) -> dict[str, int]:
    return {
        name: tf_transform_output.vocabulary_size_by_name(f"vocab_{name}")
        for name, feature in config.features.items()
        if feature["transform"] == "vocabulary"
    }


def run_fn(fn_args) -> None:
    """Trains, evaluates and exports the serving model (TFX Trainer entry point)."""
    custom = fn_args.custom_config
    config = TransformConfig.from_dict(custom["transform"])
    training = custom["training"]
    if training.get("seed") is not None:
        tf.keras.utils.set_random_seed(training["seed"])
    tf_transform_output = tft.TFTransformOutput(fn_args.transform_output)
    train_data, eval_data = build_datasets(fn_args, config, tf_transform_output, training, custom["materialized"])

    model = model_builder.build_model(config, custom["model"], _vocabulary_sizes(config, tf_transform_output))
    if not model._is_compiled:  # noqa: SLF001 - a user builder may compile its own model
        compile_model(model, config, training, custom.get("metrics", []))

    started = time.perf_counter()
    history = model.fit(
        train_data,
        steps_per_epoch=fn_args.train_steps,
        epochs=1,
        validation_data=eval_data,
        validation_steps=fn_args.eval_steps,
        verbose=0,
    )
    seconds = time.perf_counter() - started
    summary = {
        "train_steps": fn_args.train_steps,
        "seconds": round(seconds, 3),
        "examples_per_second": round(fn_args.train_steps * training["batch_size"] / seconds, 1),
        "final": {k: float(v[-1]) for k, v in history.history.items()},
    }
    logging.info("Training summary: %s", summary)
    tf.io.gfile.makedirs(fn_args.model_run_dir)
    with tf.io.gfile.GFile(os.path.join(fn_args.model_run_dir, "training_summary.json"), "w") as handle:
        handle.write(json.dumps(summary, indent=2))
    export.export_serving_model(model, tf_transform_output, config, fn_args.serving_model_dir)
