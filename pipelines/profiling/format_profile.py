"""`validate`'s profile of Parquet, Avro and JSON Lines data: the same findings as for CSV.

The files are read as ExampleGen reads them (`components.example_gen.formats.readers`:
the cells as text, `na_values` text and nulls missing) and each column is
tallied by the CSV profile's `TextColumn`, so missing counts, distinct values,
least numbers and the label's values mean what they mean for CSV. Whether a
column is numeric follows the file's type, not its text: a Parquet string
column of digits is text, as ExampleGen writes it. Positions in messages are
`row N` of a file (1-based), reported where CSV reports lines. With `flatten`
(`data.flatten`) struct columns are profiled as their leaf columns
(`parent__child`), as ExampleGen writes them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from components.example_gen.fast_csv import ColumnKind
from components.example_gen.formats import readers
from pipelines.profiling.csv_profile_fast import TextColumn
from pipelines.profiling.data_checks import DataProblem, DataProfile

__all__ = ["profile_format", "label_cells", "nested_column_problem"]


def _problem(message: str):

    return DataProblem(message)


def _schema(files: Sequence[str], fmt: str, flatten: bool) -> pa.Schema:
    try:
        return readers.shared_schema(files, fmt, flatten)
    except readers.FormatError as err:
        raise _problem(str(err)) from None


def nested_column_problem(path: str, name: str, data_type: pa.DataType, flatten: bool) -> str:
    """The message refusing nested column `name` that the spec uses: a struct names `data.flatten`'s columns."""
    received = f"{_nested_kind(data_type)} column"
    if pa.types.is_struct(data_type) and data_type.num_fields and not flatten:
        leaves = ", ".join(f"`{readers.flat_name(name, field.name)}`" for field in data_type)
        fix = (
            f"Set `data.flatten: true` to read its fields as columns of their own ({leaves}, a nested struct's "
            "fields `a__b__c`) and name those in the spec."
        )
    else:
        fix = (
            "`data.flatten` flattens structs only: explode or aggregate lists and maps upstream into columns of "
            "their own (e.g. one column per list position, or a count or mean), or leave it out of the spec."
        )
    return (
        f"{path}: column `{name}` holds {data_type} values. Expected one number or text per row in every column "
        f"the spec uses. Received a {received}. {fix}"
    )


def _nested_kind(data_type: pa.DataType) -> str:
    """`struct`, `map` or `list`: what kind of nested column `data_type` is, for messages."""
    if pa.types.is_struct(data_type):
        return "struct"
    return "map" if pa.types.is_map(data_type) else "list"


def _refuse_nested(files: Sequence[str], schema: pa.Schema, wanted: set[str] | None, flatten: bool) -> None:
    for name in readers.nested_columns(schema):  # with every column kept (`wanted` None) they are left out
        if wanted is not None and name in wanted:
            raise _problem(nested_column_problem(files[0], name, schema.field(name).type, flatten))


def _text_batches(path: str, fmt: str, names: list[str], na_values: Sequence[str], flatten: bool):
    try:
        for batch in readers.iter_batches(path, fmt, names, flatten):
            yield readers.as_text(batch, na_values)
    except readers.FormatError as err:
        raise _problem(str(err)) from None


