"""Gives memory back to the OS after large requests.

A large request (a 15 MB JSON body, a big TensorProto) is parsed into many
small Python objects and numpy buffers on several threads (the event loop, the
inference and batch threads). Once it is answered they are freed, but glibc
keeps the freed pages in its per-thread arenas, so the process RSS stays at
its peak (over a GB after one 15 MB REST request). `malloc_trim(0)`
returns the free pages of every arena. It walks the heap (a few ms), so it
runs only after requests over a threshold, at most one at a time, off the
event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import ctypes.util
import gc
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

__all__ = [
    "DEFAULT_TRIM_THRESHOLD_BYTES",
    "MemoryReleaser",
    "gc_paused",
    "malloc_trim",
    "off_loop_if_large",
]

log = logging.getLogger(__name__)
DEFAULT_TRIM_THRESHOLD_BYTES = 1024 * 1024
T = TypeVar("T")


def _load_trim():
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name or "libc.so.6")
        trim = libc.malloc_trim
    except (OSError, AttributeError):  # not glibc (macOS, musl): nothing to do
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


_TRIM = _load_trim()


def malloc_trim() -> bool:
    """Returns free heap pages to the OS; False where glibc is absent."""
    if _TRIM is None:
        return False
    _TRIM(0)
    return True


@contextlib.contextmanager
def gc_paused():
    """Pauses Python's cyclic garbage collector while a large request's values are built.

    Parsing a 10 MB JSON body of 500k examples creates ~1M lists and dicts;
    each 700 container allocations start a collection, and the older
    generations' collections walk every tracked object (TensorFlow alone has
    ~420k). orjson took 1.86 s on that body with the collector on, 0.21 s
    paused, all of it holding the GIL. Such values are trees (no cycles),
    so pausing frees nothing late. Process-wide: another thread's section
    may end the pause early, which costs only speed.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _call_gc_paused(function: Callable[..., T], *args) -> T:
    """`function(*args)` inside `gc_paused()` (for `run_in_executor`)."""
    with gc_paused():
        return function(*args)


async def off_loop_if_large(large: bool, function: Callable[..., T], *args) -> T:
    """`function(*args)`: here for a small request; for a large one on a thread, collector paused.

    Building tf.Examples and per-example results is Python work (~6 us an
    example). On the event loop it holds every other request: 700k examples
    in a 7 MB REST body held a one-row Predict 4 s. On a thread the loop gets
    the GIL back at each switch.
    """
    if not large:
        return function(*args)
    return await asyncio.get_running_loop().run_in_executor(None, _call_gc_paused, function, *args)


class MemoryReleaser:
    """Schedules `malloc_trim` after requests of at least `threshold_bytes`.

    The trim runs on its own thread `delay_s` after the request (so the
    answer is sent and its buffers are freed first), and once more
    `settle_s` later, one job at a time: requests that finish while one is
    pending share it. The second trim is for buffers freed after the answer:
    a refused compressed body's decoder and buffers go when its connection
    closes (a refused gzip bomb's buffers outlive the first trim).

    Args:
        threshold_bytes: Request size (body or decoded tensors) that triggers it.
        delay_s: Wait before trimming.
        settle_s: Wait between the first trim and the second.
    """

    def __init__(
        self, threshold_bytes: int = DEFAULT_TRIM_THRESHOLD_BYTES, delay_s: float = 0.2, settle_s: float = 2.0
    ) -> None:
        self.threshold_bytes = threshold_bytes
        self.delay_s = delay_s
        self.settle_s = settle_s
        self._executor = ThreadPoolExecutor(1, thread_name_prefix="malloc-trim")
        self._pending = threading.Lock()

    def after(self, nbytes: int) -> None:
        """Call once a request of `nbytes` is answered (one comparison when it was small)."""
        if nbytes < self.threshold_bytes or _TRIM is None or not self._pending.acquire(blocking=False):
            return
        try:
            self._executor.submit(self._trim)
        except RuntimeError:  # shut down
            self._pending.release()

    def _trim(self) -> None:
        try:
            time.sleep(self.delay_s)
            malloc_trim()
            time.sleep(self.settle_s)
            malloc_trim()
        finally:
            self._pending.release()

    def close(self) -> None:
        self._executor.shutdown(wait=True)
