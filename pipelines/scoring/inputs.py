"""A data file to score, read in bounded batches: each row as the tf.Example ExampleGen writes, and the kept columns.

CSV is read by pyarrow's streaming reader with the spec's separator and
`data.na_values` (`components.common.csv_dialect`); Parquet, Avro and JSON
Lines by the readers ExampleGen uses (`components.example_gen.formats`), their
cells turned to text as ExampleGen does; a TFRecord file (`.tfrecord`,
`.tfrecord.gz`) already holds serialized tf.Examples. Text cells become
tf.Examples through ExampleGen's own encoding (`fast_csv.feature_lists`:
a missing cell is an empty value list), typed as the model's `serving_raw`
signature declares each feature, so a row is encoded exactly as the rows the
model was trained on. Memory stays at one block of the file plus one batch.
"""

from __future__ import annotations

import csv
import dataclasses
import gzip
import io
import os
from collections.abc import Iterator, Mapping, Sequence

import pyarrow as pa

from components.common.csv_dialect import CsvDialect
from components.common.data_files import is_gzip
from components.example_gen import fast_csv
from components.example_gen.fast_csv import ColumnKind
from components.example_gen.formats import format_of, readers

__all__ = [
    "ScoringInput",
    "ScoringInputError",
    "column_names",
    "existing_file",
    "input_format",
    "kind_of_dtype",
    "scoring_batches",
]

_BLOCK_BYTES = 4 << 20  # CSV bytes read at a time
_TFRECORD_ENDINGS = (".tfrecord", ".tfrecord.gz", ".tfrecords", ".tfrecords.gz")


class ScoringInputError(ValueError):
    """The data file cannot be scored: missing, empty, or without a column the model reads or `--keep` names."""


@dataclasses.dataclass(frozen=True)
class ScoringInput:
    """How to read the file: its format, the spec's CSV dialect, missing-value markers, imputation, and
    whether struct columns are read as their leaf columns (`data.flatten`, as ExampleGen read them)."""

    path: str
    fmt: str
    dialect: CsvDialect = CsvDialect()
    na_values: tuple[str, ...] = ()
    impute_non_finite: bool = False
    flatten: bool = False


def input_format(path: str, data_format: str) -> str:
    """`tfrecord`, `csv`, `parquet`, `avro` or `jsonl`: by the file's ending, else the spec's `data.format`."""
    lowered = path.lower()
    if lowered.endswith(_TFRECORD_ENDINGS):
        return "tfrecord"
    if lowered.endswith((".csv", ".csv.gz", ".tsv", ".tsv.gz")):
        return "csv"
    return format_of(path) or data_format


def _csv_header(path: str, dialect: CsvDialect) -> list[str]:
    with open(path, "rb") as raw:
        handle = gzip.GzipFile(fileobj=raw, mode="rb") if is_gzip(path) else raw
        first = handle.readline().decode("utf-8-sig")
    row = next(csv.reader(io.StringIO(first), delimiter=dialect.delimiter), None)
    if not row:
        raise ScoringInputError(f"{path} is empty. Expected a header line and data rows. Score a file with rows.")
    return dialect.cells(row)


def column_names(source: ScoringInput) -> list[str]:
    """The file's columns (for a TFRecord file: the features of its first example)."""
    if source.fmt == "csv":
        return _csv_header(source.path, source.dialect)
    if source.fmt == "tfrecord":
        first = next(_tfrecord_chunks(source.path, 1), [])
        return _decoded(first).schema.names if first else []
    return [field.name for field in readers.read_schema(source.path, source.fmt, source.flatten)]


def _tfrecord_chunks(path: str, rows: int) -> Iterator[list[bytes]]:
    import tensorflow as tf

    dataset = tf.data.TFRecordDataset(path, compression_type="GZIP" if path.lower().endswith(".gz") else "")
    for chunk in dataset.batch(rows).as_numpy_iterator():
        yield list(chunk)


