"""CSV -> gzipped TFRecords of tf.Examples in Arrow batches, on every core: ExampleGen's fast path.

TFX's CSV path decodes, infers and converts every line in Python inside Beam,
then reshuffles each split through a group-by: about 200 us a row (301 s for
1.5M taxi rows here). This module does the same job column by column on Arrow
record batches: pyarrow's CSV reader (C++), vectorized type inference,
tfx_bsl's `RecordBatchToExamplesEncoder` (C++) and zlib. Batches of 16 MB of
CSV go to one worker process per core (`fast_csv_worker`: they import no
TensorFlow), each batch becoming one file per split; one batch of data stays in
this process.
Memory stays at a few batches whatever the file size. Each batch's rows also
go, as Arrow, to the artifact's columnar copy (`components/common/columnar_copy`),
which StatisticsGen and Transform read instead of decoding the examples again.

Only the `columns` asked for (those the spec uses) are typed and written: the
others are read as text only for the hash that picks each row's split (over
all its cells, so the splits do not depend on which columns the spec uses).

It writes what TFX's CsvExampleGen writes, value for value:
- Column types follow tfx_bsl's `ColumnTypeInferrer` over the whole input: INT
  when every present cell is an integer in int64 range, else FLOAT when every
  one is a number, else STRING (an integer beyond int64 makes STRING); a
  column with no present cell gets features with no value list.
- A missing cell (empty, in `na_values`, or non-finite with
  `impute_non_finite`) is an empty value list of the column's type.
- Splits are hash buckets of the row's content (so duplicate rows share a
  split), not of TFX's serialized example: the same rows land in the same
  splits on every run, though not in the same splits as TFX's path.
- Rows are shuffled within each batch, and each batch is a file of each split
  (TFX reshuffles a whole split through a group-by).

Python's `int()`/`float()`, which TFX's inference calls, also accept digits
with underscores (`1_000`) and non-ASCII digits; here such cells make a column
STRING. `validate` reports a numeric column holding text either way.
"""

from __future__ import annotations

import dataclasses
import json
import os
import struct
import zlib
from collections.abc import Iterator, Sequence

import google_crc32c
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from tfx_bsl.coders import example_coder

from components.common import columnar_copy
from components.common.csv_dialect import CsvDialect
from components.example_gen.fast_csv_pool import WorkerPool

__all__ = [
    "ColumnKind",
    "SplitSpec",
    "infer_kinds",
    "write_examples",
    "encode_batches",
    "prepared",
    "feature_lists",
    "write_tfrecord_gzip",
    "worker_count",
    "write_batch",
    "BatchJob",
    "BATCH_BYTES",
]

BATCH_BYTES = 16 << 20  # CSV bytes per record batch
_INT = r"^[+-]?[0-9]+$"
_FLOAT = r"^[+-]?(([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?|[iI][nN][fF]([iI][nN][iI][tT][yY])?|[nN][aA][nN])$"
_NON_FINITE = r"^[+-]?([iI][nN][fF]([iI][nN][iI][tT][yY])?|[nN][aA][nN])$"
_GZIP_LEVEL = 1  # zlib level 1: a third of the default level's time, files about 15% larger; plain GZIP to readers


class ColumnKind:
    """tfx_bsl's column type hierarchy: UNKNOWN < INT < FLOAT < STRING."""

    UNKNOWN, INT, FLOAT, STRING = 0, 1, 2, 3
    NAMES = ("UNKNOWN", "INT", "FLOAT", "STRING")


@dataclasses.dataclass(frozen=True)
class SplitSpec:
    """The output splits: names, their hash buckets (`[]`: every row goes to `names[0]`) and folders."""

    names: tuple[str, ...]
    buckets: tuple[int, ...]
    folders: tuple[str, ...]


