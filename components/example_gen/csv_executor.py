"""CsvExampleGen executor that reads messy CSVs the way `validate` does.

TFX's CsvExampleGen (`tfx/components/example_gen/csv_example_gen/executor.py`)
reads the header with `line.strip().split(',')`: a UTF-8 byte-order mark
stays glued to the first column name (`\\ufeffid`, then Transform fails with a
bare key error) and a quoted name keeps its quotes. tfx_bsl's type inference
reads `NA` as text, so one `NA` cell makes a numeric column a text column.

This executor reuses TFX's CSV line parser, type inference and tf.Example
writer (its own record reader also reads `.gz` files), and changes four
things: the header is parsed with Python's `csv` module after dropping a BOM; cells whose text is in `na_values` become missing before
type inference; with `impute_non_finite`, `inf`/`nan` cells become missing too;
cells are read as the file's `CsvDialect` says (separator, spaces before cells).
It also writes only the columns the spec uses (`columns`: features, label,
...; the others are never converted, so a 5,000-column file whose spec uses 4
costs about what a 4-column one does downstream), reads the files
`components.common.data_files` lists (hidden files such as `.DS_Store` are
skipped, as `validate` skips them) and reads `.gz` files decompressed.
Its settings travel in ExampleGen's `custom_config` (a `CustomConfig` whose
`Any` holds a `google.protobuf.Struct`), so they take part in the cache key.
"""

from __future__ import annotations

import contextlib
import csv
import gzip
import io
import math
import os
from typing import Any, NamedTuple

import apache_beam as beam
from absl import logging
from google.protobuf import json_format, struct_pb2
from tfx.components.example_gen import utils
from tfx.components.example_gen.csv_example_gen import executor as tfx_csv
from tfx.components.util import examples_utils
from tfx.dsl.io import fileio
from tfx.proto import example_gen_pb2
from tfx.types import artifact_utils, standard_component_specs
from tfx.utils import proto_utils
from tfx_bsl.coders import csv_decoder

from compat.tfx import example_gen as tfx_example_gen
from components.common import columnar_copy
from components.common.csv_dialect import CsvDialect
from components.common.data_files import is_gzip, keep_data_files
from components.example_gen import fast_csv, spans

__all__ = [
    "CsvSettings",
    "Executor",
    "fast_path_plan",
    "make_custom_config",
    "read_settings",
    "read_header",
    "written_columns",
]


class CsvSettings(NamedTuple):
    """How the executor reads cells: missing-value markers (bytes), non-finite imputation, the dialect, and the
    columns written (None: all)."""

    na_values: frozenset[bytes]
    impute_non_finite: bool
    dialect: CsvDialect = CsvDialect()
    columns: tuple[str, ...] | None = None


def make_custom_config(
    na_values: list[str],
    impute_non_finite: bool,
    dialect: CsvDialect = CsvDialect(),
    columns: list[str] | tuple[str, ...] | None = None,
) -> example_gen_pb2.CustomConfig:
    """ExampleGen's `custom_config` carrying this executor's settings.

    Args:
        na_values: cell texts that mean "missing".
        impute_non_finite: whether `inf`/`nan` cells become missing.
        dialect: how cells are separated (stored only where it differs from
            `CsvDialect()`, so comma-separated runs keep their cache keys).
        columns: the columns written into the examples, in the header's order whatever the order here
            (None: every column).

    Returns:
        A CustomConfig proto for `CsvExampleGen(custom_config=...)`.
    """
    settings = struct_pb2.Struct()
    settings.update({"na_values": list(na_values), "impute_non_finite": bool(impute_non_finite)})
    if dialect.delimiter != ",":
        settings.update({"delimiter": dialect.delimiter})
    if dialect.skip_initial_space:
        settings.update({"skip_initial_space": True})
    if columns is not None:
        settings.update({"columns": sorted(set(columns))})
    config = example_gen_pb2.CustomConfig()
    config.custom_config.Pack(settings)
    return config


