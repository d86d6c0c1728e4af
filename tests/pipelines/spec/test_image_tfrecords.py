"""Images from TFRecords of tf.Examples (encoded bytes and a label, as TFDS writes them) validate like a folder."""

from __future__ import annotations

import pytest
import tensorflow as tf
import yaml
from image_folders import encode

from pipelines.load import load_spec
from pipelines.spec import SpecError

SPEC = {
    "pipeline": {"name": "pictures"},
    "data": {"format": "tfrecord", "splits": {"train": 3, "eval": 1}},
    "features": {"image": {"transform": "image", "image_size": [32, 32], "channels": 1}},
    "label": {"name": "digit", "column": "label", "task": "classification"},
    "model": {"type": "image_classifier", "backbone": "MobileNetV2"},
    "evaluation": {"metrics": ["accuracy"]},
}


def _write_examples(path, rows: int = 40) -> None:
    """PNG bytes under `image` and an integer class under `label` (TFDS's `image`/`label` convention)."""
    with tf.io.TFRecordWriter(str(path)) as writer:
        for index in range(rows):
            feature = {
                "image": tf.train.Feature(bytes_list=tf.train.BytesList(value=[encode((32, 32), "L", "PNG", index)])),
                "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[index % 4])),
            }
            writer.write(tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString())


def _spec_file(tmp_path, **changes) -> str:
    _write_examples(tmp_path / "pictures.tfrecord")
    spec = dict(SPEC, data=dict(SPEC["data"], path=str(tmp_path / "pictures.tfrecord")), **changes)
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec), encoding="utf-8")
    return str(path)


def test_tfrecords_of_encoded_images_with_integer_labels_are_valid(tmp_path):
    spec = load_spec(_spec_file(tmp_path)).spec
    assert spec.features["image"].transform == "image"
    assert spec.model.type == "image_classifier"


def test_an_image_transform_on_the_integer_label_names_the_column_and_the_fix(tmp_path):
    features = {"label": {"transform": "image", "image_size": [32, 32]}}
    label = {"name": "digit", "column": "image", "task": "classification"}
    with pytest.raises(SpecError) as raised:
        load_spec(_spec_file(tmp_path, features=features, label=label))
    messages = [p.message for p in raised.value.problems if p.path == "features.label.transform"]
    assert messages and "holds numbers" in messages[0] and "Choose the feature that holds the images" in messages[0]