def _read_batches(
    path: str,
    column_names: Sequence[str],
    na_values: Sequence[str],
    dialect: CsvDialect = CsvDialect(),
    columns: Sequence[str] | None = None,
) -> Iterator[pa.RecordBatch]:
    """The file's rows as record batches of strings (missing-value markers and empty cells as nulls), header
    skipped; only `columns` (default: all), in that order."""
    return dialect.arrow_batches(path, column_names, sorted(set(na_values) | {""}), BATCH_BYTES, columns)


def _blank_non_finite(column: pa.Array) -> pa.Array:
    """Nulls where the cell is inf/nan (any case, optional sign)."""
    hits = pc.match_substring_regex(pc.utf8_trim_whitespace(column), _NON_FINITE)
    return pc.if_else(pc.fill_null(hits, False), pa.scalar(None, pa.string()), column)


def _number_text(column: pa.Array) -> pa.Array:
    """Cells as Arrow's number parser takes them: surrounding whitespace and a leading `+` dropped."""
    return pc.replace_substring_regex(pc.utf8_trim_whitespace(column), r"^\+", "")


def _kind_of(column: pa.Array) -> int:
    """The narrowest kind that holds every present cell of `column` (strings)."""
    present = column.drop_null()
    if len(present) == 0:
        return ColumnKind.UNKNOWN
    trimmed = _number_text(present)
    if pc.all(pc.match_substring_regex(trimmed, _INT)).as_py():
        try:
            pc.cast(trimmed, pa.int64())
            return ColumnKind.INT
        except (pa.ArrowInvalid, OverflowError):
            return ColumnKind.STRING  # beyond int64: tfx_bsl infers STRING
    if pc.all(pc.match_substring_regex(trimmed, _FLOAT)).as_py():
        return ColumnKind.FLOAT
    return ColumnKind.STRING


def _prepared(batch: pa.RecordBatch, impute_non_finite: bool) -> pa.RecordBatch:
    if not impute_non_finite:
        return batch
    return pa.RecordBatch.from_arrays([_blank_non_finite(c) for c in batch.columns], names=batch.schema.names)


def infer_kinds(
    files: Sequence[str],
    column_names: Sequence[str],
    na_values: Sequence[str],
    impute_non_finite: bool,
    dialect: CsvDialect = CsvDialect(),
    columns: Sequence[str] | None = None,
) -> list[int]:
    """Each column's kind over every row of `files` (a first pass over the data, cells read as `dialect` says).

    Args:
        columns: the columns to infer, in the order of the kinds returned (default: all of `column_names`).
    """
    kinds = [ColumnKind.UNKNOWN] * len(column_names if columns is None else columns)
    for path in files:
        for batch in _read_batches(path, column_names, na_values, dialect, columns):
            batch = _prepared(batch, impute_non_finite)
            for index, column in enumerate(batch.columns):
                if kinds[index] != ColumnKind.STRING:
                    kinds[index] = max(kinds[index], _kind_of(column))
    return kinds


def _values(column: pa.Array, kind: int) -> pa.Array:
    """The present cells of `column` converted as TFX's handlers do (int64, float via float64, bytes)."""
    present = column.drop_null()
    if kind == ColumnKind.INT:
        return pc.cast(_number_text(present), pa.int64())
    if kind == ColumnKind.FLOAT:
        return pc.cast(pc.cast(_number_text(present), pa.float64()), pa.float32())
    return pc.cast(present, pa.binary())


def _feature_lists(batch: pa.RecordBatch, kinds: Sequence[int]) -> pa.RecordBatch:
    """One list column per CSV column: a present cell -> [value], a missing one -> [] (no list: UNKNOWN)."""
    arrays = []
    for column, kind in zip(batch.columns, kinds):
        if kind == ColumnKind.UNKNOWN:
            offsets = pa.array(np.zeros(len(column) + 1, np.int32))
            mask = pa.array(np.ones(len(column), bool))
            arrays.append(pa.ListArray.from_arrays(offsets, pa.array([], pa.int64()), mask=mask))
            continue
        valid = np.asarray(column.is_valid(), dtype=np.int32)
        offsets = np.concatenate([[0], np.cumsum(valid, dtype=np.int32)]).astype(np.int32)
        arrays.append(pa.ListArray.from_arrays(pa.array(offsets), _values(column, kind)))
    return pa.RecordBatch.from_arrays(arrays, names=batch.schema.names)


