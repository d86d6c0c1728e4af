"""Built-in models build from the feature table and learn a simple rule."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

from components.trainer.model_builder import build_model
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
