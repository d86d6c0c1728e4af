"""TensorFlow Serving warmup files: `<version>/assets.extra/tf_serving_warmup_requests`.

A warmup file is a TFRecord of `PredictionLog` protos. The model server replays
them when it loads the version, before the version is AVAILABLE, so the first
real requests do not pay for lazy initialisation; a record that fails makes
the load fail. Both `tensorflow_model_server` and the embedded server read it: this module
writes and reads the file; `serving.server.inference.warmup_replay` runs its records at load.

Example:
    >>> write_warmup_file("/models/penguins/3", [example.SerializeToString()])
    PosixPath('/models/penguins/3/assets.extra/tf_serving_warmup_requests')
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from pathlib import Path

import tensorflow as tf
from google.protobuf.message import DecodeError
from tensorflow_serving.apis import predict_pb2, prediction_log_pb2

from serving.atomic import atomic_path
from serving.errors import message
from serving.savedmodel import DEFAULT_SIGNATURE, read_signature_defs

__all__ = [
    "DEFAULT_WARMUP_BYTES",
    "MAX_WARMUP_RECORDS",
    "WARMUP_FILE",
    "WarmupFileError",
    "iter_warmup_records",
    "read_warmup_file",
    "warmup_path",
    "write_warmup_file",
]

WARMUP_FILE = Path("assets.extra") / "tf_serving_warmup_requests"
MAX_WARMUP_RECORDS = 1000  # TensorFlow Serving refuses longer warmup files
# The examples' bytes a warmup file holds by default: 4 MiB is 100 table rows many times over, and
# a few photos. The file is read at every load and copied with every version.
DEFAULT_WARMUP_BYTES = 4 * 1024 * 1024


class WarmupFileError(ValueError):
    """A warmup file that cannot be read: not TFRecord, a record that is not a PredictionLog, too many records.

    `code` is the canonical code TensorFlow Serving's `RunSavedModelWarmup`
    (servables/tensorflow/saved_model_warmup_util.cc) fails the load with:
    "DATA_LOSS" for bytes that are not TFRecord, "INVALID_ARGUMENT" otherwise.
    """

    def __init__(self, text: str, code: str = "INVALID_ARGUMENT") -> None:
        super().__init__(text)
        self.code = code


def warmup_path(version_dir: str | os.PathLike) -> Path:
    """Where TensorFlow Serving looks for the warmup file of a version."""
    return Path(version_dir) / WARMUP_FILE


def _examples_input(version_dir: Path, signature_name: str) -> str:
    signatures = read_signature_defs(version_dir)
    if signature_name not in signatures:
        raise KeyError(
            message(
                f"Signature {signature_name!r} is not in {version_dir}",
                expected=f"one of {sorted(signatures)}",
                received=repr(signature_name),
                fix="Pass the name of the signature that takes serialized tf.Examples.",
            )
        )
    strings = [
        alias for alias, info in signatures[signature_name].inputs.items() if info.dtype == tf.string.as_datatype_enum
    ]
    if len(signatures[signature_name].inputs) != 1 or len(strings) != 1:
        raise ValueError(
            message(
                f"Cannot tell which input of signature {signature_name!r} takes the examples",
                expected="a signature with exactly one string input",
                received=f"inputs {sorted(signatures[signature_name].inputs)}",
                fix="Pass input_name explicitly.",
            )
        )
    return strings[0]


def write_warmup_file(
    version_dir: str | os.PathLike,
    examples: Sequence[bytes],
    *,
    model_name: str = "",
    signature_name: str = DEFAULT_SIGNATURE,
    input_name: str | None = None,
    max_records: int = 100,
    max_bytes: int = DEFAULT_WARMUP_BYTES,
) -> Path:
    """Writes a warmup file of PredictRequests, one per serialized tf.Example.

    Rows are taken in order while their bytes fit `max_bytes`; a row that
    would not fit is skipped (image rows vary in size). The smallest row is
    written when none fits, so the file always warms the model up.

    Args:
        version_dir: The SavedModel version directory, e.g. `<base>/<name>/3`.
        examples: Serialized tf.Example rows (e.g. from the eval split).
        model_name: Recorded in each request's model_spec (the server ignores it).
        signature_name: The signature the requests call.
        input_name: The signature input taking the examples; found from the
            SignatureDef (its single string input) when None.
        max_records: At most this many requests are written (<= 1000).
        max_bytes: At most this many bytes of examples are written (but
            always one row).

    Returns:
        The path of the written file. It is written atomically.

    Raises:
        ValueError: No examples, or `max_records`/`max_bytes` out of range.
        KeyError: The signature is not in the SavedModel.
    """
    version_dir = Path(version_dir)
    if not examples:
        raise ValueError(
            message(
                "No examples to write to the warmup file",
                expected="at least one serialized tf.Example",
                received="an empty list",
                fix="Pass a few rows of the evaluation data.",
            )
        )
    if not 1 <= max_records <= MAX_WARMUP_RECORDS:
        raise ValueError(
            message(
                "Invalid value received for argument `max_records`",
                expected=f"1 <= max_records <= {MAX_WARMUP_RECORDS}",
                received=f"max_records={max_records}",
                fix=f"TensorFlow Serving reads at most {MAX_WARMUP_RECORDS} warmup records.",
            )
        )
    if max_bytes < 1:
        raise ValueError(
            message(
                "Invalid value received for argument `max_bytes`",
                expected="max_bytes >= 1",
                received=f"max_bytes={max_bytes}",
                fix="Pass the most bytes of examples the warmup file may hold.",
            )
        )
    alias = input_name or _examples_input(version_dir, signature_name)
    target = warmup_path(version_dir)
    with atomic_path(target) as tmp, tf.io.TFRecordWriter(str(tmp)) as writer:
        for example in _warmup_rows(examples, max_records, max_bytes):
            request = predict_pb2.PredictRequest()
            request.model_spec.name = model_name
            request.model_spec.signature_name = signature_name
            request.inputs[alias].CopyFrom(tf.make_tensor_proto([example], dtype=tf.string))
            log = prediction_log_pb2.PredictionLog()
            log.predict_log.request.CopyFrom(request)
            writer.write(log.SerializeToString())
    return target


def _warmup_rows(examples: Sequence[bytes], max_records: int, max_bytes: int) -> list[bytes]:
    """The rows, in order, that fit `max_records` and `max_bytes`; the smallest row when none fits."""
    rows, size = [], 0
    for example in examples:
        if len(rows) == max_records:
            break
        if size + len(example) <= max_bytes:
            rows.append(example)
            size += len(example)
    return rows or [min(examples, key=len)]


def _op_message(err: tf.errors.OpError) -> str:
    """TensorFlow's message without the function-node prefix and op suffix eager mode adds."""
    text = re.sub(r"^\{\{[^}]*\}\}\s*", "", err.message.splitlines()[0] if err.message else "")
    return re.sub(r"\s*\[Op:[^\]]*\].*$", "", text) or type(err).__name__


