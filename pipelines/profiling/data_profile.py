"""`DataProfile`: what the input data looks like, as the row-by-row and the Arrow profilers both return it.

Its own module so that both profilers (`data_checks`, `csv_profile_fast`) import it without importing each other.
"""

from __future__ import annotations

import dataclasses

from components.common.csv_dialect import CsvDialect

__all__ = ["DataProfile"]


@dataclasses.dataclass(frozen=True)
class DataProfile:
    """What the data looks like: its columns, which of them are numeric, and what each holds.

    `columns` is the whole header; the per-column findings (`numeric`, `empty`, ...) cover the columns
    profiled (`profile_csv`'s `columns`: those the spec uses).
    """

    files: tuple[str, ...]
    format: str
    columns: tuple[str, ...]
    numeric: frozenset[str]
    rows: int
    empty: frozenset[str] = frozenset()
    # Columns with at least one missing cell; columns with one distinct value.
    missing: frozenset[str] = frozenset()
    constant: frozenset[str] = frozenset()
    # Column -> (file, line, text) of its first non-numeric cell.
    first_text: dict[str, tuple[str, int, str]] = dataclasses.field(default_factory=dict)
    # Column -> its least finite number, for the columns holding any.
    minimum: dict[str, float] = dataclasses.field(default_factory=dict)
    # Column -> (missing cells, file and line of the first), for the columns with any.
    missing_cells: dict[str, tuple[int, str, int]] = dataclasses.field(default_factory=dict)
    # Column -> one float (None: missing or text) per row, for the columns asked for.
    values: dict[str, tuple] = dataclasses.field(default_factory=dict)
    dialect: CsvDialect = CsvDialect()  # CSV: how cells are separated
