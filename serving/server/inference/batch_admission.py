"""Which requests a batch queue takes, and how a large one is split (TensorFlow's `shared_batch_scheduler.h`).

`too_large`: a request over `max_batch_size` rows ("Task size N is larger than maximum input batch
size M"). Without large-batch splitting, `queue_full` when the request needs a new batch and
`max_enqueued_batches` wait; with it, `check_capacity` (`ValidateBatchTaskQueueCapacity`) and
`split_bounds`, the row ranges of TensorFlow's eager split, whose parts' outputs `joined` puts
back together.
"""

from __future__ import annotations

import asyncio
import collections

import numpy as np

from serving.errors import InvalidArgument, Unavailable, message
from serving.server.inference.batching_options import BatchingOptions

__all__ = ["check_capacity", "joined", "queue_full", "split_bounds", "too_large"]


def split_bounds(size: int, open_slot: int, part_rows: int) -> list[tuple[int, int]]:
    """The row ranges a split request is queued as: `open_slot` rows first (when the open batch
    has room), then `part_rows` at a time."""
    first = min(size, open_slot) if open_slot > 0 else 0
    bounds = [(0, first)] if first else []
    bounds += [(start, min(start + part_rows, size)) for start in range(first, size, part_rows)]
    return bounds


async def joined(parts: list[asyncio.Future]) -> dict[str, np.ndarray]:
    """The outputs of a split request's parts, joined in row order; the first part's error if any failed."""
    results = await asyncio.gather(*parts, return_exceptions=True)
    failed = next((result for result in results if isinstance(result, BaseException)), None)
    if failed is not None:
        raise failed
    return {alias: np.concatenate([result[alias] for result in results]) for alias in results[0]}


def too_large(size: int, options: BatchingOptions) -> InvalidArgument:
    limit = options.max_batch_size
    return InvalidArgument(
        message(
            f"Task size {size} is larger than maximum input batch size {limit}",
            expected=f"at most max_batch_size={limit} rows (or examples) per request",
            received=f"a request of {size} rows",
            fix=f"Send at most {limit} rows per request, or raise max_batch_size in the batching parameters "
            "(with enable_large_batch_splitting and max_execution_batch_size, batches stay small).",
        )
    )


def queue_full(enqueued: int, options: BatchingOptions) -> Unavailable:
    return Unavailable(
        message(
            "The batch scheduling queue to which this task was submitted is full; currently "
            f"{enqueued} batches enqueued and max_enqueued_batches is {options.max_enqueued_batches}",
            expected=f"at most max_enqueued_batches={options.max_enqueued_batches} waiting batches",
            received=f"a request while {enqueued} batches wait",
            fix=_QUEUE_FULL_FIX,
        )
    )


def check_capacity(size: int, batches: collections.deque, options: BatchingOptions) -> None:
    """With large-batch splitting, a request must fit the rows the queue can still take
    (`ValidateBatchTaskQueueCapacity`: the open batch's free rows and `max_execution_batch_size`
    per batch that may still be enqueued; the open batch counts as enqueued, empty or not)."""
    execution = options.max_execution_batch_size
    enqueued = max(len(batches), 1)
    open_size = batches[-1].size if batches else 0
    capacity = (options.max_enqueued_batches - enqueued) * execution + execution - open_size
    if size > capacity:
        raise Unavailable(
            message(
                "The batch scheduling queue to which this task was submitted is full; task size is "
                f"{size} but scheduling capacity is only {capacity} (num_enqueued_batches={enqueued}, "
                f"max_enqueued_batches={options.max_enqueued_batches}, open_batch_size={open_size}, "
                f"max_execution_batch_size={execution})",
                expected=f"at most {capacity} rows while {enqueued} batches wait",
                received=f"a request of {size} rows",
                fix=_QUEUE_FULL_FIX,
            )
        )


_QUEUE_FULL_FIX = "Retry with backoff, add replicas, or raise max_enqueued_batches/num_batch_threads."
