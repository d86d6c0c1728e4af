"""A Parquet copy of BulkInferrer's PredictionLogs: one row per example, one column per output value.

TFX's BulkInferrer writes `prediction_logs-*.gz`, TFRecords of PredictionLog
protos: right for TFX, unreadable for a person or pandas. Each log's Predict
response becomes a row: an output of one value is a column named after it
(`label`, `probability`, `prediction`), the class scores one column per class
(`score_<class>`, named by the `classes` output), any other output of several
values one column per value (`<output>_<i>`); text is decoded as UTF-8: the
columns `python -m pipelines predict` writes. The file is written
batch by batch and renamed into place when complete.
"""

from __future__ import annotations

import glob
import os

import pyarrow as pa
import pyarrow.parquet as pq
import tensorflow as tf
from tensorflow_serving.apis import prediction_log_pb2

__all__ = ["READABLE_FILE", "write_readable_predictions"]

READABLE_FILE = "predictions.parquet"
_ROWS = 4096


def _values(tensor) -> list:
    values = tf.make_ndarray(tensor).reshape(-1)
    if values.dtype == object:
        return [v.decode("utf-8", "replace") for v in values]
    return values.tolist()


def _row(log: prediction_log_pb2.PredictionLog) -> dict:
    outputs = dict(log.predict_log.response.outputs)
    classes = _values(outputs.pop("classes")) if "classes" in outputs else None
    row = {}
    for alias in sorted(outputs):
        values = _values(outputs[alias])
        if len(values) == 1:
            row[alias] = values[0]
        elif alias == "scores" and classes is not None and len(classes) == len(values):
            row.update({f"score_{name}": value for name, value in zip(classes, values)})
        else:
            row.update({f"{alias}_{i}": value for i, value in enumerate(values)})
    return row


def write_readable_predictions(inference_result_uri: str) -> int:
    """Writes `<uri>/predictions.parquet` from the PredictionLogs in `uri`; returns the row count (0: no file)."""
    files = sorted(glob.glob(os.path.join(glob.escape(inference_result_uri), "prediction_logs*")))
    if not files:
        return 0
    path = os.path.join(inference_result_uri, READABLE_FILE)
    tmp = f"{path}.tmp-{os.getpid()}"
    writer, rows, total = None, [], 0
    try:
        for record in tf.data.TFRecordDataset(files, compression_type="GZIP").as_numpy_iterator():
            rows.append(_row(prediction_log_pb2.PredictionLog.FromString(record)))
            if len(rows) == _ROWS:
                writer = _write(writer, tmp, rows)
                total, rows = total + len(rows), []
        if rows:
            writer = _write(writer, tmp, rows)
            total += len(rows)
    finally:
        if writer is not None:
            writer.close()
    if total:
        os.replace(tmp, path)
    return total


def _write(writer, tmp: str, rows: list[dict]):
    batch = pa.RecordBatch.from_pylist(rows)
    if writer is None:
        writer = pq.ParquetWriter(tmp, batch.schema, compression="zstd")
    writer.write_batch(batch.cast(writer.schema) if batch.schema != writer.schema else batch)
    return writer
