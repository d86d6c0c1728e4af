"""Python's garbage collector, set for a process that imports TensorFlow, TFX, Beam and TFMA.

After those imports the interpreter holds about 800,000 objects, and every
full (generation 2) collection walks all of them: on this project's 2-core
machine about 0.3 s each, 12 of them in a taxi run (3.7 s of 53 s), and one
more when Python exits (about 3 s). Measured with `gc.callbacks` around
`python -m pipelines run` on the taxi example (2026-11-26, see NOTES.md).

Two settings, both leaving young-object collections as they are (they find
the short-lived cycles that TensorFlow and Keras leave behind):

* `fewer_full_collections`: during a run, a full collection waits for 100
  middle-generation collections instead of 10 (Python still skips it until
  the survivors grow by a quarter). Measured: 12 -> 3 full collections,
  garbage-collection time 4.7 -> 2.9 s, the same peak memory.
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
