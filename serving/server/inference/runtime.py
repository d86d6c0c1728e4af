"""Runs Predict, Classify and Regress for both front ends (REST and gRPC).

Holds the request path shared by REST and gRPC: resolve the servable (and
keep it while the request runs, so a version swap never pulls it away), pick
and check the signature, run it through the batch scheduler or, without
batching, on the inference threads (or on the event loop for fast Predict
calls), and turn TensorFlow errors into TensorFlow Serving status codes.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

import grpc
import numpy as np
import tensorflow as tf

from serving.errors import Internal, ServingError, message
from serving.server.guards.memory import off_loop_if_large
from serving.server.inference import methods as inference
from serving.server.inference.batching import BatchScheduler
from serving.server.inference.batching_options import BatchingOptions
from serving.server.inference.call_times import CallTimes
from serving.server.lifecycle.manager import ModelManager
from serving.server.model.servable import Servable, Signature
from serving.server.observability.metrics import ServingMetrics

__all__ = ["INLINE_CALL_SECONDS", "LARGE_RESULT_EXAMPLES", "ModelRef", "Result", "Runtime", "translate_tf_error"]

# Without batching, a Predict call runs on the event loop when it should take less than this.
# Chosen, not tuned: a call this short is mostly the hand-off (the benchmark's one-row call takes
# 54 us; batching off served 31-37% more with it on the loop), and a longer one blocks other requests.
INLINE_CALL_SECONDS = 0.001


# Classify results for this many examples or more are built on an inference thread (~2 us an example).
LARGE_RESULT_EXAMPLES = 4096


# Named tuples, not frozen dataclasses: one of each is built per request, and a
# frozen dataclass sets each field through object.__setattr__ (~2x the time).
class ModelRef(NamedTuple):
    """Which servable a request asks for: a version, a label, or the latest."""

    name: str
    version: int | None = None
    label: str | None = None

    @classmethod
    def of_model_spec(cls, spec) -> ModelRef:
        """The reference a gRPC request's ModelSpec makes (`version` and `version_label`
        are a oneof: at most one is set)."""
        return cls(spec.name, spec.version.value if spec.HasField("version") else None, spec.version_label or None)


class Result(NamedTuple):
    """What a request ran on and what it produced."""

    version: int
    signature_name: str
    outputs: dict


def _op_error_text(err: tf.errors.OpError) -> str:
    """The useful line of a TensorFlow error, without the Python stack of the
    graph's definition ("Detected at node ... File ...")."""
    lines = [line for line in (err.message or "").splitlines() if line.strip()]
    useful = [
        line
        for line in lines
        if not line.startswith((" ", "\t", "Graph execution error", "Detected at node", "<stack traces"))
    ]
    text = useful[0] if useful else (lines[0] if lines else type(err).__name__)
    return _feed_type_text(text)


# A session callable's feed check (Session::MakeCallable, which this server runs) words a wrong feed
# dtype "Type mismatch: actual string vs. expect float"; TF Serving's Session::Run says
# "Expects arg[0] to be float but string is provided". Predict checks dtypes itself first
# (`tensor_checks.dtype_error`), so this is Classify/Regress/MultiInference feeding their one
# `inputs` tensor: arg[0].
_CALLABLE_FEED_TYPE = re.compile(r"Type mismatch: actual (\w+) vs\. expect (\w+)")


def _feed_type_text(text: str) -> str:
    match = _CALLABLE_FEED_TYPE.match(text)
    if match is None:
        return text
    return f"Expects arg[0] to be {match.group(2)} but {match.group(1)} is provided"


def translate_tf_error(err: Exception) -> ServingError:
    """Maps a TensorFlow error to a ServingError with the same canonical code."""
    if isinstance(err, ServingError):
        return err
    if isinstance(err, tf.errors.OpError):
        code = next((c for c in grpc.StatusCode if c.value[0] == err.error_code), grpc.StatusCode.UNKNOWN)
        text, received = _op_error_text(err), f"values that failed inside the model (TensorFlow {code.name})"
    elif isinstance(err, (TypeError, ValueError)):
        code = grpc.StatusCode.INVALID_ARGUMENT
        text, received = f"{type(err).__name__}: {err}", "inputs the signature function rejected"
    else:
        return Internal(
            message(
                f"{type(err).__name__}: {err}",
                expected="the model to run",
                received="an internal error",
                fix="Check the server log.",
            )
        )
    mapped = ServingError(
        message(
            text,
            expected="inputs the model's graph accepts",
            received=received,
            fix="Check the values against the signature (GET /v1/models/<name>/metadata).",
        )
    )
    mapped.code = code
    return mapped