def iter_warmup_records(path: str | os.PathLike) -> Iterator[prediction_log_pb2.PredictionLog]:
    """Yields a warmup file's PredictionLog records one at a time, as TensorFlow Serving reads them.

    Raises (when the bad record is reached, after the good ones before it):
        WarmupFileError: The file is not a TFRecord file (TensorFlow Serving's
            DATA_LOSS "... Please verify your warmup data is in TFRecord
            format"), a record is not a PredictionLog ("Failed to parse warmup
            record"), or there are more than MAX_WARMUP_RECORDS records
            ("Number of warmup records exceeds the maximum").
    """
    records = iter(tf.data.TFRecordDataset(str(path)))
    count = 0
    while True:
        try:
            record = next(records).numpy()
        except StopIteration:
            return
        except tf.errors.DataLossError as err:
            raise WarmupFileError(
                message(
                    f"{_op_message(err)}. Please verify your warmup data is in TFRecord format",
                    expected=f"{path} to be a TFRecord file of PredictionLog protos",
                    received=f"bytes that are not TFRecord framing after {count} records",
                    fix="Write it with tf.io.TFRecordWriter (serving.warmup_file.write_warmup_file does).",
                ),
                code="DATA_LOSS",
            ) from None
        count += 1
        if count > MAX_WARMUP_RECORDS:
            raise WarmupFileError(
                message(
                    f"Number of warmup records exceeds the maximum ({MAX_WARMUP_RECORDS}) at {path}",
                    expected=f"at most {MAX_WARMUP_RECORDS} records",
                    received="more",
                    fix="Write fewer warmup requests.",
                )
            )
        try:
            log = prediction_log_pb2.PredictionLog.FromString(record)
        except DecodeError:
            raise WarmupFileError(
                message(
                    f"Failed to parse warmup record: {record[:40]!r} from {path}",
                    expected="every record a serialized tensorflow.serving.PredictionLog",
                    received=f"record {count - 1}: {len(record)} bytes that are not one",
                    fix="Write PredictionLog protos (serving.warmup_file.write_warmup_file does).",
                )
            ) from None
        yield log


def read_warmup_file(path: str | os.PathLike) -> list[prediction_log_pb2.PredictionLog]:
    """Reads a warmup file's PredictionLog records.

    Raises:
        WarmupFileError: See `iter_warmup_records`.
    """
    return list(iter_warmup_records(path))