def read_settings(exec_properties: dict[str, Any]) -> CsvSettings:
    """The executor's settings from its exec_properties.

    Returns:
        The defaults of TFX's own executor (only the empty cell is missing; no
        imputation; commas) when the component was given no custom_config.
    """
    raw = exec_properties.get(standard_component_specs.CUSTOM_CONFIG_KEY)
    if not raw:
        return CsvSettings(frozenset({b""}), False)
    config = example_gen_pb2.CustomConfig()
    if isinstance(raw, str):
        json_format.Parse(raw, config)
    else:
        config.CopyFrom(raw)
    settings = struct_pb2.Struct()
    config.custom_config.Unpack(settings)
    values = dict(settings.items())
    na_values = frozenset(str(v).encode("utf-8") for v in values.get("na_values", [""])) | {b""}
    dialect = CsvDialect(str(values.get("delimiter", ",")), bool(values.get("skip_initial_space", False)))
    columns = tuple(str(name) for name in values["columns"]) if "columns" in values else None
    return CsvSettings(na_values, bool(values.get("impute_non_finite", False)), dialect, columns)


def read_header(path: str, dialect: CsvDialect = CsvDialect()) -> list[str]:
    """The column names of a CSV file: BOM dropped, quotes handled.

    Raises:
        ValueError: the file has no header line.
    """
    with fileio.open(path, "rb") as raw:
        with gzip.GzipFile(fileobj=raw, mode="rb") if is_gzip(path) else contextlib.nullcontext(raw) as handle:
            first = handle.readline().decode("utf-8-sig")
    try:
        return dialect.cells(next(csv.reader(io.StringIO(first), delimiter=dialect.delimiter)))
    except StopIteration:
        raise ValueError(f"{path} is empty. Expected a header line and data rows.") from None


def _shared_header(files: list[str], dialect: CsvDialect) -> list[str]:
    """The header every file of one split has.

    Raises:
        RuntimeError: two files' headers differ.
    """
    column_names = read_header(files[0], dialect)
    for path in files[1:]:
        if read_header(path, dialect) != column_names:
            raise RuntimeError(f"Files in the same split have different headers: {files[0]}, {path}.")
    return column_names


def written_columns(header: list[str], columns: tuple[str, ...] | None, path: str) -> list[str]:
    """The columns of `header` the examples hold: `columns` in the header's order (None: the whole header).

    Raises:
        ValueError: a column in `columns` is not in the header (the message names `path`).
    """
    if columns is None:
        return list(header)
    absent = sorted(set(columns) - set(header))
    if absent:
        raise ValueError(
            f"{path}: the spec uses column(s) {absent}, which the header does not have. Expected every column "
            f"the spec names in the header. Received: {len(header)} columns ({', '.join(header[:20])}"
            f"{', ...' if len(header) > 20 else ''}). Fix the names in the spec, or the file's header."
        )
    wanted = set(columns)
    return [name for name in header if name in wanted]


class _KeepCells(beam.DoFn):
    """Keeps the cells at `indices` of each row of `width` cells (a row of another width goes on whole, for
    the type inference to reject as it did)."""

    def __init__(self, indices: list[int], width: int):
        self._indices = indices
        self._width = width

    def process(self, cells: list[bytes]):
        yield [cells[i] for i in self._indices] if len(cells) == self._width else cells


class _ReadCsvRecords(beam.DoFn):
    """A CSV file's records after the header, a quoted cell's line breaks kept inside its record, as TFX's
    `_ReadCsvRecordsFromTextFile` yields them; a `.gz` file is decompressed (TFX's iterates the file object,
    which Beam's decompressing reader does not support)."""

    def process(self, path: str):
        with beam.io.filesystems.FileSystems.open(path) as handle:  # compression AUTO: by the `.gz` ending
            handle.readline()  # the header
            pending: list[str] = []
            quotes = 0
            for line in iter(handle.readline, b""):
                text = line.decode("utf-8")
                pending.append(text)
                quotes += text.count('"')
                if quotes % 2 == 0:
                    yield "".join(pending)
                    pending, quotes = [], 0
            if pending:
                raise ValueError(f"{path}: a quoted cell is not closed at the end of the file. Close the quote.")


