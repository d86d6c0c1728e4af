"""Warm start on real small Keras models saved the way the export saves them (a `model_variables` list)."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

from components.trainer.training.warm_start import WarmStart, warm_start, weight_mismatch


def _model(units: int = 4, inputs: int = 3, extra_layer: bool = False) -> tf.keras.Model:
    features = tf.keras.Input(shape=(inputs,), name="x")
    hidden = tf.keras.layers.Dense(units, activation="relu")(features)
    if extra_layer:
        hidden = tf.keras.layers.Dense(units)(hidden)
    return tf.keras.Model(features, tf.keras.layers.Dense(1)(hidden))


def _save(model: tf.keras.Model, path: str) -> str:
    root = tf.Module()
    root.model_variables = list(model.variables)
    tf.saved_model.save(root, path)
    return path


def test_matching_model_takes_the_base_weights(tmp_path):
    base = _model()
    for variable in base.variables:
        variable.assign(tf.random.normal(variable.shape, seed=1))
    path = _save(base, str(tmp_path / "base"))
    fresh = _model()
    assert not np.allclose(fresh.variables[0].numpy(), base.variables[0].numpy())

    outcome = warm_start(fresh, path)

    assert outcome == WarmStart(source=path)
    assert outcome.summary() == {"warm_started_from": path}
    for new, old in zip(fresh.variables, base.variables):
        np.testing.assert_array_equal(new.numpy(), old.numpy())
    x = np.ones((2, 3), np.float32)
    np.testing.assert_allclose(fresh(x).numpy(), base(x).numpy(), rtol=1e-6)


@pytest.mark.parametrize(
    ("changed", "expected"),
    [
        (dict(units=8), "weight 0: the new model has `dense"),
        (dict(inputs=5), "[5, 4] float32, the base model"),
        (dict(extra_layer=True), "the new model has 6 weights, the base model 4"),
    ],
    ids=["wider", "more_inputs", "extra_layer"],
)
def test_mismatch_warns_and_keeps_the_fresh_weights(tmp_path, changed, expected):
    path = _save(_model(), str(tmp_path / "base"))
    fresh = _model(**changed)
    before = [v.numpy().copy() for v in fresh.variables]

    outcome = warm_start(fresh, path)

    assert outcome.source is None
    assert expected in outcome.cold_reason
    assert outcome.cold_reason.startswith(f"the architecture differs from the base model {path}")
    assert outcome.summary()["warm_started_from"] is None
    for variable, value in zip(fresh.variables, before):
        np.testing.assert_array_equal(variable.numpy(), value)


def test_first_run_without_a_base_model_is_cold():
    outcome = warm_start(_model(), None)
    assert outcome.summary() == {"warm_started_from": None, "cold_start": "no blessed model yet (a first run)"}


def test_unreadable_base_model_is_cold(tmp_path):
    outcome = warm_start(_model(), str(tmp_path / "missing"))
    assert outcome.source is None
    assert "could not be read" in outcome.cold_reason and "missing" in outcome.cold_reason


def test_weight_mismatch_on_dtype():
    a = [tf.Variable(tf.zeros([2], tf.float32), name="w")]
    b = [tf.Variable(tf.zeros([2], tf.float64), name="w")]
    assert weight_mismatch(a, b) == "weight 0: the new model has `w:0` [2] float32, the base model `w:0` [2] float64"
    assert weight_mismatch(a, a) is None
