"""Server-side batching: merging, timeouts, queue limits, padding, and through REST."""

from __future__ import annotations

import asyncio
import dataclasses
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf
from serving_helpers import MODEL, http, logit

from serving import config as cfg
from serving.errors import InvalidArgument, Unavailable
from serving.server.inference.batching import BatchScheduler
from serving.server.inference.batching_options import BatchingOptions
from serving.server.model.servable import Servable, Signature, TensorSpec
from serving.server.observability.metrics import BATCH_SIZE


class Doubler:
    """A real signature (TensorFlow eager) that records the batch sizes it runs."""

    def __init__(self, gate: threading.Event | None = None, fail: bool = False) -> None:
        self.sizes: list[int] = []
        self.gate = gate
        self.fail = fail

    def __call__(self, x):
        if self.gate is not None:
            self.gate.wait(10)
        self.sizes.append(int(x.shape[0]))
        if self.fail:
            raise tf.errors.InvalidArgumentError(None, None, "boom")
        return {"y": tf.convert_to_tensor(x) * 2}

    def servable(self) -> tuple[Servable, Signature]:
        spec = TensorSpec("x", tf.float32, (None, None))
        signature = Signature("double", "tensorflow/serving/predict", {"x": spec}, {"y": spec}, self)
        return Servable("m", 1, Path("."), {"double": signature}, {}), signature


def _run(options: BatchingOptions, function: Doubler, inputs: list[np.ndarray], stagger: float = 0.0):
    async def main():
        scheduler = BatchScheduler(options)
        scheduler.start()
        servable, signature = function.servable()

        async def one(i, x):
            await asyncio.sleep(i * stagger)
            return await scheduler.run(servable, signature, {"x": x})

        try:
            return await asyncio.gather(*(one(i, x) for i, x in enumerate(inputs)), return_exceptions=True)
        finally:
            await scheduler.stop()

    return asyncio.run(main())


def _rows(n: int, width: int = 2) -> list[np.ndarray]:
    return [np.full((1, width), i, dtype=np.float32) for i in range(n)]


def test_concurrent_requests_merge_into_one_batch_and_split_back():
    function = Doubler()
    results = _run(
        BatchingOptions(max_batch_size=8, batch_timeout_micros=200_000, num_batch_threads=1), function, _rows(8)
    )
    assert function.sizes == [8]
    assert [r["y"].tolist() for r in results] == [[[2.0 * i] * 2] for i in range(8)]


def test_partial_batch_runs_after_timeout():
    function = Doubler()
    started = time.monotonic()
    results = _run(
        BatchingOptions(max_batch_size=8, batch_timeout_micros=30_000, num_batch_threads=1), function, _rows(3)
    )
    assert function.sizes == [3]
    assert time.monotonic() - started >= 0.03
    assert len(results) == 3


def test_batches_never_exceed_max_batch_size():
    function = Doubler()
    _run(BatchingOptions(max_batch_size=4, batch_timeout_micros=100_000, num_batch_threads=1), function, _rows(10))
    assert sum(function.sizes) == 10
    assert max(function.sizes) <= 4


def test_allowed_batch_sizes_pad_the_batch():
    function = Doubler()
    results = _run(
        BatchingOptions(max_batch_size=8, batch_timeout_micros=20_000, num_batch_threads=1, allowed_batch_sizes=(4, 8)),
        function,
        _rows(3),
    )
    assert function.sizes == [4]
    assert [r["y"].shape for r in results] == [(1, 2)] * 3


def test_request_larger_than_max_batch_size_is_refused_and_never_runs():
    function = Doubler()
    small, large = _run(
        BatchingOptions(max_batch_size=4, batch_timeout_micros=0, num_batch_threads=1),
        function,
        [np.ones((4, 2), np.float32), np.ones((10, 2), np.float32)],
    )
    assert small["y"].shape == (4, 2)
    assert isinstance(large, InvalidArgument)
    assert large.text.startswith("Task size 10 is larger than maximum input batch size 4. ")
    assert "Send at most 4 rows per request" in large.text
    assert function.sizes == [4]


SPLITTING = BatchingOptions(
    max_batch_size=10, max_execution_batch_size=4, batch_timeout_micros=30_000, num_batch_threads=1
)


def test_large_batch_splitting_runs_batches_of_max_execution_batch_size():
    """A 10-row request with max_execution_batch_size 4 runs as 4 + 4 + 2 rows, and its
    caller gets its 10 rows back in order."""
    function = Doubler()
    x = np.arange(20, dtype=np.float32).reshape(10, 2)
    [result] = _run(SPLITTING, function, [x])
    assert function.sizes == [4, 4, 2]
    np.testing.assert_array_equal(result["y"], x * 2)


