"""How a CSV file's cells are written: the one description that every reader of the data follows.

`validate`'s row-by-row and Arrow profiles, the label's class list and
ExampleGen's Arrow and Beam paths all read cells through a `CsvDialect`, so
a file reads the same everywhere: the separator (`data.delimiter`) and
whether the spaces at the start of each cell are dropped
(`data.skip_initial_space`, for files written `a, b, c` such as UCI's adult
census data; pandas' `skipinitialspace`).

With `skip_initial_space`, the spaces are dropped after the cell is split out
(header names too), so a cell that then reads as a missing-value marker
(` ?`) is missing. A quote after a space does not start a quoted cell, in
every reader alike.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv

__all__ = ["CsvDialect"]


@dataclasses.dataclass(frozen=True)
class CsvDialect:
    """The separator between cells, and whether spaces at the start of a cell are dropped."""

    delimiter: str = ","
    skip_initial_space: bool = False

    def cells(self, row: list[str]) -> list[str]:
        """A row as Python's `csv` module split it, with this dialect's spaces dropped."""
        return [cell.lstrip(" ") for cell in row] if self.skip_initial_space else row

    def arrow_batches(
        self,
        path,
        column_names: Sequence[str],
        null_values: Sequence[str],
        block_size: int,
        include_columns: Sequence[str] | None = None,
    ) -> Iterator[pa.RecordBatch]:
        """The file's rows (header skipped) as record batches of strings, `null_values` cells as nulls, read
        with this dialect (`arrow_cells`); about `block_size` bytes of CSV each. A `.gz` file is decompressed.

        `include_columns` (default: all of `column_names`) are the columns the batches hold, in that order;
        the others are split out of each line but never converted."""
        read = pa_csv.ReadOptions(column_names=list(column_names), skip_rows=1, block_size=block_size)
        parse = pa_csv.ParseOptions(delimiter=self.delimiter, newlines_in_values=True, ignore_empty_lines=True)
        included = list(column_names if include_columns is None else include_columns)
        convert = pa_csv.ConvertOptions(
            column_types={name: pa.string() for name in included},
            null_values=list(null_values),
            strings_can_be_null=True,
            quoted_strings_can_be_null=True,
            include_columns=included,
        )
        for batch in pa_csv.open_csv(path, read_options=read, parse_options=parse, convert_options=convert):
            yield self.arrow_cells(batch, null_values)

    def arrow_cells(self, batch: pa.RecordBatch, null_values: Sequence[str]) -> pa.RecordBatch:
        """A batch of string columns (read with `null_values` as nulls) with this dialect's spaces dropped,
        and the cells that then equal one of `null_values` made null."""
        if not self.skip_initial_space:
            return batch
        markers = pa.array(sorted(set(null_values)), pa.string())
        columns = []
        for column in batch.columns:
            trimmed = pc.utf8_ltrim(column, characters=" ")
            columns.append(pc.if_else(pc.is_in(trimmed, value_set=markers), pa.scalar(None, pa.string()), trimmed))
        return pa.RecordBatch.from_arrays(columns, names=batch.schema.names)