def _decoded(records: Sequence[bytes]) -> pa.RecordBatch:
    """Serialized tf.Examples as a batch of one plain column per feature (its first value, or null)."""
    import pyarrow.compute as pc
    from tfx_bsl.coders import example_coder

    lists = example_coder.ExamplesToRecordBatchDecoder().DecodeBatch(list(records))
    columns = []
    for column in lists.columns:
        first = pc.list_element(pc.if_else(pc.greater(pc.list_value_length(column), 0), column, None), 0)
        columns.append(pc.cast(first, pa.string()) if pa.types.is_binary(first.type) else first)
    return pa.RecordBatch.from_arrays(columns, names=lists.schema.names)


def _text_batches(source: ScoringInput, names: Sequence[str], wanted: Sequence[str]) -> Iterator[pa.RecordBatch]:
    nulls = sorted(set(source.na_values) | {""})
    if source.fmt == "csv":
        yield from source.dialect.arrow_batches(source.path, names, nulls, _BLOCK_BYTES, wanted)
        return
    for batch in readers.iter_batches(source.path, source.fmt, wanted, source.flatten):
        yield readers.as_text(batch, source.na_values)


def scoring_batches(
    source: ScoringInput, kinds: Mapping[str, int], keep: Sequence[str], rows: int
) -> Iterator[tuple[pa.RecordBatch, list[bytes]]]:
    """(kept columns, serialized tf.Examples) for each batch of at most `rows` rows, in file order.

    Args:
        source: the file.
        kinds: each feature the model reads -> its `ColumnKind` (INT, FLOAT, STRING).
        keep: the columns to copy to the output, as the file holds them (CSV: text).
        rows: rows per batch.

    Raises:
        ScoringInputError: a feature or a `keep` column is not in the file (the message names them all).
    """
    names = column_names(source)
    absent_features = [name for name in kinds if name not in names]
    absent_keep = [name for name in keep if name not in names]
    if absent_features or absent_keep:
        problems = []
        if absent_features:
            problems.append(f"the model's feature column(s) {absent_features}")
        if absent_keep:
            problems.append(f"the --keep column(s) {absent_keep}")
        raise ScoringInputError(
            f"{source.path} lacks {' and '.join(problems)}. Expected the columns the pipeline was trained on. "
            f"Received columns: {names}. Add the missing columns to the file"
            + (", or drop them from --keep." if absent_keep else ".")
        )
    if source.fmt == "tfrecord":
        for records in _tfrecord_chunks(source.path, rows):
            kept = _decoded(records)
            yield _select(kept, keep), records
        return
    features = list(kinds)
    wanted = list(dict.fromkeys([*features, *keep]))
    encoder = None
    for block in _text_batches(source, names, wanted):
        for start in range(0, block.num_rows, rows):
            batch = block.slice(start, rows)
            if encoder is None:
                from tfx_bsl.coders import example_coder

                encoder = example_coder.RecordBatchToExamplesEncoder()
            cells = fast_csv.prepared(_select(batch, features), source.impute_non_finite)
            encoded = encoder.encode(fast_csv.feature_lists(cells, [kinds[name] for name in features]))
            yield _select(batch, keep), list(encoded)


def _select(batch: pa.RecordBatch, names: Sequence[str]) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays([batch.column(name) for name in names], names=list(names))


def kind_of_dtype(dtype_name: str) -> int:
    """The `ColumnKind` of a feature the model reads as `dtype_name` (`int64`, `float32`, `string`)."""
    if dtype_name.startswith("int"):
        return ColumnKind.INT
    if dtype_name.startswith("float"):
        return ColumnKind.FLOAT
    return ColumnKind.STRING


def existing_file(path: str) -> str:
    """`path`, when it is a readable file; else ValueError naming it."""
    if not os.path.isfile(path):
        raise ScoringInputError(
            f"{path} is not a file. Expected the data file to score (CSV, Parquet, Avro, JSON Lines or TFRecord). "
            "Check the path."
        )
    return path
