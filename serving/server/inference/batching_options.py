"""TensorFlow Serving's batching knobs (`BatchingParameters`), checked: `BatchingOptions`.

Read from a `--batching_parameters_file` proto (`BatchingOptions.from_proto`) or built in code;
a value TensorFlow Serving would refuse is refused here with the field, what was expected and the fix.
"""

from __future__ import annotations

import dataclasses
import os

from serving.config import ConfigError
from serving.errors import message
from serving.protos import session_bundle_config_pb2

__all__ = ["BatchingOptions"]


@dataclasses.dataclass(frozen=True)
class BatchingOptions:
    """The batching knobs; unset proto fields take TensorFlow Serving's defaults."""

    max_batch_size: int = 1000
    batch_timeout_micros: int = 0
    num_batch_threads: int = dataclasses.field(default_factory=lambda: os.cpu_count() or 1)
    max_enqueued_batches: int = 10
    allowed_batch_sizes: tuple[int, ...] = ()
    pad_variable_length_inputs: bool = False
    # Set when `enable_large_batch_splitting` is on: the largest batch that runs; `max_batch_size`
    # then bounds one request, which is split into batches of at most this size.
    max_execution_batch_size: int | None = None

    @property
    def batch_rows(self) -> int:
        """The most rows one batch gathers."""
        return self.max_execution_batch_size or self.max_batch_size

    def __post_init__(self) -> None:
        refused = next(_option_problems(self), None)
        if refused is not None:
            problem, expected, fix = refused
            raise ConfigError(message(problem, expected=expected, received=_received(self), fix=fix))

    @classmethod
    def from_proto(cls, params: session_bundle_config_pb2.BatchingParameters) -> BatchingOptions:
        """The options of a `--batching_parameters_file`, checked as TensorFlow Serving checks them.

        Raises:
            ConfigError: A value TensorFlow Serving refuses (its words first).
        """
        defaults = cls()

        def pick(field: str) -> int:
            return getattr(params, field).value if params.HasField(field) else getattr(defaults, field)

        splitting = params.HasField("enable_large_batch_splitting") and params.enable_large_batch_splitting.value
        enqueued = pick("max_enqueued_batches")
        return cls(
            max_batch_size=pick("max_batch_size"),
            batch_timeout_micros=pick("batch_timeout_micros"),
            num_batch_threads=pick("num_batch_threads"),
            # SharedBatchScheduler::AddQueue: 0 means 1 without splitting ("many existing models rely on it").
            max_enqueued_batches=1 if enqueued == 0 and not splitting else enqueued,
            allowed_batch_sizes=tuple(params.allowed_batch_sizes),
            pad_variable_length_inputs=params.pad_variable_length_inputs,
            # As bundle_factory_util.h: max_execution_batch_size, else max_batch_size.
            max_execution_batch_size=(
                (params.max_execution_batch_size.value if params.HasField("max_execution_batch_size") else None)
                or pick("max_batch_size")
                if splitting
                else None
            ),
        )


def _received(options: BatchingOptions) -> str:
    return (
        f"max_batch_size={options.max_batch_size}, batch_timeout_micros={options.batch_timeout_micros}, "
        f"num_batch_threads={options.num_batch_threads}, max_enqueued_batches={options.max_enqueued_batches}, "
        f"allowed_batch_sizes={list(options.allowed_batch_sizes)}"
        + (
            f", max_execution_batch_size={options.max_execution_batch_size}"
            if options.max_execution_batch_size is not None
            else ""
        )
    )


def _option_problems(options: BatchingOptions):
    """Yields (problem, expected, fix) for each value TensorFlow Serving's model server refuses,
    in its words (shared_batch_scheduler.h, bundle_factory_util.cc)."""
    if options.num_batch_threads < 1:
        yield (
            f"num_batch_threads must be positive; was {options.num_batch_threads}",
            "num_batch_threads >= 1",
            "Set num_batch_threads to the number of batches to run at once (e.g. the CPU count).",
        )
    if options.max_batch_size < 1:
        yield (
            f"input_batch_size_limit must be positive; was {options.max_batch_size}",
            "max_batch_size >= 1",
            "Set max_batch_size to the largest batch the model should run.",
        )
    if options.batch_timeout_micros < 0:
        yield (
            f"batch_timeout_micros must be non-negative; was {options.batch_timeout_micros}",
            "batch_timeout_micros >= 0",
            "Use 0 to run batches as soon as a thread is free.",
        )
    if options.max_enqueued_batches < 1:
        yield (
            f"max_enqueued_batches must be positive; was {options.max_enqueued_batches}",
            "max_enqueued_batches >= 1",
            "Set max_enqueued_batches to how many batches may wait (TensorFlow Serving's default is 10).",
        )
    allowed = options.allowed_batch_sizes
    execution = options.max_execution_batch_size
    if execution is not None and execution < 1:
        yield (
            f"max_execution_batch_size must be positive; was {execution}",
            "max_execution_batch_size >= 1",
            "Set max_execution_batch_size to the largest batch the model should run.",
        )
    if execution is not None and execution > options.max_batch_size:
        yield (
            "When enable_large_batch_splitting is true, input_batch_size_limit must be greater than or equal "
            "to max_execution_batch_size.",
            f"max_execution_batch_size <= max_batch_size={options.max_batch_size}",
            f"Lower max_execution_batch_size to at most {options.max_batch_size}, or raise max_batch_size "
            "(the most rows one request may have).",
        )
    # The model server checks only the last entry, with or without splitting (bundle_factory_util.cc
    # WrapSessionForBatching; the order check is a TODO there, b/161641195), and pads a batch to the
    # first listed size that holds it (`RoundToLowestAllowedBatchSize`).
    if allowed and allowed[-1] != options.max_batch_size:
        yield (
            "Last entry in allowed_batch_sizes must match max_batch_size; "
            f"last entry was {allowed[-1]}; expected {options.max_batch_size}",
            f"increasing sizes ending with max_batch_size={options.max_batch_size}",
            f"Use e.g. [{max(1, options.max_batch_size // 2)}, {options.max_batch_size}].",
        )
