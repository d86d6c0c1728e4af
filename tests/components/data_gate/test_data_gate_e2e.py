"""Run-time data defects stop a real pipeline at DataGate, before Transform, with nothing pushed.

One real run (`python -m pipelines run`, ML Metadata in SQLite) over a TFRecord
file that `validate` cannot fully check (it reads only the first records) and
that holds two defects DataGate must name together:
- a category (`kind: only_eval`) that occurs only in the eval split: the schema
  is inferred from train only, so ExampleValidator flags it;
- drift between train and eval beyond `data.checks.drift`.
(A single-class label is checked before the run starts; DataGate's own label
check is tested on real statistics in test_data_gate_checks.py.)
Which split a record lands in is TFX's own partition function (`sha256` of the
serialized record), so the test places the eval-only rows exactly.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys

import pytest
import yaml

pytestmark = pytest.mark.e2e


def _example(x: float, kind: str, y: int) -> bytes:
    import tensorflow as tf

    feature = {
        "x": tf.train.Feature(float_list=tf.train.FloatList(value=[x])),
        "kind": tf.train.Feature(bytes_list=tf.train.BytesList(value=[kind.encode()])),
        "y": tf.train.Feature(int64_list=tf.train.Int64List(value=[y])),
    }
    # Deterministic bytes: ExampleGen hashes the record as read, or re-serialized deterministically.
    return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString(deterministic=True)


def _split_of(record: bytes) -> str:
    from tfx.components.example_gen.base_example_gen_executor import _PartitionFn
    from tfx.proto import example_gen_pb2

    # splits {train: 2, eval: 1}: buckets [2, 3]
    index = _PartitionFn(record, 2, [2, 3], example_gen_pb2.SplitConfig())
    return ["train", "eval"][index]


@pytest.fixture(scope="module")
def stopped_run(tmp_path_factory, repo_dir):
    import tensorflow as tf

    folder = tmp_path_factory.mktemp("data_gate_e2e")
    rng = random.Random(0)
    records = [_example(rng.uniform(0, 10), rng.choice("abc"), i % 2) for i in range(150)]
    eval_only = []
    while len(eval_only) < 8:  # ~14% of eval: above the default `unseen_categories` (5%)
        record = _example(rng.uniform(0, 10), "only_eval", len(eval_only) % 2)
        if _split_of(record) == "eval":
            eval_only.append(record)
    with tf.io.TFRecordWriter(str(folder / "data.tfrecord")) as writer:
        for record in records + eval_only:
            writer.write(record)
    spec = {
        "pipeline": {"name": "gate", "root": str(folder / "root")},
        "data": {"path": "data.tfrecord", "checks": {"drift": 0.0001}},
        "features": {"x": {"transform": "zscore"}, "kind": {"transform": "vocabulary"}},
        "label": {"name": "target", "column": "y"},
        "model": {"type": "dnn", "hidden_units": [4]},
        "training": {"train_steps": 5, "eval_steps": 1},
        "evaluation": {"metrics": ["binary_accuracy"]},
    }
    spec_file = folder / "spec.yaml"
    spec_file.write_text(yaml.safe_dump(spec), encoding="utf-8")
    env = dict(os.environ, TF_USE_LEGACY_KERAS="1", TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=repo_dir)
    result = subprocess.run(
        [sys.executable, "-m", "pipelines", "run", str(spec_file)],
        cwd=str(folder),
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    return result, folder / "root"


def test_run_fails_at_data_gate(stopped_run):
    result, _ = stopped_run
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Run failed at DataGate" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


def test_category_only_in_eval_is_named(stopped_run):
    result, _ = stopped_run
    assert "split `eval`, feature `kind`" in result.stderr, result.stderr
    assert "only_eval" in result.stderr


def test_drift_beyond_the_limit_is_named(stopped_run):
    result, _ = stopped_run
    assert "feature `x`: drift between the train and eval splits is above the limit" in result.stderr
    assert "`data.checks.drift: 0.0001`" in result.stderr


def test_nothing_after_data_gate_ran_and_nothing_was_pushed(stopped_run):
    _, root = stopped_run
    artifacts = {p.name for p in (root / "artifacts").iterdir()}
    assert {"ExampleGen", "StatisticsGen", "SchemaGen", "ExampleValidator"} <= artifacts
    assert not artifacts & {"Transform", "Trainer", "Evaluator", "Pusher"}
    assert not (root / "serving").exists() or not any((root / "serving").rglob("saved_model.pb"))
