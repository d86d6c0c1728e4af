"""The metric names a spec may use, and how each maps to TFMA and Keras."""

from __future__ import annotations

__all__ = ["METRICS", "metrics_for_task", "higher_is_better"]

# name -> (TFMA/Keras class name, tasks it applies to, higher is better)
METRICS: dict[str, tuple[str, frozenset[str], bool]] = {
    "binary_accuracy": ("BinaryAccuracy", frozenset({"classification"}), True),
    "auc": ("AUC", frozenset({"classification"}), True),
    "precision": ("Precision", frozenset({"classification"}), True),
    "recall": ("Recall", frozenset({"classification"}), True),
    "binary_crossentropy": ("BinaryCrossentropy", frozenset({"classification"}), False),
    "mean_squared_error": ("MeanSquaredError", frozenset({"regression"}), False),
    "mean_absolute_error": ("MeanAbsoluteError", frozenset({"regression"}), False),
    "root_mean_squared_error": ("RootMeanSquaredError", frozenset({"regression"}), False),
    "example_count": ("ExampleCount", frozenset({"classification", "regression"}), True),
}


def metrics_for_task(task: str) -> list[str]:
    return [name for name, (_, tasks, _) in METRICS.items() if task in tasks]


def higher_is_better(name: str) -> bool:
    return METRICS[name][2]
