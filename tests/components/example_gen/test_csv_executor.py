"""The CSV ExampleGen executor on messy files, through a real Beam pipeline.

Compared with TFX's own CsvExampleGen: a UTF-8 BOM and quoted header names do
not leak into feature names, `na_values` cells become missing (so the column
stays numeric), and non-finite numbers become missing only when asked.
"""

from __future__ import annotations

import gzip

import apache_beam as beam
import pytest
import tensorflow as tf
from google.protobuf import json_format
from tfx.components.example_gen.csv_example_gen import executor as tfx_csv
from tfx.proto import example_gen_pb2
from tfx.types import standard_artifacts, standard_component_specs

from components.common import columnar_copy
from components.common.csv_dialect import CsvDialect
from components.example_gen.csv_executor import (
    Executor,
    _CsvToExample,
    _fast_path_plan,
    make_custom_config,
    read_header,
    read_settings,
    written_columns,
)
from pipelines.compiler import DEFAULT_BEAM_ARGS
from pipelines.targets.beam import direct_multiprocessing_args

MESSY = '\ufeffmean radius,"price, usd",kind\n1.5,NA,a\nNA,2,b\n3.5,inf,null\n'


def _run(
    folder,
    text: str | None,
    na_values,
    impute_non_finite: bool,
    dialect: CsvDialect = CsvDialect(),
    columns=None,
    pattern: str = "data.csv",
) -> list[dict]:
    """The examples `_CsvToExample` writes from `folder/data.csv` (written from `text` unless None)."""
    if text is not None:
        (folder / "data.csv").write_text(text, encoding="utf-8")
    exec_properties = {
        standard_component_specs.INPUT_BASE_KEY: str(folder),
        # TFX hands proto parameters to executors as JSON text.
        standard_component_specs.CUSTOM_CONFIG_KEY: json_format.MessageToJson(
            make_custom_config(na_values, impute_non_finite, dialect, columns)
        ),
    }
    output = str(folder / "examples.tfrecord")
    with beam.Pipeline() as pipeline:
        _ = (
            pipeline
            | _CsvToExample(exec_properties, pattern)
            | beam.Map(lambda example: example.SerializeToString())
            | beam.io.WriteToTFRecord(output, shard_name_template="")
        )
    rows = []
    for record in tf.data.TFRecordDataset(output):
        example = tf.train.Example.FromString(record.numpy())
        row = {}
        for name, feature in example.features.feature.items():
            kind = feature.WhichOneof("kind")
            row[name] = (kind, list(getattr(feature, kind).value) if kind else [])
        rows.append(row)
    return rows


def test_bom_and_quoted_header_give_clean_feature_names(tmp_path):
    rows = _run(tmp_path, MESSY, ["", "NA", "null"], impute_non_finite=True)
    assert {name for row in rows for name in row} == {"mean radius", "price, usd", "kind"}


def test_na_cells_are_missing_and_the_column_stays_numeric(tmp_path):
    rows = _run(tmp_path, MESSY, ["", "NA", "null"], impute_non_finite=True)
    radius = sorted((row["mean radius"] for row in rows), key=str)
    assert all(kind == "float_list" for kind, _ in radius), radius
    assert sorted(v for _, values in radius for v in values) == [1.5, 3.5]
    assert sorted(v for row in rows for v in row["kind"][1]) == [b"a", b"b"]  # `null` is missing too


def test_non_finite_cells_are_missing_with_impute(tmp_path):
    rows = _run(tmp_path, MESSY, ["", "NA", "null"], impute_non_finite=True)
    assert sorted(v for row in rows for v in row["price, usd"][1]) == [2.0]


def test_non_finite_cells_are_kept_without_impute(tmp_path):
    rows = _run(tmp_path, MESSY, ["", "NA", "null"], impute_non_finite=False)
    values = sorted(v for row in rows for v in row["price, usd"][1])
    assert values[0] == 2.0 and values[1] == float("inf")


