"""End to end: a spec without `evaluation` gets metrics that fit its label, and `label.missing: drop`.

Two small runs. A 3-class label with 5 empty cells and `missing: drop` trains on the
labelled rows only (ExampleGen's examples keep every row; StatisticsGen, Transform, the
Trainer and the Evaluator read the `DropMissingLabels` step's) and is scored by
`accuracy`. A regression label is scored by mean squared and mean absolute error.
Neither spec has an `evaluation` section: the trivial-baseline gate decides the blessing.
"""

from __future__ import annotations

import csv
import glob
import os

import numpy as np
import pytest
import yaml
from mlmd_queries import store_for

pytestmark = pytest.mark.e2e

ROWS = 240
UNLABELLED = (5, 17, 33, 60, 101)


def _write(path, label_of) -> None:
    rng = np.random.default_rng(3)
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["x", "noise", "target"])
        for i in range(ROWS):
            x = float(rng.uniform(-3, 3))
            writer.writerow([round(x, 4), round(float(rng.normal()), 4), label_of(i, x)])


def _run(root, name: str, label: dict):
    import pipelines

    spec = {
        "pipeline": {"name": name, "root": str(root / "run")},
        "data": {"path": str(root / "data.csv")},
        "features": {"x": {"transform": "zscore"}, "noise": {"transform": "zscore"}},
        "label": {"name": "y", "column": "target", **label},
        "model": {"type": "dnn", "hidden_units": [16]},
        "training": {"train_steps": 200, "eval_steps": 5, "batch_size": 32, "learning_rate": 0.05},
    }
    (root / "spec.yaml").write_text(yaml.safe_dump(spec), encoding="utf-8")
    resolved = pipelines.load(str(root / "spec.yaml"))
    return resolved, pipelines.run(resolved)


@pytest.fixture(scope="module")
def three_classes_with_gaps(tmp_path_factory):
    root = tmp_path_factory.mktemp("gaps")
    _write(root / "data.csv", lambda i, x: "" if i in UNLABELLED else ("low" if x < -1 else "mid" if x < 1 else "high"))
    return _run(root, "label_gaps", {"missing": "drop"})


@pytest.fixture(scope="module")
def regression(tmp_path_factory):
    root = tmp_path_factory.mktemp("regression")
    _write(root / "data.csv", lambda i, x: round(3 * x + 1, 4))
    return _run(root, "label_regression", {"task": "regression"})


def _examples_artifact(resolved, producer: str):
    (artifact,) = [a for a in store_for(resolved.metadata_path).get_artifacts() if f"/{producer}/" in a.uri]
    return artifact


def _records(uri: str) -> int:
    import tensorflow as tf

    files = sorted(glob.glob(os.path.join(uri, "Split-*", "*")))
    return sum(1 for _ in tf.data.TFRecordDataset(files, compression_type="GZIP"))


def _statistics_rows(resolved) -> int:
    import tensorflow_data_validation as tfdv

    (artifact,) = [a for a in store_for(resolved.metadata_path).get_artifacts() if "/StatisticsGen/" in a.uri]
    files = glob.glob(os.path.join(artifact.uri, "Split-*", "FeatureStats.pb"))
    return sum(tfdv.load_stats_binary(f).datasets[0].num_examples for f in files)


def test_multiclass_label_without_evaluation_is_scored_by_accuracy(three_classes_with_gaps):
    resolved, outcome = three_classes_with_gaps

    assert resolved.spec.evaluation.metrics == ("accuracy",)
    assert "accuracy" in outcome.summary.metrics and "binary_accuracy" not in outcome.summary.metrics
    assert outcome.summary.blessed, outcome.summary.reasons
    assert "majority-class baseline" in "; ".join(outcome.summary.reasons)


def test_rows_without_a_label_are_left_out_of_train_and_eval(three_classes_with_gaps):
    resolved, outcome = three_classes_with_gaps
    dropped = _examples_artifact(resolved, "DropMissingLabels")

    assert dropped.custom_properties["rows_dropped"].int_value == len(UNLABELLED)
    assert dropped.custom_properties["rows_kept"].int_value == ROWS - len(UNLABELLED)
    assert _statistics_rows(resolved) == ROWS - len(UNLABELLED)
    assert _records(_examples_artifact(resolved, "ExampleGen").uri) == ROWS  # ExampleGen's examples keep them


def test_the_summary_and_the_report_say_how_many_rows_were_dropped(three_classes_with_gaps):
    from pipelines.outcome.summary import format_summary

    resolved, outcome = three_classes_with_gaps

    assert outcome.summary.dropped_unlabelled == len(UNLABELLED)
    text = format_summary(outcome.summary, outcome.seconds, outcome.log_file or "")
    assert "Data: dropped 5 row(s) with no label (`label.missing: drop`)" in text
    (report,) = glob.glob(os.path.join(resolved.root, "reports", "*.html"))
    assert '<p id="dropped-unlabelled">Dropped 5 row(s) with no label' in open(report, encoding="utf-8").read()


def test_regression_label_without_evaluation_is_scored_by_squared_and_absolute_error(regression):
    resolved, outcome = regression

    assert resolved.spec.evaluation.metrics == ("mean_squared_error", "mean_absolute_error")
    assert {"mean_squared_error", "mean_absolute_error"} <= set(outcome.summary.metrics)
    assert outcome.summary.dropped_unlabelled == 0
    assert outcome.summary.blessed, outcome.summary.reasons
