"""Built-in models build from the feature table and learn a simple rule."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

from components.trainer.models.model_builder import build_model, check_head
from components.trainer.run_fn import compile_model
from components.transform.config import TransformConfig

CONFIG = TransformConfig(
    features={
        "fare": {"transform": "zscore"},
        "company": {"transform": "vocabulary", "top_k": 5, "oov_buckets": 1},
        "hour": {"transform": "categorical", "num_buckets": 24},
    },
    label_name="big_tipper",
    task="classification",
    label_expression="tips > 0.2 * fare",
)


def _data(n=512, seed=0):
    rng = np.random.default_rng(seed)
    fare = rng.normal(size=n).astype("float32")
    company = rng.integers(0, 6, size=n)
    hour = rng.integers(0, 24, size=n)
    label = ((fare > 0) ^ (company == 2)).astype("float32").reshape(-1, 1)
    return {"fare_xf": fare, "company_xf": company, "hour_xf": hour}, label


@pytest.mark.parametrize("model_type", ["dnn", "wide_and_deep"])
def test_builtin_model_learns_a_rule(model_type):
    tf.keras.utils.set_random_seed(0)
    model = build_model(CONFIG, {"type": model_type, "hidden_units": [16, 8]}, {"company": 5})
    compile_model(model, CONFIG, {"learning_rate": 0.02, "steps_per_execution": 4}, ["binary_accuracy"])
    features, label = _data()
    history = model.fit(features, label, epochs=15, batch_size=64, verbose=0)
    assert history.history["binary_accuracy"][-1] > 0.85
    assert model.output_shape == (None, 1)


def test_wide_and_deep_has_a_wide_one_hot_path_and_dnn_does_not():
    wide = build_model(CONFIG, {"type": "wide_and_deep", "hidden_units": [4]}, {"company": 5})
    deep = build_model(CONFIG, {"type": "dnn", "hidden_units": [4]}, {"company": 5})
    encodings = [layer for layer in wide.layers if isinstance(layer, tf.keras.layers.CategoryEncoding)]
    assert {layer.num_tokens for layer in encodings} == {6, 24}
    assert wide.get_layer("prediction").input_shape[-1] == 4 + 6 + 24
    assert deep.get_layer("prediction").input_shape[-1] == 4


def test_user_build_model_is_called_with_the_feature_table(tmp_path, monkeypatch):
    module = tmp_path / "my_models.py"
    module.write_text(
        "import tensorflow as tf\n"
        "def build(feature_specs, label, config):\n"
        "    inputs = {f'{n}_xf': tf.keras.Input(shape=(), name=f'{n}_xf') for n in feature_specs}\n"
        "    x = tf.keras.layers.Reshape((1,))(inputs['fare_xf'])\n"
        "    return tf.keras.Model(inputs, tf.keras.layers.Dense(1, name=label)(x))\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    model = build_model(CONFIG, {"build_model": "my_models:build"}, {})
    assert model.output_names == ["big_tipper"]


MULTI_CLASS = TransformConfig(
    features={"fare": {"transform": "zscore"}, "hour": {"transform": "categorical", "num_buckets": 24}},
    label_name="species",
    task="classification",
    label_column="species",
    classes=["Adelie", "Chinstrap", "Gentoo"],
)


@pytest.mark.parametrize(
    "config, units, activation, loss",
    [
        (CONFIG, 1, "sigmoid", "binary_crossentropy"),
        (
            TransformConfig(
                features=CONFIG.features, label_name="y", task="classification", label_column="y", classes=["no", "yes"]
            ),
            1,
            "sigmoid",
            "binary_crossentropy",
        ),
        (MULTI_CLASS, 3, "softmax", "sparse_categorical_crossentropy"),
        (
            TransformConfig(features=CONFIG.features, label_name="y", task="regression", label_column="y"),
            1,
            "linear",
            "mean_squared_error",
        ),
    ],
    ids=["binary_expression", "binary_text", "three_classes", "regression"],
)
def test_the_head_and_loss_follow_the_label(config, units, activation, loss):
    model = build_model(config, {"type": "dnn", "hidden_units": [4]}, {"company": 5})
    compile_model(model, config, {"learning_rate": 0.01}, [])

    head = model.get_layer("prediction")
    assert head.units == units
    assert head.activation.__name__ == activation
    assert model.loss == loss


def test_a_multi_class_model_learns_three_classes_and_reports_accuracy():
    tf.keras.utils.set_random_seed(0)
    rng = np.random.default_rng(1)
    fare = rng.normal(size=600).astype("float32")
    hour = rng.integers(0, 24, size=600)
    label = np.digitize(fare, [-0.5, 0.5]).astype("float32").reshape(-1, 1)  # class index 0, 1, 2
    model = build_model(MULTI_CLASS, {"type": "dnn", "hidden_units": [16]}, {})
    compile_model(model, MULTI_CLASS, {"learning_rate": 0.05}, ["binary_accuracy", "auc"])

    history = model.fit({"fare_xf": fare, "hour_xf": hour}, label, epochs=20, batch_size=64, verbose=0)

    assert model.output_shape == (None, 3)
    assert sorted(history.history) == ["accuracy", "loss"]  # binary metrics do not apply to three classes
    assert history.history["accuracy"][-1] > 0.85


def test_a_model_whose_output_does_not_fit_the_classes_is_refused_naming_them():
    inputs = {"fare_xf": tf.keras.Input(shape=(), name="fare_xf")}
    single = tf.keras.Model(inputs, tf.keras.layers.Dense(1)(tf.keras.layers.Reshape((1,))(inputs["fare_xf"])))

    with pytest.raises(ValueError) as caught:
        check_head(single, MULTI_CLASS)

    assert str(caught.value) == (
        "the model outputs 1 value(s) per example. Expected 3 for 3 classes ['Adelie', 'Chinstrap', 'Gentoo'] "
        "(a softmax layer of 3 unit(s)). Fix the last layer of `model.build_model`."
    )
    check_head(single, CONFIG)  # one sigmoid unit fits a binary label


def test_a_regression_label_far_from_zero_is_learned_at_the_default_rate_with_its_scale():
    # House prices: mean 300k, spread 80k. Without the scale, 300 steps at 0.001 leave the
    # prediction near 0 (the output weights grow by about the rate per step).
    config = TransformConfig(features={"income": {"transform": "zscore"}}, label_name="price", task="regression")
    rng = np.random.default_rng(0)
    income = rng.normal(size=2048).astype("float32")
    price = (300_000 + 80_000 * income + rng.normal(scale=5_000, size=2048)).astype("float32").reshape(-1, 1)
    errors = {}
    for scale in (None, (float(price.mean()), float(price.std()))):
        tf.keras.utils.set_random_seed(0)
        model = build_model(config, {"type": "dnn", "hidden_units": [8]}, {}, label_scale=scale)
        compile_model(model, config, {"learning_rate": 0.001, "steps_per_execution": 50}, [])
        model.fit({"income_xf": income}, price, epochs=10, batch_size=64, verbose=0)  # 320 steps
        prediction = model.predict({"income_xf": income}, verbose=0)
        errors[scale is not None] = float(np.sqrt(np.mean((prediction - price) ** 2)))
    # Predicting the mean scores the spread, 80k; the unscaled model has not reached the mean yet.
    assert errors[True] < 40_000 and errors[False] > 250_000, errors


def test_the_label_scale_is_for_regression_and_user_builders_get_it():
    regression = TransformConfig(features={"x": {"transform": "zscore"}}, label_name="y", task="regression")
    scaled = build_model(regression, {"type": "dnn", "hidden_units": [2]}, {}, label_scale=(10.0, 2.0))
    assert scaled.layers[-1].name == "label_scale" and scaled.get_layer("prediction").units == 1
    classes = build_model(CONFIG, {"type": "dnn", "hidden_units": [2]}, {"company": 5}, label_scale=(10.0, 2.0))
    assert "label_scale" not in [layer.name for layer in classes.layers]
