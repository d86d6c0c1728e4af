"""DataGate: stops the run when the data cannot train a model, before Transform.

TFX's ExampleValidator records anomalies but lets training go on. This
step reads them and fails with one line per anomaly, before Transform and
Trainer spend any time; the anomalies artifact itself stays published. With
the statistics (and schema) it also stops on a label column without values or
with fewer than two classes (`label_stats`), and on train/eval skew or drift
beyond `data.checks` limits (`drift`, TFDV's comparators); it lets through
rare categories that only eval has, up to `data.checks.unseen_categories`
(`unseen`: the schema is inferred from train only).
"""

import json
import os

from tfx.dsl.component.experimental.annotations import InputArtifact, Parameter
from tfx.dsl.component.experimental.decorators import component
from tfx.types import standard_artifacts

from components.data_gate.drift import comparator_problems, span_drift_problems
from components.data_gate.label_stats import label_problems
from components.data_gate.unseen import tolerated_features

__all__ = ["DataGate", "DataAnomaliesError", "describe_anomalies"]


class DataAnomaliesError(RuntimeError):
    """The data does not match the schema."""


def describe_anomalies(anomalies_uri: str, split_names: list[str], tolerate=None) -> list[str]:
    """One readable line per anomaly, per split.

    Args:
        anomalies_uri: the ExampleAnomalies artifact's folder.
        split_names: the splits to read.
        tolerate: optional `fn(split, anomalies) -> feature names` whose lines are dropped.

    Returns:
        Lines like "split `eval`, feature `kind`: <short> (<description>)".
    """
    from tensorflow_metadata.proto.v0 import anomalies_pb2

    lines = []
    for split in split_names:
        path = os.path.join(anomalies_uri, f"Split-{split}", "SchemaDiff.pb")
        if not os.path.exists(path):
            continue
        anomalies = anomalies_pb2.Anomalies()
        with open(path, "rb") as handle:
            anomalies.ParseFromString(handle.read())
        if anomalies.HasField("dataset_anomaly_info"):
            info = anomalies.dataset_anomaly_info
            lines.append(f"split `{split}`, whole dataset: {info.short_description} ({info.description})")
        dropped = tolerate(split, anomalies) if tolerate else set()
        for feature, info in sorted(anomalies.anomaly_info.items()):
            if feature in dropped:
                continue
            lines.append(f"split `{split}`, feature `{feature}`: {info.short_description} ({info.description})")
    return lines


@component
def DataGate(
    anomalies: InputArtifact[standard_artifacts.ExampleAnomalies],
    statistics: InputArtifact[standard_artifacts.ExampleStatistics] = None,
    schema: InputArtifact[standard_artifacts.Schema] = None,
    label_column: Parameter[str] = "",
    task: Parameter[str] = "classification",
    skew: Parameter[float] = 0.0,
    drift: Parameter[float] = 0.0,
    unseen_categories: Parameter[float] = 0.0,
    free_text_columns: Parameter[str] = "",
    previous_statistics: InputArtifact[standard_artifacts.ExampleStatistics] = None,
    span_drift: Parameter[float] = 0.0,
) -> None:
    """Raises DataAnomaliesError on schema anomalies, an unusable label, or skew/drift past the limits.

    Args:
        anomalies: ExampleValidator's output.
        statistics: StatisticsGen's output (train and eval), for the label and skew/drift checks.
        schema: the schema (inferred from train), for the skew/drift and unseen-category checks.
        label_column: the label's raw column ("" for a label expression: not checked here).
        task: `classification` or `regression`.
        skew: `data.checks.skew` (0: not checked).
        drift: `data.checks.drift` (0: not checked).
        unseen_categories: `data.checks.unseen_categories`, the largest fraction of a split's values of a
            categorical feature that train never had (0: any such value stops the run).
        free_text_columns: a JSON list of the `transform: text` and `image` columns. TFDV gives a text column
            of at most 100 distinct train values a domain of them, as if it were categorical; eval's new texts
            (or images) are then no anomaly for these columns.
        previous_statistics: with spans, the previous span's statistics (none while there is one span).
        span_drift: with spans, `data.checks.drift` between the new span and the previous one (0: not checked).

    Raises:
        DataAnomaliesError: one line per problem, with the fix.
    """
    from tfx.types import artifact_utils

    splits = artifact_utils.decode_split_names(anomalies.split_names)
    tolerate = None
    if statistics is not None and schema is not None and unseen_categories > 0:
        tolerate = _unseen_tolerance(statistics, schema, unseen_categories)
    if free_text_columns:
        tolerate = _free_text_tolerance(json.loads(free_text_columns), tolerate)
    lines = describe_anomalies(anomalies.uri, splits, tolerate)
    if statistics is not None:
        lines += _statistics_lines(statistics, schema, label_column, task, skew or None, drift or None)
    if statistics is not None and previous_statistics is not None and schema is not None and span_drift:
        lines += _span_drift_lines(statistics, previous_statistics, schema, span_drift)
    if lines:
        raise DataAnomaliesError(
            "the data does not match the schema; training stopped. Anomalies:\n  "
            + "\n  ".join(lines)
            + "\nFix the data; or update the schema (`schema:` in the spec) if the change is expected; or, for "
            "categories only eval has, skew or drift, raise the limits in `data.checks`."
        )