def _row_hashes(batch: pa.RecordBatch) -> np.ndarray:
    """A 64-bit hash of each row's cells (pandas' fixed-key SipHash: the same on every run and machine).

    The value of `pd.util.hash_pandas_object(batch.to_pandas(), index=False)`, computed as pandas does
    (each column's `hash_array`, combined with `combine_hash_arrays`' tuple-hash formula) but with every
    cell hashed in one call: a 5,000-column batch costs a third of pandas' column-by-column loop.
    """
    rows, count = batch.num_rows, batch.num_columns
    if count == 0:
        return np.zeros(rows, dtype=np.uint64)
    cells = batch.to_pandas().to_numpy(dtype=object).T.reshape(-1)  # column after column
    hashed = pd.util.hash_array(cells).reshape(count, rows)
    multiplier = np.uint64(1000003)
    out = np.full(rows, 0x345678, dtype=np.uint64)
    for index in range(count):
        remaining = count - index
        out ^= hashed[index]
        out *= multiplier
        multiplier += np.uint64(82520 + remaining + remaining)
    return out + np.uint64(97531)


def _masked_crc(data: bytes) -> bytes:
    crc = google_crc32c.value(data)
    return struct.pack("<I", (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF)


def write_tfrecord_gzip(path: str, records: Sequence[bytes]) -> None:
    """Writes `records` as one gzipped TFRecord file (TFRecord framing: length, CRC32C of it, data, CRC32C of it).

    The file appears under its name only when complete (written to `<path>.tmp` first).
    """
    parts = []
    for record in records:
        length = struct.pack("<Q", len(record))
        parts += (length, _masked_crc(length), record, _masked_crc(record))
    compressor = zlib.compressobj(_GZIP_LEVEL, zlib.DEFLATED, 31)  # wbits 31: a gzip container
    with open(f"{path}.tmp", "wb") as handle:
        handle.write(compressor.compress(b"".join(parts)))
        handle.write(compressor.flush())
    os.replace(f"{path}.tmp", path)


@dataclasses.dataclass(frozen=True)
class BatchJob:
    """What turns a batch of string cells into split files: column kinds, imputation, splits, seed, and the
    batch's columns written (their indices, one per kind; None: every column)."""

    kinds: tuple[int, ...]
    impute_non_finite: bool
    splits: SplitSpec
    seed: int = 0
    written: tuple[int, ...] | None = None

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self))

    @classmethod
    def from_json(cls, text: str) -> BatchJob:
        data = json.loads(text)
        splits = SplitSpec(*(tuple(data["splits"][k]) for k in ("names", "buckets", "folders")))
        written = None if data.get("written") is None else tuple(data["written"])
        return cls(tuple(data["kinds"]), bool(data["impute_non_finite"]), splits, int(data["seed"]), written)


def write_batch(job: BatchJob, batch: pa.RecordBatch, name: str) -> dict[str, int]:
    """Shuffles, splits, encodes and writes one batch as `data_tfrecord-<name>.gz` in each split folder.

    Each split's rows also go to the artifact's columnar copy (`components/common/columnar_copy.py`).
    A row's split follows the hash of all its cells, the columns not written too, so the splits stay the
    same whichever columns the spec uses.
    """
    batch = _prepared(batch, job.impute_non_finite)
    seed = [job.seed, *(int(part) for part in name.split("-"))]
    batch = batch.take(pa.array(np.random.default_rng(seed).permutation(batch.num_rows)))
    hashes = _row_hashes(batch)
    if job.written is not None:
        names = batch.schema.names
        batch = pa.RecordBatch.from_arrays(
            [batch.column(i) for i in job.written], names=[names[i] for i in job.written]
        )
    features = _feature_lists(batch, job.kinds)
    examples = example_coder.RecordBatchToExamplesEncoder().encode(features)
    decoded = columnar_copy.as_decoded(features)
    names, buckets = job.splits.names, job.splits.buckets
    if buckets:
        chosen = np.searchsorted(np.asarray(buckets, np.uint64), hashes % np.uint64(buckets[-1]), side="right")
    else:
        chosen = np.zeros(len(examples), np.int64)
    counts = {}
    for split_index, (split, folder) in enumerate(zip(names, job.splits.folders)):
        rows = np.flatnonzero(chosen == split_index)
        counts[split] = len(rows)
        if len(rows):
            write_tfrecord_gzip(os.path.join(folder, f"data_tfrecord-{name}.gz"), [examples[i] for i in rows])
            columnar_copy.write_batch(folder, f"data_tfrecord-{name}", decoded.take(pa.array(rows)))
    return counts


