"""tfx_bsl internals: a `TFExampleRecord` whose record batches come from another source; string Predict outputs.

What: `example_record_with_source` builds a subclass of tfx_bsl's `TFExampleRecord`
whose `BeamSource` is the caller's and whose projections (`Project`, which tf.Transform
calls) keep that source: the subclass overrides the private `_ProjectImpl`, and reads
the record's private `_schema`, `_file_pattern` to make the projected copy.
`example_record_schema` reads a `TFExampleRecord`'s private `_schema` (the Schema proto it
was made with; tfx_bsl exposes only the Arrow schema and tensor representations).

Why: tf.Transform reads each split through the TFXIO that TFX's Transform executor makes,
and projects it to the columns the preprocessing function reads; the Transform component
reads ExampleGen's columnar copy instead of decoding the examples, and the projection must
keep reading the copy. tfx_bsl has no public hook for either.

Pinned: tfx-bsl `PINNED`. Shape check (`ENTRY`): `TFExampleRecord._ProjectImpl(self,
tensor_names)` exists and a record keeps `_schema` and `_file_pattern`; otherwise both
functions return None and the caller reads through TFX's own TFXIO (one log line).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

import compat

__all__ = [
    "PINNED",
    "DISTRIBUTION",
    "ENTRY",
    "shape_problem",
    "example_record_schema",
    "example_record_with_source",
    "is_sourced_record",
    "PREDICT_ENTRY",
    "predict_shape_problem",
    "accept_string_predict_outputs",
]

PINNED = "1.16.1"
DISTRIBUTION = "tfx-bsl"
ENTRY = "compat.tfx_bsl.example_record"
PREDICT_ENTRY = "compat.tfx_bsl.string_predict_outputs"


def shape_problem() -> str | None:
    """None when `TFExampleRecord` has the private names this module uses, else what differs."""
    from tensorflow_metadata.proto.v0 import schema_pb2
    from tfx_bsl.tfxio import tf_example_record

    record_class = tf_example_record.TFExampleRecord
    project = getattr(record_class, "_ProjectImpl", None)
    if project is None:
        return "TFExampleRecord has no `_ProjectImpl`"
    parameters = list(inspect.signature(project).parameters)
    if parameters != ["self", "tensor_names"]:
        return f"TFExampleRecord._ProjectImpl takes {parameters}, expected ['self', 'tensor_names']"
    probe = record_class(file_pattern="probe-*", schema=schema_pb2.Schema())
    missing = [name for name in ("_schema", "_file_pattern") if not hasattr(probe, name)]
    return f"a TFExampleRecord has no {missing}" if missing else None


def _usable() -> bool:
    return compat.check_shape(ENTRY, shape_problem)


def example_record_schema(tfxio) -> Any | None:
    """The Schema proto `tfxio` (a `TFExampleRecord`) was made with; None when tfx_bsl's shape differs."""
    return tfxio._schema if _usable() else None


@functools.cache
def _record_class():
    from tfx_bsl.tfxio import tensor_representation_util, tf_example_record

    class SourcedExampleRecord(tf_example_record.TFExampleRecord):
        """A `TFExampleRecord` reading `beam_source(arrow_schema, batch_size)`; its projections read it too."""

        def __init__(self, file_pattern, schema, telemetry_descriptors, beam_source):
            super().__init__(file_pattern=file_pattern, schema=schema, telemetry_descriptors=telemetry_descriptors)
            self.beam_source = beam_source

        def BeamSource(self, batch_size=None):  # noqa: N802 - TFXIO's name
            return self.beam_source(self.ArrowSchema(), batch_size)

        def _ProjectImpl(self, tensor_names):  # noqa: N802 - TFXIO's name
            projected = tensor_representation_util.ProjectTensorRepresentationsInSchema(self._schema, tensor_names)
            return SourcedExampleRecord(self._file_pattern, projected, self.telemetry_descriptors, self.beam_source)

    return SourcedExampleRecord


def example_record_with_source(
    file_pattern: str, schema, telemetry_descriptors, beam_source: Callable[[Any, Any], Any]
) -> Any | None:
    """A `TFExampleRecord` whose `BeamSource(batch_size)` is `beam_source(arrow_schema, batch_size)`.

    Args:
        file_pattern: the split's examples (kept for TFXIO's bookkeeping; not read).
        schema: the Schema proto, as TFX's TFXIO has it (`example_record_schema`).
        telemetry_descriptors: TFX's telemetry descriptors.
        beam_source: returns the PTransform yielding the split's record batches in `arrow_schema`.

    Returns:
        The record, or None when tfx_bsl's shape differs (read through TFX's own TFXIO then).
    """
    if not _usable():
        return None
    return _record_class()(file_pattern, schema, telemetry_descriptors, beam_source)


def is_sourced_record(tfxio) -> bool:
    """Whether `tfxio` was made by `example_record_with_source` (or projected from one)."""
    return _usable() and isinstance(tfxio, _record_class())


def predict_shape_problem() -> str | None:
    """None when `_PredictModelHandler._post_process` has the signature the wrapper expects, else what differs."""
    from tfx_bsl.beam import run_inference

    handler = getattr(run_inference, "_PredictModelHandler", None)
    if handler is None:
        return "tfx_bsl.beam.run_inference has no `_PredictModelHandler`"
    post_process = getattr(handler, "_post_process", None)
    if post_process is None:
        return "_PredictModelHandler has no `_post_process`"
    parameters = list(inspect.signature(post_process).parameters)
    if parameters != ["self", "examples", "serialized_examples", "outputs"]:
        return f"_PredictModelHandler._post_process takes {parameters}, expected [self, examples, serialized_examples, outputs]"
    return None


def _fixed_width_strings(outputs):
    import numpy as np

    return {
        alias: value.astype(np.bytes_)
        if isinstance(value, np.ndarray) and value.dtype.kind == "O" and value.ndim
        else value
        for alias, value in outputs.items()
    }


def accept_string_predict_outputs() -> bool:
    """Lets tfx_bsl's RunInference write PredictionLogs for string outputs (idempotent).

    Returns:
        Whether the wrapper is installed (False: tfx_bsl's shape differs; it runs unpatched).
    """
    if not compat.check_shape(PREDICT_ENTRY, predict_shape_problem):
        return False
    from tfx_bsl.beam import run_inference

    handler = run_inference._PredictModelHandler
    original = handler._post_process
    if getattr(original, "accepts_string_outputs", False):
        return True

    @functools.wraps(original)
    def post_process(self, examples, serialized_examples, outputs):
        return original(self, examples, serialized_examples, _fixed_width_strings(outputs))

    post_process.accepts_string_outputs = True
    handler._post_process = post_process
    return True
