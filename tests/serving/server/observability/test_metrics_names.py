"""The embedded server's metrics under TensorFlow Serving's names, labels and
units, so one dashboard reads either server."""

from __future__ import annotations

import re

import grpc
import pytest
import tensorflow as tf
from serving_helpers import MODEL, b64, example, http
from tensorflow_serving.apis import (
    classification_pb2,
    predict_pb2,
    prediction_service_pb2_grpc,
    regression_pb2,
)

from serving import config as cfg
from serving.server.observability import metrics as names

X = [1.0, 2.0, 3.0]


def _prometheus_name(tf_name: str) -> str:
    """TensorFlow Serving's exporter: every character outside [a-zA-Z0-9_] becomes ':'."""
    return re.sub(r"[^a-zA-Z0-9_]", ":", tf_name)


@pytest.mark.parametrize(
    ("constant", "tf_name"),
    [
        # As declared in tensorflow/serving (servables/tensorflow/util.cc, saved_model_warmup_util.cc,
        # batching/batching_session.cc) and tensorflow (cc/saved_model/loader.cc).
        (names.REQUEST_COUNT, "/tensorflow/serving/request_count"),
        (names.REQUEST_LATENCY, "/tensorflow/serving/request_latency"),
        (names.RUNTIME_LATENCY, "/tensorflow/serving/runtime_latency"),
        (names.REQUEST_EXAMPLE_COUNTS, "/tensorflow/serving/request_example_counts"),
        (names.REQUEST_EXAMPLE_COUNT_TOTAL, "/tensorflow/serving/request_example_count_total"),
        (names.MODEL_WARMUP_LATENCY, "/tensorflow/serving/model_warmup_latency"),
        (names.MODEL_WARMUP_RECORDS_READ, "/tensorflow/serving/model_warmup_records_read"),
        (names.LOAD_ATTEMPT_COUNT, "/tensorflow/cc/saved_model/load_attempt_count"),
        (names.BATCHING_WRAPPED_RUN_COUNT, "/tensorflow/serving/batching_session/wrapped_run_count"),
        (names.BATCHING_QUEUING_LATENCY, "/tensorflow/serving/batching_session/queuing_latency"),
    ],
)
def test_constants_are_tf_serving_names_as_its_exporter_writes_them(constant, tf_name):
    assert constant == _prometheus_name(tf_name)


@pytest.fixture
def scraped(server) -> str:
    """The metrics page after REST and gRPC traffic: good and failing requests."""
    raw = {"signature_name": "serving_raw", "instances": [X]}
    assert http(server.rest_url, "POST", f"/v1/models/{MODEL}:predict", raw)[0] == 200
    assert http(server.rest_url, "POST", "/v1/models/nope:predict", raw)[0] == 404
    assert http(server.rest_url, "GET", f"/v1/models/{MODEL}")[0] == 200
    body = {"signature_name": "classification", "examples": [{"x": X}] * 3}
    assert http(server.rest_url, "POST", f"/v1/models/{MODEL}:classify", body)[0] == 200
    with grpc.insecure_channel(server.grpc_address) as channel:
        stub = prediction_service_pb2_grpc.PredictionServiceStub(channel)
        request = predict_pb2.PredictRequest()
        request.model_spec.name = MODEL
        request.model_spec.signature_name = "serving_raw"
        request.inputs["x"].CopyFrom(tf.make_tensor_proto([X, X], dtype=tf.float32))
        stub.Predict(request, timeout=30)
        regress = regression_pb2.RegressionRequest()
        regress.model_spec.name = MODEL
        regress.model_spec.signature_name = "regression"
        for _ in range(2):
            regress.input.example_list.examples.add().ParseFromString(example(X))
        stub.Regress(regress, timeout=30)
        bad = classification_pb2.ClassificationRequest()
        bad.model_spec.name = MODEL
        bad.model_spec.signature_name = "serving_raw"  # not a classify signature
        bad.input.example_list.examples.add().ParseFromString(example(X))
        with pytest.raises(grpc.RpcError):
            stub.Classify(bad, timeout=30)
    http(server.rest_url, "POST", f"/v1/models/{MODEL}:predict", {"instances": [b64(example(X))]})
    status, page = http(server.rest_url, "GET", cfg.PROMETHEUS_PATH)
    assert status == 200
    return page["raw"]


def _value(text: str, series: str) -> float:
    line = next((line for line in text.splitlines() if line.startswith(series + " ")), None)
    assert line is not None, f"{series} not in the page"
    return float(line.rsplit(" ", 1)[1])


def test_request_count_is_a_bare_counter_by_model_and_status(scraped):
    assert f"# TYPE {names.REQUEST_COUNT} counter" in scraped
    assert f"{names.REQUEST_COUNT}_total" not in scraped
    # REST counts every request (status GET included); gRPC counts Predict/Classify/Regress.
    assert _value(scraped, f'{names.REQUEST_COUNT}{{model_name="lin",status="OK"}}') == 6
    # A name the server does not serve is counted under "" (bounded labels; TF Serving: "nope").
    assert _value(scraped, f'{names.REQUEST_COUNT}{{model_name="",status="NOT_FOUND"}}') == 1
    assert _value(scraped, f'{names.REQUEST_COUNT}{{model_name="lin",status="INVALID_ARGUMENT"}}') == 1


