"""Server-side batching with TensorFlow Serving's knobs.

Concurrent requests for the same model version, signature and input shapes
(past the batch dimension) are merged along dimension 0, run as one call, and
the outputs are split back, like TensorFlow Serving's batching session:

* a batch runs when it holds `max_batch_size` rows, or when its oldest request
  has waited `batch_timeout_micros` and one of `num_batch_threads` is free;
* at most `max_enqueued_batches` batches wait per queue; further requests are
  rejected with UNAVAILABLE (HTTP 503) instead of queueing without bound;
* with `allowed_batch_sizes`, a batch is padded up to the next allowed size
  with copies of the first row of its last request;
* with `pad_variable_length_inputs`, requests whose inputs differ past the
  batch dimension (same rank and dtype) are merged too: each input is padded
  at the end of dimensions 1+ to the batch's largest size, with the first
  value of that request's own tensor, and every caller gets the padded rows
  back (TensorFlow Serving's `batching_util.cc`). Without it, such requests
  go to different queues instead of failing together.

Requests TensorFlow Serving's batching refuses are refused with its words
(INVALID_ARGUMENT): inputs with different first dimensions ("Batching Run()
input tensors must have equal 0th-dimension size"), scalars ("... must have
at least one dimension"), no inputs, and a request with more rows than
`max_batch_size` ("Task size N is larger than maximum input batch size M",
TensorFlow's `shared_batch_scheduler.h`). With `enable_large_batch_splitting`
(`max_execution_batch_size` set), a request that does not fit the open batch
is split as TensorFlow's eager split does: its first rows fill the open
batch, the rest go to new batches of `max_execution_batch_size` rows, and the
caller gets the parts' outputs joined (an error in any part is its answer).

The scheduler lives on the server's event loop: queues are touched only from
that loop. Model calls run on the batch threads, except batches of Predict
requests (REST and gRPC) for a signature whose last batch, scaled up to
this batch's rows, ran in under `INLINE_RUN_SECONDS` (5 ms): those run on
the event loop itself. For such
small models the hand-off to a thread and back (two wakeups, the loop, the
batch thread and grpc.aio's poller thread trading the GIL) costs more CPU
than the call; a slower signature goes back to the threads from its next
batch on. Before a batch runs on the loop, the loop gets a few iterations
to bring in requests that have arrived (`_let_arrivals_in`): a batch on a
thread fills while the previous one runs, one on the loop would not.
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import logging
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from serving.errors import Internal, Unavailable, message
from serving.server.inference.batch_admission import check_capacity, joined, queue_full, split_bounds, too_large
from serving.server.inference.batch_inputs import check_batchable, pad_to_largest, unbatchable
from serving.server.inference.batching_options import BatchingOptions
from serving.server.inference.call_times import CallTimes
from serving.server.model.servable import Servable, Signature

__all__ = ["BatchObserver", "BatchScheduler", "INLINE_RUN_SECONDS"]

log = logging.getLogger(__name__)

Outputs = dict[str, np.ndarray]
INLINE_RUN_SECONDS = 0.005
# Before a batch runs on the loop, it yields to the loop until requests stop
# joining: until _MIN_QUIET_YIELDS yields in a row bring none once it holds
# as many rows as the previous batch, _MAX_QUIET_YIELDS before; at most
# _MAX_ARRIVAL_YIELDS in all.
_MIN_QUIET_YIELDS = 8
_MAX_QUIET_YIELDS = 64
_MAX_ARRIVAL_YIELDS = 512


@dataclasses.dataclass(slots=True)  # slots: one is built per request
class _Task:
    inputs: Mapping[str, np.ndarray]
    size: int
    future: asyncio.Future
    may_run_on_loop: bool = False
    enqueued: float = 0.0  # time.monotonic() when it joined its batch


@dataclasses.dataclass
class _Batch:
    created: float
    tasks: list[_Task] = dataclasses.field(default_factory=list)
    size: int = 0


@dataclasses.dataclass
class _Queue:
    servable: Servable
    signature: Signature
    batches: collections.deque[_Batch] = dataclasses.field(default_factory=collections.deque)


# (servable, signature, rows, seconds each request of the batch waited before it ran)
BatchObserver = Callable[[Servable, Signature, int, list[float]], None]


class BatchScheduler:
    """Merges concurrent requests into batches (one scheduler per server)."""

    def __init__(
        self,
        options: BatchingOptions,
        observe_batch: BatchObserver | None = None,
        inline_run_seconds: float = INLINE_RUN_SECONDS,
    ) -> None:
        self.options = options
        self._inline_run_seconds = inline_run_seconds
        self._call_times = CallTimes()  # each signature's last batch; unmeasured: on a thread
        self._observe = observe_batch or (lambda servable, signature, size, waits: None)
        self._executor = ThreadPoolExecutor(options.num_batch_threads, thread_name_prefix="batch")
        self._queues: dict[tuple, _Queue] = {}
        self._wakeup: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None  # the server's, set by start()
        self._workers: list[asyncio.Task] = []
        self._timeout = options.batch_timeout_micros / 1e6
        self._pad = options.pad_variable_length_inputs
        self._max_batch_size = options.batch_rows  # read on every request
        self._last_rows = 0  # rows of the last batch that ran
        self._waiting_rows = 0  # rows in all queued batches, kept as they join and leave

    def start(self) -> None:
        """Starts the batch workers; call from the server's event loop."""
        self._loop = asyncio.get_running_loop()  # kept: each get_running_loop() costs a getpid() system call
        self._wakeup = asyncio.Event()
        self._workers = [self._loop.create_task(self._work()) for _ in range(self.options.num_batch_threads)]

    async def stop(self) -> None:
        for worker in self._workers:
            worker.cancel()
        await asyncio.gather(*self._workers, return_exceptions=True)
        for queue in self._queues.values():
            for batch in queue.batches:
                for task in batch.tasks:
                    if not task.future.done():
                        task.future.set_exception(Unavailable("Server is shutting down"))
        self._executor.shutdown(wait=True)

    def run(
        self,
        servable: Servable,
        signature: Signature,
        inputs: Mapping[str, np.ndarray],
        *,
        may_run_on_loop: bool = False,
    ) -> asyncio.Future[Outputs]:
        """Queues `signature` on `inputs` as part of a batch; call from the loop.

        A plain method returning the future (`await scheduler.run(...)`): one
        coroutine frame less to suspend and resume on every request.

        Args:
            servable: The servable the signature belongs to.
            signature: What to run.
            inputs: Input alias to value, checked against the signature.
            may_run_on_loop: Whether this request's batch may run on the event
                loop (Predict over REST and gRPC, where it was measured;
                Classify, Regress and MultiInference keep the threads). A
                batch runs on the loop only when all its requests allow it.

        Returns:
            A future of the output alias to this request's rows of the
            batch's outputs.

        Raises:
            InvalidArgument: The request has more rows than `max_batch_size`.
            Unavailable: The queue holds max_enqueued_batches batches (with
                splitting: cannot take the request's rows).
        """
        # Requests merge when their inputs agree past the batch dimension; with
        # padding, when they agree in rank (`_execute` pads the rest).
        pad = self._pad
        if len(inputs) == 1:  # the common case, without the general case's set and sort
            ((alias, value),) = inputs.items()
            if not value.ndim:
                raise unbatchable("Batching Run() input tensors must have at least one dimension", inputs)
            size = value.shape[0]
            shapes = ((alias, value.ndim if pad else value.shape[1:], value.dtype.str),)
        else:
            check_batchable(inputs)
            size = next(iter(inputs.values())).shape[0]
            shapes = tuple(
                (alias, value.ndim if pad else value.shape[1:], value.dtype.str)
                for alias, value in sorted(inputs.items())
            )
        if size > self.options.max_batch_size:
            raise too_large(size, self.options)
        if size < 1:
            return self._loop.run_in_executor(self._executor, signature.run, inputs)
        key = (id(servable), signature.name, shapes)
        queue = self._queues.get(key)
        if queue is None or queue.servable is not servable:
            queue = self._queues[key] = _Queue(servable, signature)
        batches = queue.batches
        max_batch_size = self._max_batch_size
        open_slot = max_batch_size - batches[-1].size if batches else max_batch_size
        if self.options.max_execution_batch_size is None:
            if size > open_slot and len(batches) >= self.options.max_enqueued_batches:
                raise queue_full(len(batches), self.options)
        else:
            check_capacity(size, batches, self.options)
            if size > open_slot:
                return self._run_split(queue, inputs, size, open_slot, may_run_on_loop)
        future = self._loop.create_future()
        self._enqueue(queue, _Task(inputs, size, future, may_run_on_loop))
        return future

    def _enqueue(self, queue: _Queue, task: _Task) -> None:
        """Adds `task` to the queue's open batch, or to a new one when it does not fit."""
        batches = queue.batches
        now = time.monotonic()
        if not batches or batches[-1].size + task.size > self._max_batch_size:
            batches.append(_Batch(created=now))
        task.enqueued = now
        batch = batches[-1]
        batch.tasks.append(task)
        batch.size += task.size
        self._waiting_rows += task.size
        self._wakeup.set()

    def _run_split(
        self, queue: _Queue, inputs: Mapping[str, np.ndarray], size: int, open_slot: int, may_run_on_loop: bool
    ) -> asyncio.Future[Outputs]:
        """Queues a request in parts, as TensorFlow's eager split does (`InputSplitMetadata`): the
        open batch's free rows first, then parts of `max_execution_batch_size` rows."""
        bounds = split_bounds(size, open_slot, self._max_batch_size)
        parts = []
        for start, stop in bounds:
            part = {alias: value[start:stop] for alias, value in inputs.items()}
            parts.append(self._loop.create_future())
            self._enqueue(queue, _Task(part, stop - start, parts[-1], may_run_on_loop))
        return asyncio.ensure_future(joined(parts))

    def _take_ready(self) -> tuple[_Queue, _Batch] | tuple[None, float | None]:
        """Pops the oldest runnable batch, or returns (None, seconds to wait)."""
        now = time.monotonic()
        best: tuple[_Queue, _Batch] | None = None
        next_deadline = None
        for key, queue in list(self._queues.items()):
            if not queue.batches:
                del self._queues[key]
                continue
            head = queue.batches[0]
            full = head.size >= self._max_batch_size or len(queue.batches) > 1
            deadline = head.created + self._timeout
            if full or deadline <= now:
                if best is None or head.created < best[1].created:
                    best = (queue, head)
            elif next_deadline is None or deadline < next_deadline:
                next_deadline = deadline
        if best is not None:
            best[0].batches.popleft()
            self._waiting_rows -= best[1].size
            return best
        return None, (None if next_deadline is None else max(0.0, next_deadline - now))

    async def _work(self) -> None:
        while True:
            try:
                await self._work_once()
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - a worker must survive anything
                log.exception("Batch worker error")

    async def _work_once(self) -> None:
        if self._inline_candidate():
            await self._let_arrivals_in()
        queue, batch = self._take_ready()
        if queue is None:
            # Sleep until a new request, a finished batch, or (`batch` holds the
            # seconds left) the oldest waiting batch's timeout.
            self._wakeup.clear()
            timer = None if batch is None else asyncio.get_running_loop().call_later(batch, self._wakeup.set)
            await self._wakeup.wait()
            if timer is not None:
                timer.cancel()
            return
        tasks = [t for t in batch.tasks if not t.future.cancelled()]
        if not tasks:
            return
        dequeued = time.monotonic()
        rows = batch.size if len(tasks) == len(batch.tasks) else sum(t.size for t in tasks)
        try:
            if self._runs_inline(queue.signature, tasks, rows):
                results = self._timed_execute(queue.signature, tasks, rows)
            else:
                results = await asyncio.get_running_loop().run_in_executor(
                    self._executor, self._timed_execute, queue.signature, tasks, rows
                )
        except Exception as err:  # noqa: BLE001 - every waiting request gets the error
            for task in tasks:
                if not task.future.done():
                    task.future.set_exception(err)
            return
        self._wakeup.set()
        self._last_rows = rows
        # Each request's wait, as TensorFlow Serving's queuing_latency records it (per task).
        self._observe(queue.servable, queue.signature, rows, [dequeued - task.enqueued for task in tasks])
        for task, result in zip(tasks, results):
            if not task.future.done():
                task.future.set_result(result)

    def _inline_candidate(self) -> bool:
        """Whether a batch that is not full yet would run on the loop."""
        return any(
            queue.batches
            and queue.batches[0].size < self._max_batch_size
            and self._runs_inline(queue.signature, queue.batches[0].tasks, queue.batches[0].size)
            for queue in self._queues.values()
        )

    async def _let_arrivals_in(self) -> None:
        """Yields to the loop while requests keep joining the queues.

        A batch on a thread fills while the previous one runs; a batch on the
        loop would run with what is queued at once. Requests that have
        arrived are a few loop iterations from the queue (REST: read, then
        parsed in their handler's task; gRPC: grpc.aio accepts one call per
        iteration and reads its message in another), so they are let in
        first. Too few quiet iterations give tiny batches and lose
        throughput.

        How many quiet iterations end the wait follows the load: 64 until
        the batch holds as many rows as the previous one, 8 after that (so
        batches grow to what the load brings, and a batch that holds all
        the requests in flight does not wait long). Under many concurrent
        calls this rule gives larger batches and less CPU per request than a
        fixed count, and costs no more at few calls (figures in NOTES.md,
        "Serving measurements").
        """
        previous = self._last_rows
        rows, quiet = self._waiting_rows, 0
        for _ in range(_MAX_ARRIVAL_YIELDS):
            await asyncio.sleep(0)
            now = self._waiting_rows
            if now >= self._max_batch_size:
                return
            quiet = quiet + 1 if now == rows else 0
            if quiet >= (_MIN_QUIET_YIELDS if now >= previous else _MAX_QUIET_YIELDS):
                return
            rows = now

    def _runs_inline(self, signature: Signature, tasks: list[_Task], rows: int) -> bool:
        # Scaled up to this batch's rows: a model whose 3-row batch took 2 ms would
        # otherwise run its next 30-row batch (20 ms) on the loop, holding every request.
        seconds = self._call_times.estimate(signature, rows)
        return (
            seconds is not None and seconds < self._inline_run_seconds and all(task.may_run_on_loop for task in tasks)
        )

    def _timed_execute(self, signature: Signature, tasks: list[_Task], total: int) -> list[Outputs]:
        return self._call_times.timed(signature, total, self._execute, signature, tasks, total)

    def _execute(self, signature: Signature, tasks: list[_Task], total: int) -> list[Outputs]:
        padded = next((s for s in self.options.allowed_batch_sizes if s >= total), total)
        merged = {}
        for alias in tasks[0].inputs:
            parts = [t.inputs[alias] for t in tasks]
            if self._pad and len(parts) > 1:
                parts = pad_to_largest(alias, parts)
            if padded > total:  # as TensorFlow Serving: copies of the last request's first row
                parts.append(np.repeat(parts[-1][:1], padded - total, axis=0))
            merged[alias] = parts[0] if len(parts) == 1 else np.concatenate(parts)
        outputs = signature.run(merged)
        for alias, value in outputs.items():
            if value.ndim == 0 or value.shape[0] != padded:
                raise Internal(
                    message(
                        f"Batched output tensor {alias!r} does not have the batch size as first dimension",
                        expected=f"first dimension {padded}",
                        received=f"shape {list(value.shape)}",
                        fix="Serve this signature without batching, or make its outputs batch-major.",
                    )
                )
        results, offset = [], 0
        for task in tasks:
            results.append({alias: value[offset : offset + task.size] for alias, value in outputs.items()})
            offset += task.size
        return results
