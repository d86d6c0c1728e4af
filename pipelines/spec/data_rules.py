"""Spec rules over what the data holds: the label's classes, constant or empty features.

They read the `DataProfile` that `rules.rule_data` made (one pass over the
CSV files), so they cost nothing extra. A label that cannot be learned from is
an error; a feature that carries no information is a warning on stderr.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator

import numpy as np

from components.example_gen.formats import FORMATS
from components.transform import expressions
from pipelines.profiling.data_checks import TABULAR_FORMATS
from pipelines.spec.errors import SpecProblem
from pipelines.spec.label_missing import DROP_STEP, note_dropped_rows
from pipelines.spec.slice_rules import slice_columns

__all__ = [
    "rule_label_values",
    "rule_feature_values",
    "columns_used",
    "label_columns",
    "label_values",
    "label_scale",
    "where_in_file",
    "stored_as_text",
]


def _numpy_ops(rows: int) -> dict:
    """The expression ops over whole columns, as Transform computes them; text never equals a number."""

    def divide(a, b):
        a, b = np.broadcast_arrays(np.asarray(a, dtype=float), np.asarray(b, dtype=float))
        return np.divide(a, b, out=np.zeros(a.shape), where=b != 0)  # tf.math.divide_no_nan

    def compare(op, text_result: bool):
        def apply(a, b):
            if isinstance(a, str) or isinstance(b, str):
                return np.full(rows, a == b if isinstance(a, str) and isinstance(b, str) else text_result)
            return op(a, b)

        return apply

    return {
        "add": np.add,
        "sub": np.subtract,
        "mul": np.multiply,
        "div": divide,
        "neg": np.negative,
        "gt": np.greater,
        "ge": np.greater_equal,
        "lt": np.less,
        "le": np.less_equal,
        "eq": compare(np.equal, False),
        "ne": compare(np.not_equal, True),
        "and": np.logical_and,
        "or": np.logical_or,
        "not": np.logical_not,
        "cast": lambda value: np.asarray(value, dtype=float),
    }


def where_in_file(data_format: str, path: str, number: int) -> str:
    """Where a cell is, for messages: `path row N (counting from 1)` in Parquet, Avro or JSON Lines (their
    profile counts rows, from 1); `path line N` otherwise (a CSV profile counts the file's lines).

    >>> where_in_file("parquet", "wine.parquet", 4)
    'wine.parquet row 4 (counting from 1)'
    """
    return f"{path} row {number} (counting from 1)" if data_format in FORMATS else f"{path} line {number}"


def stored_as_text(name: str) -> str:
    """The fix for a Parquet, Avro or JSON Lines column read as text where numbers are needed: its type in
    the file, not its cells' text, decides (`data.na_values` cannot make it numeric)."""
    return (
        f"The file stores `{name}` as text: write it as numbers, e.g. pandas "
        f"`df[{name!r}] = pd.to_numeric(df[{name!r}], errors='coerce')` before writing the file"
    )


def label_columns(spec) -> tuple[str, ...]:
    """The raw columns the label reads (empty when the expression does not parse)."""
    if spec.label.column is not None:
        return (spec.label.column,)
    try:
        return tuple(expressions.column_names(spec.label.expression))
    except expressions.ExpressionError:
        return ()


def columns_used(spec, schema_path: str | None = None) -> tuple[str, ...] | None:
    """The data columns the pipeline reads: features, the label's and the slices' columns, sorted; None: every column.

    Every column is kept where the spec may read others than it names: a user `transform.module` or
    `transform.module_file` (its `inputs` hold every column), a custom step reading `ExampleGen.examples` (a `row_filter` expression),
    or a `schema` file (it may require columns the spec does not name). ExampleGen writes only these
    columns and `validate` profiles only these.
    """
    if (
        schema_path
        or spec.transform.module
        or spec.transform.module_file  # a TFX preprocessing_fn reads any column
        or any(
            str(source).startswith("ExampleGen.")
            for step in spec.steps
            if step.name != DROP_STEP  # `label.missing: drop` reads only the label column
            for source in step.inputs.values()
        )
    ):
        return None
    return tuple(sorted({*spec.features, *label_columns(spec), *slice_columns(spec)}))


def label_values(spec, profile) -> list | None:
    """The label of every row as Transform computes it (None: a missing label column cell).

    Args:
        spec: the PipelineSpec.
        profile: the DataProfile, with `values` kept for `label_columns(spec)`.

    Returns:
        One value per row, or None when the profile lacks a needed column.
    """
    names = label_columns(spec)
    if not names or any(n not in profile.values for n in names):
        return None
    if spec.label.column is not None:
        return list(profile.values[spec.label.column])
    # Evaluated once over whole columns (numpy), not once per row: 1.5M rows take a second, not minutes.
    columns = {n: np.array([np.nan if v is None else v for v in profile.values[n]], dtype=float) for n in names}
    rows = len(next(iter(columns.values())))
    missing = np.zeros(rows, dtype=bool)
    for values in columns.values():
        missing |= np.isnan(values)  # kept values are finite or None
    with np.errstate(all="ignore"):
        value = expressions.evaluate(spec.label.expression, columns, _numpy_ops(rows))
        labels = np.broadcast_to(np.asarray(value, dtype=float), (rows,))
    return np.where(missing, 0.0, labels).tolist()  # Transform gives label 0 where an input is missing


def label_scale(spec, profile) -> tuple[float, float] | None:
    """(mean, standard deviation) of a regression label over every row of the data, or None (not
    regression, not CSV, or no spread). The built-in models predict `mean + std * output`, so a label in
    the hundreds of thousands (house prices) is learned at the default learning rate, not only one near 1."""
    if spec.label.task == "classification" or profile is None or profile.format not in TABULAR_FORMATS:
        return None
    values = label_values(spec, profile)
    present = np.array([v for v in values or () if v is not None], dtype=float)
    if present.size < 2 or not np.isfinite(present).all():
        return None
    std = float(present.std())
    return (float(present.mean()), std) if std > 0 else None


def rule_label_values(ctx) -> Iterator[SpecProblem]:
    """The label has values, and at least two classes (or two distinct values for regression)."""
    spec, profile = ctx.spec, ctx.profile
    if profile is None or profile.format not in TABULAR_FORMATS:
        return
    path = "label.column" if spec.label.column is not None else "label.expression"
    source = spec.label.column or spec.label.expression
    gaps = profile.missing_cells.get(spec.label.column) if spec.label.column is not None else None
    if gaps is not None and gaps[0] < profile.rows and spec.label.missing == "drop":
        note_dropped_rows(spec, gaps[0], profile.rows, gaps[1], gaps[2])
    elif gaps is not None and gaps[0] < profile.rows:  # every cell missing: "no values" below
        count, where, line = gaps
        if profile.format == "csv":  # an empty cell, or a text a CSV reader takes for missing
            first = f"{where} line {line}; a cell in `data.na_values`"
            as_class = "; or, if that text is a class, take it out of `data.na_values`"
        else:  # a null
            first, as_class = where_in_file(profile.format, where, line), ""
        yield ctx.problem(
            path,
            f"label column `{source}` has no value in {count:,} of {profile.rows:,} rows (the first: {first}). "
            "Expected a label in every row: a missing label is never guessed. Add `missing: drop` under `label:` "
            "to leave those rows out of training and evaluation, or remove them from the data, e.g. pandas "
            f"`df.dropna(subset=[{source!r}])`{as_class}.",
        )
        return
    if spec.label.column is not None and spec.label.column in profile.first_text:
        # A text label: its classes are counted on the raw text.
        if spec.label.column in profile.constant:
            yield ctx.problem(
                path,
                f"label column `{source}` has a single class in {', '.join(profile.files)}. Expected at least two "
                "classes. Received one. Fix the data, or choose another label.",
            )
        return
    if any(name not in profile.numeric for name in label_columns(spec)) and spec.label.expression is not None:
        return  # rule_data names the missing or text column
    values = label_values(spec, profile)
    if values is None:
        return
    present = [v for v in values if v is not None]
    if not present:
        yield ctx.problem(
            path,
            f"label `{source}` has no values in {', '.join(profile.files)}: every cell is missing. Expected a value "
            "in most rows. Fix the data or the label column.",
        )
        return
    distinct = sorted(set(present))
    if len(distinct) < 2:
        one, many = ("class", "classes") if spec.label.task == "classification" else ("value", "values")
        yield ctx.problem(
            path,
            f"label `{source}` has a single {one} ({distinct[0]:g}) in all {len(present)} labelled rows of "
            f"{', '.join(profile.files)}: a model cannot learn from it. Expected at least two distinct {many}. "
            f"Received one. Fix the data, or choose another label.",
        )


def rule_feature_values(ctx) -> Iterator[SpecProblem]:
    """Warns (stderr, never fails) about declared features that hold a single value, and `log`
    features that hold negative numbers (log1p(max(x, 0)) makes each of them 0)."""
    profile = ctx.profile
    if profile is None:
        return
    for name, feature in ctx.spec.features.items():
        if name in profile.constant:
            print(
                f"warning: features.{name}: column `{name}` holds the same value in every row of "
                f"{', '.join(profile.files)}; it cannot help the model. Remove the feature or check the data.",
                file=sys.stderr,
            )
        least = profile.minimum.get(name)
        if feature.transform == "log" and least is not None and least < 0:
            print(
                f"warning: features.{name}.transform: column `{name}` holds negative numbers (the least: {least:g}); "
                "`log` takes log1p(max(x, 0)), so each of them becomes 0. Use `zscore`, or shift the column to 0 "
                "and up first.",
                file=sys.stderr,
            )
    return
    yield  # a generator, like every rule
