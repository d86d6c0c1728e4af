"""`ColumnarExampleRecord` yields what TFX's `TFExampleRecord` decodes from the examples, with the same schema.

The taxi CSV goes through our ExampleGen fast path (examples and columnar
copy); a schema comes from TFDV's statistics; then both TFXIOs read each file
through a real Beam pipeline and their record batches are compared.
"""

from __future__ import annotations

import glob
import os
import tempfile
import uuid

import apache_beam as beam
import pyarrow as pa
import pytest
import tensorflow_data_validation as tfdv
from taxi_fixtures import TAXI_CSV
from tensorflow_data_validation.statistics import stats_impl
from tensorflow_metadata.proto.v0 import schema_pb2
from tfx_bsl.tfxio import tf_example_record

from components.common import columnar_copy
from components.example_gen import fast_csv
from components.example_gen.csv_executor import read_header
from components.transform import columnar_tfxio


@pytest.fixture(scope="module")
def taxi(tmp_path_factory) -> tuple[str, schema_pb2.Schema]:
    uri = tmp_path_factory.mktemp("examples")
    names = read_header(TAXI_CSV)
    kinds = fast_csv.infer_kinds([TAXI_CSV], names, [""], False)
    folders = (str(uri / "Split-train"), str(uri / "Split-eval"))
    counts = fast_csv.write_examples(
        [TAXI_CSV], names, kinds, [""], False, fast_csv.SplitSpec(("train", "eval"), (2, 3), folders)
    )
    columnar_copy.write_manifest(str(uri), counts)
    (batch,) = columnar_copy.read_batches(columnar_copy.split_files(str(uri), "train")[0])
    schema = tfdv.infer_schema(stats_impl.generate_statistics_in_memory(batch))
    return str(uri), schema


def _write_batch(batch: pa.RecordBatch, folder: str) -> None:
    with pa.OSFile(os.path.join(folder, f"{uuid.uuid4().hex}.arrow"), "wb") as sink:
        with pa.ipc.new_file(sink, batch.schema) as out:
            out.write_batch(batch)


def _read(tfxio, batch_size=None) -> pa.Table:
    """Every record batch of `tfxio`'s Beam source, through a real pipeline (written to files, then read back)."""
    folder = tempfile.mkdtemp()
    with beam.Pipeline() as pipeline:
        _ = pipeline | tfxio.BeamSource(batch_size) | beam.Map(_write_batch, folder)
    batches = [b for name in sorted(os.listdir(folder)) for b in columnar_copy.read_batches(os.path.join(folder, name))]
    return pa.Table.from_batches(batches, schema=tfxio.ArrowSchema())


def _tfx_and_ours(uri: str, schema, split: str = "train"):
    pattern = os.path.join(uri, f"Split-{split}", "*")
    tfx = tf_example_record.TFExampleRecord(file_pattern=pattern, schema=schema)
    ours = columnar_tfxio.from_copy(tfx, pattern)
    assert columnar_tfxio.is_columnar(ours)
    return tfx, ours


def test_record_batches_equal_tfx_decoded_ones(taxi):
    uri, schema = taxi
    for split in ("train", "eval"):
        tfx, ours = _tfx_and_ours(uri, schema, split)
        assert ours.ArrowSchema() == tfx.ArrowSchema()
        theirs = _read(tfx)
        mine = _read(ours, batch_size=500)
        assert mine.num_rows == theirs.num_rows > 0
        assert mine.schema == theirs.schema
        # TFX reads the files in its own order: compare the rows in one order.
        assert sorted(mine.to_pylist(), key=repr) == sorted(theirs.to_pylist(), key=repr)


def test_projection_keeps_reading_the_copy(taxi):
    uri, schema = taxi
    tfx, ours = _tfx_and_ours(uri, schema)
    projected = ours.Project(["fare", "company"])
    assert columnar_tfxio.is_columnar(projected.projected)  # tfx_bsl wraps the projection
    assert projected.ArrowSchema() == tfx.Project(["fare", "company"]).ArrowSchema()
    assert _read(projected).column_names == ["company", "fare"]


def test_a_schema_type_the_copy_does_not_have_reads_the_examples(taxi):
    uri, schema = taxi
    changed = schema_pb2.Schema()
    changed.CopyFrom(schema)
    next(f for f in changed.feature if f.name == "fare").type = schema_pb2.INT  # the data holds floats
    pattern = os.path.join(uri, "Split-train", "*")
    assert columnar_tfxio.from_copy(tf_example_record.TFExampleRecord(pattern, schema=changed), pattern) is None


def test_no_copy_or_raw_records_read_the_examples(taxi, tmp_path):
    uri, schema = taxi
    pattern = os.path.join(uri, "Split-train", "*")
    raw = tf_example_record.TFExampleRecord(pattern, schema=schema, raw_record_column_name="raw")
    assert columnar_tfxio.from_copy(raw, pattern) is None
    elsewhere = os.path.join(str(tmp_path), "Split-train", "*")
    assert columnar_tfxio.from_copy(tf_example_record.TFExampleRecord(elsewhere, schema=schema), elsewhere) is None
    assert glob.glob(os.path.join(uri, columnar_copy.FOLDER, "Split-train", "*.arrow"))
