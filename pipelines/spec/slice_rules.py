"""Spec rules: `evaluation.slices` names columns of the data; `per_slice` gates and `fairness` have slices.

A slice column need not be a model feature: ExampleGen keeps it
(`data_rules.columns_used`) so the Evaluator can slice by it. The label
column cannot be a slice (every slice would hold one class).
"""

from __future__ import annotations

from collections.abc import Iterator

from pipelines.spec.errors import SpecProblem, did_you_mean

__all__ = ["rule_fairness", "rule_slices", "slice_columns"]


def slice_columns(spec) -> tuple[str, ...]:
    """The distinct columns `evaluation.slices` names, in the order first named."""
    return tuple(dict.fromkeys(column for columns in spec.evaluation.slices for column in columns))


def rule_slices(ctx) -> Iterator[SpecProblem]:
    """Slice columns missing from the data, a label column sliced on, `per_slice` gates without slices.

    Args:
      ctx: the `CheckContext` (spec, source, data profile).

    Yields:
      A problem per mistake, at its YAML path, with the fix.
    """
    evaluation = ctx.spec.evaluation
    if not evaluation.slices:
        for name, gate in evaluation.thresholds.items():
            if gate.per_slice:
                yield ctx.problem(
                    f"evaluation.thresholds.{name}.per_slice",
                    "`per_slice: true` needs slices to hold on, but `evaluation.slices` is empty. Add slices, e.g. "
                    "`evaluation.slices: [[payment_type]]`, or remove `per_slice`.",
                )
        return
    profile = ctx.profile
    if profile is None or not profile.columns:
        return  # the data rules said why the data cannot be read
    columns = list(profile.columns)
    label = ctx.spec.label.column
    for i, names in enumerate(evaluation.slices):
        for j, name in enumerate(names):
            path = f"evaluation.slices[{i}][{j}]"
            if name not in columns:
                yield ctx.problem(
                    path,
                    f"slice column `{name}` is not in the data ({profile.files[0]}).{did_you_mean(name, columns)} "
                    f"Expected one of: {', '.join(columns)}. Fix the column name.",
                )
            elif name == label:
                yield ctx.problem(
                    path,
                    f"`{name}` is the label column: each of its slices would hold one class. Expected a feature "
                    "or another column of the data. Slice by a column that describes the rows instead.",
                )


def rule_fairness(ctx) -> Iterator[SpecProblem]:
    """`evaluation.fairness` without slices to compare, or on a label that is not binary.

    Args:
      ctx: the `CheckContext` (spec, source, the label's classes).

    Yields:
      A problem per mistake, at `evaluation.fairness`, with the fix.
    """
    spec = ctx.spec
    if spec.evaluation.fairness is None:
        return
    if not spec.evaluation.slices:
        yield ctx.problem(
            "evaluation.fairness",
            "fairness compares rates between slices, but `evaluation.slices` is empty. Add the slices to "
            "compare, e.g. `evaluation.slices: [[payment_type]]`, or remove `fairness`.",
        )
    if spec.label.task != "classification":
        yield ctx.problem(
            "evaluation.fairness",
            f"fairness rates (false positive/negative rate, positive rate) need a binary label; `{spec.label.name}` "
            "is a regression label. Remove `fairness`, or make the label a yes/no class.",
        )
        return
    classes = ctx.label_classes
    if classes is not None and len(classes) != 2:
        yield ctx.problem(
            "evaluation.fairness",
            f"fairness rates (false positive/negative rate, positive rate) need a binary label; `{spec.label.name}` "
            f"has {len(classes)} classes ({', '.join(map(str, classes[:5]))}{', ...' if len(classes) > 5 else ''}). "
            "Remove `fairness`, or make the label two classes.",
        )
