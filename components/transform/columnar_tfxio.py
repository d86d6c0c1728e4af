"""tf.Transform's reader on ExampleGen's columnar copy: TFX's `TFExampleRecord`, without decoding the examples.

TFX's Transform executor reads each split through a `TFExampleRecord` TFXIO
(tfx_bsl), which decodes every tf.Example into Arrow with the schema. When the
Examples artifact carries a complete columnar copy
(`components/common/columnar_copy.py`), `from_copy` gives a `TFExampleRecord` with the same
record batches from the copy: each schema feature's column cast to the type
the schema's decoder gives (`ArrowSchema()`), a feature the data lacks as
nulls, as the decoder gives an example without it. Everything else (tensor
representations, projection, the TF dataset path) is `TFExampleRecord`'s; the
subclass that swaps the source lives in `compat.tfx_bsl` (it needs tfx_bsl's
private `_ProjectImpl` and `_schema`).
"""

from __future__ import annotations

import os
from collections.abc import Callable

import apache_beam as beam
import pyarrow as pa
from absl import logging
from tfx_bsl.tfxio import tf_example_record

from compat import tfx_bsl as compat_tfx_bsl
from components.common import columnar_copy

__all__ = ["columnar_source", "from_copy", "is_columnar"]


def columnar_source(files: list[str], name: str = "") -> Callable[[pa.Schema, int | None], beam.PTransform]:
    """The Beam source of the columnar copy's `files`: record batches as the decoder with the schema gives them.

    Building the source logs `Transform reads <name> from the columnar copy`: Transform builds it only
    for a dataset it reads (not for a span whose analysis its analyzer cache holds).
    """

    def source(schema: pa.Schema, batch_size: int | None) -> beam.PTransform:
        logging.info("Transform reads %s from the columnar copy of the examples.", name or files)

        @beam.typehints.with_output_types(pa.RecordBatch)
        def read(pipeline):
            return (
                pipeline
                | "ListColumnarFiles" >> beam.Create(list(files))
                | "ReadColumnarFiles" >> beam.FlatMap(_read_conformed, schema, batch_size)
            )

        return beam.ptransform_fn(read)()

    return source


def is_columnar(tfxio) -> bool:
    """Whether `tfxio` reads a columnar copy (made by `from_copy`, or projected from one)."""
    return compat_tfx_bsl.is_sourced_record(tfxio)


def _read_conformed(path: str, schema: pa.Schema, batch_size: int | None):
    for batch in columnar_copy.read_batches(path):
        yield from columnar_copy.slices(conform(batch, schema), batch_size)


def conform(batch: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
    """`batch` of the copy (decoded without a schema) as the decoder with the schema gives it: `schema`'s columns."""
    arrays = []
    for field in schema:
        index = batch.schema.get_field_index(field.name)
        column = batch.column(index) if index >= 0 else None
        if column is None or pa.types.is_null(column.type):
            arrays.append(pa.nulls(batch.num_rows, field.type))
        else:
            arrays.append(column if column.type == field.type else column.cast(field.type))
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def compatible(copy_schema: pa.Schema, schema: pa.Schema) -> bool:
    """Whether each of `schema`'s columns is in `copy_schema` with its type (or as nulls, or absent)."""
    for field in schema:
        index = copy_schema.get_field_index(field.name)
        if index < 0:
            continue
        found = copy_schema.field(index).type
        if not (pa.types.is_null(found) or found == field.type):
            return False
    return True


def from_copy(tfxio, file_pattern: str):
    """A `TFExampleRecord` reading the columnar copy, standing in for `tfxio` (of `<uri>/Split-<name>/*`), or None.

    None when `tfxio` is not a plain `TFExampleRecord` (raw records attached, another format),
    when the artifact has no complete copy of the split, when a column's type differs from
    the schema's (the decoder would then fail, and so should the run, in TFX's words), or when
    tfx_bsl's internals differ from what `compat.tfx_bsl` expects (TFX's own reader then).
    """
    if type(tfxio) is not tf_example_record.TFExampleRecord or tfxio.raw_record_column_name is not None:
        return None
    split_folder = os.path.dirname(file_pattern)
    name = os.path.basename(split_folder)
    if not name.startswith("Split-"):
        return None
    files = columnar_copy.split_files(os.path.dirname(split_folder), name[len("Split-") :])
    if not files:
        return None
    if not compatible(columnar_copy.read_schema(files[0]), tfxio.ArrowSchema()):
        return None
    schema = compat_tfx_bsl.example_record_schema(tfxio)
    if schema is None:
        return None
    return compat_tfx_bsl.example_record_with_source(
        file_pattern, schema, tfxio.telemetry_descriptors, columnar_source(files, file_pattern)
    )
