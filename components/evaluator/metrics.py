"""The evaluation metrics: each spec name's TFMA/Keras class for binary and multi-class labels.

`pipelines.spec.metrics` checks a spec against this table; the Evaluator
executor builds its EvalConfig from it.
"""

from __future__ import annotations

import dataclasses
from typing import Literal, Optional

__all__ = ["METRICS", "Metric", "PER_CLASS", "class_count_problem"]

Kind = Literal["binary", "multiclass", "any", "regression"]


@dataclasses.dataclass(frozen=True)
class Metric:
    """One spec metric.

    Args:
      binary_class: the TFMA/Keras class for a binary label (or regression); None: not for binary labels.
      multiclass_class: the class for a label of 3+ classes; None: not for multi-class labels.
      higher_is_better: the direction a threshold's `max_regression` is measured in.
      kind: which labels it applies to.
    """

    binary_class: Optional[str]
    multiclass_class: Optional[str]
    higher_is_better: bool
    kind: Kind


METRICS: dict[str, Metric] = {
    "binary_accuracy": Metric("BinaryAccuracy", None, True, "binary"),
    "auc": Metric("AUC", None, True, "binary"),
    "precision": Metric("Precision", "Precision", True, "any"),
    "recall": Metric("Recall", "Recall", True, "any"),
    "binary_crossentropy": Metric("BinaryCrossentropy", None, False, "binary"),
    "mean_squared_error": Metric("MeanSquaredError", None, False, "regression"),
    "mean_absolute_error": Metric("MeanAbsoluteError", None, False, "regression"),
    "root_mean_squared_error": Metric("RootMeanSquaredError", None, False, "regression"),
    "example_count": Metric("ExampleCount", "ExampleCount", True, "any"),
    # Multi-class (and `accuracy`, which scores binary labels too).
    "accuracy": Metric("BinaryAccuracy", "SparseCategoricalAccuracy", True, "any"),
    "macro_auc": Metric(None, "AUC", True, "multiclass"),
    "weighted_auc": Metric(None, "AUC", True, "multiclass"),
    "top_k_accuracy": Metric(None, "SparseTopKCategoricalAccuracy", True, "multiclass"),
    "sparse_categorical_crossentropy": Metric(None, "SparseCategoricalCrossentropy", False, "multiclass"),
    "confusion_matrix": Metric(None, "MultiClassConfusionMatrixPlot", True, "multiclass"),
}

# Metrics computed once per class of a multi-class label (`precision@<class>`).
PER_CLASS = frozenset({"precision", "recall"})


def class_count_problem(name: str, num_classes: int) -> str | None:
    """Why metric `name` cannot score a label of `num_classes` classes, or None when it can.

    Args:
      name: a metric name from `METRICS`.
      num_classes: the number of classes of a classification label (2 = binary).

    Returns:
      A message saying what is wrong and how to fix it, or None.
    """
    metric = METRICS[name]
    if num_classes > 2 and metric.multiclass_class is None:
        alternative = {
            "binary_accuracy": "accuracy",
            "auc": "macro_auc",
            "binary_crossentropy": "sparse_categorical_crossentropy",
        }.get(name)
        fix = f"Use `{alternative}`" if alternative else "Remove it"
        return (
            f"metric `{name}` scores a binary label, but the label has {num_classes} classes. "
            f"{fix}, or make the label binary (two `classes`, or an `expression`)."
        )
    if num_classes <= 2 and metric.binary_class is None:
        alternative = {"macro_auc": "auc", "weighted_auc": "auc", "top_k_accuracy": "accuracy"}.get(name)
        fix = f"Use `{alternative}`" if alternative else "Remove it"
        return f"metric `{name}` needs 3 or more classes, but the label has {num_classes}. {fix}."
    return None
