"""How the serving SavedModel is written: signatures and variables only, Keras layers when needed."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

from components.trainer.saved_model.export import _save, serialized_input_name


def _signatures(model: tf.keras.Model, dtype: tf.DType) -> dict:
    @tf.function(input_signature=[tf.TensorSpec([None, 1], dtype, name="x")])
    def serve(x):
        return {"y": model(x)}

    return {"serving_default": serve}


def _load(export_dir: str, x: np.ndarray) -> tuple[object, np.ndarray]:
    """The loaded root object and what its serving signature answers for `x`."""
    loaded = tf.saved_model.load(export_dir)
    return loaded, loaded.signatures["serving_default"](x=tf.constant(x))["y"].numpy()


def test_a_model_of_variables_is_saved_without_keras_layer_traces(tmp_path):
    inputs = tf.keras.Input(shape=(1,))
    model = tf.keras.Model(inputs, tf.keras.layers.Dense(1)(tf.keras.layers.Dense(4, activation="relu")(inputs)))
    model.tft_layer = tf.Module()  # what export_serving_model attaches
    export_dir = str(tmp_path / "model")

    _save(model, export_dir, _signatures(model, tf.float32))

    x = np.array([[0.5], [2.0]], np.float32)
    loaded, served = _load(export_dir, x)
    assert not hasattr(loaded, "keras_api") and len(loaded.model_variables) == 4
    np.testing.assert_allclose(served, model(x).numpy(), rtol=1e-6)


def test_a_model_capturing_a_lookup_table_falls_back_to_a_keras_save(tmp_path):
    inputs = tf.keras.Input(shape=(1,), dtype=tf.int64)
    ids = tf.keras.layers.IntegerLookup(vocabulary=[3, 5, 7], output_mode="one_hot")(inputs)
    model = tf.keras.Model(inputs, tf.keras.layers.Dense(1)(ids))
    model.tft_layer = tf.Module()
    export_dir = str(tmp_path / "model")

    _save(model, export_dir, _signatures(model, tf.int64))

    x = np.array([[5], [9]], np.int64)
    loaded, served = _load(export_dir, x)
    assert hasattr(loaded, "keras_api")  # saved as the Keras model: its table is tracked
    np.testing.assert_allclose(served, model(x).numpy(), rtol=1e-6)


@pytest.mark.parametrize(
    ("columns", "expected"),
    [
        ({"fare", "inputs"}, "examples"),
        ({"examples"}, "serialized_examples"),
        ({"examples", "serialized_examples"}, "serialized_serialized_examples"),
    ],
    ids=["no-clash", "a-column-named-examples", "both-taken"],
)
def test_the_serialized_input_is_named_apart_from_every_column(columns, expected):
    assert serialized_input_name(columns) == expected
