"""The serving load generator: it must count what it claims to count."""

from __future__ import annotations

import asyncio
import socket

import pytest
from aiohttp import web

from benchmarks import serving_load


@pytest.fixture(scope="module")
def floor_server():
    server = serving_load.FloorServer()
    yield server
    server.stop()


@pytest.mark.parametrize("protocol", ["REST", "gRPC"])
def test_load_on_the_floor_server_answers_every_request(floor_server, protocol):
    result = serving_load._load(floor_server, protocol, concurrency=4, duration=0.5)

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
        ("server, batching off", "REST"): 100.0,
        ("server, batching on", "REST"): 600.0,
        ("server, batching off", "gRPC"): 100.0,
        ("server, batching on", "gRPC"): 250.0,
    }

    serving_load.print_targets(qps, ["REST", "gRPC"], 32)

    out = capsys.readouterr().out
    assert (
        "- REST: served (batching on) / floor = 0.75x (target >= 0.5x: met); "
        "batching on / off = 6.00x (target >= 3x: met); served / in-process = 0.60x (target >= 0.5x: met)"
    ) in out
    assert (  # no gRPC floor measured: no served / floor ratio
        "- gRPC: batching on / off = 2.50x (target >= 3x: MISSED); served / in-process = 0.25x (target >= 0.5x: MISSED)"
        in out
    )
    assert "0.5x of the ceiling is 500 one-row requests/s" in out
    assert "- REST front-end floor: 800 requests/s = 0.80x of the ceiling" in out
