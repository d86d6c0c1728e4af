"""CsvExampleGen for messy CSVs: TFX's FileBasedExampleGen with `csv_executor.Executor`.

TFX's own CsvExampleGen takes no `custom_config`; its base class does, and a
subclass that names its executor is how TFX asks for a custom executor
(`custom_executor_spec` is deprecated).
"""

from __future__ import annotations

from tfx.components.example_gen.component import FileBasedExampleGen
from tfx.components.example_gen.import_example_gen import executor as import_executor
from tfx.dsl.components.base import executor_spec
from tfx.types import standard_component_specs

from components.example_gen import csv_executor, spans

__all__ = ["CsvExampleGen", "SpanImportExampleGen"]


class CsvExampleGen(FileBasedExampleGen):
    """ExampleGen over CSV files: BOM-safe header, `na_values`, optional non-finite imputation.

    Example:
        >>> gen = CsvExampleGen(input_base="data/", custom_config=csv_executor.make_custom_config(["", "NA"], False))
    """

    EXECUTOR_SPEC = executor_spec.BeamExecutorSpec(csv_executor.Executor)


class _StampingImportExecutor(import_executor.Executor):
    """TFX's ImportExampleGen executor, setting the Examples' `span`/`version` properties (`spans.stamp_span`)."""

    def Do(self, input_dict, output_dict, exec_properties) -> None:  # noqa: N802 - TFX's name
        spans.stamp_span(output_dict[standard_component_specs.EXAMPLES_KEY], exec_properties)
        return super().Do(input_dict, output_dict, exec_properties)


class SpanImportExampleGen(FileBasedExampleGen):
    """TFX's ImportExampleGen (TFRecord files) whose Examples carry `span`/`version` as properties."""

    EXECUTOR_SPEC = executor_spec.BeamExecutorSpec(_StampingImportExecutor)
