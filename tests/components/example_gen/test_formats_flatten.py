"""`data.flatten`: struct columns of files written by pyarrow, fastavro and pandas read as their leaf columns.

The reader and ExampleGen's executor name each leaf `parent__child` (a struct
in a struct `a__b__c`), a null struct gives null leaves, and list and map
columns stay refused with the message saying what `data.flatten` does not do.
"""

from __future__ import annotations

import apache_beam as beam
import fastavro
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import tensorflow as tf
from google.protobuf import json_format
from tfx.proto import example_gen_pb2
from tfx.types import standard_artifacts, standard_component_specs

from components.example_gen.formats import executor as formats_executor
from components.example_gen.formats import readers

TRIP = pa.struct([("miles", pa.float64()), ("stop", pa.struct([("city", pa.string()), ("zone", pa.int64())]))])
ROWS = [
    {"fare": 5.0, "trip": {"miles": 1.5, "stop": {"city": "Oslo", "zone": 2}}, "tags": ["a"]},
    {"fare": 0.0, "trip": None, "tags": []},
    {"fare": 7.5, "trip": {"miles": 0.0, "stop": None}, "tags": ["b", "c"]},
]
LEAVES = {
    "fare": [5.0, 0.0, 7.5],
    "trip__miles": [1.5, None, 0.0],
    "trip__stop__city": ["Oslo", None, None],
    "trip__stop__zone": [2, None, None],
}


def _parquet(folder) -> str:
    path = str(folder / "trips.parquet")
    schema = pa.schema([("fare", pa.float64()), ("trip", TRIP), ("tags", pa.list_(pa.string()))])
    pq.write_table(pa.Table.from_pylist(ROWS, schema=schema), path)
    return path


def _avro(folder) -> str:
    stop = {
        "type": "record",
        "name": "Stop",
        "fields": [{"name": "city", "type": "string"}, {"name": "zone", "type": "long"}],
    }
    trip = {
        "type": "record",
        "name": "Trip",
        "fields": [{"name": "miles", "type": "double"}, {"name": "stop", "type": ["null", stop]}],
    }
    schema = {
        "type": "record",
        "name": "Row",
        "fields": [
            {"name": "fare", "type": "double"},
            {"name": "trip", "type": ["null", trip]},
            {"name": "tags", "type": {"type": "array", "items": "string"}},
        ],
    }
    path = str(folder / "trips.avro")
    with open(path, "wb") as handle:
        fastavro.writer(handle, fastavro.parse_schema(schema), ROWS)
    return path


def _jsonl(folder) -> str:
    path = str(folder / "trips.jsonl")
    pd.DataFrame(ROWS).to_json(path, orient="records", lines=True)  # pandas writes the dicts as JSON objects
    return path


WRITERS = {"parquet": _parquet, "avro": _avro, "jsonl": _jsonl}


@pytest.mark.parametrize("fmt", sorted(WRITERS))
def test_the_reader_yields_one_column_per_struct_leaf_with_null_parents_giving_nulls(tmp_path, fmt):
    path = WRITERS[fmt](tmp_path)
    schema = readers.read_schema(path, fmt, flatten=True)
    assert schema.names == ["fare", "trip__miles", "trip__stop__city", "trip__stop__zone", "tags"]
    assert readers.nested_columns(schema) == ["tags"]
    (batch,) = readers.iter_batches(path, fmt, flatten=True)
    assert batch.schema.names == list(LEAVES)  # the list column left out
    assert {name: batch.column(name).to_pylist() for name in LEAVES} == LEAVES


@pytest.mark.parametrize("fmt", sorted(WRITERS))
def test_without_flatten_the_struct_is_one_nested_column_and_never_read(tmp_path, fmt):
    path = WRITERS[fmt](tmp_path)
    assert readers.nested_columns(readers.read_schema(path, fmt)) == ["trip", "tags"]
    (batch,) = readers.iter_batches(path, fmt)
    assert batch.schema.names == ["fare"]


def test_only_the_structs_holding_wanted_leaves_are_read_in_the_order_asked(tmp_path):
    path = _parquet(tmp_path)
    (batch,) = readers.iter_batches(path, "parquet", ["trip__stop__zone", "fare"], flatten=True)
    assert batch.schema.names == ["trip__stop__zone", "fare"]
    assert batch.column(0).to_pylist() == [2, None, None]


def test_a_flattened_name_clashing_with_a_column_is_refused_naming_it(tmp_path):
    path = tmp_path / "clash.parquet"
    table = pa.table({"a__b": [1], "a": pa.array([{"b": 2}], pa.struct([("b", pa.int64())]))})
    pq.write_table(table, path)
    clash = r"clash.parquet: flattening its struct columns gives two columns named `a__b`"
    with pytest.raises(readers.FormatError, match=clash):
        readers.read_schema(str(path), "parquet", flatten=True)


