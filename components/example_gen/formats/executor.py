"""ExampleGen executor for Parquet, Avro and JSON Lines: CSV's fast path fed by `readers`.

On this machine's runners (the same plan as CSV: `csv_executor.fast_path_plan`)
each file's record batches go, as text cells, through `fast_csv`: the same
split hash, tf.Example encoding, worker processes and columnar copy, so
StatisticsGen and Transform read the copy as they do for CSV. Elsewhere (a
distributed Beam runner, object-store files) TFX's Beam path runs with the
same per-file conversion, one file per Beam element.

TFX ships Parquet and Avro executors
(`tfx/components/example_gen/custom_executors/`), but they convert each row
with `utils.dict_to_example`, which writes a 0, 0.0 or empty text as a
missing value (`if not pyval`) and writes every column; so neither path here
uses them (`tests/components/example_gen/test_formats_executor.py` keeps that
reason checked). Settings travel in `custom_config` as CSV's do: the format,
the text cells that mean missing, non-finite imputation, the columns
written and whether struct columns are flattened (`readers.flatten_batch`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple

import apache_beam as beam
import pyarrow as pa
from absl import logging
from google.protobuf import json_format, struct_pb2
from tfx.components.example_gen.base_example_gen_executor import BaseExampleGenExecutor
from tfx.components.util import examples_utils
from tfx.dsl.io import fileio
from tfx.proto import example_gen_pb2
from tfx.types import standard_component_specs

from components.common import columnar_copy
from components.common.data_files import keep_data_files
from components.example_gen import fast_csv, spans
from components.example_gen.csv_executor import fast_path_plan, written_columns
from components.example_gen.formats import FORMATS, readers

__all__ = ["FormatSettings", "Executor", "make_custom_config", "read_settings", "file_kinds"]


class FormatSettings(NamedTuple):
    """The format, the text cells that mean missing, non-finite imputation, the columns written (None: all),
    and whether struct columns are written as their leaf columns `parent__child` (`data.flatten`)."""

    format: str
    na_values: tuple[str, ...] = ("",)
    impute_non_finite: bool = False
    columns: tuple[str, ...] | None = None
    flatten: bool = False


def make_custom_config(
    fmt: str,
    na_values: Sequence[str],
    impute_non_finite: bool,
    columns: Sequence[str] | None = None,
    flatten: bool = False,
) -> example_gen_pb2.CustomConfig:
    """ExampleGen's `custom_config` carrying this executor's settings (`FormatSettings`' fields).

    `flatten` is written only when true, so the cache keys of specs without it are unchanged.
    """
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}. Received: {fmt!r}.")
    settings = struct_pb2.Struct()
    settings.update({"format": fmt, "na_values": list(na_values), "impute_non_finite": bool(impute_non_finite)})
    if columns is not None:
        settings.update({"columns": sorted(set(columns))})
    if flatten:
        settings.update({"flatten": True})
    config = example_gen_pb2.CustomConfig()
    config.custom_config.Pack(settings)
    return config


def read_settings(exec_properties: dict[str, Any]) -> FormatSettings:
    """The settings `make_custom_config` packed into the component's exec_properties."""
    raw = exec_properties.get(standard_component_specs.CUSTOM_CONFIG_KEY)
    config = example_gen_pb2.CustomConfig()
    if isinstance(raw, str):
        json_format.Parse(raw, config)
    elif raw:
        config.CopyFrom(raw)
    settings = struct_pb2.Struct()
    config.custom_config.Unpack(settings)
    values = dict(settings.items())
    if values.get("format") not in FORMATS:
        raise ValueError(f"ExampleGen's custom_config names no file format ({', '.join(FORMATS)}).")
    columns = tuple(str(name) for name in values["columns"]) if "columns" in values else None
    na_values = tuple(sorted({str(v) for v in values.get("na_values", [""])} | {""}))
    return FormatSettings(
        str(values["format"]),
        na_values,
        bool(values.get("impute_non_finite", False)),
        columns,
        bool(values.get("flatten", False)),
    )


def file_kinds(files: Sequence[str], settings: FormatSettings) -> tuple[list[str], list[str], list[int]]:
    """(every flat column in the first file's order, the columns written, their kinds).

    Raises:
        readers.FormatError: a file is unreadable, or the files' columns differ.
        ValueError: a column the spec uses is not in the files, or is nested (a list, struct or map).
    """
    schema = readers.shared_schema(files, settings.format, settings.flatten)
    nested = set(readers.nested_columns(schema))  # never written; refused when the spec names one
    used_nested = sorted(nested & set(settings.columns or ()))
    if used_nested:
        fix = (
            "`data.flatten` flattens structs only: explode or aggregate lists and maps upstream"
            if settings.flatten
            else "Set `data.flatten: true` for struct columns; explode or aggregate lists and maps upstream"
        )
        raise ValueError(
            f"{files[0]}: column(s) {used_nested} hold lists, structs or maps. Expected one value per row in "
            f"every column the spec uses. Received nested columns. {fix}, or leave them out of the spec."
        )
    flat = [field.name for field in schema if field.name not in nested]
    columns = written_columns(flat, settings.columns, files[0])
    kinds = [readers.kind_of(schema.field(name).type) for name in columns]
    return flat, columns, kinds


def _text_batches(files: Sequence[str], settings: FormatSettings, flat: list[str]) -> Iterator:
    for path in files:
        for batch in readers.iter_batches(path, settings.format, flat, settings.flatten):
            yield readers.as_text(batch, settings.na_values)


class _EncodeFile(beam.DoFn):
    """One file -> serialized tf.Examples, converted as the fast path converts them (TFX's Beam path)."""

    def __init__(self, settings: FormatSettings, flat: list[str], columns: list[str], kinds: list[int]):
        self._settings, self._flat, self._columns, self._kinds = settings, flat, columns, kinds

    def process(self, path: str):
        from tfx_bsl.coders import example_coder

        job = fast_csv.BatchJob(tuple(self._kinds), self._settings.impute_non_finite, fast_csv.SplitSpec((), (), ()))
        written = [self._flat.index(name) for name in self._columns]
        encoder = example_coder.RecordBatchToExamplesEncoder()
        for batch in _text_batches([path], self._settings, self._flat):
            batch = fast_csv.prepared(batch, job.impute_non_finite)
            batch = pa.RecordBatch.from_arrays([batch.column(i) for i in written], names=self._columns)
            yield from encoder.encode(fast_csv.feature_lists(batch, job.kinds))


@beam.ptransform_fn
def _FilesToExample(pipeline: beam.Pipeline, exec_properties: dict[str, Any], split_pattern: str):  # noqa: N802
    """The files of one split pattern -> serialized tf.Examples (TFX's `InputSourceToExample` contract)."""
    settings = read_settings(exec_properties)
    pattern = os.path.join(exec_properties[standard_component_specs.INPUT_BASE_KEY], split_pattern)
    files = keep_data_files(fileio.glob(pattern), fileio.isdir)
    if not files:
        raise RuntimeError(f"Split pattern {pattern} does not match any files.")
    flat, columns, kinds = file_kinds(files, settings)
    return (
        pipeline
        | "Files" >> beam.Create(files)
        | "ToTFExample" >> beam.ParDo(_EncodeFile(settings, flat, columns, kinds))
    )


class Executor(BaseExampleGenExecutor):
    """ExampleGen over Parquet, Avro or JSON Lines files: CSV's fast path where it applies, else TFX's Beam path."""

    def GetInputSourceToExamplePTransform(self) -> beam.PTransform:  # noqa: N802 - TFX's name
        return _FilesToExample

    def Do(self, input_dict, output_dict, exec_properties) -> None:  # noqa: N802 - TFX's name
        exec_properties = dict(exec_properties, _beam_pipeline_args=self._beam_pipeline_args or [])
        spans.stamp_span(output_dict[standard_component_specs.EXAMPLES_KEY], exec_properties)
        plan = fast_path_plan(exec_properties, output_dict)
        if plan is None:
            return super().Do(input_dict, output_dict, exec_properties)
        files, splits = plan
        settings = read_settings(exec_properties)
        flat, columns, kinds = file_kinds(files, settings)
        for artifact in output_dict[standard_component_specs.EXAMPLES_KEY]:
            columnar_copy.remove(artifact.uri)  # a retried execution's leftovers
        for folder in splits.folders:
            os.makedirs(folder, exist_ok=True)
        written = tuple(flat.index(name) for name in columns)
        job = fast_csv.BatchJob(tuple(kinds), settings.impute_non_finite, splits, 0, written)
        workers = fast_csv.worker_count(sum(os.path.getsize(path) for path in files))
        counts = fast_csv.encode_batches(_text_batches(files, settings, flat), job, workers)
        logging.info("ExampleGen (%s, in-process fast path) wrote %s.", settings.format, counts)
        for artifact in output_dict[standard_component_specs.EXAMPLES_KEY]:
            examples_utils.set_payload_format(artifact, example_gen_pb2.FORMAT_TF_EXAMPLE)
            columnar_copy.write_manifest(artifact.uri, counts)
        return None
