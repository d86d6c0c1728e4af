"""The label tensor and the `label_classes` vocabulary, through real tf.Transform on Beam (TF1 and TF2 modes)."""

from __future__ import annotations

import os

import pytest
import tensorflow as tf
import tensorflow_transform as tft
import tensorflow_transform.beam as tft_beam
from tensorflow_transform.tf_metadata import dataset_metadata, schema_utils

from components.transform.config import TransformConfig
from components.transform.labels import LABEL_CLASSES, label_tensor

RAW_SPEC = {
    "species": tf.io.FixedLenFeature([], tf.string),
    "cultivar": tf.io.FixedLenFeature([], tf.int64),
    "grade": tf.io.FixedLenFeature([], tf.float32),
    "answer": tf.io.VarLenFeature(tf.string),  # may be missing
    "rank": tf.io.VarLenFeature(tf.int64),  # how TFX reads a CSV column of integers
    "tips": tf.io.FixedLenFeature([], tf.float32),
}
ROWS = [
    {"species": "Adelie", "cultivar": 3, "grade": 2.0, "answer": ["yes"], "rank": [3], "tips": 1.5},
    {"species": "Gentoo", "cultivar": 1, "grade": 1.0, "answer": ["no"], "rank": [1], "tips": 0.0},
    {"species": "Chinstrap", "cultivar": 2, "grade": 2.0, "answer": ["yes"], "rank": [2], "tips": 2.0},
    {"species": "Adelie", "cultivar": 1, "grade": 1.0, "answer": ["no"], "rank": [1], "tips": 0.5},
]


def _scalar(value):
    return value.item() if hasattr(value, "item") else value


def _run(config: TransformConfig, tmp_path, tf1: bool, rows=ROWS):
    """Analyzes and transforms `rows`; returns (labels, class names stored in the transform graph)."""
    metadata = dataset_metadata.DatasetMetadata(schema_utils.schema_from_feature_spec(RAW_SPEC))
    output_dir = os.path.join(str(tmp_path), "transform_output")
    with tft_beam.Context(temp_dir=str(tmp_path / "tmp"), force_tf_compat_v1=tf1):
        (transformed, _), transform_fn = (rows, metadata) | tft_beam.AnalyzeAndTransformDataset(
            lambda inputs: {config.label_name: label_tensor(config, inputs)}
        )
        _ = transform_fn | tft_beam.WriteTransformFn(output_dir)
    output = tft.TFTransformOutput(output_dir)
    classes = [c.decode() for c in output.vocabulary_by_name(LABEL_CLASSES)] if config.task == "classification" else []
    return [_scalar(row[config.label_name]) for row in transformed], classes


@pytest.fixture(params=[True, False], ids=["tf1_graph_mode", "tf2_mode"])
def tf1(request) -> bool:
    return request.param


@pytest.mark.parametrize(
    "column, classes, labels",
    [
        ("species", ["Adelie", "Chinstrap", "Gentoo"], [0, 2, 1, 0]),
        ("species", ["Gentoo", "Adelie", "Chinstrap"], [1, 0, 2, 1]),  # a declared order is kept
        ("cultivar", ["1", "2", "3"], [2, 0, 1, 0]),
        ("rank", ["3", "1", "2"], [0, 1, 2, 1]),
        ("grade", ["1", "2"], [1, 0, 1, 0]),  # integral floats name their class by digits
    ],
)
def test_a_label_column_becomes_its_class_index_and_the_classes_are_stored(tmp_path, tf1, column, classes, labels):
    config = TransformConfig(features={}, label_name="y", task="classification", label_column=column, classes=classes)

    got, stored = _run(config, tmp_path, tf1)

    assert got == labels
    assert stored == classes
    assets = os.listdir(tmp_path / "transform_output" / "transform_fn" / "assets")
    assert [a for a in assets if a.startswith(LABEL_CLASSES)] == [LABEL_CLASSES]


def test_a_text_comparison_expression_gives_classes_0_and_1(tmp_path, tf1):
    config = TransformConfig(
        features={}, label_name="adelie", task="classification", label_expression="species == 'Adelie' and tips > 1"
    )

    got, stored = _run(config, tmp_path, tf1)

    assert got == [1, 0, 0, 0]
    assert stored == ["0", "1"]


def test_a_not_equal_text_comparison(tmp_path, tf1):
    config = TransformConfig(
        features={}, label_name="other", task="classification", label_expression="'Adelie' != species"
    )

    got, _ = _run(config, tmp_path, tf1)

    assert got == [0, 1, 1, 0]


def test_regression_labels_stay_float(tmp_path, tf1):
    config = TransformConfig(features={}, label_name="y", task="regression", label_expression="tips * 2")

    got, _ = _run(config, tmp_path, tf1)

    assert got == pytest.approx([3.0, 0.0, 4.0, 1.0])


@pytest.mark.parametrize(
    "column, classes, rows, received",
    [
        ("species", ["Adelie", "Gentoo"], ROWS, "Chinstrap"),
        ("answer", ["no", "yes"], [*ROWS[:3], {**ROWS[3], "answer": []}], "empty: a missing label"),
        ("grade", ["1", "2"], [*ROWS[:3], {**ROWS[3], "grade": 1.5}], "1.5"),
    ],
    ids=["undeclared_class", "missing_label", "fractional_number"],
)
def test_a_label_that_is_no_class_stops_the_transform_naming_it(tmp_path, column, classes, rows, received):
    config = TransformConfig(features={}, label_name="y", task="classification", label_column=column, classes=classes)

    with pytest.raises(Exception) as caught:
        _run(config, tmp_path, True, rows)

    message = str(caught.value)
    assert f"label column `{column}` holds values that are not classes" in message
    assert received in message
    assert "add them to `label.classes`" in message
