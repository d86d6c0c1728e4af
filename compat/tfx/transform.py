"""TFX's Transform executor, reading each dataset through a TFXIO of the caller's choosing.

What: for the length of a `with reading_through(choose)` block, points the
module-level name `tfx.components.transform.executor.TransformProcessor` at a
subclass whose `_CreateTFXIO(dataset, schema)` offers TFX's TFXIO to `choose`,
which returns another TFXIO to read instead, or None to keep TFX's.

Why: TFX's `Executor.Do` builds its processor by that module-level name, with no
hook to pass another, and `_CreateTFXIO` is where the processor makes a dataset's
TFXIO; the Transform component reads ExampleGen's columnar copy through it.

Pinned: tfx `compat.tfx.PINNED`. Shape check (`ENTRY`): the module has a class
`TransformProcessor` with `_CreateTFXIO(self, dataset, schema)`; otherwise the block
runs TFX's own processor (one log line).
"""

from __future__ import annotations

import contextlib
import inspect
import threading
from collections.abc import Callable, Iterator
from typing import Any

import compat

__all__ = ["ENTRY", "shape_problem", "reading_through"]

ENTRY = "compat.tfx.transform"
_SWAP_LOCK = threading.Lock()


def shape_problem() -> str | None:
    """None when TFX's Transform executor makes its TFXIOs as this entry expects, else what differs."""
    from tfx.components.transform import executor

    processor = getattr(executor, "TransformProcessor", None)
    if not isinstance(processor, type):
        return "tfx.components.transform.executor has no class `TransformProcessor`"
    own = getattr(processor, "_CreateTFXIO", None)
    if not callable(own):
        return "TransformProcessor has no `_CreateTFXIO`"
    parameters = list(inspect.signature(own).parameters)
    if parameters != ["self", "dataset", "schema"]:
        return f"TransformProcessor._CreateTFXIO takes {parameters}, expected ['self', 'dataset', 'schema']"
    return None


@contextlib.contextmanager
def reading_through(choose: Callable[[Any, Any], Any]) -> Iterator[bool]:
    """TFX's Transform executor reads each dataset through `choose(tfxs_tfxio, dataset) or tfxs_tfxio` in the block.

    Yields:
        Whether the swap is in place (False: TFX's own processor runs).
    """
    if not compat.check_shape(ENTRY, shape_problem):
        yield False
        return
    from tfx.components.transform import executor

    class ChoosingTransformProcessor(executor.TransformProcessor):
        def _CreateTFXIO(self, dataset, schema):  # noqa: N802 - TFX's name
            tfxio = super()._CreateTFXIO(dataset, schema)
            return choose(tfxio, dataset) or tfxio

    with _SWAP_LOCK:  # one swap at a time; a stock Transform meanwhile reads the same batches either way
        original = executor.TransformProcessor
        executor.TransformProcessor = ChoosingTransformProcessor
        try:
            yield True
        finally:
            executor.TransformProcessor = original
