"""docs/custom_code.md stays true: it shows the example modules as they are, and they run in a real pipeline."""

from __future__ import annotations

import os
import re

import pytest
from example_runs import example_spec, exported_model_dir, run_example, trained_variables
from taxi_fixtures import REPO

DOC = os.path.join(REPO, "docs", "custom_code.md")
INCLUDE = re.compile(r"<!-- include: (?P<path>\S+) -->\n```python\n(?P<code>.*?)```", re.DOTALL)


def included_blocks() -> dict[str, str]:
    with open(DOC, encoding="utf-8") as handle:
        return {m["path"]: m["code"] for m in INCLUDE.finditer(handle.read())}


def test_the_doc_shows_both_example_modules():
    assert set(included_blocks()) == {
        "pipelines/examples/diabetes_features.py",
        "pipelines/examples/diabetes_model.py",
    }


@pytest.mark.parametrize("path", ["pipelines/examples/diabetes_features.py", "pipelines/examples/diabetes_model.py"])
def test_the_doc_shows_the_example_module_as_it_is(path):
    with open(os.path.join(REPO, path), encoding="utf-8") as handle:
        assert included_blocks()[path] == handle.read(), f"docs/custom_code.md shows an outdated {path}: copy it in"


def test_the_doc_names_the_arguments_the_framework_passes():
    """The documented call signatures are the ones the framework uses."""
    with open(os.path.join(REPO, "components", "transform", "preprocessing.py"), encoding="utf-8") as handle:
        assert "user_fn(inputs=inputs, outputs=outputs, custom_config=custom_config)" in handle.read()
    with open(os.path.join(REPO, "components", "trainer", "models", "model_builder.py"), encoding="utf-8") as handle:
        called = 'feature_specs=config.features, label=config.label_name, config={**model, "label_scale": scale}'
        assert called in handle.read()
    with open(DOC, encoding="utf-8") as handle:
        text = handle.read()
    assert "`fn(inputs, outputs, custom_config) -> dict`" in text
    assert "`fn(feature_specs, label, config) -> tf.keras.Model`" in text


@pytest.fixture(scope="module")
def custom_code_run(tmp_path_factory):
    """diabetes.yaml with both worked examples: the user transform and the user model."""
    tmp_path = tmp_path_factory.mktemp("custom_code")
    root = str(tmp_path / "root")
    spec = example_spec(
        "diabetes",
        root,
        model={"build_model": "diabetes_model:build", "hidden_units": [16]},
        training={"train_steps": 300},
        evaluation={"thresholds": {"root_mean_squared_error": {"max": 1000}}},
    )
    assert spec["transform"]["module"] == "diabetes_features:preprocess"
    summary, stdout = run_example(tmp_path, spec)
    return root, summary, stdout


@pytest.mark.e2e
def test_the_worked_examples_train_and_serve(custom_code_run):
    root, summary, stdout = custom_code_run
    assert summary["blessed"], stdout
    assert summary["metrics"]["root_mean_squared_error"] < 100  # ~150 (the label's scale) if nothing was learnt
    shapes = trained_variables(root)
    # The user model's own layers: an `age_band` embedding (5 ids x embedding_dim 4) and a first layer over
    # 9 numeric features + `bmi_x_bp` + that embedding.
    assert (5, 4) in shapes.values(), shapes
    assert (9 + 1 + 4, 16) in shapes.values(), shapes


@pytest.mark.e2e
def test_the_served_model_computes_the_extras_from_raw_rows(custom_code_run):
    import glob

    import numpy as np
    import tensorflow as tf

    root, _, _ = custom_code_run
    export = exported_model_dir(root)
    files = glob.glob(os.path.join(root, "artifacts", "ExampleGen", "examples", "*", "Split-eval", "*"))
    records = [r.numpy() for r in tf.data.TFRecordDataset(files, compression_type="GZIP").take(8)]
    predictions = tf.saved_model.load(export).signatures["serving_default"](examples=tf.constant(records))
    values = next(iter(predictions.values())).numpy()
    assert values.shape[0] == 8 and np.all(np.isfinite(values))
    assert np.ptp(values) > 0  # rows differ, so do their predictions
