"""Batches of a fast signature run on the event loop, for the requests that allow it."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

from serving.server.inference.batching import BatchScheduler
from serving.server.inference.batching_options import BatchingOptions
from serving.server.model.servable import Servable, Signature, TensorSpec

OPTIONS = BatchingOptions(max_batch_size=8, batch_timeout_micros=0, num_batch_threads=1)
# Far above a tiny eager call even on a loaded machine (the server's own default is 5 ms):
# these tests are about which thread runs a batch, not about the limit's value.
INLINE_RUN_SECONDS = 0.05


class Recorder:
    """A real signature (TensorFlow eager) that records the thread and size of each batch."""

    def __init__(self, seconds: float = 0.0, seconds_per_row: float = 0.0) -> None:
        self.calls: list[tuple[str, int]] = []
        self.seconds = seconds
        self.seconds_per_row = seconds_per_row

    def __call__(self, x):
        if self.seconds or self.seconds_per_row:
            time.sleep(self.seconds + self.seconds_per_row * int(x.shape[0]))
        self.calls.append((threading.current_thread().name, int(x.shape[0])))
        return {"y": tf.convert_to_tensor(x) + 1}

    def servable(self) -> tuple[Servable, Signature]:
        spec = TensorSpec("x", tf.float32, (None, 2))
        signature = Signature("plus_one", "tensorflow/serving/predict", {"x": spec}, {"y": spec}, self)
        return Servable("m", 1, Path("."), {"plus_one": signature}, {}), signature


def _rounds(function: Recorder, flags: list[list[bool]], delays: list[int] | None = None, **scheduler_args):
    """Runs one round of concurrent requests per item of `flags` (each request's
    may_run_on_loop); request i of a round waits delays[i] loop iterations first."""

    async def main():
        scheduler = BatchScheduler(OPTIONS, **{"inline_run_seconds": INLINE_RUN_SECONDS, **scheduler_args})
        scheduler.start()
        servable, signature = function.servable()

        async def one(i: int, allowed: bool):
            for _ in range(delays[i] if delays else 0):
                await asyncio.sleep(0)
            x = np.full((1, 2), i, np.float32)
            return await scheduler.run(servable, signature, {"x": x}, may_run_on_loop=allowed)

        results = []
        try:
            for round_flags in flags:
                results.append(await asyncio.gather(*(one(i, f) for i, f in enumerate(round_flags))))
            return threading.current_thread().name, results
        finally:
            await scheduler.stop()

    return asyncio.run(main())


def test_a_fast_signature_runs_on_the_loop_once_measured():
    function = Recorder()

    loop_thread, results = _rounds(function, [[True] * 4] * 4)  # the first eager calls may be slow

    assert function.calls[0] == ("batch_0", 4)  # not measured yet: on a batch thread
    assert function.calls[-1] == (loop_thread, 4)
    assert [r["y"].tolist() for r in results[-1]] == [[[i + 1.0] * 2] for i in range(4)]


@pytest.mark.parametrize("flags", [[False] * 4, [True, True, False, True]], ids=["none-allow", "one-refuses"])
def test_a_batch_with_a_request_that_does_not_allow_it_runs_on_a_batch_thread(flags):
    function = Recorder()

    _, results = _rounds(function, [[True] * 4] * 3 + [flags])

    assert function.calls[-1] == ("batch_0", 4)
    assert [r["y"].tolist() for r in results[-1]] == [[[i + 1.0] * 2] for i in range(4)]


def test_a_slow_signature_stays_on_the_batch_thread():
    function = Recorder(seconds=0.06)

    _rounds(function, [[True] * 2] * 3)

    assert [name.startswith("batch") for name, _ in function.calls] == [True, True, True]


def test_a_large_batch_of_a_signature_fast_on_small_ones_runs_on_the_batch_thread():
    # 10 ms a row: one-row batches run on the loop (limit 50 ms, room for a loaded
    # machine); an 8-row batch is estimated at 8 times the last one-row call (>= 80 ms).
    function = Recorder(seconds_per_row=0.01)

    loop_thread, results = _rounds(function, [[True]] * 3 + [[True] * 8])

    assert function.calls[1:3] == [(loop_thread, 1), (loop_thread, 1)]
    assert function.calls[-1] == ("batch_0", 8)
    assert [r["y"].tolist() for r in results[-1]] == [[[i + 1.0] * 2] for i in range(8)]


def test_requests_a_few_loop_iterations_behind_join_a_batch_on_the_loop():
    function = Recorder()

    loop_thread, _ = _rounds(function, [[True] * 4] * 4, delays=[0, 1, 2, 2])

    assert function.calls[-1] == (loop_thread, 4)
