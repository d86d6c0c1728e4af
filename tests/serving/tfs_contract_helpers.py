"""Helpers for the TF Serving contract tests: TF Serving's own test models, real
embedded servers on 127.0.0.1 serving them, and gRPC stubs.

The models are TensorFlow Serving's `servables/tensorflow/testdata`, kept at
`<repo>/../shared/tfs_testdata` (read-only, version folders zero-padded as
shipped). The tests translate the expectations of TF Serving's
`tensorflow_model_server_test.py` onto them.
"""

from __future__ import annotations

import json
from pathlib import Path

import grpc
import pytest
from tensorflow_serving.apis import model_service_pb2_grpc, prediction_service_pb2_grpc

from serving import config as cfg
from serving.server import EmbeddedServer

REPO = Path(__file__).resolve().parents[2]
TFS_TESTDATA = REPO.parent / "shared" / "tfs_testdata"
HALF_PLUS_TWO = "saved_model_half_plus_two_cpu"
HALF_PLUS_THREE = "saved_model_half_plus_three"
TWO_VERSIONS = "saved_model_half_plus_two_2_versions"
COUNTER = "saved_model_counter"
BAD = "bad_half_plus_two"


def tfs_testdata() -> Path:
    """The TF Serving test models; fails the test (never skips) when they are missing."""
    if not (TFS_TESTDATA / HALF_PLUS_TWO / "00000123" / "saved_model.pb").is_file():
        pytest.fail(
            f"TF Serving's test models are missing. Expected: {TFS_TESTDATA}/{HALF_PLUS_TWO}/00000123/saved_model.pb "
            "(tensorflow/serving's tensorflow_serving/servables/tensorflow/testdata, copied unchanged). "
            f"Received: {'no such directory' if not TFS_TESTDATA.is_dir() else sorted(p.name for p in TFS_TESTDATA.iterdir())}. "
            "Fix: check out the shared/ folder beside this clone (CI does), or copy that testdata folder there.",
            pytrace=False,
        )
    return TFS_TESTDATA


def expected_metadata(name: str) -> dict:
    """One of TF Serving's `*_metadata.json` files: the expected REST metadata answer."""
    return json.loads((tfs_testdata() / name).read_text())


def sorted_object(obj):
    """Order-free form of a JSON value, as TF Serving's test compares metadata."""
    if isinstance(obj, dict):
        return sorted((k, sorted_object(v)) for k, v in obj.items())
    if isinstance(obj, (list, tuple)):
        return sorted(sorted_object(x) for x in obj)
    return obj


def start_server(config_dir: Path, *models, batching=None, **options) -> EmbeddedServer:
    """Starts an embedded server on free 127.0.0.1 ports serving `models` (ModelConfigs)."""
    files = cfg.write_server_files(config_dir, cfg.server_config(*models), batching=batching)
    options.setdefault("file_system_poll_wait_seconds", 0.2)
    options.setdefault("max_num_load_retries", 0)
    if any(model.version_labels for model in models):  # as TF Serving's own tests start a labelled config
        options.setdefault("allow_version_labels_for_unavailable_models", True)
    options.setdefault("rest_port", 0)
    options.setdefault("grpc_port", 0)
    return EmbeddedServer.from_files(files, **options).start()


class Stubs:
    """PredictionService and ModelService stubs on one channel."""

    def __init__(self, address: str) -> None:
        self.channel = grpc.insecure_channel(address)
        self.prediction = prediction_service_pb2_grpc.PredictionServiceStub(self.channel)
        self.model = model_service_pb2_grpc.ModelServiceStub(self.channel)

    def close(self) -> None:
        self.channel.close()