def test_a_split_request_first_fills_the_open_batch():
    """TensorFlow's eager split: a 7-row request joining an open batch of 1 row puts 3 rows
    there and 4 in the next batch; both callers get their own rows."""
    function = Doubler()
    one, seven = np.full((1, 2), 100.0, np.float32), np.arange(14, dtype=np.float32).reshape(7, 2)
    first, second = _run(SPLITTING, function, [one, seven], stagger=0.005)
    assert function.sizes == [4, 4]
    np.testing.assert_array_equal(first["y"], one * 2)
    np.testing.assert_array_equal(second["y"], seven * 2)


def test_a_failing_part_is_the_split_requests_answer():
    function = Doubler(fail=True)
    [result] = _run(SPLITTING, function, [np.ones((6, 2), np.float32)])
    assert isinstance(result, tf.errors.InvalidArgumentError)


def test_splitting_refuses_a_request_larger_than_the_queue_can_take():
    """ValidateBatchTaskQueueCapacity: with max_enqueued_batches 2 and batches of 4, a
    waiting batch of 3 rows leaves room for 5 rows (1 in it, 4 in one more batch)."""
    gate = threading.Event()
    function = Doubler(gate=gate)
    options = dataclasses.replace(SPLITTING, max_enqueued_batches=2, batch_timeout_micros=1_000_000)
    threading.Timer(0.5, gate.set).start()
    rows = [np.ones((4, 2), np.float32), np.ones((3, 2), np.float32), np.ones((6, 2), np.float32)]
    running, waiting, refused = _run(options, function, rows, stagger=0.05)
    assert running["y"].shape == (4, 2) and waiting["y"].shape == (3, 2)
    assert isinstance(refused, Unavailable)
    assert refused.text.startswith(
        "The batch scheduling queue to which this task was submitted is full; task size is 6 but scheduling "
        "capacity is only 5 (num_enqueued_batches=1, max_enqueued_batches=2, open_batch_size=3, "
        "max_execution_batch_size=4). "
    )


def test_different_trailing_shapes_are_not_merged():
    function = Doubler()
    _run(
        BatchingOptions(max_batch_size=8, batch_timeout_micros=30_000, num_batch_threads=1),
        function,
        _rows(2, width=2) + _rows(2, width=3),
    )
    assert sorted(function.sizes) == [2, 2]


def test_full_queue_rejects_with_unavailable():
    gate = threading.Event()
    function = Doubler(gate=gate)
    options = BatchingOptions(max_batch_size=1, batch_timeout_micros=0, num_batch_threads=1, max_enqueued_batches=2)
    threading.Timer(0.5, gate.set).start()
    results = _run(options, function, _rows(6), stagger=0.01)
    rejected = [r for r in results if isinstance(r, Unavailable)]
    assert rejected, results
    assert rejected[0].text.startswith(
        "The batch scheduling queue to which this task was submitted is full; currently 2 batches enqueued "
        "and max_enqueued_batches is 2. "
    )
    assert sum(function.sizes) == 6 - len(rejected)


def test_error_in_batch_reaches_every_request():
    function = Doubler(fail=True)
    results = _run(
        BatchingOptions(max_batch_size=4, batch_timeout_micros=50_000, num_batch_threads=1), function, _rows(4)
    )
    assert all(isinstance(r, tf.errors.InvalidArgumentError) for r in results)


def test_rest_requests_are_batched_and_answered_per_request(make_server, model_dir):
    batching = cfg.batching_parameters(max_batch_size=4, batch_timeout_micros=200_000, num_batch_threads=1)
    server = make_server(model_dir, batching=batching)
    rows = [[float(i), 0.0, 0.0] for i in range(16)]

    def call(x):
        return http(
            server.rest_url, "POST", f"/v1/models/{MODEL}:predict", {"signature_name": "serving_raw", "instances": [x]}
        )

    with ThreadPoolExecutor(16) as pool:
        answers = list(pool.map(call, rows))
    assert [status for status, _ in answers] == [200] * 16
    for x, (_, body) in zip(rows, answers):
        assert body["predictions"][0]["logit"] == pytest.approx(logit(1, x), rel=1e-6)
    _, metrics = http(server.rest_url, "GET", cfg.PROMETHEUS_PATH)
    count = next(line for line in metrics["raw"].splitlines() if line.startswith(f"{BATCH_SIZE}_count"))
    total = next(line for line in metrics["raw"].splitlines() if line.startswith(f"{BATCH_SIZE}_sum"))
    assert float(total.split()[-1]) == 16
    assert float(count.split()[-1]) < 16  # some requests shared a batch
