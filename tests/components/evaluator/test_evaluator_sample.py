"""`evaluation.sample_rows`: the real Evaluator executor scores an even, deterministic sample of the eval split."""

from __future__ import annotations

import dataclasses
import os

import pytest
import tensorflow as tf
from multiclass_fixtures import ROWS, export_model, run_evaluator, write_eval_split
from tfx.types import standard_artifacts

from components.evaluator.eval_config import EvaluationRequest
from components.evaluator.sample import sample_eval_split
from components.evaluator.verdict import read_verdict

REQUEST = EvaluationRequest(
    label_key="species",
    task="classification",
    metrics=("accuracy", "example_count"),
    thresholds={"accuracy": {"min": 0.1}},
)


def _examples(uri: str) -> standard_artifacts.Examples:
    examples = standard_artifacts.Examples()
    examples.uri = uri
    examples.split_names = '["eval"]'
    return examples


def _xs(uri: str) -> list[int]:
    files = tf.io.gfile.glob(os.path.join(uri, "Split-eval", "*"))
    records = tf.data.TFRecordDataset(files, compression_type="GZIP").as_numpy_iterator()
    return [tf.train.Example.FromString(r).features.feature["x"].int64_list.value[0] for r in records]


def test_the_sample_is_spread_evenly_over_the_split_and_the_same_each_time(tmp_path):
    rows = [("Adelie", x) for x in range(1000)]
    write_eval_split(str(tmp_path / "examples"), rows)
    first = sample_eval_split(_examples(str(tmp_path / "examples")), 100, str(tmp_path / "one"))
    again = sample_eval_split(_examples(str(tmp_path / "examples")), 100, str(tmp_path / "two"))
    assert (first.rows, first.total) == (100, 1000)
    assert _xs(first.examples.uri) == _xs(again.examples.uri) == list(range(0, 1000, 10))


def test_a_split_no_larger_than_the_sample_is_scored_whole(tmp_path):
    write_eval_split(str(tmp_path / "examples"), ROWS)
    assert sample_eval_split(_examples(str(tmp_path / "examples")), len(ROWS), str(tmp_path / "s")) is None


@pytest.mark.parametrize("sample_rows", [None, 12])
def test_the_evaluator_scores_the_sample_and_the_verdict_says_so(sample_rows, tmp_path):
    model_uri = str(tmp_path / "model")
    export_model(model_uri)
    examples = str(tmp_path / "examples")
    write_eval_split(examples, ROWS * 4)
    request = dataclasses.replace(REQUEST, sample_rows=sample_rows)
    run = run_evaluator(str(tmp_path / "run"), request, model_uri, examples)
    verdict = read_verdict(run["blessing"])
    import tensorflow_model_analysis as tfma

    counts = [
        key.value.double_value.value
        for metrics in tfma.load_metrics(run["evaluation"])
        for key in metrics.metric_keys_and_values
        if key.key.name == "example_count"
    ]
    if sample_rows is None:
        assert "sample_rows" not in verdict
        assert counts and counts[0] == len(ROWS) * 4
    else:
        assert (verdict["sample_rows"], verdict["eval_rows"]) == (12, len(ROWS) * 4)
        assert counts and counts[0] == 12