class Runtime:
    """The inference path. Create it, then `start()` on the server's loop."""

    def __init__(
        self,
        manager: ModelManager,
        metrics: ServingMetrics,
        *,
        batching: BatchingOptions | None,
        inference_threads: int,
        inline_call_seconds: float = INLINE_CALL_SECONDS,
    ) -> None:
        self.manager = manager
        self.metrics = metrics
        self.batching = batching
        self._scheduler = BatchScheduler(batching, metrics.observe_batch) if batching else None
        self._executor = ThreadPoolExecutor(inference_threads, thread_name_prefix="inference")
        self._call_times = CallTimes()
        self._inline_call_seconds = inline_call_seconds
        self._loop: asyncio.AbstractEventLoop | None = None  # the server's, set by start()

    def start(self) -> None:
        """Call from the server's event loop."""
        self._loop = asyncio.get_running_loop()  # kept: each get_running_loop() costs a getpid() system call
        if self._scheduler is not None:
            self._scheduler.start()

    async def stop(self) -> None:
        if self._scheduler is not None:
            await self._scheduler.stop()
        self._executor.shutdown(wait=True)

    async def run(
        self,
        servable: Servable,
        signature: Signature,
        inputs: Mapping[str, np.ndarray],
        *,
        may_run_on_loop: bool = False,
    ) -> dict:
        try:
            return await self._submit(servable, signature, inputs, may_run_on_loop)
        except Exception as err:  # noqa: BLE001 - translated to a status code
            raise translate_tf_error(err) from None

    def _submit(
        self, servable: Servable, signature: Signature, inputs: Mapping[str, np.ndarray], may_run_on_loop: bool
    ) -> asyncio.Future:
        """Starts the signature; returns the future of its outputs.

        With batching, on the batch scheduler. Without, on an inference
        thread; or, for a request that allows it (Predict over REST and gRPC),
        on the event loop itself when the signature's last call, scaled up to
        this request's number of values, took under `inline_call_seconds`
        (`call_times`): TensorFlow Serving runs the session in the request's
        own thread too. Requests with string inputs always take a thread:
        their cost follows the strings' lengths, which the count of values
        does not show.
        """
        if self._scheduler is not None:
            return self._scheduler.run(servable, signature, inputs, may_run_on_loop=may_run_on_loop)
        loop = self._loop if self._loop is not None else asyncio.get_running_loop()
        values = sum(value.size for value in inputs.values())
        if may_run_on_loop and all(value.dtype != object for value in inputs.values()):
            seconds = self._call_times.estimate(signature, values)
            if seconds is not None and seconds < self._inline_call_seconds:
                future = loop.create_future()
                try:
                    future.set_result(self._call_times.timed(signature, values, signature.run, inputs))
                except Exception as err:  # noqa: BLE001 - raised where the future is awaited
                    future.set_exception(err)
                return future
        return loop.run_in_executor(self._executor, self._call_times.timed, signature, values, signature.run, inputs)

    async def predict(
        self,
        ref: ModelRef,
        signature_name: str,
        build_inputs: Callable[[Signature], Mapping[str, np.ndarray]],
        output_filter: list[str] | None = None,
        *,
        may_run_on_loop: bool = False,
        over_grpc: bool = False,
    ) -> Result:
        """Predict on any signature; `build_inputs` converts the request body.

        `output_filter`: the output aliases to return (all when empty), checked
        before the model runs, as TensorFlow Serving's `PreProcessPrediction`
        does: a refused filter never runs a stateful model.
        `may_run_on_loop`: see `BatchScheduler.run` (True for Predict over REST and gRPC).
        `over_grpc`: a missing signature is gRPC's FAILED_PRECONDITION (REST: INVALID_ARGUMENT).
        """
        inference.require_model_name(ref.name)
        servable = self.manager.acquire(ref.name, ref.version, ref.label)
        try:  # `manager.handle()` without a generator's cost, on the path of every request
            signature = inference.predict_signature(servable, signature_name, over_grpc)
            inputs = inference.checked_inputs(signature, build_inputs, output_filter, ref.name)
            started = time.perf_counter()
            try:  # `run` without its coroutine frame, on the path of every request
                outputs = await self._submit(servable, signature, inputs, may_run_on_loop)
            except Exception as err:  # noqa: BLE001 - translated to a status code
                raise translate_tf_error(err) from None
            self.metrics.observe_runtime(ref.name, "Predict", time.perf_counter() - started)
            if output_filter:
                outputs = {alias: outputs[alias] for alias in output_filter}
            return Result(servable.version, signature.name, outputs)
        finally:
            servable.release()

    async def classify(self, ref: ModelRef, signature_name: str, examples: np.ndarray) -> Result:
        """Classify serialized tf.Examples; outputs are per-example (label, score) lists."""
        inference.require_model_name(ref.name)
        with self.manager.handle(ref.name, ref.version, ref.label) as servable:
            signature = inference.classify_signature(servable, signature_name)
            self.metrics.observe_examples(ref.name, len(examples))
            started = time.perf_counter()
            outputs = await self.run(servable, signature, {inference.EXAMPLES_INPUT: examples})
            self.metrics.observe_runtime(ref.name, "Classify", time.perf_counter() - started)
            results = await off_loop_if_large(  # a Python loop per example
                len(examples) >= LARGE_RESULT_EXAMPLES, inference.classification_results, outputs, len(examples)
            )
            return Result(servable.version, signature.name, {"results": results})

    async def regress(self, ref: ModelRef, signature_name: str, examples: np.ndarray) -> Result:
        """Regress serialized tf.Examples; outputs are one float per example."""
        inference.require_model_name(ref.name)
        with self.manager.handle(ref.name, ref.version, ref.label) as servable:
            signature = inference.regress_signature(servable, signature_name)
            self.metrics.observe_examples(ref.name, len(examples))
            started = time.perf_counter()
            outputs = await self.run(servable, signature, {inference.EXAMPLES_INPUT: examples})
            self.metrics.observe_runtime(ref.name, "Regress", time.perf_counter() - started)
            results = inference.regression_results(outputs, len(examples))
            return Result(servable.version, signature.name, {"results": results})
