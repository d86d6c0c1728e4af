"""A user transform's extra outputs become model inputs: listed from the transform output, fed, embedded."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

from components.trainer.models import model_inputs
from components.trainer.models.model_builder import build_model
from components.trainer.run_fn import compile_model
from components.transform.config import TransformConfig

CONFIG = TransformConfig(
    features={"fare": {"transform": "zscore"}, "company": {"transform": "vocabulary", "top_k": 5, "oov_buckets": 1}},
    label_name="big_tipper",
    task="classification",
    label_expression="tips > 0.2 * fare",
)
RAW_SPEC = {
    "fare": tf.io.FixedLenFeature([], tf.float32),
    "company": tf.io.FixedLenFeature([], tf.string),
    "tips": tf.io.FixedLenFeature([], tf.float32),
}


def _rows(count: int = 64) -> list[dict]:
    rng = np.random.default_rng(0)
    return [
        {"fare": float(f), "company": f"c{int(c)}", "tips": float(t)}
        for f, c, t in zip(rng.uniform(3, 30, count), rng.integers(0, 4, count), rng.uniform(0, 6, count))
    ]


def user_transform(inputs: dict, outputs: dict, custom_config: dict) -> dict:
    """What a user `transform.module` may add: every kind of extra output the Trainer accepts."""
    import tensorflow_transform as tft

    result = dict(outputs)
    fare = tf.reshape(inputs["fare"], [-1])
    result["fare_squared"] = tft.scale_to_z_score(fare * fare)  # float [batch]
    result["fare_pair"] = tf.stack([fare, -fare], axis=1)  # float [batch, 2]
    result["fare_band"] = tft.bucketize(fare, num_buckets=4)  # int64, range recorded: 4 ids
    result["company_hash"] = tf.strings.to_hash_bucket_fast(tf.reshape(inputs["company"], [-1]), 7)  # no range
    return result


@pytest.fixture(scope="module")
def transform_output(tmp_path_factory):
    """A real Transform graph: the framework's preprocessing_fn, then `user_transform`, run by tf.Transform."""
    import apache_beam as beam
    import tensorflow_transform as tft
    import tensorflow_transform.beam as tft_beam
    from tensorflow_transform.tf_metadata import dataset_metadata, schema_utils

    from components.transform.preprocessing import preprocessing_fn

    root = tmp_path_factory.mktemp("model_inputs")
    custom_config = CONFIG.to_dict()
    metadata = dataset_metadata.DatasetMetadata(schema_utils.schema_from_feature_spec(RAW_SPEC))
    options = beam.options.pipeline_options.PipelineOptions(
        ["--runner=apache_beam.runners.portability.fn_api_runner.FnApiRunner"]
    )

    def fn(inputs):
        return user_transform(inputs, preprocessing_fn(inputs, custom_config), custom_config)

    with beam.Pipeline(options=options) as pipeline, tft_beam.Context(temp_dir=str(root / "tmp")):
        rows = pipeline | beam.Create(_rows())
        transform_fn = (rows, metadata) | tft_beam.AnalyzeDataset(fn)
        _ = transform_fn | tft_beam.WriteTransformFn(str(root / "graph"))
    return tft.TFTransformOutput(str(root / "graph"))


def test_extra_outputs_are_listed_after_the_declared_features(transform_output):
    inputs = model_inputs.from_transform_output(CONFIG, transform_output, {"company": 4})
    by_name = {i.name: i for i in inputs}
    assert model_inputs.input_keys(inputs) == [
        "fare_xf",
        "company_xf",
        "company_hash",
        "fare_band",
        "fare_pair",
        "fare_squared",
    ]
    assert (by_name["company_xf"].num_tokens, by_name["company_xf"].column) == (5 + 1, "company")
    assert by_name["fare_squared"].dtype == tf.float32 and not by_name["fare_squared"].categorical
    assert by_name["fare_pair"].shape == (2,)
    assert (by_name["fare_band"].num_tokens, by_name["fare_band"].hashed) == (4, False)
    assert (by_name["company_hash"].num_tokens, by_name["company_hash"].hashed) == (model_inputs.HASH_BUCKETS, True)


def test_the_built_in_model_takes_and_learns_from_the_extras(transform_output):
    tf.keras.utils.set_random_seed(0)
    inputs = model_inputs.from_transform_output(CONFIG, transform_output, {"company": 4})
    model = build_model(CONFIG, {"type": "wide_and_deep", "hidden_units": [8]}, {"company": 4}, inputs)
    assert sorted(model.input) == sorted(model_inputs.input_keys(inputs))
    assert model.get_layer("embed_fare_band").input_dim == 4
    assert model.get_layer("hash_company_hash").num_bins == model_inputs.HASH_BUCKETS
    # The label depends only on an extra (`fare_band`): the model can learn it only if the extra is fed.
    rng = np.random.default_rng(1)
    n = 512
    band = rng.integers(0, 4, n)
    features = {
        "company_xf": rng.integers(0, 6, n),
        "fare_xf": rng.normal(size=n).astype("float32"),
        "company_hash": rng.integers(0, 7, n),
        "fare_band": band,
        "fare_pair": rng.normal(size=(n, 2)).astype("float32"),
        "fare_squared": rng.normal(size=n).astype("float32"),
    }
    label = (band % 2 == 0).astype("float32").reshape(-1, 1)
    compile_model(model, CONFIG, {"learning_rate": 0.05, "steps_per_execution": 4}, ["binary_accuracy"])
    history = model.fit(features, label, epochs=10, batch_size=64, verbose=0)
    assert history.history["binary_accuracy"][-1] > 0.95


@pytest.mark.parametrize(
    ("feature", "received", "fix"),
    [
        (tf.io.VarLenFeature(tf.float32), "a variable-length (sparse) float32 tensor", "tf.sparse.to_dense"),
        (tf.io.FixedLenFeature([], tf.string), "Received: text", "tft.compute_and_apply_vocabulary"),
        (tf.io.FixedLenFeature([3], tf.int64), "int64 ids of shape [3]", "one id per row"),
    ],
)
def test_an_extra_output_the_model_cannot_take_is_named_with_the_fix(feature, received, fix):
    spec = {"fare_xf": tf.io.FixedLenFeature([], tf.float32), "big_tipper": tf.io.FixedLenFeature([], tf.int64)}
    spec["my_extra"] = feature
    with pytest.raises(ValueError) as error:
        model_inputs.from_feature_spec(CONFIG, spec, None, {})
    message = str(error.value)
    assert "transform output `my_extra` cannot be a model input" in message
    assert received in message and fix in message


def test_a_transform_output_without_the_label_says_to_return_it():
    spec = {"fare_xf": tf.io.FixedLenFeature([], tf.float32)}
    with pytest.raises(ValueError, match=r"has no label `big_tipper`.*Received: outputs \['fare_xf'\]"):
        model_inputs.from_feature_spec(CONFIG, spec, None, {})


def test_declared_features_a_user_transform_dropped_are_not_inputs():
    spec = {"company_xf": tf.io.FixedLenFeature([], tf.int64), "big_tipper": tf.io.FixedLenFeature([], tf.int64)}
    inputs = model_inputs.from_feature_spec(CONFIG, spec, None, {"company": 4})
    assert model_inputs.input_keys(inputs) == ["company_xf"]
