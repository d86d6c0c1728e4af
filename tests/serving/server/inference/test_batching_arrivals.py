"""How long a batch on the event loop waits for requests still arriving: it follows the load."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

from serving.server.inference.batching import BatchScheduler
from serving.server.inference.batching_options import BatchingOptions
from serving.server.model.servable import Servable, Signature, TensorSpec

OPTIONS = BatchingOptions(max_batch_size=8, batch_timeout_micros=0, num_batch_threads=1)


def _batch_sizes(rounds: list[list[int]]) -> tuple[str, list[tuple[str, int]]]:
    """Runs one round of concurrent one-row requests per item of `rounds`; request i
    of a round first waits rounds[r][i] loop iterations. Returns the loop's thread
    name and (thread, rows) of every batch the signature ran."""
    calls: list[tuple[str, int]] = []

    def plus_one(x):
        calls.append((threading.current_thread().name, int(x.shape[0])))
        return {"y": tf.convert_to_tensor(x) + 1}

    spec = TensorSpec("x", tf.float32, (None, 2))
    signature = Signature("plus_one", "tensorflow/serving/predict", {"x": spec}, {"y": spec}, plus_one)
    servable = Servable("m", 1, Path("."), {"plus_one": signature}, {})

    async def main():
        scheduler = BatchScheduler(OPTIONS)
        scheduler.start()

        async def one(i: int, delay: int):
            for _ in range(delay):
                await asyncio.sleep(0)
            return await scheduler.run(servable, signature, {"x": np.full((1, 2), i, np.float32)}, may_run_on_loop=True)

        try:
            for delays in rounds:
                results = await asyncio.gather(*(one(i, d) for i, d in enumerate(delays)))
                assert [r["y"].tolist() for r in results] == [[[i + 1.0] * 2] for i in range(len(delays))]
            return threading.current_thread().name
        finally:
            await scheduler.stop()

    return asyncio.run(main()), calls


@pytest.mark.parametrize("late", [20, 50])
def test_a_batch_smaller_than_the_last_one_waits_for_late_requests(late):
    # Two rounds of 4 at once (the first on a thread, measured), then one whose
    # last request comes `late` quiet iterations after the others: more than the
    # 8 that end the wait once the batch is as large as the last one.
    loop_thread, calls = _batch_sizes([[0] * 4, [0] * 4, [0, 0, 0, late]])

    assert calls[-1] == (loop_thread, 4)


def test_a_batch_as_large_as_the_last_one_waits_only_a_few_iterations():
    loop_thread, calls = _batch_sizes([[0] * 2, [0] * 2, [0, 0, 30, 30]])

    assert calls[-2:] == [(loop_thread, 2), (loop_thread, 2)]  # the late pair forms the next batch


def test_a_lone_request_after_a_quiet_spell_is_answered_alone():
    loop_thread, calls = _batch_sizes([[0] * 4, [0] * 4, [0], [0]])

    assert calls[-2:] == [(loop_thread, 1), (loop_thread, 1)]


def test_the_count_of_waiting_rows_follows_requests_in_and_batches_out():
    # The arrival wait reads this count on every loop iteration (kept, not summed over the queues).
    spec = TensorSpec("x", tf.float32, (None, 2))
    signature = Signature("echo", "tensorflow/serving/predict", {"x": spec}, {"y": spec}, lambda x: {"y": x})
    servable = Servable("m", 1, Path("."), {"echo": signature}, {})

    async def main():
        scheduler = BatchScheduler(OPTIONS)
        scheduler.start()
        try:
            futures = [
                scheduler.run(servable, signature, {"x": np.zeros((rows, 2), np.float32)}, may_run_on_loop=True)
                for rows in (1, 2, 3, 4)  # 6 rows fit one batch of 8; the 4-row request starts a second
            ]
            queued = scheduler._waiting_rows
            futures[1].cancel()  # a cancelled request's rows leave with its batch
            answered = await asyncio.gather(*futures, return_exceptions=True)
            return queued, scheduler._waiting_rows, [getattr(a, "get", lambda _: None)("y") for a in answered]
        finally:
            await scheduler.stop()

    queued, after, outputs = asyncio.run(main())
    assert (queued, after) == (10, 0)
    assert [None if y is None else y.shape for y in outputs] == [(1, 2), None, (3, 2), (4, 2)]
