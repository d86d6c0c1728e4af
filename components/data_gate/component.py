"""DataGate: stops the run when ExampleValidator found anomalies.

TFX's ExampleValidator records anomalies but lets training go on. This
step reads them and fails with one line per anomaly, before Transform and
Trainer spend any time; the anomalies artifact itself stays published.
"""

import os

from tfx.dsl.component.experimental.annotations import InputArtifact
from tfx.dsl.component.experimental.decorators import component
from tfx.types import standard_artifacts

__all__ = ["DataGate", "DataAnomaliesError", "describe_anomalies"]


class DataAnomaliesError(RuntimeError):
    """The data does not match the schema."""


def describe_anomalies(anomalies_uri: str, split_names: list[str]) -> list[str]:
    """One readable line per anomaly, per split."""
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
        for feature, info in sorted(anomalies.anomaly_info.items()):
            lines.append(f"split `{split}`, feature `{feature}`: {info.short_description} ({info.description})")
    return lines


@component
def DataGate(anomalies: InputArtifact[standard_artifacts.ExampleAnomalies]) -> None:
    """Raises DataAnomaliesError when any split has anomalies."""
    from tfx.types import artifact_utils

    splits = artifact_utils.decode_split_names(anomalies.split_names)
    lines = describe_anomalies(anomalies.uri, splits)
    if lines:
        raise DataAnomaliesError(
            "the data does not match the schema; training stopped. Anomalies:\n  "
            + "\n  ".join(lines)
            + "\nFix the data, or update the schema (`schema:` in the spec) if the change is expected."
        )
