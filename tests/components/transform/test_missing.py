"""Imputation of missing cells (components.transform.missing), through real tf.Transform on Beam.

Columns with gaps are VarLenFeatures, as SchemaGen infers them for CSV columns
with empty or `NA` cells; the statistics are computed over the present values.
"""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_transform.beam as tft_beam
from tensorflow_transform.tf_metadata import dataset_metadata, schema_utils

from components.transform.missing import (
    impute,
    impute_kind,
    indicator_name,
    indicators,
    missing_indicator,
    transform_imputed,
)

# Present values 1, 2, 3, 10 -> mean 4, median 2 or 3 (tft.quantiles picks one of the middle two).
GAPPY = [[1.0], [], [2.0], [3.0], [], [10.0]]
RAW_SPEC = {
    "gappy": tf.io.VarLenFeature(tf.float32),
    "ids": tf.io.VarLenFeature(tf.int64),
    "text": tf.io.VarLenFeature(tf.string),
    "dense": tf.io.FixedLenFeature([], tf.float32),
}
ROWS = [
    {"gappy": g, "ids": i, "text": t, "dense": d}
    for g, i, t, d in zip(
        GAPPY,
        [[4], [], [5], [6], [7], []],
        [[b"a"], [], [b"b"], [b"a"], [], [b"c"]],
        [1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
    )
]


def _preprocessing_fn(inputs):
    return {
        "mean": impute({"transform": "zscore"}, inputs["gappy"]),
        "median": impute({"transform": "identity", "impute": "median"}, inputs["gappy"]),
        "fill": impute({"transform": "identity", "fill": -1.0}, inputs["gappy"]),
        "none_ids": impute({"transform": "categorical"}, inputs["ids"]),
        "text": impute({"transform": "vocabulary", "fill": "?"}, inputs["text"]),
        "dense": impute({"transform": "zscore"}, inputs["dense"]),
        "indicator": missing_indicator(inputs["gappy"]),
        "zscore": transform_imputed({"transform": "zscore"}, inputs["gappy"]),
        "minmax": transform_imputed({"transform": "minmax"}, inputs["gappy"]),
        "log": transform_imputed({"transform": "log"}, inputs["gappy"]),
        "bucketize": transform_imputed({"transform": "bucketize", "buckets": 2}, inputs["gappy"]),
        **indicators({"gappy": {"transform": "zscore", "missing_indicator": True}, "dense": {}}, inputs),
    }


@pytest.fixture(scope="module", params=[True, False], ids=["tf1_graph_mode", "tf2_mode"])
def imputed(request, tmp_path_factory) -> dict[str, np.ndarray]:
    metadata = dataset_metadata.DatasetMetadata(schema_utils.schema_from_feature_spec(RAW_SPEC))
    with tft_beam.Context(temp_dir=str(tmp_path_factory.mktemp("tft")), force_tf_compat_v1=request.param):
        (rows, _), _ = (ROWS, metadata) | tft_beam.AnalyzeAndTransformDataset(_preprocessing_fn)
    return {key: np.array([row[key] for row in rows]) for key in rows[0]}


def test_mean_imputation_uses_the_mean_of_the_present_values(imputed):
    np.testing.assert_allclose(imputed["mean"], [1.0, 4.0, 2.0, 3.0, 4.0, 10.0], atol=1e-6)


def test_median_imputation_uses_a_middle_present_value(imputed):
    gaps = imputed["median"][[1, 4]]
    assert gaps[0] == gaps[1] and gaps[0] in (2.0, 3.0), imputed["median"]
    np.testing.assert_allclose(imputed["median"][[0, 2, 3, 5]], [1.0, 2.0, 3.0, 10.0])


def test_declared_fill_replaces_gaps(imputed):
    np.testing.assert_allclose(imputed["fill"], [1.0, -1.0, 2.0, 3.0, -1.0, 10.0])
    assert [v.decode() if isinstance(v, bytes) else v for v in imputed["text"]] == ["a", "?", "b", "a", "?", "c"]


def test_categorical_ids_default_to_zero_not_a_mean(imputed):
    assert imputed["none_ids"].tolist() == [4, 0, 5, 6, 7, 0]


def test_dense_column_is_passed_through(imputed):
    np.testing.assert_allclose(imputed["dense"], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0])


def test_missing_indicator_marks_the_gaps(imputed):
    assert imputed["indicator"].tolist() == [0.0, 1.0, 0.0, 0.0, 1.0, 0.0]


@pytest.mark.parametrize(
    ("feature", "expected"),
    [
        ({"transform": "zscore"}, "mean"),
        ({"transform": "log", "fill": 0.0}, "fill"),
        ({"transform": "bucketize", "buckets": 3}, "mean"),
        ({"transform": "categorical", "num_buckets": 3}, "none"),
        ({"transform": "vocabulary"}, "none"),
        ({"transform": "zscore", "fill": 1.0, "impute": "median"}, "median"),
    ],
)
def test_impute_kind_defaults(feature, expected):
    assert impute_kind(feature) == expected


def test_zscore_of_a_mean_imputed_column_uses_the_present_values_statistics(imputed):
    present = np.array([1.0, 2.0, 3.0, 10.0])
    expected = (np.array([1.0, 4.0, 2.0, 3.0, 4.0, 10.0]) - present.mean()) / present.std()
    np.testing.assert_allclose(imputed["zscore"], expected, atol=1e-5)
    assert imputed["zscore"][1] == pytest.approx(0.0, abs=1e-6)  # the mean itself


def test_minmax_and_log_of_a_mean_imputed_column(imputed):
    np.testing.assert_allclose(imputed["minmax"], np.array([0.0, 3.0, 1.0, 2.0, 3.0, 9.0]) / 9.0, atol=1e-6)
    logged = np.log1p(np.array([1.0, 2.0, 3.0, 10.0]))
    expected = (np.log1p(np.array([1.0, 4.0, 2.0, 3.0, 4.0, 10.0])) - logged.mean()) / logged.std()
    np.testing.assert_allclose(imputed["log"], expected, atol=1e-5)


def test_bucketize_puts_imputed_cells_in_the_mean_s_bucket(imputed):
    assert imputed["bucketize"].tolist()[1] == imputed["bucketize"].tolist()[4] == 1
    assert imputed["bucketize"].tolist()[0] == 0 and imputed["bucketize"].tolist()[5] == 1


@pytest.mark.parametrize(
    "feature",
    [{"transform": "zscore", "fill": 0.0}, {"transform": "vocabulary"}, {"transform": "identity"}],
    ids=["declared_fill", "text", "identity"],
)
def test_transform_imputed_leaves_other_features_to_the_usual_path(feature):
    value = tf.sparse.from_dense(tf.constant([[1.0], [0.0]]))
    assert transform_imputed(feature, value) is None


def test_indicator_output_is_named_after_the_column_for_the_features_that_ask(imputed):
    assert indicator_name("mean radius").startswith("mean_radius_") and indicator_name("x") == "x_missing_xf"
    assert imputed["gappy_missing_xf"].tolist() == [0.0, 1.0, 0.0, 0.0, 1.0, 0.0]
    assert "dense_missing_xf" not in imputed
