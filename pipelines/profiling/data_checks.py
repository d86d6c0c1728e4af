"""Checks on the input data made before anything runs: files, header, rows, types.

Reading a 15k-row CSV this way takes a few tens of milliseconds, and it turns
what would be a Beam stack trace deep inside ExampleGen into one line naming
the file and the row. Files of 8 MB and more are profiled from Arrow column
batches (`csv_profile_fast`), falling back to this reader for its messages.
"""

from __future__ import annotations

import csv
import dataclasses
import math
import os
import stat

from components.common.csv_dialect import CsvDialect
from components.common.data_files import data_files, open_text
from components.example_gen.formats import ENDINGS, FORMATS, format_of
from pipelines.profiling.csv_profile_fast import FAST_MIN_BYTES, fast_profile, parse_number
from pipelines.profiling.data_profile import DataProfile

__all__ = [
    "DataProblem",
    "DataProfile",
    "TABULAR_FORMATS",
    "csv_delimiter",
    "list_data_files",
    "profile_csv",
    "profile_tfrecord",
]

_MAX_REPORTED_ROWS = 5
_TSV_ENDINGS = (".tsv", ".tsv.gz", ".tab")
_CSV_ENDINGS = (".csv", ".csv.gz", *_TSV_ENDINGS)
# What a header read as one column holds when the file has another separator than the one used.
_OTHER_DELIMITERS = (";", "\t", "|", ",")
_TFRECORD_ENDINGS = (".tfrecord", ".tfrecords", ".tfrecord.gz", ".gz", ".rio")
_IMAGE_ENDINGS = (".jpg", ".jpeg", ".png")
# Formats whose columns `validate` profiles (types, missing cells, the label's values).
TABULAR_FORMATS = ("csv", *FORMATS)


class DataProblem(ValueError):
    """The data cannot be used; the message names the file and row or column."""


def csv_delimiter(files: list[str] | tuple[str, ...], declared: str | None) -> str:
    """The character between cells: `declared` (`data.delimiter`), else a tab for `.tsv`/`.tab` files, else `,`."""
    if declared is not None:
        return declared
    return "\t" if files and all(path.endswith(_TSV_ENDINGS) for path in files) else ","


def _shown(delimiter: str) -> str:
    return '"\\t"' if delimiter == "\t" else f'"{delimiter}"'


def list_data_files(path: str, data_format: str | None) -> tuple[list[str], str]:
    """Returns (files, format) for a file or a folder of files.

    An image folder (`format: image_folder`, or unset and `path` is a folder without CSV/TFRecord files whose
    sub-folders hold .jpg/.jpeg/.png files) is returned as `([path], "image_folder")`.

    Raises:
        DataProblem: nothing usable is at `path`.
    """
    if data_format == "image_folder" or (data_format is None and _is_image_folder(path)):
        if not os.path.isdir(path):
            raise DataProblem(
                f"`format: image_folder` needs a folder with one sub-folder per class holding JPEG/PNG files. "
                f"Received: {path}, which is not a folder. Fix `data.path`, or remove `format: image_folder`."
            )
        return [path], "image_folder"
    if os.path.isdir(path):
        files = data_files(path)  # what ExampleGen reads too
        if not files:
            raise DataProblem(f"folder {path} has no data files. Put CSV or TFRecord files in it.")
    elif os.path.isfile(path):
        files = [path]
    elif os.path.exists(path):
        raise DataProblem(
            f"{path} is {_special_kind(path)}, not a regular file or folder. Expected a CSV or TFRecord file, or "
            "a folder of them: a run reads the data more than once. Write the data to a file and point "
            "`data.path` at it."
        )
    elif os.path.islink(path):
        raise DataProblem(
            f"{path} is a symbolic link to {os.readlink(path)}, which does not exist. Expected a link to a data "
            "file or folder. Fix the link, or point `data.path` at the data."
        )
    else:
        raise DataProblem(f"{path} does not exist. Fix the path (relative paths start at the spec file's folder).")
    if data_format is None:
        if all(f.endswith(_CSV_ENDINGS) for f in files):
            data_format = "csv"
        elif all(f.endswith(_TFRECORD_ENDINGS) for f in files):
            data_format = "tfrecord"
        elif len({format_of(f) for f in files} - {None}) == 1 and None not in {format_of(f) for f in files}:
            data_format = format_of(files[0])
        else:
            raise DataProblem(
                f"cannot tell the format of {path} from its file names. Expected names ending in `.csv`, "
                f"`.tfrecord`, {', '.join(f'`{e}`' for e in ENDINGS)}, all of one format. Add `format:` under "
                f"`data:` ({', '.join(('csv', 'tfrecord', *FORMATS))}), or rename the files."
            )
    return files, data_format