def test_tfx_own_executor_keeps_the_bom_and_splits_quoted_names(tmp_path):
    """Why this executor exists: TFX 1.16's reader fails on the same file, with the BOM glued to a name."""
    (tmp_path / "data.csv").write_text(MESSY, encoding="utf-8")
    with pytest.raises(Exception, match="Columns do not match") as caught:
        with beam.Pipeline() as pipeline:
            _ = pipeline | tfx_csv._CsvToExample({standard_component_specs.INPUT_BASE_KEY: str(tmp_path)}, "data.csv")
    assert "\\ufeffmean radius" in str(caught.value) and "'\"price'" in str(caught.value)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [(None, (frozenset({b""}), False, CsvDialect(), None)), ("", (frozenset({b""}), False, CsvDialect(), None))],
    ids=["absent", "empty"],
)
def test_without_custom_config_the_defaults_are_tfx_s(raw, expected):
    assert read_settings({standard_component_specs.CUSTOM_CONFIG_KEY: raw}) == expected


def test_read_header_of_an_empty_file_names_it(tmp_path):
    (tmp_path / "empty.csv").write_bytes(b"")
    with pytest.raises(ValueError, match="empty.csv is empty. Expected a header line"):
        read_header(str(tmp_path / "empty.csv"))


def test_settings_round_trip_through_the_component_config():
    config = json_format.MessageToJson(make_custom_config(["NA", "?"], True, CsvDialect("\t", True)))
    settings = read_settings({standard_component_specs.CUSTOM_CONFIG_KEY: config})
    assert settings.na_values == {b"", b"NA", b"?"} and settings.impute_non_finite is True
    assert settings.dialect == CsvDialect("\t", skip_initial_space=True)


def test_a_comma_file_keeps_the_config_it_had_before_delimiters_so_its_cache_holds():
    config = json_format.MessageToJson(make_custom_config(["NA"], False, CsvDialect()))
    assert "delimiter" not in config and "skip_initial_space" not in config
    assert read_settings({standard_component_specs.CUSTOM_CONFIG_KEY: config}).dialect == CsvDialect()


def test_read_header_splits_at_the_delimiter_and_keeps_quoted_ones(tmp_path):
    (tmp_path / "data.csv").write_text('\ufeffa;"b;c";d,e\n1;2;3\n', encoding="utf-8")
    assert read_header(str(tmp_path / "data.csv"), CsvDialect(";")) == ["a", "b;c", "d,e"]
    (tmp_path / "spaced.csv").write_text("a, b,  c d\n1, 2, 3\n", encoding="utf-8")
    assert read_header(str(tmp_path / "spaced.csv"), CsvDialect(",", True)) == ["a", "b", "c d"]


@pytest.mark.parametrize(
    "beam_args, fast",
    [
        (list(DEFAULT_BEAM_ARGS), True),
        (list(direct_multiprocessing_args(workers=2)), True),  # large data: still this machine
        (["--runner=DataflowRunner", "--project=p"], False),
    ],
    ids=["in process", "local workers", "dataflow"],
)
def test_the_fast_path_is_taken_on_this_machines_runners_only(tmp_path, beam_args, fast):
    (tmp_path / "data.csv").write_text("a,b\n1,2\n", encoding="utf-8")
    input_config = example_gen_pb2.Input(splits=[example_gen_pb2.Input.Split(name="single", pattern="*.csv")])
    output_config = example_gen_pb2.Output(
        split_config=example_gen_pb2.SplitConfig(
            splits=[
                example_gen_pb2.SplitConfig.Split(name="train", hash_buckets=2),
                example_gen_pb2.SplitConfig.Split(name="eval", hash_buckets=1),
            ]
        )
    )
    examples = standard_artifacts.Examples()
    examples.uri = str(tmp_path / "examples")
    exec_properties = {
        standard_component_specs.INPUT_BASE_KEY: str(tmp_path),
        standard_component_specs.INPUT_CONFIG_KEY: json_format.MessageToJson(input_config),
        standard_component_specs.OUTPUT_CONFIG_KEY: json_format.MessageToJson(output_config),
        "_beam_pipeline_args": beam_args,
    }
    plan = _fast_path_plan(exec_properties, {standard_component_specs.EXAMPLES_KEY: [examples]})
    assert (plan is not None) is fast


def test_read_header_of_a_gzip_file(tmp_path):
    (tmp_path / "data.csv.gz").write_bytes(gzip.compress("\ufeffa,b\n1,2\n".encode()))
    assert read_header(str(tmp_path / "data.csv.gz")) == ["a", "b"]


