"""CsvExampleGen's DoFn that turns parsed CSV cells into tf.Examples.

What: builds `tfx.components.example_gen.csv_example_gen.executor._ParsedCsvToTfExample`.

Why: the CSV ExampleGen reads its files with its own dialect and missing-value
handling, then converts the cells exactly as TFX's does, with the column types
tfx_bsl's `ColumnTypeInferrer` infers; TFX has that conversion only as this
private DoFn (its public form, `_CsvToExample`, reads the files itself).

Pinned: tfx `compat.tfx.PINNED`. Shape check (`ENTRY`, `fits()`): the DoFn exists, takes no
constructor arguments and processes `(csv_cells, column_infos)`; otherwise the CSV
ExampleGen reads with TFX's own CSV transform (one log line).
"""

from __future__ import annotations

import inspect

import compat

__all__ = ["ENTRY", "fits", "shape_problem", "parsed_csv_to_tf_example"]

ENTRY = "compat.tfx.example_gen"


def shape_problem() -> str | None:
    """None when TFX's `_ParsedCsvToTfExample` is the DoFn used here, else what differs."""
    from tfx.components.example_gen.csv_example_gen import executor

    dofn = getattr(executor, "_ParsedCsvToTfExample", None)
    if not isinstance(dofn, type):
        return "csv_example_gen.executor has no class `_ParsedCsvToTfExample`"
    if list(inspect.signature(dofn.__init__).parameters) != ["self"]:
        return "_ParsedCsvToTfExample takes constructor arguments"
    parameters = list(inspect.signature(dofn.process).parameters)
    if parameters != ["self", "csv_cells", "column_infos"]:
        return f"_ParsedCsvToTfExample.process takes {parameters}, expected ['self', 'csv_cells', 'column_infos']"
    return None


def fits() -> bool:
    """Whether `parsed_csv_to_tf_example` may be used (False, after one log line: use TFX's CSV transform)."""
    return compat.check_shape(ENTRY, shape_problem)


def parsed_csv_to_tf_example():
    """A new `_ParsedCsvToTfExample` DoFn: `process(cells, column_infos)` yields one tf.Example per row."""
    from tfx.components.example_gen.csv_example_gen import executor

    return executor._ParsedCsvToTfExample()
