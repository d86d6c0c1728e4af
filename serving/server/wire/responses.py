"""Status and metadata responses, as protos (gRPC) and their JSON (REST); classification and regression results."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from google.protobuf import json_format
from tensorflow_serving.apis import (
    classification_pb2,
    get_model_metadata_pb2,
    get_model_status_pb2,
    model_pb2,
    regression_pb2,
)

from serving.errors import InvalidArgument, message
from serving.server.lifecycle.versions import VersionStatus
from serving.server.model.servable import Servable

__all__ = [
    "SIGNATURE_DEF_FIELD",
    "fill_classifications",
    "fill_model_spec",
    "fill_regressions",
    "metadata_json",
    "check_metadata_fields",
    "metadata_response",
    "model_spec_json",
    "status_json",
    "status_response",
]

SIGNATURE_DEF_FIELD = "signature_def"


def status_response(statuses: list[VersionStatus]) -> get_model_status_pb2.GetModelStatusResponse:
    response = get_model_status_pb2.GetModelStatusResponse()
    for status in statuses:
        entry = response.model_version_status.add()
        entry.version = status.version
        entry.state = status.state
        entry.status.error_code = status.error.code.value[0] if status.error else 0
        entry.status.error_message = status.error.text if status.error else ""
    return response


def status_json(statuses: list[VersionStatus]) -> dict[str, Any]:
    """GetModelStatusResponse as TensorFlow Serving's REST API prints it."""
    return json_format.MessageToDict(status_response(statuses), including_default_value_fields=True)


def check_metadata_fields(fields: list[str]) -> None:
    """GetModelMetadata's field list, checked before the model is looked up, as TensorFlow Serving does.

    Raises:
        InvalidArgument: No field, or a field other than `signature_def`.
    """
    if not fields:
        raise InvalidArgument(
            message(
                "GetModelMetadataRequest must specify at least one metadata_field",
                expected=f'metadata_field: ["{SIGNATURE_DEF_FIELD}"]',
                received="no field",
                fix=f'Add "{SIGNATURE_DEF_FIELD}" to metadata_field.',
            )
        )
    unsupported = [f for f in fields if f != SIGNATURE_DEF_FIELD]
    if unsupported:
        raise InvalidArgument(
            message(
                f"Metadata field {unsupported[0]} is not supported",
                expected=f'only "{SIGNATURE_DEF_FIELD}"',
                received=f"{fields}",
                fix=f'Request metadata_field ["{SIGNATURE_DEF_FIELD}"].',
            )
        )


def metadata_response(servable: Servable) -> get_model_metadata_pb2.GetModelMetadataResponse:
    """GetModelMetadataResponse with the SignatureDefMap packed in an Any (`fields` checked by
    `check_metadata_fields` before the servable was acquired)."""
    response = get_model_metadata_pb2.GetModelMetadataResponse()
    response.model_spec.name = servable.name
    response.model_spec.version.value = servable.version
    response.metadata[SIGNATURE_DEF_FIELD].Pack(servable.signature_def_map())
    return response


def fill_model_spec(spec: model_pb2.ModelSpec, name: str, version: int, signature_name: str) -> None:
    """The model spec a response names: the model asked for, the version and signature that ran."""
    spec.name = name
    spec.version.value = version
    spec.signature_name = signature_name


def model_spec_json(name: str, version: int, signature_name: str = "") -> dict[str, Any]:
    return {"name": name, "signature_name": signature_name, "version": str(version)}


def metadata_json(servable: Servable) -> dict[str, Any]:
    """The REST metadata body: model_spec plus the signature_def map."""
    signature_defs = json_format.MessageToDict(
        servable.signature_def_map(), preserving_proto_field_name=True, including_default_value_fields=True
    )
    return {
        "model_spec": model_spec_json(servable.name, servable.version),
        "metadata": {SIGNATURE_DEF_FIELD: signature_defs},
    }


def fill_classifications(
    result: classification_pb2.ClassificationResult, rows: Iterable[Iterable[tuple[str, float]]]
) -> None:
    """Adds one Classifications per example, its (label, score) pairs as classes (Classify, MultiInference)."""
    for row in rows:
        classifications = result.classifications.add()
        for label, score in row:
            classifications.classes.add(label=label, score=score)


def fill_regressions(result: regression_pb2.RegressionResult, values: Iterable[float]) -> None:
    """Adds one Regression per example (Regress, MultiInference)."""
    for value in values:
        result.regressions.add(value=value)