def _is_non_finite(cell: bytes) -> bool:
    try:
        return not math.isfinite(float(cell))
    except ValueError:
        return False


class _BlankMissingCells(beam.DoFn):
    """Replaces missing-value markers (and optionally non-finite numbers) by empty cells, after dropping
    the spaces at the start of each cell when `skip_initial_space`."""

    def __init__(self, na_values: frozenset[bytes], impute_non_finite: bool, skip_initial_space: bool = False):
        self._na_values = na_values
        self._impute_non_finite = impute_non_finite
        self._skip_initial_space = skip_initial_space

    def process(self, cells: list[bytes]):
        if self._skip_initial_space:
            cells = [cell.lstrip(b" ") for cell in cells]
        yield [
            b"" if cell in self._na_values or (self._impute_non_finite and _is_non_finite(cell)) else cell
            for cell in cells
        ]


class _CsvToExample(beam.PTransform):
    """CSV files of one split pattern -> tf.Example, as TFX's `_CsvToExample` with the changes above."""

    def __init__(self, exec_properties: dict[str, Any], split_pattern: str):
        input_base = exec_properties[standard_component_specs.INPUT_BASE_KEY]
        self._pattern = os.path.join(input_base, split_pattern)
        self._settings = read_settings(exec_properties)

    def expand(self, pipeline: beam.Pipeline):
        files = keep_data_files(fileio.glob(self._pattern), fileio.isdir)
        if not files:
            raise RuntimeError(f"Split pattern {self._pattern} does not match any files.")
        dialect = self._settings.dialect
        header = _shared_header(files, dialect)
        column_names = written_columns(header, self._settings.columns, files[0])
        cells = (
            pipeline
            | "CreateFilenames" >> beam.Create(files)
            | "ReadFromText" >> beam.ParDo(_ReadCsvRecords())
            | "ParseCSVLine" >> beam.ParDo(csv_decoder.ParseCSVLine(delimiter=dialect.delimiter))
            | "ExtractParsedCSVLines" >> beam.Keys()
        )
        if column_names != header:
            indices = [header.index(name) for name in column_names]
            cells = cells | "KeepUsedColumns" >> beam.ParDo(_KeepCells(indices, len(header)))
        cells = cells | "BlankMissingCells" >> beam.ParDo(
            _BlankMissingCells(self._settings.na_values, self._settings.impute_non_finite, dialect.skip_initial_space)
        )
        column_infos = beam.pvalue.AsSingleton(
            cells
            | "InferColumnTypes"
            >> beam.CombineGlobally(csv_decoder.ColumnTypeInferrer(column_names, skip_blank_lines=True))
        )
        return cells | "ToTFExample" >> beam.ParDo(tfx_example_gen.parsed_csv_to_tf_example(), column_infos)


def _fast_path_plan(exec_properties: dict[str, Any], output_dict) -> tuple[list[str], fast_csv.SplitSpec] | None:
    """(input files, output splits) when the in-process fast path applies, else None (TFX's Beam path runs).

    It applies to the default payload (tf.Example in gzipped TFRecords) with hash-bucket or input splits,
    on an in-process Beam runner: a distributed runner named in the Beam args gets TFX's Beam path.
    """
    input_config = example_gen_pb2.Input()
    proto_utils.json_to_proto(exec_properties[standard_component_specs.INPUT_CONFIG_KEY], input_config)
    output_config = example_gen_pb2.Output()
    proto_utils.json_to_proto(exec_properties[standard_component_specs.OUTPUT_CONFIG_KEY], output_config)
    payload = exec_properties.get(standard_component_specs.OUTPUT_DATA_FORMAT_KEY)
    file_format = exec_properties.get(standard_component_specs.OUTPUT_FILE_FORMAT_KEY)
    if payload not in (None, example_gen_pb2.FORMAT_TF_EXAMPLE) or file_format not in (
        None,
        example_gen_pb2.FILE_FORMAT_UNSPECIFIED,
        example_gen_pb2.FORMAT_TFRECORDS_GZIP,
    ):
        return None
    if output_config.split_config.partition_feature_name or len(input_config.splits) != 1:
        return None
    runner = next((a.split("=", 1)[1] for a in _beam_args(exec_properties) if a.startswith("--runner=")), "")
    if runner and runner.rsplit(".", 1)[-1].lower() not in _IN_PROCESS_RUNNERS:
        return None
    input_base = exec_properties[standard_component_specs.INPUT_BASE_KEY]
    files = keep_data_files(fileio.glob(os.path.join(input_base, input_config.splits[0].pattern)), fileio.isdir)
    if not files or any("://" in path for path in files):
        return None  # none: TFX's path raises its own error; an object store: read through TFX's file systems
    names = utils.generate_output_split_names(input_config, output_config)
    buckets = []
    for split in output_config.split_config.splits:
        buckets.append((buckets[-1] if buckets else 0) + split.hash_buckets)
    examples = output_dict[standard_component_specs.EXAMPLES_KEY]
    for artifact in examples:  # get_split_uri reads the names (TFX's own Do sets them first too)
        artifact.split_names = artifact_utils.encode_split_names(list(names))
    folders = [artifact_utils.get_split_uri(examples, n) for n in names]
    if any("://" in folder for folder in folders):
        return None
    return files, fast_csv.SplitSpec(tuple(names), tuple(buckets), tuple(folders))


