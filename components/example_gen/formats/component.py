"""FileExampleGen: TFX's FileBasedExampleGen over Parquet, Avro or JSON Lines files (`formats.executor`)."""

from __future__ import annotations

from tfx.components.example_gen.component import FileBasedExampleGen
from tfx.dsl.components.base import executor_spec

from components.example_gen.formats import executor

__all__ = ["FileExampleGen"]


class FileExampleGen(FileBasedExampleGen):
    """ExampleGen over Parquet, Avro or JSON Lines files; the format and the columns travel in `custom_config`.

    Example:
        >>> gen = FileExampleGen(input_base="data/", custom_config=executor.make_custom_config("parquet", [""], False))
    """

    EXECUTOR_SPEC = executor_spec.BeamExecutorSpec(executor.Executor)
