"""StatisticsGen from the columnar copy gives TFX's statistics, and TFX's path runs whenever there is no copy.

ExampleGen's real executor writes the taxi data (`fast_taxi_examples` in
tests/components/conftest.py: its fast path writes the columnar copy); then
our executor and TFX's run on that same artifact and their statistics are
compared feature by feature. Counts, min/max, unique
values and top values are equal; means and deviations to float rounding (the
sums run in another order); quantiles are TFDV's approximations either way.
"""

from __future__ import annotations

import os
import random

import pytest
import tensorflow_data_validation as tfdv
from tfx.components.statistics_gen import executor as tfx_executor
from tfx.dsl.components.base import base_beam_executor
from tfx.types import artifact_utils, standard_artifacts, standard_component_specs

from components.common import columnar_copy
from components.statistics_gen.executor import Executor
from pipelines.compiler import DEFAULT_BEAM_ARGS


def _statistics(executor_class, examples, root, **exec_properties) -> standard_artifacts.ExampleStatistics:
    statistics = standard_artifacts.ExampleStatistics()
    statistics.uri = str(root)
    context = base_beam_executor.BaseBeamExecutor.Context(
        beam_pipeline_args=list(DEFAULT_BEAM_ARGS), tmp_dir=str(root / ".tmp"), unique_id="1"
    )
    executor_class(context).Do(
        {standard_component_specs.EXAMPLES_KEY: [examples]},
        {standard_component_specs.STATISTICS_KEY: [statistics]},
        {standard_component_specs.EXCLUDE_SPLITS_KEY: "[]", **exec_properties},
    )
    return statistics


def _split_stats(statistics, split: str):
    path = os.path.join(artifact_utils.get_split_uri([statistics], split), tfx_executor.DEFAULT_FILE_NAME)
    return tfdv.load_stats_binary(path).datasets[0]


def _assert_same_statistics(ours, theirs) -> None:
    assert ours.num_examples == theirs.num_examples
    assert [f.path.step[:] for f in ours.features] == [f.path.step[:] for f in theirs.features]
    for a, b in zip(ours.features, theirs.features):
        assert a.type == b.type, a.path
        kind = a.WhichOneof("stats")
        assert kind == b.WhichOneof("stats"), a.path
        if kind == "num_stats":
            x, y = a.num_stats, b.num_stats
            assert x.common_stats == y.common_stats, a.path
            assert (x.min, x.max, x.num_zeros) == (y.min, y.max, y.num_zeros), a.path
            assert x.mean == pytest.approx(y.mean, rel=1e-9), a.path
            assert x.std_dev == pytest.approx(y.std_dev, rel=1e-9), a.path
        else:
            x, y = a.string_stats, b.string_stats
            assert x.common_stats == y.common_stats, a.path
            assert (x.unique, list(x.top_values), x.avg_length) == (y.unique, list(y.top_values), y.avg_length)


def test_statistics_from_the_copy_equal_tfx_statistics(fast_taxi_examples, tmp_path):
    ours = _statistics(Executor, fast_taxi_examples, tmp_path / "ours")
    theirs = _statistics(tfx_executor.Executor, fast_taxi_examples, tmp_path / "tfx")
    for split in ("train", "eval"):
        _assert_same_statistics(_split_stats(ours, split), _split_stats(theirs, split))
    assert ours.split_names == theirs.split_names
    assert ours.span == theirs.span
    for name in (tfx_executor.SAMPLE_RATE_BY_SPLIT_PROPERTY_NAME, tfx_executor.STATS_DASHBOARD_LINK):
        assert ours.get_custom_property(name) == theirs.get_custom_property(name), name


def test_the_copy_is_what_is_read(fast_taxi_examples, examples_without, tmp_path):
    without_records = examples_without(fast_taxi_examples, "Split-*/*.gz")
    ours = _statistics(Executor, without_records, tmp_path / "ours")
    theirs = _statistics(tfx_executor.Executor, fast_taxi_examples, tmp_path / "tfx")
    _assert_same_statistics(_split_stats(ours, "eval"), _split_stats(theirs, "eval"))


def test_without_a_complete_copy_tfx_reads_the_examples(fast_taxi_examples, examples_without, tmp_path):
    without_manifest = examples_without(fast_taxi_examples, f"{columnar_copy.FOLDER}/**/*.arrow")
    os.remove(os.path.join(without_manifest.uri, columnar_copy.FOLDER, "manifest.json"))
    ours = _statistics(Executor, without_manifest, tmp_path / "ours")  # nothing left to read but the examples
    theirs = _statistics(tfx_executor.Executor, fast_taxi_examples, tmp_path / "tfx")
    for split in ("train", "eval"):
        _assert_same_statistics(_split_stats(ours, split), _split_stats(theirs, split))


def test_excluded_splits_and_per_split_sample_rates_are_honoured(fast_taxi_examples, tmp_path):
    random.seed(7)  # TFDV keeps each batch with probability 0.5 (`random.random()`, in this process)
    ours = _statistics(
        Executor,
        fast_taxi_examples,
        tmp_path / "ours",
        exclude_splits='["eval"]',
        sample_rate_by_split='{"train": 0.5}',
    )
    assert artifact_utils.decode_split_names(ours.split_names) == ["train"]
    assert not os.path.exists(os.path.join(ours.uri, "Split-eval"))
    train = _split_stats(ours, "train")
    total = sum(
        columnar_copy.read_batches(f)[0].num_rows for f in columnar_copy.split_files(fast_taxi_examples.uri, "train")
    )
    assert 0 < train.num_examples < total  # sampled in batches of at most 1,000 rows, as TFX's reader makes them
    assert '"train": 0.5' in ours.get_json_value_custom_property(tfx_executor.SAMPLE_RATE_BY_SPLIT_PROPERTY_NAME)
