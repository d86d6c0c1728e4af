"""Spec rule: each evaluation metric and per-class threshold fits the label's number of classes.

`auc` and `binary_accuracy` need two classes; `macro_auc`, `top_k_accuracy`
and the other multi-class metrics need three or more; a threshold's
`classes` must name classes of the label. The classes are the declared
`label.classes`, an expression's `0`/`1`, or those found in the data (the
same list the compiler builds the pipeline with).
"""

from __future__ import annotations

from collections.abc import Iterator

from components.transform.label_classes import LabelClassError
from pipelines.spec import metrics as metric_table
from pipelines.spec.errors import SpecProblem, did_you_mean
from pipelines.spec.label_values import label_classes

__all__ = ["rule_metric_classes", "rule_metrics", "read_label_classes", "fitted_metrics"]


def read_label_classes(resolved) -> list[str] | None:
    """The label's classes in index order, or None (regression, or data the label rules report on)."""

    try:
        return label_classes(resolved)
    except (LabelClassError, OSError, ValueError):
        return None  # the label rules report why the classes cannot be read


def fitted_metrics(spec, classes: list[str] | None) -> tuple[str, ...]:
    """`evaluation.metrics`, or when the spec leaves them out, the metrics that fit its label.

    Args:
      spec: the `PipelineSpec`.
      classes: the label's classes (`read_label_classes`); None counts as binary for classification.

    Returns:
      The metric names the run computes.
    """
    if spec.evaluation.metrics is not None:
        return tuple(spec.evaluation.metrics)
    return metric_table.default_metrics(spec.label.task, len(classes) if classes else 2)


def rule_metric_classes(ctx) -> Iterator[SpecProblem]:
    """Metrics and per-class thresholds that do not fit the label's classes.

    Args:
      ctx: the `CheckContext` (spec, source, resolved paths).

    Yields:
      A problem per misfit, at its YAML path, with the fix.
    """
    spec = ctx.spec
    if spec.label.task != "classification":
        return
    classes = ctx.label_classes
    if classes is None:
        return
    for i, name in enumerate(spec.evaluation.metrics or ()):  # unset: `fitted_metrics` fit by construction
        if name in metric_table.METRICS:
            problem = metric_table.class_count_problem(name, len(classes))
            if problem:
                yield ctx.problem(f"evaluation.metrics[{i}]", problem)
    for name, gate in spec.evaluation.thresholds.items():
        if name == "confusion_matrix":
            yield ctx.problem(
                f"evaluation.thresholds.{name}",
                "a confusion matrix is a table, not a number, so it cannot gate the blessing. Remove this "
                "threshold and gate `accuracy`, `precision` or `recall` instead.",
            )
        if not getattr(gate, "classes", None):
            continue
        path = f"evaluation.thresholds.{name}.classes"
        if name not in metric_table.PER_CLASS or len(classes) <= 2:
            yield ctx.problem(
                path,
                f"only `precision` and `recall` of a label with 3 or more classes are per class. Received: `{name}` "
                f"on a label of {len(classes)} classes. Remove `classes`.",
            )
            continue
        for wanted in gate.classes:
            if str(wanted) not in classes:
                yield ctx.problem(
                    path,
                    f"`{wanted}` is not a class of the label.{did_you_mean(str(wanted), classes)} Expected one of: "
                    f"{', '.join(classes)}. Fix the class name.",
                )


def rule_metrics(ctx) -> Iterator[SpecProblem]:
    task = ctx.spec.label.task
    allowed = metric_table.metrics_for_task(task)
    for i, name in enumerate(ctx.spec.evaluation.metrics or ()):
        if name not in allowed:
            yield ctx.problem(
                f"evaluation.metrics[{i}]",
                f"unknown metric `{name}` for a {task} label.{did_you_mean(name, allowed)} Expected one of: {', '.join(allowed)}.",
            )
    declared = ctx.metrics
    for name in ctx.spec.evaluation.thresholds:
        if name not in declared:
            which = (
                "which `evaluation.metrics` does not declare"
                if ctx.spec.evaluation.metrics is not None
                else f"which is not among this label's default metrics ({', '.join(declared)}) and "
                "`evaluation.metrics` is not set"
            )
            yield ctx.problem(
                f"evaluation.thresholds.{name}",
                f"threshold on `{name}`, {which}.{did_you_mean(name, declared)} Add it to `evaluation.metrics` or fix the name.",
            )
