"""A columnar copy of ExampleGen's output, so StatisticsGen and Transform need not decode the examples again.

TFX's StatisticsGen reads each split's gzipped TFRecords back and decodes every
tf.Example into Arrow record batches before TFDV sees them: decoding and
reading the TFRecords take about half its time, Beam's handling of 1,000-row
batches most of the rest, TFDV's own work little. ExampleGen's fast path
(`components/example_gen/fast_csv.py`) holds those record batches already,
just before it encodes them, so it also writes them here, in the form tfx_bsl's
decoder would give them back (`as_decoded`), and StatisticsGen
(`components/statistics_gen/executor.py`) and Transform
(`components/transform/columnar_tfxio.py`) read them when they are complete:
both are several times faster reading the copy.

Layout, inside the Examples artifact beside its `Split-<name>` folders (which
readers glob as `Split-<name>/*`, so this folder is never read as examples):

    .columnar/manifest.json                          {"format": 1, "rows": {"train": 1000, ...}}
    .columnar/Split-<name>/<batch>.arrow             Arrow IPC file, zstd, one record batch

Each `.arrow` file holds the rows of the TFRecord file of the same batch name
in the same order. The manifest is written last, by ExampleGen, once every
batch is written: a copy without it (a crashed run) is never read.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator

import pyarrow as pa

__all__ = [
    "FOLDER",
    "as_decoded",
    "split_folder",
    "write_batch",
    "write_manifest",
    "remove",
    "split_files",
    "read_schema",
    "read_batches",
    "slices",
]

FOLDER = ".columnar"
_MANIFEST = "manifest.json"
_FORMAT = 1
_WRITE_OPTIONS = pa.ipc.IpcWriteOptions(compression="zstd")  # taxi: half the size of the gzipped TFRecords


def as_decoded(batch: pa.RecordBatch) -> pa.RecordBatch:
    """`batch` (one list column per feature, as encoded into tf.Examples) as tfx_bsl's decoder returns it.

    `ExamplesToRecordBatchDecoder` (no schema) gives columns sorted by name,
    `large_list` of int64/float32/`large_binary`, and a null column for a
    feature whose examples carry no value list.
    """
    names = sorted(batch.schema.names)
    arrays = []
    for name in names:
        column = batch.column(batch.schema.get_field_index(name))
        if column.null_count == len(column) and len(column):
            arrays.append(pa.nulls(len(column)))
            continue
        value_type = column.type.value_type
        if pa.types.is_binary(value_type) or pa.types.is_string(value_type):
            value_type = pa.large_binary()
        arrays.append(column.cast(pa.large_list(value_type)))
    return pa.RecordBatch.from_arrays(arrays, names=names)


def split_folder(examples_split_folder: str) -> str:
    """Where the copy of the split whose examples are in `examples_split_folder` (`<uri>/Split-<name>`) goes."""
    uri, split = os.path.split(os.path.normpath(examples_split_folder))
    return os.path.join(uri, FOLDER, split)


def write_batch(examples_split_folder: str, name: str, batch: pa.RecordBatch) -> None:
    """Writes `batch` (already `as_decoded`) as `<name>.arrow`, visible only when complete."""
    folder = split_folder(examples_split_folder)
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"{name}.arrow")
    with pa.OSFile(f"{path}.tmp", "wb") as sink, pa.ipc.new_file(sink, batch.schema, options=_WRITE_OPTIONS) as out:
        out.write_batch(batch)
    os.replace(f"{path}.tmp", path)


def write_manifest(uri: str, rows: dict[str, int]) -> None:
    """Marks the copy in the Examples artifact at `uri` complete: `rows` per split name."""
    path = os.path.join(uri, FOLDER, _MANIFEST)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(f"{path}.tmp", "w", encoding="utf-8") as handle:
        json.dump({"format": _FORMAT, "rows": rows}, handle)
    os.replace(f"{path}.tmp", path)


def remove(uri: str) -> None:
    """Deletes the copy in the Examples artifact at `uri`, if any (before it is written anew)."""
    shutil.rmtree(os.path.join(uri, FOLDER), ignore_errors=True)


def split_files(uri: str, split: str) -> list[str] | None:
    """The copy's files of `split` in the Examples artifact at `uri`, or None when there is no complete copy of it."""
    try:
        with open(os.path.join(uri, FOLDER, _MANIFEST), encoding="utf-8") as handle:
            manifest = json.load(handle)
    except (OSError, ValueError):
        return None
    if not isinstance(manifest, dict) or manifest.get("format") != _FORMAT:
        return None
    if split not in (manifest.get("rows") or {}):
        return None
    folder = split_folder(os.path.join(uri, f"Split-{split}"))
    if not os.path.isdir(folder):
        return [] if manifest["rows"][split] == 0 else None
    return sorted(os.path.join(folder, n) for n in os.listdir(folder) if n.endswith(".arrow"))


def read_schema(path: str) -> pa.Schema:
    """The Arrow schema of one `.arrow` file of the copy (its footer only)."""
    with pa.OSFile(path, "rb") as source:
        return pa.ipc.open_file(source).schema


def read_batches(path: str) -> list[pa.RecordBatch]:
    """The record batches of one `.arrow` file of the copy."""
    with pa.OSFile(path, "rb") as source:  # read into memory: a memory map would vanish under the batches
        reader = pa.ipc.open_file(source)
        batches = [reader.get_batch(index) for index in range(reader.num_record_batches)]
    return batches


def slices(batch: pa.RecordBatch, rows: int | None) -> Iterator[pa.RecordBatch]:
    """`batch` in zero-copy slices of at most `rows` rows (None: `batch` whole)."""
    if not rows or batch.num_rows <= rows:
        yield batch
        return
    for offset in range(0, batch.num_rows, rows):
        yield batch.slice(offset, rows)
