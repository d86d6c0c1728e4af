"""`profile_csv` for large files: the same profile from Arrow column batches instead of Python rows.

Python's csv module and `float()` on every cell cost about 50 us a row (over a
minute for 1.5M rows). Here pyarrow reads the files as text columns (C++)
and each column is classified at once: a cell is a number when it matches
Python's float syntax (surrounding whitespace, sign, digits, exponent,
inf/nan); the distinct texts that do not are confirmed with `float()` itself,
so `1_000` counts as a number as it does for Python. Line numbers for the
messages come from one csv-module pass over the rows before the first text
cell of each column (usually the first few rows).

Anything unusual (a malformed row, bad quoting, non-UTF-8 bytes, an empty
file, non-finite numbers with `non_finite: error`) returns None, and the
row-by-row reader produces its exact message.
"""

from __future__ import annotations

import csv
import math

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from components.common.csv_dialect import CsvDialect
from pipelines.profiling.data_profile import DataProfile

__all__ = ["fast_profile", "parse_number", "TextColumn", "FAST_MIN_BYTES"]

FAST_MIN_BYTES = 8 << 20  # below this, the row-by-row reader is as fast and gives every message itself
# Plain decimal numbers (Arrow casts them as float() reads them); anything else (inf, nan, 1_000) goes to float().
_NUMBER = r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$"


def parse_number(text: str) -> float | None:
    """The cell as Python's `float()` reads it, or None when it is text (the row-by-row reader's rule too)."""
    try:
        return float(text)
    except ValueError:
        return None


