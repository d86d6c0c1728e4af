"""tf.Transform's reader on ExampleGen's columnar copy: TFX's `TFExampleRecord`, without decoding the examples.

TFX's Transform executor reads each split through a `TFExampleRecord` TFXIO
(tfx_bsl), which decodes every tf.Example into Arrow with the schema. When the
Examples artifact carries a complete columnar copy
(`components/common/columnar_copy.py`), `ColumnarExampleRecord` gives the same
record batches from the copy: each schema feature's column cast to the type
the schema's decoder gives (`ArrowSchema()`), a feature the data lacks as
nulls, as the decoder gives an example without it. Everything else (tensor
representations, projection, the TF dataset path) is `TFExampleRecord`'s.
"""

from __future__ import annotations

import os

import apache_beam as beam
import pyarrow as pa
from tfx_bsl.tfxio import tensor_representation_util, tf_example_record

from components.common import columnar_copy

__all__ = ["ColumnarExampleRecord", "from_copy"]


class ColumnarExampleRecord(tf_example_record.TFExampleRecord):
    """A `TFExampleRecord` whose Beam source reads the columnar copy's `files` (record batches as decoded)."""

    def __init__(self, file_pattern, files: list[str], schema, telemetry_descriptors=None):
        super().__init__(file_pattern=file_pattern, schema=schema, telemetry_descriptors=telemetry_descriptors)
        self._files = list(files)

    def BeamSource(self, batch_size: int | None = None) -> beam.PTransform:  # noqa: N802 - TFXIO's name
        schema = self.ArrowSchema()

        @beam.typehints.with_output_types(pa.RecordBatch)
        def read(pipeline):
            return (
                pipeline
                | "ListColumnarFiles" >> beam.Create(self._files)
                | "ReadColumnarFiles" >> beam.FlatMap(_read_conformed, schema, batch_size)
            )

        return beam.ptransform_fn(read)()

    def _ProjectImpl(self, tensor_names):  # noqa: N802 - TFXIO's name
        projected = tensor_representation_util.ProjectTensorRepresentationsInSchema(self._schema, tensor_names)
        return ColumnarExampleRecord(self._file_pattern, self._files, projected, self.telemetry_descriptors)


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


def from_copy(tfxio, file_pattern: str) -> ColumnarExampleRecord | None:
    """A `ColumnarExampleRecord` standing in for `tfxio` (a `TFExampleRecord` of `<uri>/Split-<name>/*`), or None.

    None when `tfxio` is not a plain `TFExampleRecord` (raw records attached, another format),
    when the artifact has no complete copy of the split, or when a column's type differs from
    the schema's (the decoder would then fail, and so should the run, in TFX's words).
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
    return ColumnarExampleRecord(file_pattern, files, tfxio._schema, tfxio.telemetry_descriptors)  # noqa: SLF001
