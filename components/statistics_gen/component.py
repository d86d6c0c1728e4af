"""StatisticsGen that reads ExampleGen's columnar copy when there is one: TFX's StatisticsGen with `executor.Executor`."""

from __future__ import annotations

from tfx.components.statistics_gen.component import StatisticsGen as TfxStatisticsGen
from tfx.dsl.components.base import executor_spec

from components.statistics_gen import executor

__all__ = ["StatisticsGen"]


class StatisticsGen(TfxStatisticsGen):
    """TFX's StatisticsGen (same inputs, outputs and options); faster on our fast ExampleGen's output.

    Example:
        >>> stats = StatisticsGen(examples=example_gen.outputs["examples"])
    """

    EXECUTOR_SPEC = executor_spec.BeamExecutorSpec(executor.Executor)