def _properties(data, fmt: str, columns, flatten: bool) -> dict:
    input_config = example_gen_pb2.Input(splits=[example_gen_pb2.Input.Split(name="single", pattern="*")])
    output_config = example_gen_pb2.Output(
        split_config=example_gen_pb2.SplitConfig(
            splits=[example_gen_pb2.SplitConfig.Split(name="train", hash_buckets=1)]
        )
    )
    config = formats_executor.make_custom_config(fmt, [""], False, columns, flatten)
    return {
        standard_component_specs.INPUT_BASE_KEY: str(data),
        standard_component_specs.INPUT_CONFIG_KEY: json_format.MessageToJson(input_config),
        standard_component_specs.OUTPUT_CONFIG_KEY: json_format.MessageToJson(output_config),
        standard_component_specs.CUSTOM_CONFIG_KEY: json_format.MessageToJson(config),
    }


def _rows(folder) -> list[dict]:
    rows = []
    files = sorted(str(p) for p in folder.glob("*.gz"))
    for record in tf.data.TFRecordDataset(files, compression_type="GZIP"):
        feature = tf.train.Example.FromString(record.numpy()).features.feature
        rows.append({name: tuple(getattr(f, f.WhichOneof("kind")).value) for name, f in sorted(feature.items())})
    return sorted(rows, key=repr)


def _do(tmp_path, fmt: str, columns, flatten: bool):
    data = tmp_path / "data"
    data.mkdir()
    WRITERS[fmt](data)
    examples = standard_artifacts.Examples()
    examples.uri = str(tmp_path / "examples")
    properties = _properties(data, fmt, columns, flatten)
    formats_executor.Executor().Do({}, {standard_component_specs.EXAMPLES_KEY: [examples]}, properties)
    return _rows(tmp_path / "examples" / "Split-train")


def test_the_beam_path_flattens_as_the_fast_path_does(tmp_path):
    columns = ["fare", "trip__miles", "trip__stop__zone"]
    fast = _do(tmp_path, "avro", columns, flatten=True)
    with beam.Pipeline() as pipeline:
        _ = (
            pipeline
            | formats_executor.Executor().GetInputSourceToExamplePTransform()(
                _properties(tmp_path / "data", "avro", columns, True), "*"
            )
            | beam.io.WriteToTFRecord(str(tmp_path / "beam" / "data"), file_name_suffix=".gz")
        )
    assert _rows(tmp_path / "beam") == fast
    assert {name for row in fast for name in row} == set(columns)


@pytest.mark.parametrize("fmt", sorted(WRITERS))
def test_example_gen_writes_the_flattened_leaves_the_spec_uses(tmp_path, fmt):
    rows = _do(tmp_path, fmt, ["fare", "trip__miles", "trip__stop__city"], flatten=True)
    assert rows == sorted(
        [
            {"fare": (5.0,), "trip__miles": (1.5,), "trip__stop__city": (b"Oslo",)},
            {"fare": (0.0,), "trip__miles": (), "trip__stop__city": ()},
            {"fare": (7.5,), "trip__miles": (0.0,), "trip__stop__city": ()},
        ],
        key=repr,
    )


def test_example_gen_refuses_a_struct_without_flatten_naming_the_fix(tmp_path):
    with pytest.raises(ValueError, match=r"\['trip'\] hold lists, structs or maps.*Set `data.flatten: true`"):
        _do(tmp_path, "parquet", ["fare", "trip"], flatten=False)


def test_example_gen_refuses_a_list_with_flatten_saying_it_flattens_structs_only(tmp_path):
    with pytest.raises(
        ValueError, match=r"\['tags'\] hold .*`data.flatten` flattens structs only: explode or aggregate"
    ):
        _do(tmp_path, "avro", ["fare", "tags"], flatten=True)


def test_flatten_travels_in_custom_config_only_when_set():
    plain = formats_executor.make_custom_config("parquet", [""], False, ["fare"])
    assert "flatten" not in json_format.MessageToJson(plain)  # unchanged cache keys for specs without it
    flat = formats_executor.make_custom_config("parquet", [""], False, ["fare"], True)
    properties = {standard_component_specs.CUSTOM_CONFIG_KEY: json_format.MessageToJson(flat)}
    assert formats_executor.read_settings(properties).flatten is True


def test_an_unreadable_union_inside_a_record_and_a_named_enum_reference_are_only_refused_where_used(tmp_path):
    color = {"type": "enum", "name": "Color", "symbols": ["red", "blue"]}
    either = {"name": "either", "type": ["long", "string"]}
    inner = {"type": "record", "name": "Inner", "fields": [either, {"name": "tone", "type": "Color"}]}
    schema = {
        "type": "record",
        "name": "Row",
        "fields": [
            {"name": "fare", "type": "double"},
            {"name": "color", "type": color},
            {"name": "inner", "type": inner},
        ],
    }
    path = str(tmp_path / "rows.avro")
    with open(path, "wb") as handle:
        rows = [{"fare": 1.0, "color": "red", "inner": {"either": 3, "tone": "blue"}}]
        fastavro.writer(handle, fastavro.parse_schema(schema), rows)
    schema = readers.read_schema(path, "avro", flatten=True)
    assert schema.names == ["fare", "color", "inner__either", "inner__tone"]
    assert readers.nested_columns(schema) == ["inner__either"]  # a union of two types: never read
    (batch,) = readers.iter_batches(path, "avro", flatten=True)
    assert batch.to_pylist() == [{"fare": 1.0, "color": "red", "inner__tone": "blue"}]
