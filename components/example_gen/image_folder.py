"""ExampleGen executor for a folder of images, one sub-folder per class.

Every readable image (see `image_files`: which files are images of which class,
and the decode check) becomes one tf.Example: `image` (the file's bytes,
unchanged), `label` (the class folder's name), `height` and `width` (int64).
Other files are skipped and named: one warning line each (the first
`MAX_LOGGED`, then a count), and all of them in `unreadable_images.json` next to
the split folders of the Examples artifact, as `[{"path": ..., "reason": ...}]`.

Splits hash the `image` feature (TFX's `partition_feature_name`), so a split
depends only on the file's bytes: the same image stays in one split, whatever
its name or class folder.
"""

from __future__ import annotations

import json
import os
from typing import Any

import apache_beam as beam
import tensorflow as tf
from absl import logging
from tfx.components.example_gen.base_example_gen_executor import BaseExampleGenExecutor
from tfx.dsl.io import fileio
from tfx.proto import example_gen_pb2
from tfx.types import artifact_utils, standard_component_specs
from tfx.utils import proto_utils

from components.example_gen.image_files import UnreadableImage, inspect_image, list_image_folder

__all__ = ["Executor", "UNREADABLE_FILE", "to_example"]

UNREADABLE_FILE = "unreadable_images.json"
MAX_LOGGED = 20
_REPORT_KEY = "_unreadable_images_path"


def to_example(data: bytes, label: str, height: int, width: int) -> tf.train.Example:
    """The tf.Example of one image: `image` (bytes, unchanged), `label`, `height`, `width`."""
    feature = {
        "image": tf.train.Feature(bytes_list=tf.train.BytesList(value=[data])),
        "label": tf.train.Feature(bytes_list=tf.train.BytesList(value=[label.encode("utf-8")])),
        "height": tf.train.Feature(int64_list=tf.train.Int64List(value=[height])),
        "width": tf.train.Feature(int64_list=tf.train.Int64List(value=[width])),
    }
    return tf.train.Example(features=tf.train.Features(feature=feature))


class _ReadImage(beam.DoFn):
    """(path, class) -> tf.Example; a file that does not decode goes to the `unreadable` output as (path, reason)."""

    UNREADABLE = "unreadable"

    def process(self, item: tuple[str, str]):
        path, label = item
        try:
            with fileio.open(path, "rb") as handle:
                data = handle.read()
            _, height, width = inspect_image(data)
        except (OSError, UnreadableImage) as err:
            yield beam.pvalue.TaggedOutput(self.UNREADABLE, (path, str(err)))
            return
        yield to_example(data, label, height, width)


def _write_report(unreadable: list[tuple[str, str]], skipped: tuple[tuple[str, str], ...], path: str) -> None:
    entries = sorted([*skipped, *unreadable])
    for file, reason in entries[:MAX_LOGGED]:
        logging.warning("ExampleGen skipped %s: %s.", file, reason)
    if len(entries) > MAX_LOGGED:
        logging.warning("ExampleGen skipped %d more file(s); all are listed in %s.", len(entries) - MAX_LOGGED, path)
    fileio.makedirs(os.path.dirname(path))
    with fileio.open(path, "w") as handle:
        handle.write(json.dumps([{"path": file, "reason": reason} for file, reason in entries], indent=1))


class _ImageFolderToExample(beam.PTransform):
    """The images of an image folder -> tf.Example; skipped files are logged and listed in a JSON file."""

    def __init__(self, exec_properties: dict[str, Any], split_pattern: str):
        self._input_base = exec_properties[standard_component_specs.INPUT_BASE_KEY]
        self._pattern = split_pattern
        self._report = exec_properties.get(_REPORT_KEY)

    def expand(self, pipeline: beam.Pipeline):
        listing = list_image_folder(self._input_base, self._pattern, files=fileio)
        logging.info(
            "ExampleGen: %d image(s) in %d classes under %s.",
            len(listing.images),
            len(listing.classes),
            self._input_base,
        )
        read = (
            pipeline
            | "ListImages" >> beam.Create(listing.images)
            | "Reshuffle" >> beam.Reshuffle()
            | "ReadImages" >> beam.ParDo(_ReadImage()).with_outputs(_ReadImage.UNREADABLE, main="examples")
        )
        if self._report:
            _ = (
                read[_ReadImage.UNREADABLE]
                | "CollectUnreadable" >> beam.combiners.ToList()
                | "WriteUnreadable" >> beam.Map(_write_report, listing.skipped, self._report)
            )
        return read.examples


def _split_by_image(exec_properties: dict[str, Any]) -> dict[str, Any]:
    """exec_properties whose output splits hash the `image` feature (unless a partition feature is set)."""
    output_config = example_gen_pb2.Output()
    proto_utils.json_to_proto(exec_properties[standard_component_specs.OUTPUT_CONFIG_KEY], output_config)
    if not output_config.split_config.splits or output_config.split_config.partition_feature_name:
        return exec_properties
    output_config.split_config.partition_feature_name = "image"
    return dict(
        exec_properties, **{standard_component_specs.OUTPUT_CONFIG_KEY: proto_utils.proto_to_json(output_config)}
    )


class Executor(BaseExampleGenExecutor):
    """ExampleGen executor for image folders (see the module docstring)."""

    def GetInputSourceToExamplePTransform(self) -> beam.PTransform:  # noqa: N802 - TFX's name
        return _ImageFolderToExample

    def Do(self, input_dict, output_dict, exec_properties) -> None:  # noqa: N802 - TFX's name
        examples = artifact_utils.get_single_instance(output_dict[standard_component_specs.EXAMPLES_KEY])
        exec_properties = dict(
            _split_by_image(exec_properties), **{_REPORT_KEY: os.path.join(examples.uri, UNREADABLE_FILE)}
        )
        return super().Do(input_dict, output_dict, exec_properties)
