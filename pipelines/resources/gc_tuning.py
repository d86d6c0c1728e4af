"""Python's garbage collector, set for a process that imports TensorFlow, TFX, Beam and TFMA.

After those imports the interpreter holds hundreds of thousands of objects,
and every full (generation 2) collection walks all of them: a noticeable pause
each, about a dozen of them in a run, and one more, longer, when Python exits.

Two settings, both leaving young-object collections as they are (they find
the short-lived cycles that TensorFlow and Keras leave behind):

* `fewer_full_collections`: during a run, a full collection waits for 100
  middle-generation collections instead of 10 (Python still skips it until
  the survivors grow by a quarter): a few full collections per run instead
  of a dozen, less time collecting, the same peak memory.
* `skip_collection_at_exit`: the process's last act, `gc.freeze()`, so
  interpreter shutdown does not walk every object once more. Objects are
  still freed as modules are torn down; only cycles still unreachable at
  that moment are left to the operating system, which Python does not
  promise to finalize at exit either. `atexit` handlers (logging's flush
  among them) still run after it.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

__all__ = ["FULL_COLLECTION_EVERY", "fewer_full_collections", "skip_collection_at_exit"]

# Middle-generation collections between two full ones during a run (Python's default: 10).
FULL_COLLECTION_EVERY = 100


@contextlib.contextmanager
def fewer_full_collections() -> Iterator[None]:
    """Within the block, full collections run 10x less often; the previous thresholds come back after it."""
    young, middle, full = gc.get_threshold()
    gc.set_threshold(young, middle, max(full, FULL_COLLECTION_EVERY))
    try:
        yield
    finally:
        gc.set_threshold(young, middle, full)


def skip_collection_at_exit(code: int) -> int:
    """Moves every object out of the collector's sight; returns `code` (call it just before the process exits)."""
    gc.freeze()
    return code
