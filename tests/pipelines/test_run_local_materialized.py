"""Materialised transformed examples, with a user preprocessing hook."""

from __future__ import annotations

import glob
import os

import pytest
from taxi_fixtures import run_cli, taxi_spec, write_spec

pytestmark = pytest.mark.e2e

USER_MODULE = """
import tensorflow as tf


def add_fare_per_mile(inputs, outputs, custom_config):
    outputs["fare_per_mile_xf"] = outputs["fare_xf"] / (1.0 + tf.abs(outputs["trip_miles_xf"]))
    return outputs
"""


def test_materialized_run_trains_on_transformed_examples_with_user_hook(tmp_path, taxi_sample_csv, monkeypatch):
    (tmp_path / "taxi_hooks.py").write_text(USER_MODULE, encoding="utf-8")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    root = tmp_path / "root"
    spec = taxi_spec(
        taxi_sample_csv,
        str(root),
        transform={"materialize": True, "module": "taxi_hooks:add_fare_per_mile"},
        push={"model_name": "materialized"},
    )
    completed = run_cli(write_spec(tmp_path / "spec.yaml", spec))
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "Model: BLESSED" in completed.stdout

    import tensorflow as tf

    files = glob.glob(str(root / "artifacts" / "Transform" / "transformed_examples" / "*" / "Split-train" / "*"))
    assert files, "Transform wrote no transformed examples"
    record = next(iter(tf.data.TFRecordDataset(files, compression_type="GZIP")))
    example = tf.train.Example.FromString(record.numpy())
    assert {"fare_xf", "fare_per_mile_xf", "big_tipper"} <= set(example.features.feature)
    assert "fare" not in example.features.feature
    assert os.listdir(root / "serving" / "materialized")