def _first_present(column: pa.Array) -> tuple[int, str] | None:
    valid = np.asarray(column.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    if not valid.any():
        return None
    index = int(np.argmax(valid))
    return index, column[index].as_py()


def profile_format(
    files: Sequence[str],
    fmt: str,
    na_values: Sequence[str] = ("",),
    non_finite: str = "error",
    keep_columns: Sequence[str] = (),
    columns: Sequence[str] | None = None,
    flatten: bool = False,
):
    """The DataProfile of Parquet, Avro or JSON Lines `files`, as `profile_csv` gives it for CSV.

    Args:
        fmt: `parquet`, `avro` or `jsonl`.
        na_values: text cells that mean missing (a null is missing whatever they hold).
        non_finite: `error` (an inf or NaN number not in `na_values` is a DataProblem) or `impute`.
        keep_columns: columns whose per-row values (float, None when missing or text) are kept.
        columns: the columns profiled besides `keep_columns` (None: all).
        flatten: struct columns as their leaf columns `parent__child` (`data.flatten`).

    Raises:
        DataProblem: an unreadable file, files with different columns, a nested column the spec uses, a file
            without rows, or (`non_finite: error`) non-finite numbers.
    """

    schema = _schema(files, fmt, flatten)
    wanted = None if columns is None else {*columns, *keep_columns}
    _refuse_nested(files, schema, wanted, flatten)
    nested = set(readers.nested_columns(schema))
    flat = [name for name in schema.names if name not in nested]
    profiled = [name for name in flat if wanted is None or name in wanted]
    kinds = {name: readers.kind_of(schema.field(name).type) for name in profiled}
    tallies = {name: TextColumn(name in keep_columns) for name in profiled}
    first_text: dict[str, tuple[str, int, str]] = {}
    rows = 0
    for file_index, path in enumerate(files):
        file_rows = 0
        for batch in _text_batches(path, fmt, profiled, na_values, flatten):
            for name in profiled:
                column = batch.column(name)
                tallies[name].add(column, file_index, file_rows)
                if kinds[name] == ColumnKind.STRING and name not in first_text:
                    found = _first_present(column)
                    if found is not None:
                        first_text[name] = (path, file_rows + found[0] + 1, found[1])
            file_rows += batch.num_rows
        if file_rows == 0:
            raise _problem(f"{path} has no rows. Add rows or remove the file.")
        rows += file_rows
    numeric = frozenset(name for name in profiled if kinds[name] != ColumnKind.STRING)
    if non_finite == "error":
        for name in sorted(numeric):
            if tallies[name].non_finite:
                file_index, row, text = tallies[name].first_non_finite
                raise _problem(
                    f"column `{name}` holds non-finite numbers (inf or NaN). Expected finite numbers or missing "
                    f"values (null). Received: `{text}` at {files[file_index]} row {row + 1} (counting from 1), "
                    "the first. Fix those values, or set `data.checks: {non_finite: impute}` to treat them as "
                    "missing."
                )
    return DataProfile(
        tuple(files),
        fmt,
        tuple(schema.names),
        numeric,
        rows,
        frozenset(n for n in profiled if not tallies[n].filled),
        missing=frozenset(n for n in profiled if tallies[n].missing),
        constant=frozenset(n for n in profiled if len(tallies[n].distinct) == 1),
        first_text=first_text,
        minimum={n: t.minimum for n, t in tallies.items() if n in numeric and t.minimum < math.inf},
        missing_cells={
            n: (t.missing_count, files[t.first_missing[0]], t.first_missing[1] + 1)
            for n, t in tallies.items()
            if t.first_missing is not None
        },
        values={
            n: tuple(None if math.isnan(v) else v for v in tallies[n].kept)
            for n in profiled
            if tallies[n].kept is not None and n in numeric
        },
    )


def label_cells(
    files: Sequence[str], fmt: str, column: str, na_values: Sequence[str], flatten: bool = False
) -> tuple[set[str], bool]:
    """(the distinct present text cells of `column`, whether the column is numeric by the files' type).

    `flatten`: struct columns as their leaf columns (`data.flatten`), so the label may be one.

    Raises:
        ValueError: the column is not in the files (the message names the file and the columns).
    """
    schema = readers.shared_schema(files, fmt, flatten)
    if column not in schema.names:
        raise ValueError(
            f"{files[0]}: label column `{column}` is not in the data. Expected it in every file. "
            f"Received: {schema.names}. Fix `label.column` or the file."
        )
    cells: set[str] = set()
    for path in files:
        for batch in readers.iter_batches(path, fmt, [column], flatten):
            cells.update(v for v in readers.as_text(batch, na_values).column(0).drop_null().to_pylist())
    return cells, readers.kind_of(schema.field(column).type) != ColumnKind.STRING
