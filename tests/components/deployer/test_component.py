"""Deployer helpers and the `deploy:` section's checks (the deploy itself: tests/pipelines/test_run_local_e2e.py)."""

from __future__ import annotations

import gzip

import pytest
import tensorflow as tf

from components.deployer.component import DeploymentFailed, config_dir_for, sample_examples
from pipelines.spec.models import DeploySpec


def _write_split(folder, count: int) -> list[bytes]:
    folder.mkdir(parents=True)
    records = [
        tf.train.Example(
            features=tf.train.Features(feature={"x": tf.train.Feature(int64_list=tf.train.Int64List(value=[i]))})
        ).SerializeToString()
        for i in range(count)
    ]
    with tf.io.TFRecordWriter(str(folder / "data_tfrecord-00000-of-00001.gz"), options="GZIP") as writer:
        for record in records:
            writer.write(record)
    return records


def test_sample_examples_reads_the_first_rows_of_the_split(tmp_path):
    records = _write_split(tmp_path / "Split-eval", 5)

    assert sample_examples(str(tmp_path), "eval", 3) == records[:3]
    assert sample_examples(str(tmp_path), "eval", 50) == records
    with gzip.open(tmp_path / "Split-eval" / "data_tfrecord-00000-of-00001.gz") as handle:
        assert handle.read(1)  # really compressed: the reader chose GZIP from the name


def test_sample_examples_without_the_split_names_it(tmp_path):
    _write_split(tmp_path / "Split-train", 2)

    with pytest.raises(DeploymentFailed, match=r"no `eval` examples under"):
        sample_examples(str(tmp_path), "eval", 3)


def test_config_dir_sits_next_to_the_model_folder():
    assert config_dir_for("/srv/serving", "taxi") == "/srv/serving/taxi.config"


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"url": "http://127.0.0.1:8501"}, "`url` needs `config`"),
        ({"p99_budget_ms": 0}, "`p99_budget_ms` must be above 0"),
        ({"sample_rows": 0}, "`sample_rows` must be at least 1"),
    ],
)
def test_deploy_spec_rejects_bad_settings(settings, message):
    with pytest.raises(ValueError, match=message):
        DeploySpec(enabled=True, **settings)
