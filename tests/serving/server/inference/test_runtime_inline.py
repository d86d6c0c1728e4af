"""Without batching, fast Predict calls run on the event loop (`Runtime._submit`)."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

from serving.server.inference.runtime import Runtime
from serving.server.model.servable import Servable, Signature, TensorSpec
from serving.server.observability.metrics import ServingMetrics


class Recorder:
    """A signature function that records the thread and rows of each call."""

    def __init__(self, seconds: float = 0.0, fail_on: float | None = None) -> None:
        self.calls: list[tuple[str, int]] = []
        self.seconds = seconds
        self.fail_on = fail_on

    def __call__(self, x):
        if self.seconds:
            time.sleep(self.seconds)
        self.calls.append((threading.current_thread().name, int(x.shape[0])))
        if self.fail_on is not None and (x == self.fail_on).any():
            raise tf.errors.InvalidArgumentError(None, None, "bad value in x")
        return {"y": np.asarray(x) + 1}

    def servable(self) -> tuple[Servable, Signature]:
        spec = TensorSpec("x", tf.float32, (None, 2))
        signature = Signature("plus_one", "tensorflow/serving/predict", {"x": spec}, {"y": spec}, self)
        return Servable("m", 1, Path("."), {"plus_one": signature}, {}), signature


def _calls(function: Recorder, requests: list[tuple[int, bool]], **runtime_args):
    """Runs the requests (rows, may_run_on_loop) one after the other; returns the loop's thread name and results."""

    async def main():
        runtime = Runtime(None, ServingMetrics(), batching=None, inference_threads=1, **runtime_args)
        servable, signature = function.servable()
        results = []
        try:
            for rows, allowed in requests:
                x = np.arange(rows * 2, dtype=np.float32).reshape(rows, 2)
                try:
                    results.append(await runtime.run(servable, signature, {"x": x}, may_run_on_loop=allowed))
                except Exception as err:  # noqa: BLE001 - recorded for the test
                    results.append(err)
            return threading.current_thread().name, results
        finally:
            await runtime.stop()

    return asyncio.run(main())


def test_a_fast_signature_runs_on_the_loop_once_measured():
    function = Recorder()
    loop_thread, results = _calls(function, [(1, True)] * 3)
    assert function.calls[0] == ("inference_0", 1)  # not measured yet
    assert function.calls[1:] == [(loop_thread, 1)] * 2
    np.testing.assert_array_equal(results[-1]["y"], [[1.0, 2.0]])


def test_requests_that_do_not_allow_it_and_slow_signatures_stay_on_the_threads():
    refused = Recorder()
    _calls(refused, [(1, False)] * 3)
    assert {thread for thread, _ in refused.calls} == {"inference_0"}

    slow = Recorder(seconds=0.003)
    _calls(slow, [(1, True)] * 3, inline_call_seconds=0.001)
    assert {thread for thread, _ in slow.calls} == {"inference_0"}


def test_a_request_with_many_more_rows_than_the_measured_call_goes_to_a_thread():
    function = Recorder(seconds=0.0002)
    loop_thread, _ = _calls(function, [(1, True), (1, True), (1000, True), (1, True)], inline_call_seconds=0.01)
    threads = [thread for thread, _ in function.calls]
    # 1000 rows at the measured 1-row time (>= 0.2 ms) estimate >= 0.2 s: over the 10 ms bound; the
    # next 1-row request is estimated from that 1000-row call, unscaled, and runs on the loop again.
    assert threads == ["inference_0", loop_thread, "inference_0", loop_thread]


def test_an_error_on_the_loop_is_the_same_status_as_on_a_thread():
    function = Recorder(fail_on=0.0)
    _, results = _calls(function, [(1, True), (1, True)])
    assert [type(r).__name__ for r in results] == ["ServingError", "ServingError"]
    assert all("bad value in x" in str(r) for r in results)
    assert function.calls[1][0] != "inference_0"


@pytest.mark.parametrize("allowed", [True, False])
def test_answers_are_the_same_either_way(allowed):
    function = Recorder()
    _, results = _calls(function, [(3, allowed)] * 3)
    for result in results:
        np.testing.assert_array_equal(result["y"], np.arange(6, dtype=np.float32).reshape(3, 2) + 1)


def test_string_inputs_stay_on_the_threads():
    """Their cost follows the strings' lengths, which the count of values does not show."""
    calls = []

    def lengths(text):
        calls.append(threading.current_thread().name)
        return {"n": tf.strings.length(text)}

    async def main():
        runtime = Runtime(None, ServingMetrics(), batching=None, inference_threads=1)
        spec = TensorSpec("text", tf.string, (None,))
        signature = Signature("lengths", "tensorflow/serving/predict", {"text": spec}, {"n": spec}, lengths)
        servable = Servable("m", 1, Path("."), {"lengths": signature}, {})
        try:
            for _ in range(3):
                text = np.array([b"a" * 10], dtype=object)
                await runtime.run(servable, signature, {"text": text}, may_run_on_loop=True)
        finally:
            await runtime.stop()

    asyncio.run(main())
    assert calls == ["inference_0"] * 3
