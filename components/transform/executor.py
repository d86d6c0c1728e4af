"""Transform executor: TFX's, reading ExampleGen's columnar copy instead of decoding the examples again.

TFX's executor (`tfx/components/transform/executor.py`) does its work in a
`TransformProcessor`, which makes one TFXIO per dataset in `_CreateTFXIO`.
`ColumnarTransformProcessor` hands back `columnar_tfxio.ColumnarExampleRecord`
where the Examples artifact has a complete columnar copy of the split
(`components/common/columnar_copy.py`): the record batches TFX's decoder would
give. Analysis, transformation, caching and outputs are TFX's.

TFX's `Executor.Do` builds its processor by the module-level name
`TransformProcessor`, with no hook to pass another: `Executor.Do` points that
name at `ColumnarTransformProcessor` while it runs, and back afterwards.
x100 taxi (1M train rows, 2026-11-26): see NOTES.md, #14.
"""

from __future__ import annotations

import contextlib
import threading

from absl import logging
from tfx.components.transform import executor as tfx_executor

from components.transform import columnar_tfxio

__all__ = ["Executor", "ColumnarTransformProcessor"]

_SWAP_LOCK = threading.Lock()


class ColumnarTransformProcessor(tfx_executor.TransformProcessor):
    """TFX's TransformProcessor; a split with a complete columnar copy is read from it."""

    def _CreateTFXIO(self, dataset, schema):  # noqa: N802 - TFX's name
        tfxio = super()._CreateTFXIO(dataset, schema)
        columnar = columnar_tfxio.from_copy(tfxio, dataset.file_pattern)
        if columnar is None:
            return tfxio
        logging.info("Transform reads %s from the columnar copy of the examples.", dataset.file_pattern)
        return columnar


@contextlib.contextmanager
def _columnar_processor():
    with _SWAP_LOCK:  # one swap at a time; a stock Transform meanwhile reads the same batches either way
        original = tfx_executor.TransformProcessor
        tfx_executor.TransformProcessor = ColumnarTransformProcessor
        try:
            yield
        finally:
            tfx_executor.TransformProcessor = original


class Executor(tfx_executor.Executor):
    """TFX's Transform executor with `ColumnarTransformProcessor` doing the work."""

    def Do(self, input_dict, output_dict, exec_properties) -> None:  # noqa: N802 - TFX's name
        with _columnar_processor():
            return super().Do(input_dict, output_dict, exec_properties)