def _folder_with_junk(tmp_path):
    """A data folder as validate reads it: a gzip CSV, a plain CSV, a `.DS_Store` and a sub-folder."""
    (tmp_path / "part-1.csv.gz").write_bytes(gzip.compress(b"a,b,c\n1,x,2.5\n2,y,3.5\n"))
    (tmp_path / "part-2.csv").write_text("a,b,c\n3,z,4.5\n", encoding="utf-8")
    (tmp_path / ".DS_Store").write_bytes(b"\x00\x00\x00\x01Bud1\x00\x00\x10\x00\xff\xfe")
    (tmp_path / "notes").mkdir()


def test_the_beam_path_reads_gzip_files_and_skips_hidden_files(tmp_path):
    _folder_with_junk(tmp_path)
    rows = _run(tmp_path, None, [""], False, pattern="*")
    assert sorted(row["a"][1][0] for row in rows) == [1, 2, 3]
    assert sorted(row["b"][1][0] for row in rows) == [b"x", b"y", b"z"]


def test_the_beam_path_writes_only_the_columns_asked_for(tmp_path):
    rows = _run(tmp_path, "a,b,c,d\n1,x,2.5,7\n2,y,,8\n", [""], False, columns=["c", "a"])
    assert [sorted(row) for row in rows] == [["a", "c"], ["a", "c"]]
    assert sorted(v for row in rows for v in row["c"][1]) == [2.5]
    assert all(row["a"][0] == "int64_list" for row in rows)


def test_a_column_asked_for_that_the_header_lacks_names_the_file(tmp_path):
    (tmp_path / "data.csv").write_text("a,b\n1,2\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"data.csv: the spec uses column\(s\) \['fare'\], which the header"):
        written_columns(["a", "b"], ("a", "fare"), str(tmp_path / "data.csv"))


def _executor_run(tmp_path, columns) -> tuple[list[str], list[dict]]:
    """Runs the executor's `Do` on `_folder_with_junk` (fast path): (the columnar copy's columns, the examples)."""
    data = tmp_path / "data"
    data.mkdir()
    _folder_with_junk(data)
    input_config = example_gen_pb2.Input(splits=[example_gen_pb2.Input.Split(name="single", pattern="*")])
    output_config = example_gen_pb2.Output(
        split_config=example_gen_pb2.SplitConfig(
            splits=[example_gen_pb2.SplitConfig.Split(name="train", hash_buckets=1)]
        )
    )
    examples = standard_artifacts.Examples()
    examples.uri = str(tmp_path / "examples")
    exec_properties = {
        standard_component_specs.INPUT_BASE_KEY: str(data),
        standard_component_specs.INPUT_CONFIG_KEY: json_format.MessageToJson(input_config),
        standard_component_specs.OUTPUT_CONFIG_KEY: json_format.MessageToJson(output_config),
        standard_component_specs.CUSTOM_CONFIG_KEY: json_format.MessageToJson(
            make_custom_config([""], False, columns=columns)
        ),
    }
    Executor().Do({}, {standard_component_specs.EXAMPLES_KEY: [examples]}, exec_properties)
    split = tmp_path / "examples" / "Split-train"
    files = sorted(str(path) for path in split.glob("*.gz"))
    rows = []
    for record in tf.data.TFRecordDataset(files, compression_type="GZIP"):
        example = tf.train.Example.FromString(record.numpy())
        rows.append({name: feature.WhichOneof("kind") for name, feature in example.features.feature.items()})
    batches = [b for path in columnar_copy.split_files(examples.uri, "train") for b in columnar_copy.read_batches(path)]
    return sorted({name for batch in batches for name in batch.schema.names}), rows


def test_the_executor_reads_gzip_skips_hidden_files_and_writes_only_the_used_columns(tmp_path):
    copy_columns, rows = _executor_run(tmp_path, ["a", "c"])
    assert len(rows) == 3
    assert all(row == {"a": "int64_list", "c": "float_list"} for row in rows), rows
    assert copy_columns == ["a", "c"]  # what StatisticsGen and Transform read


def test_without_columns_the_executor_writes_every_column(tmp_path):
    copy_columns, rows = _executor_run(tmp_path, None)
    assert all(sorted(row) == ["a", "b", "c"] for row in rows)
    assert copy_columns == ["a", "b", "c"]
