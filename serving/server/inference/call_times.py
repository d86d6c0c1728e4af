"""How long each signature's last call took, to decide where its next call runs.

A model call shorter than a hand-off to a thread and back runs on the event
loop itself: batches in `batching.py`, single requests without batching in
`runtime.py`. A slower call, or one of a signature not measured yet, runs
on a thread. The hand-off wakes the thread and then the loop, and the loop,
the thread and grpc.aio's poller trade the GIL. For a call of tens of
microseconds that costs more CPU than the call itself.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Callable
from typing import TypeVar

from serving.server.model.servable import Signature

__all__ = ["CallTimes"]

T = TypeVar("T")


class CallTimes:
    """The seconds and size of each signature's last call; forgotten when the
    signature is freed (its servable unloaded), before its id can be reused.
    The size is what the caller scales estimates by (rows, or input values).

    Thread-safe for one writer per call: `record` replaces a dict entry, which
    CPython does atomically.
    """

    def __init__(self) -> None:
        # id(signature) -> (weak reference to it, seconds of its last call, size of that call)
        self._last: dict[int, tuple[weakref.ref, float, int]] = {}

    def estimate(self, signature: Signature, size: int | None = None) -> float | None:
        """Seconds a call should take: the last call's, scaled up when `size`
        is more than it had (never down); None when not measured yet."""
        last = self._last.get(id(signature))
        if last is None or last[0]() is not signature:
            return None
        if size is None or size <= last[2]:
            return last[1]
        return last[1] * size / max(1, last[2])

    def record(self, signature: Signature, seconds: float, size: int) -> None:
        key = id(signature)
        last = self._last.get(key)
        if last is not None and last[0]() is signature:
            reference = last[0]
        else:
            reference = weakref.ref(signature, lambda _, key=key: self._last.pop(key, None))
        self._last[key] = (reference, seconds, size)

    def timed(self, signature: Signature, size: int, call: Callable[..., T], *args) -> T:
        """`call(*args)`, its duration recorded for `signature` (also when it raises)."""
        started = time.perf_counter()
        try:
            return call(*args)
        finally:
            self.record(signature, time.perf_counter() - started, size)
