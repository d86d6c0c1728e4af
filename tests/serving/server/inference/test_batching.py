"""Server-side batching: merging, timeouts, queue limits, padding, and through REST."""

from __future__ import annotations

import asyncio
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf
from serving_helpers import MODEL, http, logit

from serving import config as cfg
from serving.errors import Unavailable
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


def test_request_larger_than_max_batch_size_runs_alone():
    function = Doubler()
    [result] = _run(
        BatchingOptions(max_batch_size=4, batch_timeout_micros=0, num_batch_threads=1),
        function,
        [np.ones((10, 2), np.float32)],
    )
    assert function.sizes == [10]
    assert result["y"].shape == (10, 2)


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
    assert "The batch scheduling queue to which this task was submitted is full" in rejected[0].text
    assert "max_enqueued_batches=2" in rejected[0].text
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
