"""A data file to score, read in bounded batches: each row as the tf.Example ExampleGen writes, and the kept columns.

CSV is read by pyarrow's streaming reader with the spec's separator and
`data.na_values` (`components.common.csv_dialect`); Parquet, Avro and JSON
Lines by the readers ExampleGen uses (`components.example_gen.formats`), the
model's feature cells turned to text as ExampleGen does; a TFRecord file
(`.tfrecord`, `.tfrecord.gz`) already holds serialized tf.Examples. Text cells
become tf.Examples through ExampleGen's own encoding (`fast_csv.feature_lists`:
a missing cell is an empty value list), typed as the model's `serving_raw`
signature declares each feature, so a row is encoded exactly as the rows the
model was trained on. A cell that is not a number where the model reads one,
or a list, struct or map column the model or `--keep` names, is a
ScoringInputError naming the file, the column and (for a cell) the row. The
kept columns are copied as the file holds them: Parquet, Avro and JSON Lines
columns with their own types (an int64 `id` stays int64), CSV cells as text,
a TFRecord feature as its first value. Memory stays at one block of the file
plus one batch.
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
    return _typed_schema(source).names


def _typed_schema(source: ScoringInput) -> pa.Schema:
    """A Parquet, Avro or JSON Lines file's columns and types, nested ones included (`data.flatten`: struct
    columns as their leaf columns)."""
    return readers.read_schema(source.path, source.fmt, source.flatten)


def _refuse_nested(source: ScoringInput, schema: pa.Schema, features: Sequence[str], keep: Sequence[str]) -> None:
    """A ScoringInputError for the first list, struct or map column the model reads or `--keep` names."""
    nested = readers.nested_columns(schema)
    for name in features:
        if name in nested:
            from pipelines.profiling.format_profile import nested_column_problem

            raise ScoringInputError(nested_column_problem(source.path, name, schema.field(name).type, source.flatten))
    for name in keep:
        if name in nested:
            raise ScoringInputError(
                f"{source.path}: --keep column `{name}` holds {schema.field(name).type} values. Expected one "
                "number or text per row in every kept column (an output row holds one value per column). "
                f"Received a nested column. Leave `{name}` out of --keep, or write it as columns of its own."
            )


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


def _file_batches(
    source: ScoringInput, names: Sequence[str], wanted: Sequence[str], features: Sequence[str]
) -> Iterator[tuple[pa.RecordBatch, pa.RecordBatch]]:
    """(the `features` as text cells, the `wanted` columns as the file holds them) per block of the file."""
    nulls = sorted(set(source.na_values) | {""})
    if source.fmt == "csv":
        for batch in source.dialect.arrow_batches(source.path, names, nulls, _BLOCK_BYTES, wanted):
            yield _select(batch, features), batch
        return
    for batch in readers.iter_batches(source.path, source.fmt, wanted, source.flatten):
        yield readers.as_text(_select(batch, features), source.na_values), batch


def scoring_batches(
    source: ScoringInput, kinds: Mapping[str, int], keep: Sequence[str], rows: int
) -> Iterator[tuple[pa.RecordBatch, list[bytes]]]:
    """(kept columns, serialized tf.Examples) for each batch of at most `rows` rows, in file order.

    Args:
        source: the file.
        kinds: each feature the model reads -> its `ColumnKind` (INT, FLOAT, STRING).
        keep: the columns to copy to the output, as the file holds them: with the file's types (Parquet,
            Avro, JSON Lines; a TFRecord feature's first value), CSV cells as text.
        rows: rows per batch.

    Raises:
        ScoringInputError: a feature or a `keep` column is not in the file (the message names them all), is a
            list, struct or map column, or a feature's cell is not a number where the model reads one (the
            message names the file, column, row and cell).
    """
    schema = _typed_schema(source) if source.fmt not in ("csv", "tfrecord") else None
    names = schema.names if schema is not None else column_names(source)
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
    if schema is not None:
        _refuse_nested(source, schema, list(kinds), keep)
    if source.fmt == "tfrecord":
        for records in _tfrecord_chunks(source.path, rows):
            kept = _decoded(records)
            yield _select(kept, keep), records
        return
    features = list(kinds)
    wanted = list(dict.fromkeys([*features, *keep]))
    encoder = None
    first_row = 0  # of the block, in the file (0-based)
    for text, block in _file_batches(source, names, wanted, features):
        for start in range(0, block.num_rows, rows):
            if encoder is None:
                from tfx_bsl.coders import example_coder

                encoder = example_coder.RecordBatchToExamplesEncoder()
            cells = fast_csv.prepared(text.slice(start, rows), source.impute_non_finite)
            try:
                lists = fast_csv.feature_lists(cells, [kinds[name] for name in features])
            except pa.ArrowInvalid:  # a cell that is not a number where the model reads one
                raise _unparsable_cell(source, cells, kinds, first_row + start) from None
            yield _select(block.slice(start, rows), keep), list(encoder.encode(lists))
        first_row += block.num_rows


_NUMBERS = {ColumnKind.INT: "an integer", ColumnKind.FLOAT: "a number"}


def _unparsable_cell(
    source: ScoringInput, cells: pa.RecordBatch, kinds: Mapping[str, int], first_row: int
) -> ScoringInputError:
    """The error naming the first cell of `cells` (its rows from row `first_row` of the file, 0-based) that
    is not the number its column's kind says, found by bisecting on `fast_csv.feature_lists`."""
    numeric = [name for name in cells.schema.names if kinds[name] in _NUMBERS]
    for name in numeric:
        column, kind = cells.column(name), kinds[name]
        if _parses(column, kind):
            continue
        good, bad = 0, len(column)  # column[:good] parses, column[:bad] does not
        while bad - good > 1:
            middle = (good + bad) // 2
            good, bad = (middle, bad) if _parses(column.slice(0, middle), kind) else (good, middle)
        row = first_row + bad  # 1-based: the cell is column[bad - 1]
        where = f"line {row + 1}" if source.fmt == "csv" else f"row {row}"  # a CSV file's line 1 is its header
        return ScoringInputError(
            f"{source.path} {where}: column `{name}` holds a cell that is not {_NUMBERS[kind]}. Expected "
            f"{_NUMBERS[kind]} or a missing value in every row of `{name}` (the model was trained on it as "
            f"{ColumnKind.NAMES[kind]}). Received: {column[bad - 1].as_py()!r}. Correct the cell, or make it "
            "missing (empty, null, or a `data.na_values` marker)."
        )
    return ScoringInputError(  # not expected: feature_lists fails only on a cell that is not its number
        f"{source.path}: a cell from row {first_row + 1} on is not the number the model reads. Expected numbers "
        f"or missing values in {numeric}. Correct the cells."
    )


def _parses(column: pa.Array, kind: int) -> bool:
    try:
        fast_csv.feature_lists(pa.RecordBatch.from_arrays([column], names=["cell"]), [kind])
    except pa.ArrowInvalid:
        return False
    return True


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