def test_request_latency_is_in_microseconds_by_api_and_entrypoint(scraped):
    assert f"# TYPE {names.REQUEST_LATENCY} histogram" in scraped
    rest = f'{names.REQUEST_LATENCY}_count{{API="predict",entrypoint="REST",model_name="lin"}}'
    grpc_predict = f'{names.REQUEST_LATENCY}_count{{API="Predict",entrypoint="GRPC",model_name="lin"}}'
    assert _value(scraped, rest) == 2  # only successful requests, as TensorFlow Serving
    assert _value(scraped, grpc_predict) == 1
    assert _value(scraped, f'{names.REQUEST_LATENCY}_count{{API="Regress",entrypoint="GRPC",model_name="lin"}}') == 1
    assert 'API="Classify",entrypoint="GRPC"' not in scraped  # it failed
    mean_us = _value(scraped, grpc_predict.replace("_count", "_sum")) / _value(scraped, grpc_predict)
    assert 10 < mean_us < 10_000_000  # a request takes more than 10 us and less than 10 s
    assert f'{names.REQUEST_LATENCY}_bucket{{API="Predict",entrypoint="GRPC",le="10.0",model_name="lin"}}' in scraped


def test_runtime_latency_and_example_counts(scraped):
    runtime = f'{names.RUNTIME_LATENCY}_count{{API="Predict",model_name="lin",runtime="TF1"}}'
    assert _value(scraped, runtime) == 3
    assert _value(scraped, f'{names.RUNTIME_LATENCY}_count{{API="Classify",model_name="lin",runtime="TF1"}}') == 1
    # REST classify (3 examples) and gRPC regress (2); the failed classify never reached its signature.
    assert _value(scraped, f'{names.REQUEST_EXAMPLE_COUNTS}_sum{{model="lin"}}') == 3 + 2
    assert _value(scraped, f'{names.REQUEST_EXAMPLE_COUNTS}_count{{model="lin"}}') == 2
    # TensorFlow's bucket edges, as TF Serving exports them: 2 examples is not in le="2" (values < 2).
    assert _value(scraped, f'{names.REQUEST_EXAMPLE_COUNTS}_bucket{{le="2.0",model="lin"}}') == 0
    assert _value(scraped, f'{names.REQUEST_EXAMPLE_COUNTS}_bucket{{le="4.0",model="lin"}}') == 2
    assert _value(scraped, f'{names.REQUEST_EXAMPLE_COUNT_TOTAL}{{model="lin"}}') == 5


def test_load_attempts_process_metrics_and_own_metrics_follow_prometheus_naming(scraped, model_dir):
    assert _value(scraped, f'{names.LOAD_ATTEMPT_COUNT}{{model_path="{model_dir / "1"}",status="success"}}') == 1
    assert f"# TYPE {names.LOAD_ATTEMPT_COUNT} counter" in scraped
    assert _value(scraped, "process_resident_memory_bytes") > 10 * 1024 * 1024
    assert _value(scraped, "process_cpu_seconds_total") > 0
    assert _value(scraped, f'{names.MODEL_VERSION_AVAILABLE}{{model_name="lin",model_version="1"}}') == 1
    assert "_created" not in scraped
    for line in scraped.splitlines():
        if line.startswith("# TYPE ") and line.endswith(" counter"):
            name = line.split()[2]
            assert name.startswith(":tensorflow:") or name.endswith("_total"), name


def test_warmup_latency_is_recorded_per_model_path(make_server, model_dir):
    from serving.warmup_file import write_warmup_file

    write_warmup_file(model_dir / "1", [example(X)] * 2)
    server = make_server(model_dir)
    _, page = http(server.rest_url, "GET", cfg.PROMETHEUS_PATH)
    path = model_dir / "1"
    assert _value(page["raw"], f'{names.MODEL_WARMUP_RECORDS_READ}{{model_path="{path}",status="OK"}}') == 2
    assert _value(page["raw"], f'{names.MODEL_WARMUP_LATENCY}_count{{model_path="{path}",status="OK"}}') == 1


def test_batching_metrics_count_wrapped_runs(make_server, model_dir):
    server = make_server(model_dir, batching=cfg.batching_parameters(max_batch_size=8, batch_timeout_micros=0))
    for _ in range(3):
        status, _ = http(
            server.rest_url, "POST", f"/v1/models/{MODEL}:predict", {"signature_name": "serving_raw", "instances": [X]}
        )
        assert status == 200
    _, page = http(server.rest_url, "GET", cfg.PROMETHEUS_PATH)
    assert _value(page["raw"], names.BATCHING_WRAPPED_RUN_COUNT) == 3
    queuing = f'{names.BATCHING_QUEUING_LATENCY}_count{{thread_pool_name=""}}'
    assert _value(page["raw"], queuing) == 3
    assert (
        _value(
            page["raw"], f'{names.BATCH_SIZE}_sum{{model_name="lin",model_version="1",signature_name="serving_raw"}}'
        )
        == 3
    )