def _batches_in_files(files: Sequence[str], column_names: Sequence[str], na_values: Sequence[str], dialect: CsvDialect):
    for path in files:
        yield from _read_batches(path, column_names, na_values, dialect)


def worker_count(total_bytes: int, cpus: int | None = None) -> int:
    """Worker processes for `total_bytes` of CSV: 0 (this process) for one batch, else one per batch up to one per core."""
    batches = -(-total_bytes // BATCH_BYTES)
    if batches <= 1:
        return 0
    return max(1, min(cpus or len(os.sched_getaffinity(0)) or 1, batches))  # the cores this process may use


def write_examples(
    files: Sequence[str],
    column_names: Sequence[str],
    kinds: Sequence[int],
    na_values: Sequence[str],
    impute_non_finite: bool,
    splits: SplitSpec,
    seed: int = 0,
    workers: int | None = None,
    dialect: CsvDialect = CsvDialect(),
    columns: Sequence[str] | None = None,
) -> dict[str, int]:
    """Encodes every row of `files` into each split's gzipped TFRecord files; returns rows per split.

    Args:
        kinds: one per column written (`infer_kinds` with the same `columns`).
        dialect: how cells are separated (and spaces before them dropped).
        columns: the columns written into the examples (default: all of `column_names`); the others are
            read for the rows' split hash only (`write_batch`).
        workers: processes encoding batches in parallel (default `worker_count`: none for one
            batch of data, else one per core); each batch becomes one file per split.

    Raises:
        pyarrow.ArrowInvalid: a cell does not convert to its column's kind (the data changed since `infer_kinds`).
        RuntimeError: a worker process failed (its error output is in the message).
    """
    for folder in splits.folders:
        os.makedirs(folder, exist_ok=True)
    written = None if columns is None else tuple(list(column_names).index(name) for name in columns)
    job = BatchJob(tuple(kinds), impute_non_finite, splits, seed, written)
    if workers is None:
        workers = worker_count(sum(os.path.getsize(path) for path in files))
    batches = _batches_in_files(files, column_names, na_values, dialect)  # every column: the split hash reads all
    return encode_batches(batches, job, workers)


def encode_batches(batches: Iterator[pa.RecordBatch], job: BatchJob, workers: int) -> dict[str, int]:
    """Writes each batch of text cells (`write_batch`) here (`workers` 0) or in worker processes; returns rows
    per split. Other formats than CSV (`components/example_gen/formats`) send their batches as text here too."""
    counts = dict.fromkeys(job.splits.names, 0)
    if workers == 0:
        for index, batch in enumerate(batches):
            _add(counts, write_batch(job, batch, f"0-{index:05d}"))
        return counts
    with WorkerPool(job, workers) as pool:
        for batch in batches:
            pool.send(batch)
        for worker_counts in pool.finish():
            _add(counts, worker_counts)
    return counts


def _add(counts: dict[str, int], more: dict[str, int]) -> None:
    for name, count in more.items():
        counts[name] += count


# What `write_batch` does to a batch before the split, for a caller that encodes without splitting (the Beam
# path of components/example_gen/formats).
prepared = _prepared
feature_lists = _feature_lists
