"""Spec rules over what the data holds: the label's classes, constant or empty features.

They read the `DataProfile` that `rules.rule_data` made (one pass over the
CSV files), so they cost nothing extra. A label that cannot be learned from is
an error; a feature that carries no information is a warning on stderr.
"""

from __future__ import annotations

import operator
import sys
from collections.abc import Iterator

from components.transform import label_expression
from pipelines.spec.errors import SpecProblem

__all__ = ["rule_label_values", "rule_feature_values", "label_columns", "label_values"]

_PY_OPS = {
    "add": operator.add,
    "sub": operator.sub,
    "mul": operator.mul,
    "div": lambda a, b: a / b if b else 0.0,  # tf.math.divide_no_nan, as Transform computes it
    "neg": operator.neg,
    "gt": operator.gt,
    "ge": operator.ge,
    "lt": operator.lt,
    "le": operator.le,
    "eq": operator.eq,
    "ne": operator.ne,
    "and": lambda a, b: a and b,
    "or": lambda a, b: a or b,
    "not": operator.not_,
    "cast": float,
}


def label_columns(spec) -> tuple[str, ...]:
    """The raw columns the label reads (empty when the expression does not parse)."""
    if spec.label.column is not None:
        return (spec.label.column,)
    try:
        return tuple(label_expression.column_names(spec.label.expression))
    except label_expression.ExpressionError:
        return ()


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
    results = []
    for row in zip(*(profile.values[n] for n in names)):
        if any(v is None for v in row):
            results.append(0.0)  # Transform gives label 0 where an input is missing
            continue
        value = label_expression.evaluate(spec.label.expression, dict(zip(names, row)), _PY_OPS)
        results.append(float(value))
    return results


def rule_label_values(ctx) -> Iterator[SpecProblem]:
    """The label has values, and at least two classes (or two distinct values for regression)."""
    spec, profile = ctx.spec, ctx.profile
    if profile is None or profile.format != "csv":
        return
    path = "label.column" if spec.label.column is not None else "label.expression"
    source = spec.label.column or spec.label.expression
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
    """Warns (stderr, never fails) about declared features that hold a single value."""
    profile = ctx.profile
    if profile is None:
        return
    for name in ctx.spec.features:
        if name in profile.constant:
            print(
                f"warning: features.{name}: column `{name}` holds the same value in every row of "
                f"{', '.join(profile.files)}; it cannot help the model. Remove the feature or check the data.",
                file=sys.stderr,
            )
    return
    yield  # a generator, like every rule
