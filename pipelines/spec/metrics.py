"""The metric names a spec may use, and how each maps to TFMA and Keras.

Classification metrics come in three kinds: `binary` ones need two classes
(`auc` scores the positive class), `multiclass` ones need three or more
(`macro_auc`, `top_k_accuracy`, ...), and `any` ones work on both (`accuracy`;
`precision` and `recall` score the positive class of a binary label and every
class of a multi-class label, reported as `precision@<class>`).
"""

from __future__ import annotations

from components.evaluator.metrics import METRICS, PER_CLASS, Metric, class_count_problem

__all__ = [
    "METRICS",
    "Metric",
    "metrics_for_task",
    "default_metrics",
    "higher_is_better",
    "class_count_problem",
    "PER_CLASS",
]


def metrics_for_task(task: str) -> list[str]:
    """The metric names a `classification` or `regression` label may declare."""
    if task == "regression":
        return [name for name, m in METRICS.items() if m.kind == "regression" or name == "example_count"]
    return [name for name, m in METRICS.items() if m.kind != "regression"]


def default_metrics(task: str, num_classes: int) -> tuple[str, ...]:
    """The metrics a spec without `evaluation.metrics` gets: those that fit its label.

    Args:
      task: `classification` or `regression`.
      num_classes: a classification label's number of classes (2 = binary); ignored for regression.

    Returns:
      Binary: `binary_accuracy`, `auc`; 3 or more classes: `accuracy`; regression:
      `mean_squared_error`, `mean_absolute_error`.
    """
    if task == "regression":
        return ("mean_squared_error", "mean_absolute_error")
    if num_classes > 2:
        return ("accuracy",)
    return ("binary_accuracy", "auc")


def higher_is_better(name: str) -> bool:
    return METRICS[name].higher_is_better
