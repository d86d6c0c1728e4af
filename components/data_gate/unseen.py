"""Categories train never had: how many are too many (`data.checks.unseen_categories`).

The schema is inferred from the train split only, so ExampleValidator flags
every eval value outside the train domain (ENUM_TYPE_UNEXPECTED_STRING_VALUES),
however rare: on the taxi data, 16 companies with one or two eval rows each.
A handful of rare values is normal (a vocabulary's OOV bucket takes them); a
category that is a sizeable part of a split is a defect. This module
re-validates a split's statistics with TFDV, its schema's string domains given
`distribution_constraints.min_domain_mass = 1 - limit`, and says which
flagged features are still above the limit.
"""

from __future__ import annotations

__all__ = ["UNSEEN_TYPE", "tolerated_features"]

UNSEEN_TYPE = "ENUM_TYPE_UNEXPECTED_STRING_VALUES"


def _relaxed(schema, limit: float):
    from tensorflow_metadata.proto.v0 import schema_pb2

    result = schema_pb2.Schema()
    result.CopyFrom(schema)
    for feature in result.feature:
        if feature.HasField("domain") or feature.HasField("string_domain"):
            feature.distribution_constraints.min_domain_mass = 1.0 - limit
    return result


def tolerated_features(anomalies, split_stats, schema, limit: float) -> set[str]:
    """The features whose only anomaly is unseen categories, within `limit` of the split's values.

    Args:
        anomalies: ExampleValidator's Anomalies proto for one split.
        split_stats: that split's DatasetFeatureStatisticsList.
        schema: the schema the split was validated against.
        limit: the largest tolerated fraction of values outside the domain (0: none tolerated).

    Returns:
        Feature names whose anomaly line can be dropped.
    """
    import tensorflow_data_validation as tfdv
    from tensorflow_metadata.proto.v0 import anomalies_pb2

    if limit <= 0:
        return set()
    unseen = anomalies_pb2.AnomalyInfo.Type.Value(UNSEEN_TYPE)
    candidates = {
        name
        for name, info in anomalies.anomaly_info.items()
        if info.reason and all(reason.type == unseen for reason in info.reason)
    }
    if not candidates:
        return set()
    recheck = tfdv.validate_statistics(split_stats, _relaxed(schema, limit))
    still = {
        name for name, info in recheck.anomaly_info.items() if any(reason.type == unseen for reason in info.reason)
    }
    return candidates - still
