"""The scored rows as a CSV or Parquet file, written batch by batch and renamed into place when complete.

The format follows the output's ending (`.parquet`/`.pq`: Parquet, else
CSV). Rows go to `<output>.tmp-<pid>` beside it through pyarrow's streaming
writers; only a finished file is renamed to the output's name, so a reader
never sees half a file and a failed run leaves the previous output as it was.
Columns keep their types (in CSV a number is unquoted, text quoted); a decimal
column, which pyarrow's CSV writer cannot write, is written to CSV as its exact
text.
"""

from __future__ import annotations

import os
from types import TracebackType

import pyarrow as pa

__all__ = ["ScoredFile", "output_format"]


def output_format(path: str) -> str:
    """`parquet` for a `.parquet`/`.pq` file, else `csv`."""
    return "parquet" if path.lower().endswith((".parquet", ".pq")) else "csv"


class ScoredFile:
    """A context manager that writes record batches to `path` atomically.

    Example:
        >>> with ScoredFile("scores.parquet") as out:
        ...     out.write(batch)
    """

    def __init__(self, path: str):
        self.path = os.path.abspath(path)
        self.format = output_format(path)
        self.rows = 0
        self._tmp = f"{self.path}.tmp-{os.getpid()}"
        self._writer = None

    def __enter__(self) -> ScoredFile:
        folder = os.path.dirname(self.path)
        if not os.path.isdir(folder):
            raise FileNotFoundError(
                f"--output {self.path}: the folder {folder} does not exist. Expected an existing folder. "
                "Create it first, or write elsewhere."
            )
        return self

    def write(self, batch: pa.RecordBatch) -> None:
        """Appends `batch` (every batch must have the first one's schema)."""
        if self.format == "csv":
            batch = _csv_writable(batch)
        if self._writer is None:
            if self.format == "parquet":
                import pyarrow.parquet as pq

                self._writer = pq.ParquetWriter(self._tmp, batch.schema, compression="zstd")
            else:
                import pyarrow.csv as pa_csv

                self._writer = pa_csv.CSVWriter(self._tmp, batch.schema)
        self._writer.write_batch(batch)
        self.rows += batch.num_rows

    def __exit__(self, kind: type | None, error: BaseException | None, trace: TracebackType | None) -> None:
        if self._writer is not None:
            self._writer.close()
        if kind is None and self._writer is not None:
            os.replace(self._tmp, self.path)
        elif os.path.exists(self._tmp):
            os.remove(self._tmp)


def _csv_writable(batch: pa.RecordBatch) -> pa.RecordBatch:
    """`batch` with each decimal column as its exact text (`1.50`): pyarrow's CSV writer refuses decimals."""
    if not any(pa.types.is_decimal(data_type) for data_type in batch.schema.types):
        return batch
    columns = [
        pa.array([None if value is None else str(value) for value in column.to_pylist()], pa.string())
        if pa.types.is_decimal(column.type)
        else column
        for column in batch.columns
    ]
    return pa.RecordBatch.from_arrays(columns, names=batch.schema.names)
