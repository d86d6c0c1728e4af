"""The serving load generator: it must count what it claims to count."""

from __future__ import annotations

import asyncio
import socket

import numpy as np
import pytest
import tensorflow as tf
from aiohttp import web

from benchmarks import grpc_h2load, serving_load

needs_h2load = pytest.mark.skipif(
    grpc_h2load.H2LOAD is None, reason="h2load is not installed (apt-get install nghttp2-client)"
)
H2LOAD = serving_load.GRPC_CLIENTS["h2load"]


@pytest.fixture(scope="module")
def floor_server():
    server = serving_load.FloorServer()
    yield server
    server.stop()


@pytest.mark.parametrize("protocol", ["REST", "gRPC", pytest.param(H2LOAD, marks=needs_h2load)])
def test_load_on_the_floor_server_answers_every_request(floor_server, protocol):
    result = serving_load.load_cell(floor_server, protocol, concurrency=4, duration=0.5)

    assert result["errors"] == 0
    assert result["qps"] > 0
    assert all(0 < seconds < 1 for seconds in result["latencies"])


def test_rest_load_counts_non_200_answers_as_errors_and_keeps_going():
    calls = 0

    async def not_found(request: web.Request) -> web.Response:
        nonlocal calls
        calls += 1
        await request.read()
        return web.json_response({"error": "Servable not found"}, status=404)

    async def run() -> dict:
        runner = await serving_load.start_http_server(not_found)
        try:
            return await serving_load._rest(f"http://127.0.0.1:{runner.addresses[0][1]}", 2, 0.3)
        finally:
            await runner.cleanup()

    result = asyncio.run(run())

    assert result["qps"] == 0 and result["latencies"] == []
    assert result["errors"] > 10  # every answer in the measured 0.3 s, on connections kept open
    assert calls > result["errors"]  # the warmup second's answers are not counted


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.parametrize("flag", ["rest_url", "grpc_address"])
def test_a_running_server_that_does_not_answer_is_named_in_the_error(flag):
    port = _closed_port()
    address = f"http://127.0.0.1:{port}" if flag == "rest_url" else f"127.0.0.1:{port}"
    server = serving_load.RunningServer(**{"rest_url": None, "grpc_address": None, flag: address})

    with pytest.raises(SystemExit, match=rf"not served at .*127\.0\.0\.1:{port}.*--export-model"):
        server.check()


def test_targets_say_met_or_missed_against_floor_and_ceiling(capsys):
    qps = {
        (serving_load.CEILING, "-"): 1000.0,
        (serving_load.FLOOR, "REST"): 800.0,
        (serving_load.FLOOR, "gRPC (h2load)"): 280.0,
        ("server, batching off", "REST"): 100.0,
        ("server, batching off", "gRPC (h2load)"): 100.0,
        ("server, batching on", "gRPC (h2load)"): 200.0,
        ("server, batching on", "REST"): 600.0,
        ("server, batching off", "gRPC"): 100.0,
        ("server, batching on", "gRPC"): 250.0,
    }

    serving_load.print_targets(qps, ["REST", "gRPC", "gRPC (h2load)"], 32)

    out = capsys.readouterr().out
    assert (
        "- REST: served (batching on) / floor = 0.75x (target >= 0.5x: met); "
        "batching on / off = 6.00x (target >= 3x: met); served / in-process = 0.60x (target >= 0.5x: met)"
    ) in out
    assert (  # no gRPC floor measured: no served / floor ratio
        "- gRPC: batching on / off = 2.50x (target >= 3x: MISSED); served / in-process = 0.25x (target >= 0.5x: MISSED)"
        in out
    )
    assert (  # a floor under 3x of batching off bounds batching on / off, and the line says so
        "- gRPC (h2load): served (batching on) / floor = 0.71x (target >= 0.5x: met); "
        "batching on / off = 2.00x (target >= 3x: MISSED; at most floor / off = 2.80x on this machine); " in out
    )
    assert "0.5x of the ceiling is 500 one-row requests/s" in out
    assert "- REST front-end floor: 800 requests/s = 0.80x of the ceiling" in out


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """The embedded server (batching on) on the benchmark's model, and the model's answer to its request."""
    work = tmp_path_factory.mktemp("served")
    serving_load.export_model(work / "models" / serving_load.MODEL / "1")
    server = serving_load.Server(work / "models", work / "cfg", batching=True)
    yield server, serving_load.expected_outputs(work / "models" / serving_load.MODEL / "1")
    server.stop()


@needs_h2load
def test_h2load_load_on_the_embedded_server_is_proved_by_its_request_count(served):
    server, expected = served
    before = serving_load.prometheus_request_counts(server.rest_url)

    result = serving_load.load_cell(server, H2LOAD, concurrency=4, duration=0.3, expected=expected)

    after = serving_load.prometheus_request_counts(server.rest_url)
    assert result["errors"] == 0 and result["qps"] > 0 and len(result["latencies"]) >= 4
    assert set(after) == {"OK"}  # nothing but OK answers, ever
    assert after["OK"] - before.get("OK", 0) > len(result["latencies"])  # + the check call and the warm-up


def test_the_request_h2load_sends_is_first_checked_against_the_model(served):
    server, expected = served
    message = serving_load.predict_request().SerializeToString()

    serving_load.check_grpc_predict(server.grpc_address, message, expected)
    with pytest.raises(RuntimeError, match=r"is not the model's: expected probability \[\[.*received \[\["):
        serving_load.check_grpc_predict(server.grpc_address, message, np.asarray(expected) + 0.5)


@needs_h2load
def test_h2load_calls_the_server_answers_with_an_error_fail_the_run(served):
    server, _ = served
    request = serving_load.predict_request()
    request.model_spec.name = "no_such_model"

    with pytest.raises(grpc_h2load.H2loadError, match=r"count by status: \{'NOT_FOUND': \d+\}"):
        grpc_h2load.run_h2load(
            server.grpc_address,
            serving_load.PREDICT_PATH,
            request.SerializeToString(),
            concurrency=2,
            duration=0.1,
            warmup=0.1,
            # The server counts names it does not serve under model_name="" (a client cannot grow the page).
            counts=lambda: serving_load.prometheus_request_counts(server.rest_url, ""),
        )


def test_widths_set_the_exported_models_layers(tmp_path):
    serving_load.export_model(tmp_path / "1", widths=(8, 4))
    loaded = tf.saved_model.load(str(tmp_path / "1"))
    kernels = [tuple(k.shape) for k in loaded.kernels]
    assert sorted(kernels) == sorted([(serving_load.FEATURES, 8), (8, 4), (4, 1)])
    assert serving_load.parameters((8, 4)) == serving_load.FEATURES * 8 + 8 + 8 * 4 + 4 + 4 * 1 + 1
    answer = loaded.signatures["serving_default"](x=tf.constant(serving_load.rows(2)))["probability"]
    assert answer.shape == (2, 1)