def _special_kind(path: str) -> str:
    """What a path that is neither a regular file nor a folder is: `a FIFO (named pipe)`, `a character device`..."""
    mode = os.stat(path).st_mode
    for test, kind in (
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return kind
    return "a special file"


def _is_image_folder(path: str) -> bool:
    """A folder holding no CSV/TFRecord files, and a sub-folder holding a .jpg/.jpeg/.png file."""
    if not os.path.isdir(path):
        return False
    entries = [entry for entry in os.scandir(path) if not entry.name.startswith(".")]
    if any(
        entry.is_file() and (entry.name.endswith(_CSV_ENDINGS + _TFRECORD_ENDINGS) or format_of(entry.name))
        for entry in entries
    ):
        return False
    return any(
        any(name.lower().endswith(_IMAGE_ENDINGS) for name in os.listdir(entry.path))
        for entry in entries
        if entry.is_dir()
    )


def _open_text(path: str):
    return open_text(path)


@dataclasses.dataclass
class _ColumnTally:
    """What one pass over a column saw: first text cell, missing cells, least number, distinct values (up
    to 2), non-finite cells."""

    text_at: tuple[str, int, str] | None = None
    filled: bool = False
    missing: bool = False
    missing_count: int = 0
    first_missing: tuple[str, int] | None = None
    minimum: float = math.inf
    distinct: set = dataclasses.field(default_factory=set)
    non_finite: list[tuple[str, int, str]] = dataclasses.field(default_factory=list)

    def add_missing(self, path: str, line: int) -> None:
        self.missing = True
        self.missing_count += 1
        if self.first_missing is None:
            self.first_missing = (path, line)


def _read_header(path: str, reader, dialect: CsvDialect = CsvDialect()) -> list[str]:
    try:
        header = dialect.cells(next(reader))
    except StopIteration:
        raise DataProblem(f"{path} is empty. Expected a header line and data rows.") from None
    delimiter = dialect.delimiter
    other = next((d for d in _OTHER_DELIMITERS if d != delimiter and len(header) == 1 and d in header[0]), None)
    if other is not None:
        raise DataProblem(
            f"{path}: the header reads as one column, `{header[0][:120]}`, when cells are separated by "
            f"{_shown(delimiter)}; it holds {_shown(other)}. Expected the file's separator. "
            f"Add `delimiter: {_shown(other)}` under `data:`."
        )
    unnamed = [i + 1 for i, name in enumerate(header) if not name.strip()]
    if unnamed:
        raise DataProblem(
            f"{path}: header column(s) {unnamed} have no name. Expected a name for every column. "
            "Received an empty header cell. Name those columns in the header line."
        )
    duplicates = sorted({c for c in header if header.count(c) > 1})
    if duplicates:
        raise DataProblem(f"{path}: the header repeats column(s) {duplicates}. Rename them.")
    return header


def _non_finite_problem(column: str, cells: list[tuple[str, int, str]]) -> str:
    shown = "; ".join(f"{path} line {line}: `{value}`" for path, line, value in cells[:_MAX_REPORTED_ROWS])
    more = f" (and {len(cells) - _MAX_REPORTED_ROWS} more)" if len(cells) > _MAX_REPORTED_ROWS else ""
    return (
        f"column `{column}` holds {len(cells)} non-finite number(s): {shown}{more}. Expected finite numbers or a "
        "missing-value marker (`data.na_values`). Fix those cells, or set `data.checks: {non_finite: impute}` "
        "to treat them as missing."
    )


def _fast_profile_or_none(
    files, na_values, non_finite: str, keep_columns, dialect: CsvDialect, columns
) -> DataProfile | None:
    """The Arrow-based profile of large files, or None for the row-by-row reader (and its exact messages)."""
    headers = []
    try:
        for path in files:
            with _open_text(path) as handle:
                reader = csv.reader(handle, strict=True, delimiter=dialect.delimiter)
                headers.append(_read_header(path, reader, dialect))
    except (UnicodeDecodeError, csv.Error):
        return None
    if any(header != headers[0] for header in headers):
        return None
    return fast_profile(
        files, headers[0], tuple(na_values), non_finite, tuple(keep_columns), _open_text, dialect, columns
    )


def profile_csv(
    files: list[str],
    na_values: tuple[str, ...] | list[str] = ("",),
    non_finite: str = "error",
    keep_columns: tuple[str, ...] = (),
    dialect: CsvDialect = CsvDialect(),
    columns: tuple[str, ...] | None = None,
) -> DataProfile:
    """Reads every row of every CSV file once, checking shape and value types.

    A UTF-8 byte-order mark before the header is dropped. A cell whose text is
    in `na_values` is a missing value: a numeric column with such cells stays
    numeric.

    Args:
        files: the CSV files (all with the same header).
        na_values: cell texts that mean "missing".
        non_finite: `error` (an `inf`/`nan` cell in an otherwise numeric column
            is a DataProblem naming file, line and column) or `impute` (it
            counts as missing).
        keep_columns: columns whose values (float, None when missing or text)
            are kept per row in `DataProfile.values`, for label checks.
        dialect: the separator (`csv_delimiter`) and whether spaces at the
            start of cells are dropped.
        columns: the columns profiled (with `keep_columns`; `data_rules.columns_used`), or None for
            all. Every row's field count is checked whatever the columns; `DataProfile.columns` is
            the whole header, its per-column findings cover only the profiled columns.

    Returns:
        The profile: columns, numeric columns, rows, and per-column findings.

    Raises:
        DataProblem: an empty file, a file without data rows, headers that
            differ between files, an unnamed column, rows whose field count is
            not the header's, a header that reads as one column holding another
            separator, or (with `non_finite="error"`) non-finite numbers.
    """
    if sum(os.path.getsize(path) for path in files) >= FAST_MIN_BYTES:
        profile = _fast_profile_or_none(files, na_values, non_finite, keep_columns, dialect, columns)
        if profile is not None:
            return profile
    missing_marks = frozenset(na_values)
    header: list[str] | None = None
    profiled: list[str] = []  # the columns read (`columns` and `keep_columns`, in the header's order)
    indices: list[int] = []
    tallies: dict[str, _ColumnTally] = {}
    kept: dict[str, list] = {}
    rows = 0
    for path in files:
        try:
            with _open_text(path) as handle:
                reader = csv.reader(handle, strict=True, delimiter=dialect.delimiter)
                file_header = _read_header(path, reader, dialect)
                if header is None:
                    header = file_header
                    wanted = None if columns is None else {*columns, *keep_columns}
                    profiled = [c for c in header if wanted is None or c in wanted]
                    indices = [header.index(c) for c in profiled]
                    tallies = {column: _ColumnTally() for column in profiled}
                    kept = {column: [] for column in keep_columns if column in tallies}
                elif file_header != header:
                    raise DataProblem(
                        f"{path}: header differs from {files[0]}'s. Expected: {header}. Received: {file_header}."
                    )
                bad_rows = []
                file_rows = 0
                for row in reader:
                    if not row:
                        continue
                    row = dialect.cells(row)
                    file_rows += 1
                    if len(row) != len(header):
                        bad_rows.append((reader.line_num, len(row)))
                        continue
                    for column, index in zip(profiled, indices):
                        value = row[index]
                        tally = tallies[column]
                        number = None
                        if value in missing_marks:
                            tally.add_missing(path, reader.line_num)
                        else:
                            number = parse_number(value)
                            if number is None:
                                if tally.text_at is None:
                                    tally.text_at = (path, reader.line_num, value)
                            elif not math.isfinite(number):
                                tally.non_finite.append((path, reader.line_num, value))
                                tally.add_missing(path, reader.line_num)
                                number = None
                                value = None
                            if value is not None:
                                tally.filled = True
                                if number is not None and number < tally.minimum:
                                    tally.minimum = number
                                if len(tally.distinct) < 2:
                                    tally.distinct.add(value if number is None else number)
                        if column in kept:
                            kept[column].append(number)
                if bad_rows:
                    shown = ", ".join(f"line {line} has {count}" for line, count in bad_rows[:_MAX_REPORTED_ROWS])
                    more = (
                        f" (and {len(bad_rows) - _MAX_REPORTED_ROWS} more)"
                        if len(bad_rows) > _MAX_REPORTED_ROWS
                        else ""
                    )
                    raise DataProblem(
                        f"{path}: {len(bad_rows)} malformed row(s): expected {len(header)} fields like the header; "
                        f"{shown}{more}. Fix or remove those rows."
                    )
                if file_rows == 0:
                    raise DataProblem(f"{path} has a header but no data rows. Add rows or remove the file.")
                rows += file_rows
        except UnicodeDecodeError as err:
            raise DataProblem(f"{path} is not UTF-8 text ({err.reason}). Save it as UTF-8 CSV.") from None
        except csv.Error as err:
            raise DataProblem(f"{path}: CSV error ({err}). Fix the quoting in the file.") from None
    assert header is not None
    numeric = frozenset(c for c in profiled if tallies[c].text_at is None)
    if non_finite == "error":
        for column in profiled:
            if column in numeric and tallies[column].non_finite:
                raise DataProblem(_non_finite_problem(column, tallies[column].non_finite))
    return DataProfile(
        tuple(files),
        "csv",
        tuple(header),
        numeric,
        rows,
        frozenset(c for c in profiled if not tallies[c].filled),
        missing=frozenset(c for c in profiled if tallies[c].missing),
        constant=frozenset(c for c in profiled if len(tallies[c].distinct) == 1),
        first_text={c: tallies[c].text_at for c in profiled if tallies[c].text_at is not None},
        minimum={c: tallies[c].minimum for c in profiled if tallies[c].minimum < math.inf},
        missing_cells={
            c: (tallies[c].missing_count, *tallies[c].first_missing)
            for c in profiled
            if tallies[c].first_missing is not None
        },
        values={c: tuple(v) for c, v in kept.items()},
        dialect=dialect,
    )


def profile_tfrecord(files: list[str], max_records: int = 200) -> DataProfile:
    """Reads the first records of TFRecord files of tf.Example (imports TensorFlow).

    Raises:
        DataProblem: a file is empty or does not hold tf.Example records.
    """
    import tensorflow as tf

    columns: dict[str, None] = {}
    text_columns: set[str] = set()
    rows = 0
    for path in files:
        compression = "GZIP" if path.endswith(".gz") else ""
        count = 0
        try:
            for record in tf.data.TFRecordDataset(path, compression_type=compression).take(max_records):
                example = tf.train.Example.FromString(record.numpy())
                for name, feature in example.features.feature.items():
                    columns.setdefault(name, None)
                    if feature.WhichOneof("kind") == "bytes_list":
                        text_columns.add(name)
                count += 1
        except Exception as err:  # noqa: BLE001 - any read failure is a data problem
            raise DataProblem(f"{path} is not a TFRecord file of tf.Example ({type(err).__name__}).") from None
        if count == 0:
            raise DataProblem(f"{path} is empty. Expected TFRecord files of tf.Example.")
        rows += count
    return DataProfile(tuple(files), "tfrecord", tuple(columns), frozenset(set(columns) - text_columns), rows)
