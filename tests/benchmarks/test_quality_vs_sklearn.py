"""The quality benchmark's own parts: the verdict rule, the baselines' preprocessing, reading splits back."""

from __future__ import annotations

import gzip
import os

import numpy as np
import pytest
import tensorflow as tf

from benchmarks import quality_vs_sklearn as bench


@pytest.mark.parametrize(
    ("task", "ours", "best", "expected"),
    [
        ("classification", 0.95, 0.955, "met"),  # half a point below
        ("classification", 0.94, 0.951, "missed"),  # more than a point below
        ("classification", 0.99, 0.95, "met"),
        ("regression", 56.0, 54.0, "met"),  # 3.7% worse
        ("regression", 57.0, 54.0, "missed"),  # 5.6% worse
        ("regression", 50.0, 54.0, "met"),
    ],
)
def test_verdict_applies_the_issue_targets(task, ours, best, expected):
    assert bench.verdict(task, ours, best) == expected


def test_baselines_get_text_one_hot_and_missing_cells_imputed():
    train = {"size": [1.0, None, 3.0, 4.0] * 10, "colour": ["red", "blue", None, "red"] * 10}
    evaluation = {"size": [None, 2.0], "colour": ["green", "blue"]}
    x_train, x_eval = bench._design(train, evaluation, ["size", "colour"])
    assert x_train.shape == (40, 1 + 3) and x_eval.shape == (2, 4)  # size; red, blue, (missing)
    assert not np.isnan(np.asarray(x_eval, dtype=float)).any()
    assert np.asarray(x_eval, dtype=float)[0, 1:].sum() == 0  # unseen text: no column set


def test_baselines_score_a_learnable_rule_well():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(300, 2))
    y = (x[:, 0] > 0).astype(int)
    scores = bench.baselines("classification", x[:200], y[:200], x[200:], y[200:])
    assert set(scores) == {"linear", "boosting"} and min(scores.values()) > 0.9


def test_read_split_reads_the_example_gen_output_back(tmp_path):
    split = tmp_path / "artifacts" / "ExampleGen" / "examples" / "1" / "Split-eval"
    os.makedirs(split)
    with tf.io.TFRecordWriter(str(split / "data_tfrecord-00000-of-00001.gz"), options="GZIP") as writer:
        for species, mass in (("Adelie", 3750), ("Gentoo", None)):
            feature = {"species": tf.train.Feature(bytes_list=tf.train.BytesList(value=[species.encode()]))}
            if mass is not None:
                feature["body_mass_g"] = tf.train.Feature(int64_list=tf.train.Int64List(value=[mass]))
            writer.write(tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString())
    with gzip.open(split / "data_tfrecord-00000-of-00001.gz") as handle:
        assert handle.read(1)  # really GZIP, as ExampleGen writes
    rows = bench.read_split(str(tmp_path), "eval", ["species", "body_mass_g"])
    assert rows == {"species": ["Adelie", "Gentoo"], "body_mass_g": [3750, None]}


def test_read_split_names_the_root_when_the_run_wrote_nothing(tmp_path):
    with pytest.raises(FileNotFoundError, match=f"no ExampleGen train split under {tmp_path}"):
        bench.read_split(str(tmp_path), "train", ["x"])
