"""Our Transform executor reads the columnar copy and gives TFX's transform graph.

TFX's executor and ours run tf.Transform (a vocabulary, a z-score and
quantile buckets) on the same taxi Examples artifact, written by our
ExampleGen's fast path; the graphs are then compared on the same raw rows.
Ours also runs on a copy of the artifact without its TFRecords, which only
works if the columnar copy is what it reads. With tf.Transform's analyzer
cache, a window of spans moved by one span reads only the new span and gives
the graph a Transform without the cache gives.
"""

from __future__ import annotations

import json
import logging
import os

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_data_validation as tfdv
import tensorflow_transform as tft
from tensorflow_data_validation.statistics import stats_impl
from tfx.components.transform import executor as tfx_executor
from tfx.dsl.components.base import base_beam_executor
from tfx.types import standard_artifacts, standard_component_specs

from components.common import columnar_copy
from components.transform.executor import Executor
from pipelines.compiler import DEFAULT_BEAM_ARGS


def _dense(tensor, default):
    """One value per row (the taxi cells hold at most one), shape [batch]."""
    if isinstance(tensor, tf.SparseTensor):
        tensor = tf.sparse.to_dense(tf.sparse.reset_shape(tensor, [tensor.dense_shape[0], 1]), default_value=default)
    return tf.squeeze(tensor, axis=1)


def preprocessing_fn(inputs):
    """What tf.Transform analyzes here: a vocabulary, a mean and deviation, quantiles."""
    return {
        "company_id": tft.compute_and_apply_vocabulary(_dense(inputs["company"], b"")),
        "fare_z": tft.scale_to_z_score(_dense(inputs["fare"], 0.0)),
        "miles_bucket": tft.bucketize(_dense(inputs["trip_miles"], 0.0), num_buckets=5),
    }


@pytest.fixture(scope="module")
def schema_artifact(fast_taxi_examples, tmp_path_factory) -> standard_artifacts.Schema:
    files = columnar_copy.split_files(fast_taxi_examples.uri, "train")
    schema = tfdv.infer_schema(stats_impl.generate_statistics_in_memory(columnar_copy.read_batches(files[0])[0]))
    artifact = standard_artifacts.Schema()
    artifact.uri = str(tmp_path_factory.mktemp("schema"))
    tfdv.write_schema_text(schema, os.path.join(artifact.uri, "schema.pbtxt"))
    return artifact


def _transform(executor_class, examples, schema, root, cache_in=None, cache_out=None) -> tft.TFTransformOutput:
    """Transform of `examples` (one artifact, or a list: spans) into `root`; with `cache_out`, tf.Transform's
    analyzer cache is written there, and read from `cache_in`, as TFX's Transform with the cache on does."""
    graph = standard_artifacts.TransformGraph()
    graph.uri = str(root / "transform_graph")
    context = base_beam_executor.BaseBeamExecutor.Context(
        beam_pipeline_args=list(DEFAULT_BEAM_ARGS), tmp_dir=str(root / ".tmp"), unique_id="1"
    )
    inputs = {
        standard_component_specs.EXAMPLES_KEY: examples if isinstance(examples, list) else [examples],
        standard_component_specs.SCHEMA_KEY: [schema],
        **({standard_component_specs.ANALYZER_CACHE_KEY: [cache_in]} if cache_in else {}),
    }
    outputs = {
        standard_component_specs.TRANSFORM_GRAPH_KEY: [graph],
        **({standard_component_specs.UPDATED_ANALYZER_CACHE_KEY: [cache_out]} if cache_out else {}),
    }
    executor_class(context).Do(
        inputs,
        outputs,
        {
            standard_component_specs.PREPROCESSING_FN_KEY: f"{__name__}.preprocessing_fn",
            standard_component_specs.DISABLE_STATISTICS_KEY: True,
            "disable_analyzer_cache": cache_out is None,
            "force_tf_compat_v1": False,
            standard_component_specs.SPLITS_CONFIG_KEY: json.dumps({"analyze": ["train"]}),
        },
    )
    return tft.TFTransformOutput(graph.uri)