class TextColumn:
    """What the pass saw in one column: text, missing, filled, distinct values (up to 2), kept values."""

    def __init__(self, keep: bool):
        self.first_text: tuple[int, int, str] | None = None  # (file index, row in file, text)
        self.missing = False
        self.missing_count = 0
        self.first_missing: tuple[int, int] | None = None  # (file index, row in file)
        self.minimum = math.inf
        self.filled = False
        self.non_finite = False
        self.first_non_finite: tuple[int, int, str] | None = None  # (file index, row in file, text)
        self.distinct: set = set()
        self.kept: list | None = [] if keep else None

    def add(self, column: pa.Array, file_index: int, row_offset: int) -> None:
        self.missing = self.missing or column.null_count > 0
        present = np.asarray(column.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
        numbers, text_rows = _numbers_at_once(column)
        if numbers is None:
            numbers, text_rows = _numbers_cell_by_cell(column, present)
        number_rows = present & ~text_rows
        finite = number_rows & np.isfinite(numbers)
        non_finite = number_rows & ~finite
        if non_finite.any():
            self.non_finite = True
            self.missing = True
            if self.first_non_finite is None:
                row = int(np.argmax(non_finite))
                self.first_non_finite = (file_index, row_offset + row, column[row].as_py())
        missing_rows = ~present | (number_rows & ~finite)  # a non-finite number counts as missing
        if missing_rows.any():
            self.missing_count += int(missing_rows.sum())
            if self.first_missing is None:
                self.first_missing = (file_index, row_offset + int(np.argmax(missing_rows)))
        if text_rows.any():
            first = int(np.argmax(text_rows))
            if self.first_text is None:
                self.first_text = (file_index, row_offset + first, column[first].as_py())
            if len(self.distinct) < 2:
                self.distinct.update(pc.unique(pc.filter(column, pa.array(text_rows))).to_pylist()[:2])
            self.filled = True
        if finite.any():
            self.filled = True
            self.minimum = min(self.minimum, float(numbers[finite].min()))
            if len(self.distinct) < 2:
                self.distinct.update(np.unique(numbers[finite])[:2].tolist())
        if self.kept is not None:
            self.kept.extend(np.where(finite, numbers, np.nan).tolist())


def _numbers_at_once(column: pa.Array) -> tuple[np.ndarray | None, np.ndarray | None]:
    """(values, text rows) when Arrow reads every present cell as a number, else (None, None).

    Arrow's float parsing accepts a subset of what `float()` accepts (no
    surrounding whitespace, no `_`) and rounds as it does, so a column it
    reads whole is read as Python would; anything else fails the cast and goes
    cell by cell. Missing cells are NaN.
    """
    try:
        values = pc.cast(column, pa.float64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None, None
    return np.asarray(values.to_numpy(zero_copy_only=False), dtype=float), np.zeros(len(column), dtype=bool)


def _numbers_cell_by_cell(column: pa.Array, present: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(values, text rows): cells matching `_NUMBER` cast by Arrow; each other distinct text read by `float()`."""
    text = pc.replace_substring_regex(pc.utf8_trim_whitespace(pc.fill_null(column, "")), r"^\+", "")
    by_pattern = np.asarray(pc.match_substring_regex(text, _NUMBER).to_numpy(zero_copy_only=False), dtype=bool)
    by_pattern &= present
    numbers = np.full(len(column), np.nan)
    if by_pattern.any():
        numbers[by_pattern] = pc.cast(pc.filter(text, pa.array(by_pattern)), pa.float64()).to_numpy(
            zero_copy_only=False
        )
    other = present & ~by_pattern
    text_rows = np.zeros(len(column), dtype=bool)
    if other.any():  # not numbers by the pattern: ask float() itself, once per distinct text
        rows = np.flatnonzero(other)
        encoded = pc.take(column, pa.array(rows)).dictionary_encode()
        parsed = [parse_number(v) for v in encoded.dictionary.to_pylist()]
        is_text = np.array([v is None for v in parsed], dtype=bool)
        value = np.array([np.nan if v is None else v for v in parsed], dtype=float)
        codes = np.asarray(encoded.indices.to_numpy(zero_copy_only=False))
        text_rows[rows] = is_text[codes]
        numbers[rows[~is_text[codes]]] = value[codes][~is_text[codes]]
    return numbers, text_rows


def _line_numbers(path: str, rows: set[int], open_text, dialect: CsvDialect) -> dict[int, int]:
    """The file's line number of each data row index in `rows` (csv-module pass up to the largest)."""
    found: dict[int, int] = {}
    last = max(rows)
    with open_text(path) as handle:
        reader = csv.reader(handle, strict=True, delimiter=dialect.delimiter)
        next(reader)
        index = 0
        for row in reader:
            if not row:
                continue
            if index in rows:
                found[index] = reader.line_num
            if index >= last:
                break
            index += 1
    return found


def fast_profile(
    files, header, na_values, non_finite: str, keep_columns, open_text, dialect=CsvDialect(), profiled_columns=None
):
    """The DataProfile of `files` (all with `header`), or None when the row-by-row reader must give a message.

    Args:
        files: CSV files (`.csv`, `.tsv`, gzipped or not).
        header: their column names (already checked by the caller).
        na_values: cell texts that mean "missing".
        non_finite: `error` or `impute`, as `profile_csv`.
        keep_columns: columns whose per-row float values are kept.
        open_text: opens a file as text the way the row-by-row reader does (for line numbers).
        dialect: how cells are separated (and spaces before them dropped).
        profiled_columns: the columns profiled besides `keep_columns` (None: all); Arrow splits the others out of
            each line (so a malformed row is still found) but never converts them.
    """
    chosen = None if profiled_columns is None else {*profiled_columns, *keep_columns}
    profiled = [name for name in header if chosen is None or name in chosen]
    columns = {name: TextColumn(name in keep_columns) for name in profiled}
    rows = 0
    try:
        for file_index, path in enumerate(files):
            file_rows = 0
            for batch in dialect.arrow_batches(path, header, sorted(set(na_values)), 16 << 20, profiled):
                for name, column in zip(profiled, batch.columns):
                    columns[name].add(column, file_index, file_rows)
                file_rows += batch.num_rows
            if file_rows == 0:
                return None
            rows += file_rows
    except (pa.ArrowInvalid, UnicodeDecodeError, OSError):
        return None
    numeric = frozenset(name for name in profiled if columns[name].first_text is None)
    if non_finite == "error" and any(columns[name].non_finite for name in numeric):
        return None
    wanted: dict[int, set[int]] = {}
    for column in columns.values():
        for found in (column.first_text, column.first_missing):
            if found is not None:
                wanted.setdefault(found[0], set()).add(found[1])
    lines = {index: _line_numbers(files[index], needed, open_text, dialect) for index, needed in wanted.items()}
    first_text = {}
    for name, column in columns.items():
        if column.first_text is not None:
            file_index, row, text = column.first_text
            first_text[name] = (files[file_index], lines[file_index][row], text)
    return DataProfile(
        tuple(files),
        "csv",
        tuple(header),
        numeric,
        rows,
        frozenset(n for n in profiled if not columns[n].filled),
        missing=frozenset(n for n in profiled if columns[n].missing),
        constant=frozenset(n for n in profiled if len(columns[n].distinct) == 1),
        first_text=first_text,
        minimum={name: column.minimum for name, column in columns.items() if column.minimum < math.inf},
        missing_cells={
            name: (
                column.missing_count,
                files[column.first_missing[0]],
                lines[column.first_missing[0]][column.first_missing[1]],
            )
            for name, column in columns.items()
            if column.first_missing is not None
        },
        values={
            n: tuple(None if math.isnan(v) else v for v in columns[n].kept)
            for n in profiled
            if columns[n].kept is not None
        },
        dialect=dialect,
    )
