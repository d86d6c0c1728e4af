"""The label column from StatisticsGen's train statistics: it has values, and at least two of them.

`validate` checks this on CSV files already; here it also covers TFRecord
data and data that changed after `validate`.
"""

from __future__ import annotations

__all__ = ["label_problems"]


def _find(dataset, column: str):
    for feature in dataset.features:
        name = feature.path.step[0] if feature.path.step else feature.name
        if name == column:
            return feature
    return None


def label_problems(train_stats, column: str, task: str) -> list[str]:
    """Why the label column cannot be learned from, as readable lines (empty: fine).

    Args:
        train_stats: DatasetFeatureStatisticsList of the train split.
        column: the label column.
        task: `classification` or `regression`.

    Returns:
        Lines naming the column, what was expected and what the statistics hold.
    """
    if not train_stats.datasets:
        return []
    dataset = train_stats.datasets[0]
    feature = _find(dataset, column)
    many = "classes" if task == "classification" else "distinct values"
    fix = "Fix the data, or choose another label column (`label.column`)."
    if feature is None:
        return [f"label column `{column}` is not in the train split. Expected it in every row. {fix}"]
    stats = feature.string_stats if feature.HasField("string_stats") else feature.num_stats
    if stats.common_stats.num_non_missing == 0:
        return [
            f"label column `{column}` has no values in the train split ({dataset.num_examples} rows). "
            f"Expected a label in most rows. {fix}"
        ]
    if feature.HasField("string_stats"):
        single = feature.string_stats.unique < 2
        seen = f"{feature.string_stats.unique} distinct value(s)"
    else:
        single = feature.num_stats.min == feature.num_stats.max
        seen = f"every value is {feature.num_stats.min:g}"
    if single:
        return [
            f"label column `{column}` has fewer than two {many} in the train split: {seen}. Expected two or more. {fix}"
        ]
    return []
