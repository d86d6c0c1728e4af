"""Spec rules on the label: its type fits the task, it is not a feature, and its expression is short enough."""

from __future__ import annotations

import re
from collections.abc import Iterator

from components.example_gen.formats import FORMATS
from pipelines.spec.data_rules import stored_as_text, where_in_file
from pipelines.spec.errors import SpecProblem

__all__ = [
    "MAX_EXPRESSION_CHARS",
    "MAX_EXPRESSION_TERMS",
    "expression_size_problem",
    "rule_expression_size",
    "rule_label",
    "rule_label_type",
]

# A label expression is a short formula; longer ones are refused before Python's parser sees them.
MAX_EXPRESSION_CHARS = 1000
MAX_EXPRESSION_TERMS = 100
_TERM = re.compile(r"[A-Za-z_]\w*|\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+")


def expression_size_problem(expression: str) -> str | None:
    """Why `expression` is too long to be a label formula, or None.

    Args:
        expression: the `label.expression` text.

    Returns:
        A message naming the limit that was passed, or None.
    """
    terms = len(_TERM.findall(expression))
    if len(expression) <= MAX_EXPRESSION_CHARS and terms <= MAX_EXPRESSION_TERMS:
        return None
    return (
        f"the expression is too long: expected at most {MAX_EXPRESSION_CHARS} characters and "
        f"{MAX_EXPRESSION_TERMS} terms. Received: {len(expression)} characters, {terms} terms. "
        "Compute the label in a column of the data, or in `transform.module`, and use `label.column`."
    )


def rule_expression_size(ctx) -> Iterator[SpecProblem]:
    """A label expression is short enough to parse (Python's parser recurses once per term)."""
    if ctx.spec.label.expression is not None:
        too_long = expression_size_problem(ctx.spec.label.expression)
        if too_long:
            yield ctx.problem("label.expression", too_long)


def rule_label_type(ctx) -> Iterator[SpecProblem]:
    """A regression label must be a numeric column (classification accepts text classes)."""
    label = ctx.spec.label
    profile = ctx.profile
    if label.task != "regression" or label.column is None or profile is None or label.column not in profile.columns:
        return
    if label.column not in profile.numeric and label.column not in profile.empty:
        where = getattr(profile, "first_text", {}).get(label.column)
        received = (
            f"`{where[2]}` at {where_in_file(profile.format, where[0], where[1])}"
            if where
            else f"text values in {profile.files[0]}"
        )
        as_numbers = f" {stored_as_text(label.column)}." if profile.format in FORMATS else ""
        yield ctx.problem(
            "label.column",
            f"column `{label.column}` holds text, but `task: regression` needs a numeric label. Expected numbers. "
            f"Received: {received}. Use `task: classification` for classes, or a numeric column.{as_numbers}",
        )


def rule_label(ctx) -> Iterator[SpecProblem]:
    label = ctx.spec.label
    if label.name in ctx.spec.features:
        yield ctx.problem("label.name", f"label name `{label.name}` is also a feature. Give the label its own name.")
    if label.column is not None and label.column in ctx.spec.features:
        yield ctx.problem(
            "label.column",
            f"the label column `{label.column}` is also listed as a feature: that leaks the answer. Remove it from `features`.",
        )
    if not ctx.spec.features:
        yield ctx.problem("features", "no features declared. Add at least one column under `features`.")
