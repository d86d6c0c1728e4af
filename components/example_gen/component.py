"""CsvExampleGen for messy CSVs: TFX's FileBasedExampleGen with `csv_executor.Executor`.

TFX's own CsvExampleGen takes no `custom_config`; its base class does, and a
subclass that names its executor is how TFX asks for a custom executor
(`custom_executor_spec` is deprecated).
"""

from __future__ import annotations

from tfx.components.example_gen.component import FileBasedExampleGen
from tfx.dsl.components.base import executor_spec

from components.example_gen import csv_executor

__all__ = ["CsvExampleGen"]


class CsvExampleGen(FileBasedExampleGen):
    """ExampleGen over CSV files: BOM-safe header, `na_values`, optional non-finite imputation.

    Example:
        >>> gen = CsvExampleGen(input_base="data/", custom_config=csv_executor.make_custom_config(["", "NA"], False))
    """

    EXECUTOR_SPEC = executor_spec.BeamExecutorSpec(csv_executor.Executor)
