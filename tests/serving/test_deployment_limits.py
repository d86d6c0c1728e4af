"""Request limits sized for image requests: derived from `deploy.max_request_mb`,
recorded by the Deployer in `limits.json`, read by `python -m serving up`; the
deploy check's request batches and the warmup file's byte cap."""

from __future__ import annotations

import base64
import json
import os

import grpc
import numpy as np
import pytest
import tensorflow as tf
from server_process import MIB, ServerProcess
from serving_helpers import MODEL, WEIGHTS, example, export_linear, http, push
from tensorflow_serving.apis import predict_pb2, prediction_service_pb2_grpc

from components.deployer.component import DeploymentFailed, record_limits, server_limits
from pipelines.spec.models import DeploySpec
from serving.deploy import request_batches
from serving.deployment_limits import LIMITS_FILE, ServerLimits
from serving.server.guards.request_checks import BudgetExceeded, RequestLimits, check_tensor_protos
from serving.warmup_file import read_warmup_file, write_warmup_file


def _images(count: int, size: int) -> tf.Tensor:
    return tf.make_tensor_proto([bytes([i % 251]) * size for i in range(count)], dtype=tf.string)


def test_limits_admit_the_declared_batch_of_images_and_no_more():
    limits = ServerLimits.for_request_mb(16)  # 32 images of 0.5 MiB
    budget = RequestLimits(memory_budget_bytes=limits.request_memory_budget_bytes)

    assert check_tensor_protos({"image": _images(32, MIB // 2)}, budget) > 16 * MIB
    with pytest.raises(BudgetExceeded) as caught:
        check_tensor_protos({"image": _images(35, MIB // 2)}, budget)
    assert "over the per-request memory budget" in str(caught.value)
    assert "--request-memory-budget-mb" in str(caught.value)
    # The REST body of the declared batch (base64 JSON) fits the request size.
    body = json.dumps({"instances": [{"image": {"b64": "A" * (4 * (MIB // 2) // 3 + 4)}}] * 32})
    assert len(body) <= limits.max_request_bytes
    assert limits.max_request_bytes <= 4 / 3 * limits.request_memory_budget_bytes + 1


@pytest.mark.parametrize("value", [0, -1.5, float("nan"), float("inf"), "16", True, None])
def test_limits_refuse_a_size_that_is_not_positive(value):
    with pytest.raises(ValueError, match=r"Invalid max_request_mb .*Expected a number of MiB above 0"):
        ServerLimits.for_request_mb(value)


def test_limits_file_round_trips(tmp_path):
    limits = ServerLimits.for_request_mb(3.5)
    assert limits.write(tmp_path) == tmp_path / LIMITS_FILE
    assert ServerLimits.read(tmp_path) == limits
    assert ServerLimits.read(tmp_path / "missing") is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "Cannot read the server limits in"),
        ('{"max_request_bytes": 10}', "Expected a JSON object with max_request_bytes and request_memory_budget_bytes"),
        ('{"max_request_bytes": 10, "request_memory_budget_bytes": -1}', "Invalid request_memory_budget_bytes"),
        ('{"max_request_bytes": 1.5, "request_memory_budget_bytes": 9}', "Invalid max_request_bytes"),
        ("[1, 2]", "Cannot read the server limits in"),
    ],
)
def test_limits_file_that_cannot_be_read_names_the_file(tmp_path, text, message):
    (tmp_path / LIMITS_FILE).write_text(text)
    with pytest.raises(ValueError, match=message) as caught:
        ServerLimits.read(tmp_path)
    assert str(tmp_path / LIMITS_FILE) in str(caught.value)


def test_deployer_records_declared_limits_and_removes_them_when_undeclared(tmp_path):
    limits = server_limits(8.0)
    assert limits == ServerLimits.for_request_mb(8.0)
    record_limits(str(tmp_path), limits)
    assert ServerLimits.read(tmp_path) == limits

    assert server_limits(0.0) is None
    record_limits(str(tmp_path), None)
    assert not (tmp_path / LIMITS_FILE).exists()
    record_limits(str(tmp_path), None)  # nothing to remove: no error


def test_deployer_refuses_a_negative_size():
    with pytest.raises(DeploymentFailed, match=r"max_request_mb=-2.0"):
        server_limits(-2.0)


@pytest.mark.parametrize(
    ("value", "message"), [(0, "must be above 0"), (-1, "must be above 0"), (float("inf"), "finite")]
)
def test_deploy_spec_refuses_a_bad_max_request_mb(value, message):
    with pytest.raises(ValueError, match=message):
        DeploySpec(enabled=True, max_request_mb=value)


def test_deploy_spec_takes_max_request_mb():
    assert DeploySpec(enabled=True, max_request_mb=16).max_request_mb == 16


def test_request_batches_keep_order_and_fit_the_body():
    rows = [bytes([i]) * size for i, size in enumerate([300, 300, 300, 900, 10, 2000, 5])]
    batches = request_batches(rows, 1200)

    assert [row for batch in batches for row in batch] == rows
    for batch in batches:
        instances = [{"b64": base64.b64encode(row).decode()} for row in batch]
        body = json.dumps({"signature_name": "serving_default", "instances": instances})
        assert len(batch) == 1 or len(body) <= 1200  # a row too large for any body goes alone
    assert [len(batch) for batch in batches] == [2, 1, 1, 1, 1, 1]
    assert request_batches(rows, 16 * MIB) == [rows]


def test_warmup_file_holds_the_rows_that_fit_its_byte_cap(tmp_path, exports):
    version = tmp_path / "1"
    push(tmp_path, 1, exports[1])
    rows = [example([float(i), 0.0, 0.0]) for i in range(3)]
    huge = tf.train.Example()
    huge.features.feature["x"].float_list.value.extend([1.0, 2.0, 3.0])
    huge.features.feature["pad"].bytes_list.value.append(b"\0" * 5000)
    big = [rows[0], huge.SerializeToString(), *rows[1:]]  # one row alone is over the cap

    logs = read_warmup_file(write_warmup_file(version, big, max_bytes=4000))
    written = [log.predict_log.request.inputs["examples"].string_val[0] for log in logs]
    assert written == rows  # the 5 KB row is skipped, the others keep their order
    assert os.path.getsize(version / "assets.extra" / "tf_serving_warmup_requests") < 4000

    logs = read_warmup_file(write_warmup_file(version, big[1:2], max_bytes=100))
    assert [log.predict_log.request.inputs["examples"].string_val[0] for log in logs] == big[1:2]


@pytest.mark.parametrize("max_bytes", [0, -5])
def test_warmup_file_refuses_a_cap_below_one_byte(tmp_path, exports, max_bytes):
    push(tmp_path, 1, exports[1])
    with pytest.raises(ValueError, match=f"max_bytes={max_bytes}"):
        write_warmup_file(tmp_path / "1", [example([1.0, 2.0, 3.0])], max_bytes=max_bytes)


@pytest.fixture(scope="module")
def linear_base(tmp_path_factory):
    root = tmp_path_factory.mktemp("media_limits")
    (root / "models" / MODEL).mkdir(parents=True)
    push(root / "models" / MODEL, 1, export_linear(root / "export", *WEIGHTS[1]))
    return root


def _predict(rows: int) -> predict_pb2.PredictRequest:
    request = predict_pb2.PredictRequest()
    request.model_spec.name = MODEL
    request.model_spec.signature_name = "serving_raw"
    request.inputs["x"].CopyFrom(tf.make_tensor_proto(np.ones((rows, 3), np.float32)))
    return request


@pytest.mark.parametrize(
    ("flags", "refused"),
    [((), True), (("--request-memory-budget-mb", "8"), False)],
    ids=["limits.json", "flag overrides it"],
)
def test_up_reads_the_limits_the_deployer_recorded(linear_base, tmp_path, flags, refused):
    config_dir = tmp_path / "cfg"
    ServerLimits.for_request_mb(1).write(config_dir)  # budget 2 MiB, request size 2.7 MiB
    server = ServerProcess(linear_base / "models", config_dir, *flags)
    try:
        assert "Request limits from" in (config_dir / "server.log").read_text()
        with grpc.insecure_channel(server.grpc_address) as channel:
            stub = prediction_service_pb2_grpc.PredictionServiceStub(channel)
            over = _predict(200_000)  # 2.4 MB of floats: within the request size, over the budget
            if refused:
                with pytest.raises(grpc.RpcError) as caught:
                    stub.Predict(over, timeout=60)
                assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
                assert "at most 2097152 bytes (2.0 MiB)" in caught.value.details()
                assert "--request-memory-budget-mb" in caught.value.details()
            else:
                assert len(stub.Predict(over, timeout=60).outputs["logit"].float_val) == 200_000
            assert len(stub.Predict(_predict(2), timeout=30).outputs["logit"].float_val) == 2
        status, body = http(server.rest_url, "POST", f"/v1/models/{MODEL}:predict", b"[" * (3 * MIB))
        assert status == 413, body  # over the recorded request size, whatever the budget
        assert server.alive()
    finally:
        server.close()


def test_up_refuses_a_damaged_limits_file(linear_base, tmp_path):
    config_dir = tmp_path / "cfg"
    config_dir.mkdir()
    (config_dir / LIMITS_FILE).write_text("{}")
    with pytest.raises(RuntimeError, match=r"(?s)server exited 2: .*error: Cannot read the server limits in"):
        ServerProcess(linear_base / "models", config_dir, timeout=60)
