"""A `model.build_model` for the diabetes example: a small regression network of your own.

Used as `model.build_model: diabetes_model:build` (see `docs/custom_code.md`);
`diabetes.yaml` itself uses the built-in `dnn`.
"""

from __future__ import annotations

import tensorflow as tf

from components.transform.config import CATEGORICAL, transformed_name

__all__ = ["build"]


def build(feature_specs: dict, label: str, config: dict) -> tf.keras.Model:
    """A two-layer network over every numeric feature, the `bmi_x_bp` extra and an `age_band` embedding.

    Args:
      feature_specs: the spec's `features`: column -> settings, e.g. `{"bmi": {"transform": "zscore"}}`.
      label: the label's name (the Trainer feeds it as the target; not an input).
      config: the spec's `model` section (`type`, `hidden_units`, `embedding_dim`, `build_model`) and
        `label_scale`: a regression label's [mean, standard deviation] over the data (None otherwise).

    Returns:
      An uncompiled Keras model: inputs named `<column>_xf` (float32, shape []) and the transform's
      extras, one output of shape [batch, 1] (regression: the prediction itself).
    """
    numeric = [column for column, settings in feature_specs.items() if settings["transform"] not in CATEGORICAL]
    inputs = {transformed_name(c): tf.keras.Input(shape=(), name=transformed_name(c)) for c in numeric}
    inputs["bmi_x_bp"] = tf.keras.Input(shape=(), name="bmi_x_bp")
    inputs["age_band"] = tf.keras.Input(shape=(), name="age_band", dtype=tf.int64)
    dense = tf.keras.layers.concatenate(
        [tf.keras.layers.Reshape((1,))(inputs[n]) for n in sorted(inputs) if n != "age_band"]
    )
    band = tf.keras.layers.Embedding(5, config.get("embedding_dim", 4))(inputs["age_band"])
    hidden = tf.keras.layers.concatenate([dense, band])
    for units in config.get("hidden_units") or [32, 16]:
        hidden = tf.keras.layers.Dense(units, activation="relu")(hidden)
    if not config.get("label_scale"):
        return tf.keras.Model(inputs, tf.keras.layers.Dense(1, name=label)(hidden))
    # The label is in the hundreds: predict its mean plus its spread times a unit near 0, so the network
    # learns at the default rate instead of growing its weights to the label's scale first.
    mean, std = config["label_scale"]
    standardized = tf.keras.layers.Dense(1)(hidden)
    return tf.keras.Model(inputs, tf.keras.layers.Rescaling(scale=std, offset=mean, name=label)(standardized))
