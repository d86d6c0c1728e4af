"""Per-feature data statistics for the report, from a StatisticsGen artifact (TFDV's statistics protos).

One `FeatureStats` per feature, with one `SplitStats` per split (train and eval side by side):
the missing share, and either a histogram (numeric features) or the most frequent values
(categorical ones).
"""

from __future__ import annotations

import dataclasses
import os

__all__ = ["FeatureStats", "SplitStats", "read_split_statistics", "feature_statistics", "TOP_VALUES"]

TOP_VALUES = 10  # the most frequent values shown per categorical feature and split


@dataclasses.dataclass
class SplitStats:
    """One feature on one split."""

    examples: int
    missing_share: float
    mean: float | None = None
    std_dev: float | None = None
    minimum: float | None = None
    maximum: float | None = None
    histogram: list[tuple[float, float, float]] = dataclasses.field(default_factory=list)  # (low, high, count)
    unique: int | None = None
    top_values: list[tuple[str, float]] = dataclasses.field(default_factory=list)  # (value, count)
    average_bytes: float | None = None  # binary values (encoded images): their mean length


@dataclasses.dataclass
class FeatureStats:
    """One feature over the splits that have it; `numeric` features have histograms, others top values."""

    name: str
    numeric: bool
    splits: dict[str, SplitStats]


def read_split_statistics(statistics_uri: str, split_names: list[str]) -> dict[str, object]:
    """Split name -> TFDV `DatasetFeatureStatistics` read from `<uri>/Split-<split>/FeatureStats.pb`.

    Args:
        statistics_uri: the ExampleStatistics artifact's folder.
        split_names: the splits to read (those without a file are left out).

    Returns:
        The first dataset of each split's `DatasetFeatureStatisticsList`.
    """
    import tensorflow_data_validation as tfdv

    result = {}
    for split in split_names:
        path = os.path.join(statistics_uri, f"Split-{split}", "FeatureStats.pb")
        if os.path.exists(path):
            datasets = tfdv.load_stats_binary(path).datasets
            if datasets:
                result[split] = datasets[0]
    return result


# TFDV's stand-in for a value that is not UTF-8 text.
_BINARY_VALUE = "__BYTES_VALUE__"


def _missing_share(common, examples: int) -> float:
    """Share of examples without a value: absent, or (one value at most per example) an empty list."""
    if examples <= 0:
        return 0.0
    if common.max_num_values <= 1:
        return max(0.0, 1.0 - common.tot_num_values / examples)
    return common.num_missing / examples


def _split_stats(feature, examples: int) -> SplitStats:
    kind = feature.WhichOneof("stats")
    if kind == "num_stats":
        stats = feature.num_stats
        standard = [h for h in stats.histograms if h.type == h.STANDARD]
        buckets = [(b.low_value, b.high_value, b.sample_count) for b in (standard[0].buckets if standard else [])]
        return SplitStats(
            examples=examples,
            missing_share=_missing_share(stats.common_stats, examples),
            mean=stats.mean,
            std_dev=stats.std_dev,
            minimum=stats.min,
            maximum=stats.max,
            histogram=buckets,
        )
    if kind == "string_stats":
        stats = feature.string_stats
        if stats.top_values and all(v.value == _BINARY_VALUE for v in stats.top_values):
            # Encoded images (or other bytes that are not UTF-8): their size says more than their counts.
            return SplitStats(
                examples=examples,
                missing_share=_missing_share(stats.common_stats, examples),
                unique=stats.unique,
                average_bytes=stats.avg_length,
            )
        return SplitStats(
            examples=examples,
            missing_share=_missing_share(stats.common_stats, examples),
            unique=stats.unique,
            top_values=[(v.value, v.frequency) for v in stats.top_values[:TOP_VALUES]],
        )
    return SplitStats(examples=examples, missing_share=0.0)


def feature_statistics(datasets: dict[str, object]) -> list[FeatureStats]:
    """Every feature of every split, sorted by name (see `read_split_statistics` for `datasets`)."""
    features: dict[str, FeatureStats] = {}
    for split, dataset in datasets.items():
        for feature in dataset.features:
            name = ".".join(feature.path.step) or feature.name
            entry = features.setdefault(name, FeatureStats(name, feature.WhichOneof("stats") == "num_stats", {}))
            entry.splits[split] = _split_stats(feature, int(dataset.num_examples))
    return [features[name] for name in sorted(features)]
