"""Fixtures shared by the component tests."""

from __future__ import annotations

import glob
import os
import shutil

import pytest
from google.protobuf import json_format
from taxi_fixtures import TAXI_CSV
from tfx.dsl.components.base import base_beam_executor
from tfx.proto import example_gen_pb2
from tfx.types import standard_artifacts, standard_component_specs

from components.common import columnar_copy
from components.example_gen import csv_executor
from pipelines.compiler import DEFAULT_BEAM_ARGS


def _fast_examples(root, csv_text: str) -> standard_artifacts.Examples:
    """`csv_text` through our ExampleGen executor under `root` (fast path: examples and their columnar copy)."""
    os.makedirs(root / "data")
    (root / "data" / "data.csv").write_text(csv_text, encoding="utf-8")
    examples = standard_artifacts.Examples()
    examples.uri = str(root / "examples")
    output = example_gen_pb2.Output(
        split_config=example_gen_pb2.SplitConfig(
            splits=[
                example_gen_pb2.SplitConfig.Split(name="train", hash_buckets=2),
                example_gen_pb2.SplitConfig.Split(name="eval", hash_buckets=1),
            ]
        )
    )
    exec_properties = {
        standard_component_specs.INPUT_BASE_KEY: str(root / "data"),
        standard_component_specs.INPUT_CONFIG_KEY: json_format.MessageToJson(
            example_gen_pb2.Input(splits=[example_gen_pb2.Input.Split(name="single_split", pattern="*.csv")])
        ),
        standard_component_specs.OUTPUT_CONFIG_KEY: json_format.MessageToJson(output),
        standard_component_specs.OUTPUT_DATA_FORMAT_KEY: example_gen_pb2.FORMAT_TF_EXAMPLE,
    }
    context = base_beam_executor.BaseBeamExecutor.Context(beam_pipeline_args=list(DEFAULT_BEAM_ARGS))
    csv_executor.Executor(context).Do({}, {standard_component_specs.EXAMPLES_KEY: [examples]}, exec_properties)
    assert columnar_copy.split_files(examples.uri, "train"), "the fast path wrote no columnar copy"
    return examples


@pytest.fixture(scope="session")
def fast_taxi_examples(tmp_path_factory) -> standard_artifacts.Examples:
    """The taxi CSV through our ExampleGen executor (fast path: examples and their columnar copy)."""
    with open(TAXI_CSV, encoding="utf-8") as source:
        return _fast_examples(tmp_path_factory.mktemp("example_gen"), source.read())


@pytest.fixture(scope="session")
def taxi_span_examples(tmp_path_factory) -> list[standard_artifacts.Examples]:
    """The taxi CSV's rows cut into three consecutive parts, each through our ExampleGen: spans 1, 2 and 3."""
    with open(TAXI_CSV, encoding="utf-8") as source:
        header, *rows = source.readlines()
    third = len(rows) // 3
    parts = [rows[:third], rows[third : 2 * third], rows[2 * third :]]
    spans = []
    for number, part in enumerate(parts, 1):
        examples = _fast_examples(tmp_path_factory.mktemp(f"span_{number}"), header + "".join(part))
        examples.span = number  # as ExampleGen stamps a span's Examples
        spans.append(examples)
    return spans


@pytest.fixture
def examples_without(tmp_path):
    """`examples_without(examples, pattern)`: a copy of the Examples artifact without the files matching `pattern`."""

    def copy(examples: standard_artifacts.Examples, pattern: str) -> standard_artifacts.Examples:
        copied = standard_artifacts.Examples()
        copied.uri = str(tmp_path / "examples_copy")
        copied.split_names = examples.split_names
        shutil.copytree(examples.uri, copied.uri)
        for path in glob.glob(os.path.join(copied.uri, pattern), recursive=True):
            os.remove(path)
        return copied

    return copy
