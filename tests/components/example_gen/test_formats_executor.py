"""The Parquet / Avro / JSON Lines ExampleGen executor on files written by pyarrow, fastavro and pandas.

Both paths (the in-process fast path shared with CSV, and TFX's Beam path)
write the same examples; zeros stay values, nulls and `na_values` text become
missing, kinds follow the files' types, the columnar copy is written, and
splits are the same on every run.
"""

from __future__ import annotations

import datetime

import apache_beam as beam
import fastavro
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import tensorflow as tf
from google.protobuf import json_format
from tfx.components.example_gen import utils as tfx_utils
from tfx.proto import example_gen_pb2
from tfx.types import standard_artifacts, standard_component_specs

from components.common import columnar_copy
from components.example_gen.formats import executor as formats_executor
from components.example_gen.formats import format_of, readers

FRAME = pd.DataFrame(
    {
        "count": pd.array([0, 3, None, 7], dtype="Int64"),
        "ratio": [0.0, 1.5, np.nan, 2.25],
        "kind": ["a", "NA", None, "c"],
        "flag": [True, False, True, None],
    }
)


def _examples(folder) -> list[dict]:
    files = sorted(str(path) for path in folder.glob("*.gz"))
    rows = []
    for record in tf.data.TFRecordDataset(files, compression_type="GZIP"):
        example = tf.train.Example.FromString(record.numpy())
        row = {}
        for name, feature in example.features.feature.items():
            kind = feature.WhichOneof("kind")
            row[name] = (kind, tuple(getattr(feature, kind).value)) if kind else (None, ())
        rows.append(dict(sorted(row.items())))
    return sorted(rows, key=repr)


def _exec_properties(data, fmt: str, columns=None, buckets=(("train", 1),)) -> dict:
    input_config = example_gen_pb2.Input(splits=[example_gen_pb2.Input.Split(name="single", pattern="*")])
    output_config = example_gen_pb2.Output(
        split_config=example_gen_pb2.SplitConfig(
            splits=[example_gen_pb2.SplitConfig.Split(name=n, hash_buckets=b) for n, b in buckets]
        )
    )
    return {
        standard_component_specs.INPUT_BASE_KEY: str(data),
        standard_component_specs.INPUT_CONFIG_KEY: json_format.MessageToJson(input_config),
        standard_component_specs.OUTPUT_CONFIG_KEY: json_format.MessageToJson(output_config),
        standard_component_specs.CUSTOM_CONFIG_KEY: json_format.MessageToJson(
            formats_executor.make_custom_config(fmt, ["", "NA"], False, columns)
        ),
    }


def _do(tmp_path, data, fmt: str, columns=None, buckets=(("train", 1),), name="examples"):
    examples = standard_artifacts.Examples()
    examples.uri = str(tmp_path / name)
    properties = _exec_properties(data, fmt, columns, buckets)
    formats_executor.Executor().Do({}, {standard_component_specs.EXAMPLES_KEY: [examples]}, properties)
    return examples


def _write(folder, fmt: str) -> None:
    folder.mkdir()
    if fmt == "parquet":
        pq.write_table(pa.Table.from_pandas(FRAME, preserve_index=False), folder / "part-0.parquet")
    elif fmt == "jsonl":
        FRAME.to_json(folder / "part-0.jsonl", orient="records", lines=True)
    else:
        schema = {
            "type": "record",
            "name": "Row",
            "fields": [
                {"name": "count", "type": ["null", "long"]},
                {"name": "ratio", "type": ["null", "double"]},
                {"name": "kind", "type": ["null", "string"]},
                {"name": "flag", "type": ["null", "boolean"]},
                {"name": "tags", "type": {"type": "array", "items": "string"}},
            ],
        }
        records = [
            {k: (None if pd.isna(v) else v) for k, v in row.items()} | {"tags": ["x"]}
            for row in FRAME.astype(object).to_dict("records")
        ]
        with open(folder / "part-0.avro", "wb") as handle:
            fastavro.writer(handle, fastavro.parse_schema(schema), records)


EXPECTED = [
    {"count": ("int64_list", ()), "flag": ("int64_list", (1,)), "kind": ("bytes_list", ()), "ratio": ("float_list", ())},
    {"count": ("int64_list", (0,)), "flag": ("int64_list", (1,)), "kind": ("bytes_list", (b"a",)), "ratio": ("float_list", (0.0,))},
    {"count": ("int64_list", (3,)), "flag": ("int64_list", (0,)), "kind": ("bytes_list", ()), "ratio": ("float_list", (1.5,))},
    {"count": ("int64_list", (7,)), "flag": ("int64_list", ()), "kind": ("bytes_list", (b"c",)), "ratio": ("float_list", (2.25,))},
]  # fmt: skip


