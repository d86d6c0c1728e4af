"""The generated preprocessing_fn, run by tf.Transform on Beam, in TF1 graph mode and in TF2 mode.

Transform runs it with `force_tf_compat_v1` on unless a user module is set
(`transform.tf_compat_v1`), so every declared transform must give the same
values both ways.
"""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_transform.beam as tft_beam
from tensorflow_transform.tf_metadata import dataset_metadata, schema_utils

from components.transform.config import TransformConfig
from components.transform.preprocessing import preprocessing_fn

FEATURES = {
    "x": {"transform": "zscore"},
    "m": {"transform": "minmax"},
    "g": {"transform": "log"},
    "i": {"transform": "identity"},
    "v": {"transform": "vocabulary", "top_k": 2, "oov_buckets": 1},
    "b": {"transform": "bucketize", "buckets": 2},
    "h": {"transform": "hash", "hash_buckets": 10},
    "c": {"transform": "categorical", "num_buckets": 3},
    "f": {"transform": "identity", "fill": 10.0},
}
RAW_SPEC = {
    **{name: tf.io.FixedLenFeature([], tf.float32) for name in ("x", "m", "g", "i", "b", "fare")},
    "v": tf.io.FixedLenFeature([], tf.string),
    "h": tf.io.FixedLenFeature([], tf.string),
    "c": tf.io.FixedLenFeature([], tf.int64),
    "f": tf.io.VarLenFeature(tf.float32),  # a column with missing cells
    "tips": tf.io.VarLenFeature(tf.float32),
}
# One list per column, one value per row (six rows); [] is a missing cell.
COLUMNS = {
    "x": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
    "m": [0.0, 5.0, 10.0, 0.0, 5.0, 10.0],
    "g": [0.0, 1.0, 2.0, 3.0, 4.0, 5.0],
    "i": [7.5, -1.0, 0.0, 1.0, 2.0, 3.0],
    "v": ["a", "a", "a", "b", "b", "c"],
    "b": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
    "h": ["a", "b", "a", "c", "b", "a"],
    "c": [0, 1, 2, 3, -1, 1],
    "f": [[1.0], [], [2.0], [3.0], [], [4.0]],
    "fare": [10.0, 10.0, 10.0, 10.0, 0.0, 10.0],
    "tips": [[3.0], [1.0], [], [2.5], [1.0], [0.0]],
}
ROWS = [dict(zip(COLUMNS, values)) for values in zip(*COLUMNS.values())]
CONFIG = TransformConfig(
    features=FEATURES, label_name="big_tipper", task="classification", label_expression="tips > 0.2 * fare"
)


@pytest.fixture(scope="module", params=[True, False], ids=["tf1_graph_mode", "tf2_mode"])
def transformed(request, tmp_path_factory) -> dict[str, np.ndarray]:
    metadata = dataset_metadata.DatasetMetadata(schema_utils.schema_from_feature_spec(RAW_SPEC))
    temp_dir = str(tmp_path_factory.mktemp("tft"))
    with tft_beam.Context(temp_dir=temp_dir, force_tf_compat_v1=request.param):
        (rows, _), _ = (ROWS, metadata) | tft_beam.AnalyzeAndTransformDataset(
            lambda inputs: preprocessing_fn(inputs, CONFIG.to_dict())
        )
    return {key: np.array([row[key] for row in rows]) for key in rows[0]}


def test_every_declared_feature_and_the_label_are_output(transformed):
    assert set(transformed) == {f"{name}_xf" for name in FEATURES} | {"big_tipper"}


def test_zscore_has_mean_zero_and_unit_variance(transformed):
    values = transformed["x_xf"]
    np.testing.assert_allclose([values.mean(), values.std()], [0.0, 1.0], atol=1e-5)
    assert list(np.argsort(values)) == [0, 1, 2, 3, 4, 5]


def test_minmax_scales_to_the_unit_interval(transformed):
    np.testing.assert_allclose(transformed["m_xf"], [0.0, 0.5, 1.0, 0.0, 0.5, 1.0], atol=1e-6)


def test_log_is_log1p_then_zscore(transformed):
    expected = np.log1p(np.array([0.0, 1.0, 2.0, 3.0, 4.0, 5.0]))
    expected = (expected - expected.mean()) / expected.std()
    np.testing.assert_allclose(transformed["g_xf"], expected, atol=1e-5)


def test_identity_and_fill_of_missing_cells(transformed):
    np.testing.assert_allclose(transformed["i_xf"], [7.5, -1.0, 0.0, 1.0, 2.0, 3.0])
    np.testing.assert_allclose(transformed["f_xf"], [1.0, 10.0, 2.0, 3.0, 10.0, 4.0])


def test_vocabulary_keeps_the_top_k_and_sends_the_rest_to_oov(transformed):
    # "a" (3 rows) and "b" (2 rows) are the top 2; "c" goes to the single OOV id 2.
    assert transformed["v_xf"].tolist() == [0, 0, 0, 1, 1, 2]


def test_bucketize_splits_at_the_quantiles(transformed):
    assert transformed["b_xf"].tolist() == [0, 0, 0, 1, 1, 1]


def test_hash_is_stable_and_in_range(transformed):
    ids = transformed["h_xf"].tolist()
    assert all(0 <= i < 10 for i in ids)
    assert ids[0] == ids[2] == ids[5] and ids[1] == ids[4]


def test_categorical_ids_out_of_range_become_zero(transformed):
    assert transformed["c_xf"].tolist() == [0, 1, 2, 0, 0, 1]


def test_label_expression_is_zero_where_an_input_is_missing(transformed):
    # tips > 0.2 * fare; row 3 has no tips; row 5 has fare 0 (1.0 > 0: a tipper).
    assert transformed["big_tipper"].tolist() == [1, 0, 0, 1, 1, 0]