def _free_text_tolerance(columns: list[str], tolerate=None):
    """`tolerate` that also drops new values of free-text columns (their only anomaly: values train lacked)."""
    from tensorflow_metadata.proto.v0 import anomalies_pb2

    unexpected = anomalies_pb2.AnomalyInfo.Type.Value("ENUM_TYPE_UNEXPECTED_STRING_VALUES")

    def free_text(split: str, anomalies) -> set[str]:
        dropped = set(tolerate(split, anomalies)) if tolerate else set()
        for name, info in anomalies.anomaly_info.items():
            if name in columns and info.reason and all(reason.type == unexpected for reason in info.reason):
                dropped.add(name)
        return dropped

    return free_text


def _read_schema(schema):
    from tfx.utils import io_utils

    return io_utils.SchemaReader().read(io_utils.get_only_uri_in_dir(schema.uri))


def _unseen_tolerance(statistics, schema, limit: float):
    """`tolerate` for describe_anomalies: rare categories train never had (`unseen.tolerated_features`)."""
    from tfx.components.statistics_gen import stats_artifact_utils

    schema_proto = _read_schema(schema)

    def tolerate(split: str, anomalies) -> set[str]:
        split_stats = stats_artifact_utils.load_statistics(statistics, split).proto()
        return tolerated_features(anomalies, split_stats, schema_proto, limit)

    return tolerate


def _statistics_lines(statistics, schema, label_column: str, task: str, skew, drift) -> list[str]:
    """The label and skew/drift checks over the train and eval statistics."""
    from tfx.components.statistics_gen import stats_artifact_utils

    train = stats_artifact_utils.load_statistics(statistics, "train").proto()
    lines = [f"split `train`, {line}" for line in label_problems(train, label_column, task)] if label_column else []
    if (skew or drift) and schema is not None:
        evaluation = stats_artifact_utils.load_statistics(statistics, "eval").proto()
        schema_proto = _read_schema(schema)
        lines += comparator_problems(train, evaluation, schema_proto, skew, drift)
    return lines


def _span_drift_lines(statistics, previous_statistics, schema, limit: float) -> list[str]:
    """Drift between the new span's train split and the previous span's, past `limit`."""
    from tfx.components.statistics_gen import stats_artifact_utils

    new = stats_artifact_utils.load_statistics(statistics, "train").proto()
    previous = stats_artifact_utils.load_statistics(previous_statistics, "train").proto()
    pair = (statistics.span, previous_statistics.span)
    return span_drift_problems(new, previous, _read_schema(schema), limit, pair)