# Runners of this machine (`localworkersrunner`: pipelines/beam/local_workers.py, for large data).
_IN_PROCESS_RUNNERS = {
    "fnapirunner",
    "directrunner",
    "switchingdirectrunner",
    "bundlebaseddirectrunner",
    "localworkersrunner",
}


def _beam_args(exec_properties: dict[str, Any]) -> list[str]:
    return list(exec_properties.get("_beam_pipeline_args") or [])


class Executor(tfx_csv.Executor):
    """CsvExampleGen executor: BOM-safe header, `na_values`, optional non-finite imputation, the CSV dialect.

    Runs the fast path (`fast_csv`: Arrow batches in this process) where it
    applies; otherwise TFX's Beam path with the changes above.
    """

    def GetInputSourceToExamplePTransform(self) -> beam.PTransform:  # noqa: N802 - TFX's name
        if not tfx_example_gen.fits():  # this TFX's CSV conversion is not the one ours builds on
            return super().GetInputSourceToExamplePTransform()
        return _CsvToExample

    def Do(self, input_dict, output_dict, exec_properties) -> None:  # noqa: N802 - TFX's name
        exec_properties = dict(exec_properties, _beam_pipeline_args=self._beam_pipeline_args or [])
        spans.stamp_span(output_dict[standard_component_specs.EXAMPLES_KEY], exec_properties)
        plan = _fast_path_plan(exec_properties, output_dict)
        if plan is None:
            return super().Do(input_dict, output_dict, exec_properties)
        files, splits = plan
        settings = read_settings(exec_properties)
        dialect = settings.dialect
        column_names = _shared_header(files, dialect)
        columns = written_columns(column_names, settings.columns, files[0])
        na_values = sorted(v.decode("utf-8") for v in settings.na_values)
        impute_non_finite = settings.impute_non_finite
        kinds = fast_csv.infer_kinds(files, column_names, na_values, impute_non_finite, dialect, columns)
        for artifact in output_dict[standard_component_specs.EXAMPLES_KEY]:
            columnar_copy.remove(artifact.uri)  # a retried execution's leftovers
        counts = fast_csv.write_examples(
            files, column_names, kinds, na_values, impute_non_finite, splits, dialect=dialect, columns=columns
        )
        logging.info(
            "ExampleGen (in-process fast path) wrote %s.", ", ".join(f"{n}: {c} rows" for n, c in counts.items())
        )
        for artifact in output_dict[standard_component_specs.EXAMPLES_KEY]:
            examples_utils.set_payload_format(artifact, example_gen_pb2.FORMAT_TF_EXAMPLE)
            columnar_copy.write_manifest(artifact.uri, counts)
        return None


# The plan is the same for every file format with the fast path (components/example_gen/formats).
fast_path_plan = _fast_path_plan