def _apply(output: tft.TFTransformOutput) -> dict[str, np.ndarray]:
    values = {
        "company": [[b"Flash Cab"], [b"nobody"], [b""]],
        "fare": [[4.5], [12.0], [60.0]],
        "trip_miles": [[0.2], [2.5], [30.0]],
    }
    spec = output.raw_feature_spec()
    raw = {
        name: tf.constant(rows) if isinstance(spec[name], tf.io.FixedLenFeature) else tf.sparse.from_dense(rows)
        for name, rows in values.items()
    }
    return {k: v.numpy() for k, v in output.transform_features_layer()(raw).items()}


def test_the_graph_equals_tfx_graph_from_the_copy_alone(
    fast_taxi_examples, examples_without, schema_artifact, tmp_path
):
    theirs = _transform(tfx_executor.Executor, fast_taxi_examples, schema_artifact, tmp_path / "tfx")
    without_records = examples_without(fast_taxi_examples, "Split-*/*.gz")
    ours = _transform(Executor, without_records, schema_artifact, tmp_path / "ours")
    vocabulary = "vocab_compute_and_apply_vocabulary_vocabulary"
    assert ours.vocabulary_by_name(vocabulary) == theirs.vocabulary_by_name(vocabulary)
    mine, tfx = _apply(ours), _apply(theirs)
    np.testing.assert_array_equal(mine["company_id"], tfx["company_id"])
    np.testing.assert_allclose(mine["fare_z"], tfx["fare_z"], rtol=1e-5)
    np.testing.assert_array_equal(mine["miles_bucket"], tfx["miles_bucket"])


def test_tfx_executor_is_restored_after_a_run(fast_taxi_examples, schema_artifact, tmp_path):
    original = tfx_executor.TransformProcessor
    _transform(Executor, fast_taxi_examples, schema_artifact, tmp_path)
    assert tfx_executor.TransformProcessor is original


def _cache(uri) -> standard_artifacts.TransformCache:
    cache = standard_artifacts.TransformCache()
    cache.uri = str(uri)
    return cache


def _reads(caplog) -> list[str]:
    """The Examples folders whose train split Transform read, from its log; then clears the log."""
    prefix = "Transform reads "
    read = [
        record.getMessage()[len(prefix) :].split("/Split-train")[0]
        for record in caplog.records
        if record.getMessage().startswith(prefix)
    ]
    caplog.clear()
    caplog.set_level(logging.INFO, logger="absl")  # a Transform leaves absl's logger at WARNING
    return read


def test_a_window_moved_by_one_span_reads_only_the_new_span_and_gives_the_graph_without_the_cache(
    taxi_span_examples, schema_artifact, tmp_path, caplog
):
    _reads(caplog)
    span_1, span_2, span_3 = taxi_span_examples
    first_cache = _cache(tmp_path / "cache_1")
    first = _transform(Executor, [span_1, span_2], schema_artifact, tmp_path / "first", cache_out=first_cache)
    assert sorted(_reads(caplog)) == [span_1.uri, span_2.uri]

    # The window moves to spans 2-3: span 2's analysis comes from the first run's cache.
    moved_cache = _cache(tmp_path / "cache_2")
    cached = _transform(Executor, [span_2, span_3], schema_artifact, tmp_path / "moved", first_cache, moved_cache)
    assert _reads(caplog) == [span_3.uri]
    assert len(os.listdir(moved_cache.uri)) == 2  # the window's two spans, for the run after
    # Stamped with the window's newest span: the resolver picks it for the window after (span 4), not for span 3.
    assert first_cache.get_int_custom_property("span") == 2 and moved_cache.get_int_custom_property("span") == 3

    fresh = _transform(Executor, [span_2, span_3], schema_artifact, tmp_path / "fresh")
    assert sorted(_reads(caplog)) == [span_2.uri, span_3.uri]
    vocabulary = "vocab_compute_and_apply_vocabulary_vocabulary"
    assert cached.vocabulary_by_name(vocabulary) == fresh.vocabulary_by_name(vocabulary)
    with_cache, without = _apply(cached), _apply(fresh)
    np.testing.assert_array_equal(with_cache["company_id"], without["company_id"])
    np.testing.assert_allclose(with_cache["fare_z"], without["fare_z"], rtol=1e-5)
    np.testing.assert_array_equal(with_cache["miles_bucket"], without["miles_bucket"])
    # The spans differ: the window over spans 1-2 gives other values (so the comparison can fail).
    assert not np.allclose(_apply(first)["fare_z"], without["fare_z"])
