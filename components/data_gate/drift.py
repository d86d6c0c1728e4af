"""Train/eval skew and drift beyond declared limits, with TFDV's comparators.

`data.checks.skew` and `data.checks.drift` are thresholds: L-infinity distance
between value distributions for categorical (string or int-domain) features,
Jensen-Shannon divergence for numeric ones. They are set on a copy of the
schema as `skew_comparator` / `drift_comparator`, and TFDV compares the eval
split's statistics with the train split's:
`tfdv.validate_statistics(train, schema, serving_statistics=eval)` for skew and
`tfdv.validate_statistics(eval, schema, previous_statistics=train)` for drift.
Only the comparator anomalies are reported here: the rest is ExampleValidator's.
"""

from __future__ import annotations

__all__ = ["span_drift_problems", "comparator_problems", "with_comparators", "worst_drift"]

_COMPARATOR_TYPES = ("COMPARATOR_L_INFTY_HIGH", "COMPARATOR_JENSEN_SHANNON_DIVERGENCE_HIGH")


def with_comparators(schema, skew: float | None, drift: float | None, features: list[str] | None = None):
    """A copy of `schema` with skew/drift comparators on its features.

    Args:
        schema: a tensorflow_metadata Schema.
        skew: the skew threshold, or None.
        drift: the drift threshold, or None.
        features: the features to compare (None: all in the schema).

    Returns:
        The new Schema.
    """
    from tensorflow_metadata.proto.v0 import schema_pb2

    result = schema_pb2.Schema()
    result.CopyFrom(schema)
    for feature in result.feature:
        if features is not None and feature.name not in features:
            continue
        categorical = (
            feature.type == schema_pb2.BYTES or feature.HasField("int_domain") and feature.int_domain.is_categorical
        )
        for threshold, comparator in ((skew, feature.skew_comparator), (drift, feature.drift_comparator)):
            if threshold is None:
                continue
            if categorical:
                comparator.infinity_norm.threshold = threshold
            else:
                comparator.jensen_shannon_divergence.threshold = threshold
    return result


def _comparator_lines(anomalies, kind: str, limit: float) -> list[str]:
    from tensorflow_metadata.proto.v0 import anomalies_pb2

    wanted = {anomalies_pb2.AnomalyInfo.Type.Value(name) for name in _COMPARATOR_TYPES}
    lines = []
    for feature, info in sorted(anomalies.anomaly_info.items()):
        reasons = [r for r in info.reason if r.type in wanted]
        for reason in reasons:
            lines.append(
                f"feature `{feature}`: {kind} between the train and eval splits is above the limit "
                f"`data.checks.{kind}: {limit}` ({reason.description})"
            )
    return lines


def comparator_problems(
    train_stats, eval_stats, schema, skew: float | None, drift: float | None, features: list[str] | None = None
) -> list[str]:
    """One line per feature whose eval distribution differs from train's beyond a limit.

    Args:
        train_stats: DatasetFeatureStatisticsList of the train split.
        eval_stats: DatasetFeatureStatisticsList of the eval split.
        schema: the Schema (inferred from train).
        skew: the skew threshold, or None for no skew check.
        drift: the drift threshold, or None for no drift check.
        features: the features to compare (None: all).

    Returns:
        Readable lines; empty when within the limits.
    """
    import tensorflow_data_validation as tfdv

    lines = []
    if skew is not None:
        anomalies = tfdv.validate_statistics(
            train_stats, with_comparators(schema, skew, None, features), serving_statistics=eval_stats
        )
        lines += _comparator_lines(anomalies, "skew", skew)
    if drift is not None:
        anomalies = tfdv.validate_statistics(
            eval_stats, with_comparators(schema, None, drift, features), previous_statistics=train_stats
        )
        lines += _comparator_lines(anomalies, "drift", drift)
    return lines


def span_drift_problems(new_stats, previous_stats, schema, drift: float, spans: tuple[int, int]) -> list[str]:
    """One line per feature whose distribution in the new span's train split differs from the previous span's
    beyond `drift` (TFDV's drift comparators, as TFX's ExampleValidator with previous statistics).

    Args:
        new_stats: DatasetFeatureStatisticsList of the new span's train split.
        previous_stats: the same for the previous span.
        schema: the Schema.
        drift: `data.checks.drift`.
        spans: (new span, previous span), for the message.

    Returns:
        Lines naming the span pair, the feature and TFDV's measured distance; empty within the limit.
    """
    import tensorflow_data_validation as tfdv

    anomalies = tfdv.validate_statistics(
        new_stats, with_comparators(schema, None, drift), previous_statistics=previous_stats
    )
    return [
        line.replace("between the train and eval splits", f"between span {spans[0]} and span {spans[1]} (train)")
        for line in _comparator_lines(anomalies, "drift", drift)
    ]


def worst_drift(new_stats, previous_stats, schema) -> tuple[str, float] | None:
    """The feature whose distribution moved most from the previous span's train split, and TFDV's distance.

    The distances are the ones `data.checks.drift` limits (L-infinity for categorical features, Jensen-Shannon
    for numeric ones), measured with a limit of 1 (no distance exceeds it), so every compared feature is
    reported in the anomalies' `drift_skew_info`.

    Returns:
        (feature path, distance), or None when TFDV compared no feature.
    """
    import tensorflow_data_validation as tfdv

    anomalies = tfdv.validate_statistics(
        new_stats, with_comparators(schema, None, 1.0), previous_statistics=previous_stats
    )
    measured = [
        (".".join(info.path.step), measurement.value)
        for info in anomalies.drift_skew_info
        for measurement in info.drift_measurements
    ]
    return max(measured, key=lambda pair: pair[1], default=None)