@pytest.mark.parametrize("fmt", ["parquet", "avro", "jsonl"])
def test_each_format_gives_the_same_examples_with_zeros_kept_and_gaps_missing(tmp_path, fmt):
    _write(tmp_path / "data", fmt)
    examples = _do(tmp_path, tmp_path / "data", fmt, columns=["count", "ratio", "kind", "flag"])
    rows = _examples(tmp_path / "examples" / "Split-train")
    assert rows == sorted(EXPECTED, key=repr)
    copy = columnar_copy.split_files(examples.uri, "train")
    assert copy and sum(b.num_rows for path in copy for b in columnar_copy.read_batches(path)) == 4


def test_only_the_columns_the_spec_uses_are_written_and_unused_nested_columns_are_ignored(tmp_path):
    _write(tmp_path / "data", "avro")  # `tags` is an Avro array
    _do(tmp_path, tmp_path / "data", "avro", columns=["count", "kind"])
    rows = _examples(tmp_path / "examples" / "Split-train")
    assert {name for row in rows for name in row} == {"count", "kind"}


def test_a_nested_column_the_spec_uses_is_refused_by_name(tmp_path):
    _write(tmp_path / "data", "avro")
    with pytest.raises(ValueError, match=r"\['tags'\] hold lists, structs or maps"):
        _do(tmp_path, tmp_path / "data", "avro", columns=["count", "tags"])


def test_the_beam_path_writes_what_the_fast_path_writes(tmp_path):
    _write(tmp_path / "data", "parquet")
    _do(tmp_path, tmp_path / "data", "parquet", columns=["count", "ratio", "kind", "flag"])
    properties = _exec_properties(tmp_path / "data", "parquet", ["count", "ratio", "kind", "flag"])
    prefix = str(tmp_path / "beam" / "data")
    with beam.Pipeline() as pipeline:
        _ = (
            pipeline
            | formats_executor.Executor().GetInputSourceToExamplePTransform()(properties, "*")
            | beam.io.WriteToTFRecord(prefix, file_name_suffix=".gz")
        )
    assert _examples(tmp_path / "beam") == _examples(tmp_path / "examples" / "Split-train")


def test_splits_follow_the_buckets_and_are_the_same_on_every_run(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    frame = pd.DataFrame({"x": np.arange(600), "y": np.arange(600) % 3})
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), data / "rows.parquet")
    buckets = (("train", 2), ("eval", 1))
    firsts = []
    for run in ("one", "two"):
        _do(tmp_path, data, "parquet", buckets=buckets, name=run)
        firsts.append(sorted(r["x"][1] for r in _examples(tmp_path / run / "Split-eval")))
    assert firsts[0] == firsts[1]
    assert 150 < len(firsts[0]) < 250


def test_tfx_dict_to_example_writes_a_zero_as_missing_which_is_why_its_executors_are_not_used():
    example = tfx_utils.dict_to_example({"count": 0, "ratio": 0.0})
    assert example.features.feature["count"].WhichOneof("kind") is None  # a 0 became "no value"


def test_an_avro_union_of_two_types_is_refused_naming_the_field(tmp_path):
    schema = {"type": "record", "name": "R", "fields": [{"name": "mixed", "type": ["null", "long", "string"]}]}
    path = tmp_path / "data.avro"
    with open(path, "wb") as handle:
        fastavro.writer(handle, fastavro.parse_schema(schema), [{"mixed": 1}, {"mixed": "x"}])
    with pytest.raises(readers.FormatError, match=r"field `mixed` is a union of \[null, long, string\]"):
        readers.read_schema(str(path), "avro")


@pytest.mark.parametrize("fmt,ending", [("parquet", "parquet"), ("avro", "avro"), ("jsonl", "jsonl")])
def test_an_unreadable_file_is_named(tmp_path, fmt, ending):
    path = tmp_path / f"broken.{ending}"
    path.write_bytes(b"PAR1 this is not the format {")
    with pytest.raises(readers.FormatError, match=str(path)):
        list(readers.iter_batches(str(path), fmt))


def test_dates_and_timestamps_are_text_and_booleans_integers(tmp_path):
    table = pa.table(
        {
            "day": pa.array([datetime.date(2024, 1, 2)]),
            "at": pa.array([datetime.datetime(2024, 1, 2, 3, 4, 5)], pa.timestamp("s")),
            "ok": pa.array([True]),
        }
    )
    assert [readers.kind_of(f.type) for f in table.schema] == [3, 3, 1]
    text = readers.as_text(table.to_batches()[0], [""])
    assert text.to_pydict() == {"day": ["2024-01-02"], "at": ["2024-01-02 03:04:05"], "ok": ["1"]}


@pytest.mark.parametrize(
    "path,fmt",
    [("a/b.parquet", "parquet"), ("x.PQ", "parquet"), ("d.avro", "avro"), ("l.jsonl.gz", "jsonl"), ("c.csv", None)],
)
def test_the_format_follows_the_file_name(path, fmt):
    assert format_of(path) == fmt
