"""RowFilter on real TFRecord files: which rows pass, what is recorded, and a useful error for unknown columns."""

from __future__ import annotations

import glob
import os

import pytest
import tensorflow as tf
from tfx.types import artifact_utils, standard_artifacts

from components.row_filter.component import DropMissing, RowFilter
from components.row_filter.executor import filter_split, has_value, row_predicate


def _example(**values) -> tf.train.Example:
    feature = {}
    for name, value in values.items():
        if isinstance(value, str):
            feature[name] = tf.train.Feature(bytes_list=tf.train.BytesList(value=[value.encode()]))
        elif isinstance(value, int):
            feature[name] = tf.train.Feature(int64_list=tf.train.Int64List(value=[value]))
        else:
            feature[name] = tf.train.Feature(float_list=tf.train.FloatList(value=[value]))
    return tf.train.Example(features=tf.train.Features(feature=feature))


def _write(folder, rows) -> None:
    os.makedirs(folder, exist_ok=True)
    with tf.io.TFRecordWriter(os.path.join(folder, "data.gz"), options="GZIP") as writer:
        for row in rows:
            writer.write(_example(**row).SerializeToString())


def _read(folder) -> list[dict]:
    files = glob.glob(os.path.join(folder, "*"))
    rows = []
    for record in tf.data.TFRecordDataset(files, compression_type="GZIP"):
        example = tf.train.Example.FromString(record.numpy())
        rows.append({k: v.float_list.value[0] for k, v in example.features.feature.items() if v.float_list.value})
    return rows


@pytest.mark.parametrize(
    "expression, row, keep_missing, expected",
    [
        ("miles > 1", {"miles": 2.0}, False, True),
        ("miles > 1", {"miles": 0.5}, False, False),
        ("tips > 0.2 * fare and not (fare == 0)", {"tips": 3.0, "fare": 10}, False, True),
        ("tips / fare > 0.2", {"tips": 1.0, "fare": 0.0}, False, False),
        ("miles > 1", {}, False, False),
        ("miles > 1", {}, True, True),
        ("miles > 1", {"miles": "far"}, False, False),
    ],
)
def test_row_predicate(expression, row, keep_missing, expected):
    assert row_predicate(expression, keep_missing)(_example(**row)) is expected


def test_filter_split_keeps_passing_rows_and_counts_them(tmp_path):
    _write(tmp_path / "in", [{"miles": 0.5}, {"miles": 3.0}, {"miles": 1.5}, {}])
    kept, dropped = filter_split(str(tmp_path / "in"), str(tmp_path / "out"), "miles > 1")
    assert (kept, dropped) == (2, 2)
    assert _read(tmp_path / "out") == [{"miles": 3.0}, {"miles": 1.5}]


def test_a_column_in_no_row_is_an_error_not_an_empty_split(tmp_path):
    _write(tmp_path / "in", [{"miles": 0.5}])
    with pytest.raises(ValueError, match=r"column\(s\) `mlies` in `expression` appear in no row of"):
        filter_split(str(tmp_path / "in"), str(tmp_path / "out"), "mlies > 1")


def test_component_filters_every_split_and_records_counts(tmp_path):
    source = standard_artifacts.Examples()
    source.uri = str(tmp_path / "examples")
    source.split_names = artifact_utils.encode_split_names(["train", "eval"])
    _write(tmp_path / "examples" / "Split-train", [{"miles": 0.5}, {"miles": 3.0}, {"miles": 0.1}])
    _write(tmp_path / "examples" / "Split-eval", [{"miles": 2.0}])
    output = standard_artifacts.Examples()
    output.uri = str(tmp_path / "filtered")

    RowFilter.test_call(examples=source, filtered_examples=output, expression="miles > 1", keep_missing=False)

    assert output.split_names == source.split_names
    assert output.get_int_custom_property("rows_kept") == 2
    assert output.get_int_custom_property("rows_dropped") == 2
    assert output.get_int_custom_property("rows_dropped_train") == 2
    assert _read(tmp_path / "filtered" / "Split-eval") == [{"miles": 2.0}]


def test_drop_missing_keeps_the_rows_with_a_value_in_the_column_and_records_counts(tmp_path):
    source = standard_artifacts.Examples()
    source.uri = str(tmp_path / "examples")
    source.split_names = artifact_utils.encode_split_names(["train", "eval"])
    _write(tmp_path / "examples" / "Split-train", [{"miles": 0.5, "kind": "a"}, {"miles": 3.0}, {"miles": 0.1}])
    _write(tmp_path / "examples" / "Split-eval", [{"miles": 2.0, "kind": "b"}, {"miles": 4.0}])
    output = standard_artifacts.Examples()
    output.uri = str(tmp_path / "filtered")

    DropMissing.test_call(examples=source, filtered_examples=output, column="kind")

    assert output.split_names == source.split_names
    assert output.get_int_custom_property("rows_kept") == 2
    assert output.get_int_custom_property("rows_dropped") == 3
    assert output.get_int_custom_property("rows_dropped_train") == 2
    assert output.get_int_custom_property("rows_dropped_eval") == 1
    assert _read(tmp_path / "filtered" / "Split-train") == [{"miles": 0.5}]
    assert _read(tmp_path / "filtered" / "Split-eval") == [{"miles": 2.0}]


@pytest.mark.parametrize(
    "row, expected",
    [({"kind": "a"}, True), ({"kind": 0}, True), ({"kind": 0.0}, True), ({}, False), ({"other": 1.0}, False)],
)
def test_has_value(row, expected):
    assert has_value(_example(**row), "kind") is expected


def test_has_value_of_an_empty_value_list_is_false():
    example = tf.train.Example()
    example.features.feature["kind"].bytes_list.SetInParent()

    assert has_value(example, "kind") is False
