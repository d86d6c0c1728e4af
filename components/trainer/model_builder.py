"""Built-in Keras models over transformed features: `dnn` and `wide_and_deep`.

Numeric features feed the deep part directly; categorical ids are embedded
for the deep part and one-hot encoded for the wide (linear) part.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import tensorflow as tf

from components.transform.config import CATEGORICAL, TransformConfig, transformed_name

__all__ = ["build_model", "load_user_builder", "input_dtype"]


def input_dtype(transform: str) -> tf.DType:
    return tf.int64 if transform in CATEGORICAL else tf.float32


def load_user_builder(reference: str) -> Callable[..., tf.keras.Model]:
    """Imports `pkg.module:function`."""
    module_name, function_name = reference.split(":")
    module = importlib.import_module(module_name)
    try:
        return getattr(module, function_name)
    except AttributeError:
        raise AttributeError(
            f"`{reference}`: module `{module_name}` has no function `{function_name}`. Fix `model.build_model`."
        ) from None


def build_model(config: TransformConfig, model: dict[str, Any], vocabulary_sizes: dict[str, int]) -> tf.keras.Model:
    """Builds the model the spec declares (not compiled).

    Args:
      config: the feature table and label.
      model: the spec's `model` section as a dict.
      vocabulary_sizes: column -> vocabulary size for `vocabulary` features.
    """
    inputs = {
        transformed_name(name): tf.keras.Input(shape=(), name=transformed_name(name), dtype=input_dtype(f["transform"]))
        for name, f in config.features.items()
    }
    if model.get("build_model"):
        return load_user_builder(model["build_model"])(
            feature_specs=config.features, label=config.label_name, config=model
        )

    numeric, embedded, wide = [], [], []
    for name, feature in config.features.items():
        column = tf.keras.layers.Reshape((1,))(inputs[transformed_name(name)])
        if feature["transform"] in CATEGORICAL:
            tokens = config.num_tokens(name, vocabulary_sizes.get(name))
            embedding = tf.keras.layers.Embedding(tokens, model.get("embedding_dim", 8), name=f"embed_{name}")(column)
            embedded.append(tf.keras.layers.Flatten()(embedding))
            wide.append(tf.keras.layers.CategoryEncoding(num_tokens=tokens, output_mode="one_hot")(column))
        else:
            numeric.append(column)
    deep_inputs = numeric + embedded
    deep = deep_inputs[0] if len(deep_inputs) == 1 else tf.keras.layers.concatenate(deep_inputs)
    for units in model.get("hidden_units", [64, 32]):
        deep = tf.keras.layers.Dense(units, activation="relu")(deep)
    head_input = deep
    if model.get("type", "wide_and_deep") == "wide_and_deep" and wide:
        head_input = tf.keras.layers.concatenate([deep, *wide])
    activation = "sigmoid" if config.task == "classification" else None
    output = tf.keras.layers.Dense(1, activation=activation, dtype="float32", name="prediction")(head_input)
    return tf.keras.Model(inputs, output)
