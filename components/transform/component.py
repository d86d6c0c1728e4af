"""Transform that reads ExampleGen's columnar copy when there is one: TFX's Transform with `executor.Executor`."""

from __future__ import annotations

from tfx.components.transform.component import Transform as TfxTransform
from tfx.dsl.components.base import executor_spec

from components.transform import executor

__all__ = ["Transform"]


class Transform(TfxTransform):
    """TFX's Transform (same inputs, outputs and options); it skips decoding examples our ExampleGen also wrote as Arrow.

    Example:
        >>> transform = Transform(examples=examples, schema=schema, preprocessing_fn="my_module.preprocessing_fn")
    """

    EXECUTOR_SPEC = executor_spec.BeamExecutorSpec(executor.Executor)
