"""Load test of the embedded model server: REST and gRPC, batching on and off.

    TF_USE_LEGACY_KERAS=1 TF_CPP_MIN_LOG_LEVEL=2 .venv/bin/python benchmarks/serving_load.py

The model is an MLP over 48 float features (dense 512-512-256, ReLU, sigmoid
output; ~0.42M parameters, ~0.84 MFLOP per row) served through its
`serving_default` signature, input `x` [batch, 48]. Each request carries one
row, as an online client sends it.

For each server mode (batching off, batching on) the server runs in its own
process (`python -m serving up --embedded`), the clients in this process keep
`concurrency` requests in flight for a fixed duration against 127.0.0.1: REST
over plain keep-alive HTTP/1.1 connections (asyncio protocol, one request in
flight per connection, a few microseconds per request, so the client takes as
little of the shared CPUs as it can); gRPC from h2load (`--grpc-client h2load`,
the default where it is installed: nghttp2's C load generator, a few
microseconds per request, `concurrency` streams on `--h2load-connections`
HTTP/2 connections, the server's own request counts checked after every run,
see benchmarks/grpc_h2load.py) or through grpc.aio (`--grpc-client python`,
one channel; it costs 130-250 us of CPU per call, taken from the server on a
machine with few CPUs). Before h2load sends the serialized request, one call
with the Python gRPC client must return the model's outputs for it.

With `--repeats N` every configuration is measured N times, the rounds
alternating (floor, batching off, batching on, then again), and the table
shows the median QPS and each run's.

Two reference rows:
- the ceiling, in-process batched inference: the loaded signature called
  directly with batches of `concurrency` rows, no server at all;
- the front-end floor: a server on the same libraries (aiohttp, grpc.aio, on
  uvloop's event loop as the embedded server runs them, Predict calls
  accepted several at a time as the embedded server accepts them,
  serving/server/grpc_service/accepts.py) whose
  handlers return a canned answer without parsing the request or touching a
  model, driven by the same clients. No server built on these libraries can
  answer faster on this machine than this row.

TensorFlow's intra-op thread pool is set to `--intra-op-threads` (1 by
default: TF_NUM_INTRAOP_THREADS, tensorflow_model_server's
`--tensorflow_intra_op_parallelism`) in this process and the servers. A batch
of at most 32 rows of this model is too small to split across CPUs; with the
pool's default size (one thread per CPU) each call wakes the pool's threads,
which on CPUs shared with the load generator costs more than it saves
(measured: 435 -> 322 us of CPU per 32-row call). `--intra-op-threads 0`
keeps TensorFlow's default.

Prints a markdown table and the targets: the issue's (served / floor and
batching on / off), then served / in-process.

Against another server speaking TensorFlow Serving's protocol (the real
tensorflow_model_server, where it is installed): export the model, serve it,
then point the clients at it; its rows replace the embedded server's.

    .venv/bin/python benchmarks/serving_load.py --export-model /tmp/load-models
    python -m serving up --real --model-name mlp --base-path /tmp/load-models --batching \
        --max-batch-size 32 --batch-timeout-micros 0 --num-batch-threads 1
    .venv/bin/python benchmarks/serving_load.py --rest-url http://127.0.0.1:8501 --grpc-address 127.0.0.1:8500
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.grpc_h2load import H2LOAD, run_h2load  # noqa: E402 - after the path is set

FEATURES = 48
WIDTHS = (512, 512, 256)
MODEL = "mlp"
BATCHING = {"max_batch_size": 32, "batch_timeout_micros": 0, "num_batch_threads": 1}
CEILING = "in-process batched (ceiling)"
FLOOR = "front-end floor (canned answer)"
RUNNING = "running server (--rest-url/--grpc-address)"
PREDICT_PATH = "/tensorflow.serving.PredictionService/Predict"
GRPC_CLIENTS = {"h2load": "gRPC (h2load)", "python": "gRPC (python client)"}


def export_model(path: Path, widths: tuple[int, ...] = WIDTHS) -> None:
    import tensorflow as tf

    class Mlp(tf.Module):
        def __init__(self) -> None:
            super().__init__()
            rng = np.random.default_rng(0)
            dims = [FEATURES, *widths, 1]
            self.kernels = [
                tf.Variable(rng.normal(0, (2 / a) ** 0.5, (a, b)).astype(np.float32)) for a, b in zip(dims, dims[1:])
            ]
            self.biases = [tf.Variable(np.zeros(b, np.float32)) for b in dims[1:]]

        @tf.function(input_signature=[tf.TensorSpec([None, FEATURES], tf.float32, name="x")])
        def serve(self, x):
            h = x
            for kernel, bias in zip(self.kernels[:-1], self.biases[:-1]):
                h = tf.nn.relu(tf.matmul(h, kernel) + bias)
            return {"probability": tf.sigmoid(tf.matmul(h, self.kernels[-1]) + self.biases[-1])}

    module = Mlp()
    tf.saved_model.save(module, str(path), signatures={"serving_default": module.serve.get_concrete_function()})


def parameters(widths: tuple[int, ...] = WIDTHS) -> int:
    dims = [FEATURES, *widths, 1]
    return sum(a * b + b for a, b in zip(dims, dims[1:]))


def rows(n: int) -> np.ndarray:
    return np.random.default_rng(1).normal(size=(n, FEATURES)).astype(np.float32)


def in_process(version_dir: Path, concurrency: int, duration: float) -> dict:
    """The ceiling: the signature called directly with batches of `concurrency` rows."""
    import tensorflow as tf

    function = tf.saved_model.load(str(version_dir)).signatures["serving_default"]
    batch = tf.constant(rows(concurrency))
    for _ in range(20):
        function(x=batch)
    latencies, done, deadline = [], 0, time.perf_counter() + duration
    while time.perf_counter() < deadline:
        started = time.perf_counter()
        function(x=batch)["probability"].numpy()
        latencies.append(time.perf_counter() - started)
        done += concurrency
    return {"qps": done / duration, "latencies": latencies, "errors": 0}


def expected_outputs(version_dir: Path) -> np.ndarray:
    """The model's `probability` for the one row every request carries, computed in this process."""
    import tensorflow as tf

    function = tf.saved_model.load(str(version_dir)).signatures["serving_default"]
    return function(x=tf.constant(rows(1)))["probability"].numpy()


def predict_request():
    """The PredictRequest every gRPC call sends: one row for model `MODEL`."""
    import tensorflow as tf
    from tensorflow_serving.apis import predict_pb2

    request = predict_pb2.PredictRequest()
    request.model_spec.name = MODEL
    request.inputs["x"].CopyFrom(tf.make_tensor_proto(rows(1)))
    return request


def check_grpc_predict(address: str, message: bytes, expected: np.ndarray | None) -> None:
    """Sends the serialized request `message` once with the Python gRPC client.

    Args:
        address: The server's "host:port".
        message: The serialized PredictRequest that the load will send.
        expected: The `probability` output the model gives for it; None for
            the canned-answer floor (any `probability` output will do).

    Raises:
        RuntimeError: The call failed or answered other outputs.
    """
    import grpc
    import tensorflow as tf
    from tensorflow_serving.apis import predict_pb2, prediction_service_pb2_grpc

    with grpc.insecure_channel(address) as channel:
        stub = prediction_service_pb2_grpc.PredictionServiceStub(channel)
        try:
            response = stub.Predict(predict_pb2.PredictRequest.FromString(message), timeout=30)
        except grpc.RpcError as err:
            raise RuntimeError(
                f"The gRPC request the load sends fails at {address}: expected OK, received "
                f"{err.code().name}: {err.details()}. Fix the request built in predict_request()."
            ) from None
    if "probability" not in response.outputs:
        raise RuntimeError(
            f"The gRPC answer at {address} has no `probability` output: received outputs "
            f"{sorted(response.outputs)}. Serve the model written by --export-model."
        )
    got = tf.make_ndarray(response.outputs["probability"])
    if expected is not None and (got.shape != expected.shape or not np.allclose(got, expected, rtol=1e-4, atol=1e-6)):
        raise RuntimeError(
            f"The gRPC answer at {address} is not the model's: expected probability {expected.tolist()}, "
            f"received {got.tolist()}. Serve the model written by --export-model."
        )


def prometheus_request_counts(rest_url: str, model: str = MODEL) -> dict[str, int]:
    """`:tensorflow:serving:request_count` of `model` by status, from the server's Prometheus page.

    Args:
        rest_url: The server's REST base URL ("http://host:port").
        model: The `model_name` label to count.

    Returns:
        Status code name ("OK", "NOT_FOUND", ...) to requests answered so far.

    Raises:
        RuntimeError: The page has no such counter (metrics off, or another server).
    """
    from prometheus_client.parser import text_string_to_metric_families

    from serving.config import PROMETHEUS_PATH
    from serving.server.observability.metrics import REQUEST_COUNT

    with urllib.request.urlopen(f"{rest_url}{PROMETHEUS_PATH}", timeout=30) as response:
        text = response.read().decode()
    counts: dict[str, int] = {}
    for family in text_string_to_metric_families(text):  # the parser names a counter's samples `..._total`
        for sample in family.samples if family.name == REQUEST_COUNT else ():
            if sample.name in (REQUEST_COUNT, f"{REQUEST_COUNT}_total") and sample.labels.get("model_name") == model:
                counts[sample.labels["status"]] = int(sample.value)
    if not counts and REQUEST_COUNT not in text:
        raise RuntimeError(
            f"No {REQUEST_COUNT} at {rest_url}{PROMETHEUS_PATH}: expected TensorFlow Serving's request counter, "
            "to check that every gRPC call succeeded. Enable Prometheus metrics on the server, or use "
            "--grpc-client python."
        )
    return counts


class Server:
    """`python -m serving up --embedded` in a subprocess, from the checkout at `root`."""

    def __init__(self, base: Path, config_dir: Path, batching: bool, root: Path = ROOT) -> None:
        argv = [
            sys.executable,
            "-m",
            "serving",
            "up",
            "--model-name",
            MODEL,
            "--base-path",
            str(base),
            "--embedded",
            "--rest-port",
            "0",
            "--grpc-port",
            "0",
            "--config-dir",
            str(config_dir),
            "--fresh",
        ]
        if batching:
            argv += ["--batching", *[f"--{k.replace('_', '-')}={v}" for k, v in BATCHING.items()]]
        env = {**os.environ, "TF_USE_LEGACY_KERAS": "1", "TF_CPP_MIN_LOG_LEVEL": "2", "PYTHONPATH": str(root)}
        self.process = subprocess.Popen(
            argv, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=lambda: [lines.put(line) for line in self.process.stdout], daemon=True).start()
        deadline = time.monotonic() + 120
        while True:
            try:
                line = lines.get(timeout=1)
            except queue.Empty:
                line = ""
            if line.startswith(f"Serving {MODEL}:"):
                break
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"server did not start: {line}")
        endpoints = json.loads((config_dir / "endpoints.json").read_text())
        self.rest_url, self.grpc_address = endpoints["rest_url"], endpoints["grpc_address"]

    def grpc_counts(self) -> dict[str, int]:
        """Predict calls answered, by status (the server's Prometheus request count)."""
        return prometheus_request_counts(self.rest_url)

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=60)


async def _drive(call, concurrency: int, duration: float, warmup: float = 1.0) -> dict:
    latencies: list[float] = []
    errors = 0
    measuring = False
    stop_at = time.perf_counter() + warmup + duration

    async def worker() -> None:
        nonlocal errors
        while time.perf_counter() < stop_at:
            started = time.perf_counter()
            try:
                await call()
            except Exception:  # noqa: BLE001 - counted, the load goes on
                errors += measuring
                continue
            if measuring:
                latencies.append(time.perf_counter() - started)

    async def clock() -> None:
        nonlocal measuring
        await asyncio.sleep(warmup)
        measuring = True

    await asyncio.gather(clock(), *(worker() for _ in range(concurrency)))
    return {"qps": len(latencies) / duration, "latencies": latencies, "errors": errors}


_CONTENT_LENGTH = re.compile(rb"\r\ncontent-length:[ \t]*(\d+)", re.IGNORECASE)


class _HttpConnection(asyncio.Protocol):
    """One keep-alive HTTP/1.1 connection with one request in flight.

    The load generator shares the machine's CPUs with the server, so it does
    the least it can: a prebuilt request, the status line and Content-Length
    read from the response head, the body skipped.
    """

    def __init__(self, request: bytes) -> None:
        self.request = request
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.response: asyncio.Future | None = None
        self.status = 0
        self.end = -1  # where the current response ends in `buffer`, once its head is in

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport

    def connection_lost(self, exc: Exception | None) -> None:
        if self.response is not None and not self.response.done():
            self.response.set_exception(ConnectionError(f"server closed the connection: {exc}"))

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if self.end < 0:
            head_end = self.buffer.find(b"\r\n\r\n")
            if head_end < 0:
                return
            head = bytes(self.buffer[:head_end])
            length = _CONTENT_LENGTH.search(head)
            if not head.startswith(b"HTTP/1.1 ") or length is None:
                self.response.set_exception(RuntimeError(f"unexpected response head: {head[:80]!r}"))
                return
            self.status = int(head[9:12])
            self.end = head_end + 4 + int(length.group(1))
        if len(self.buffer) >= self.end:
            del self.buffer[: self.end]
            self.end = -1
            self.response.set_result(self.status)

    def call(self) -> asyncio.Future:
        self.response = asyncio.get_running_loop().create_future()
        self.transport.write(self.request)
        return self.response


async def _rest(url: str, concurrency: int, duration: float) -> dict:
    host, port = url.removeprefix("http://").rsplit(":", 1)
    body = json.dumps({"instances": rows(1).tolist()}).encode()
    request = (
        f"POST /v1/models/{MODEL}:predict HTTP/1.1\r\nHost: {host}:{port}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode() + body
    loop = asyncio.get_running_loop()
    connections = [
        (await loop.create_connection(lambda: _HttpConnection(request), host, int(port)))[1] for _ in range(concurrency)
    ]
    idle = list(connections)

    async def call() -> None:
        connection = idle.pop()
        try:
            status = await connection.call()
        except BaseException:
            connection.transport.close()  # its framing is lost; replace it
            idle.append((await loop.create_connection(lambda: _HttpConnection(request), host, int(port)))[1])
            raise
        idle.append(connection)
        if status != 200:
            raise RuntimeError(f"HTTP {status}")

    try:
        return await _drive(call, concurrency, duration)
    finally:
        for connection in idle:
            connection.transport.close()


async def _grpc(address: str, concurrency: int, duration: float) -> dict:
    import grpc
    from tensorflow_serving.apis import prediction_service_pb2_grpc

    request = predict_request()
    async with grpc.aio.insecure_channel(address) as channel:
        stub = prediction_service_pb2_grpc.PredictionServiceStub(channel)

        async def call() -> None:
            await stub.Predict(request, timeout=30)

        return await _drive(call, concurrency, duration)


async def start_http_server(handler, extra_routes=()):
    """An aiohttp server on 127.0.0.1 (a free port) answering every /v1/ path with
    `handler` (and each (method, path, handler) of `extra_routes`); returns its
    started `web.AppRunner` (port: `runner.addresses[0][1]`)."""
    from aiohttp import web

    app = web.Application()
    app.router.add_route("*", "/v1/{tail:.*}", handler)
    for method, path, route_handler in extra_routes:
        app.router.add_route(method, path, route_handler)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    return runner


FLOOR_COUNT_PATH = "/floor/grpc-predict-count"


def serve_floor() -> None:
    """The front-end floor server: aiohttp and grpc.aio handlers that answer a
    predict call with a canned response, without parsing it or running a model.
    Prints "<rest port> <grpc port>" once both listen. GET `FLOOR_COUNT_PATH`
    answers the count of gRPC Predict calls answered, as {"OK": n}."""
    import grpc
    import tensorflow as tf
    import uvloop
    from aiohttp import web
    from tensorflow_serving.apis import predict_pb2, prediction_service_pb2_grpc

    from serving.server.grpc_service.accepts import ConcurrentAccepts

    rest_answer = json.dumps({"predictions": [[0.5]]})
    grpc_answer = predict_pb2.PredictResponse()
    grpc_answer.model_spec.name = MODEL
    grpc_answer.outputs["probability"].CopyFrom(tf.make_tensor_proto(np.array([[0.5]], np.float32)))

    answered = 0

    class Canned(prediction_service_pb2_grpc.PredictionServiceServicer):
        async def Predict(self, request, context):  # noqa: N802 - gRPC method name
            nonlocal answered
            answered += 1
            return grpc_answer

    async def count(request: web.Request) -> web.Response:
        return web.json_response({"OK": answered})

    async def predict(request: web.Request) -> web.Response:
        await request.read()
        return web.Response(text=rest_answer, content_type="application/json")

    async def serve() -> None:
        runner = await start_http_server(predict, extra_routes=[("GET", FLOOR_COUNT_PATH, count)])
        server = grpc.aio.server()
        canned = Canned()
        prediction_service_pb2_grpc.add_PredictionServiceServicer_to_server(canned, server)
        # Predict calls accepted several at a time, as the embedded server accepts them.
        handler = grpc.unary_unary_rpc_method_handler(
            canned.Predict,
            request_deserializer=predict_pb2.PredictRequest.FromString,
            response_serializer=predict_pb2.PredictResponse.SerializeToString,
        )
        accepts = ConcurrentAccepts.register(server, "tensorflow.serving.PredictionService", {"Predict": handler})
        grpc_port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        accepts.start()
        print(runner.addresses[0][1], grpc_port, flush=True)
        await asyncio.Event().wait()

    uvloop.run(serve())  # the embedded server's event loop (serving/server/app.py)


class FloorServer:
    """`serve_floor()` in a subprocess."""

    def __init__(self) -> None:
        env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"}
        self.process = subprocess.Popen(
            [sys.executable, __file__, "--serve-floor"], env=env, stdout=subprocess.PIPE, text=True
        )
        ports = self.process.stdout.readline().split()
        if len(ports) != 2:
            self.process.kill()
            raise RuntimeError(f"the floor server did not start; run `{__file__} --serve-floor` to see why")
        rest_port, grpc_port = ports
        self.rest_url, self.grpc_address = f"http://127.0.0.1:{rest_port}", f"127.0.0.1:{grpc_port}"

    def grpc_counts(self) -> dict[str, int]:
        """Predict calls the canned handler answered (all OK)."""
        with urllib.request.urlopen(f"{self.rest_url}{FLOOR_COUNT_PATH}", timeout=30) as response:
            return json.loads(response.read())

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=60)


class RunningServer:
    """A server started elsewhere, serving the exported model as `MODEL`."""

    def __init__(self, rest_url: str | None, grpc_address: str | None) -> None:
        self.rest_url, self.grpc_address = rest_url, grpc_address

    def grpc_counts(self) -> dict[str, int]:
        """Predict calls answered, by status, from the Prometheus page under --rest-url."""
        if not self.rest_url:
            raise RuntimeError(
                "--grpc-client h2load needs the server's request counts to check every call: expected --rest-url "
                "(its Prometheus page), received only --grpc-address. Add --rest-url, or use --grpc-client python."
            )
        return prometheus_request_counts(self.rest_url)

    def check(self) -> None:
        """Raises SystemExit naming the address when the model is not served there."""
        import grpc
        from tensorflow_serving.apis import get_model_status_pb2, model_service_pb2_grpc

        try:
            if self.rest_url:
                with urllib.request.urlopen(f"{self.rest_url}/v1/models/{MODEL}", timeout=10) as response:
                    response.read()
            if self.grpc_address:
                with grpc.insecure_channel(self.grpc_address) as channel:
                    request = get_model_status_pb2.GetModelStatusRequest()
                    request.model_spec.name = MODEL
                    model_service_pb2_grpc.ModelServiceStub(channel).GetModelStatus(request, timeout=10)
        except (OSError, grpc.RpcError) as err:
            reason = err.details() if isinstance(err, grpc.RpcError) else err
            raise SystemExit(
                f"error: model {MODEL!r} is not served at --rest-url {self.rest_url} / --grpc-address "
                f"{self.grpc_address}: {reason}. Serve the model written by --export-model there first."
            ) from None


def _h2load(server, concurrency: int, duration: float, expected: np.ndarray | None, connections: int) -> dict:
    message = predict_request().SerializeToString()
    check_grpc_predict(server.grpc_address, message, expected)
    result = run_h2load(
        server.grpc_address,
        PREDICT_PATH,
        message,
        concurrency=concurrency,
        duration=duration,
        counts=server.grpc_counts,
        connections=connections,
    )
    return {"qps": result.qps, "latencies": result.latencies, "errors": result.total - result.succeeded}


def load_cell(
    server,
    protocol: str,
    concurrency: int,
    duration: float,
    *,
    expected: np.ndarray | None = None,
    h2load_connections: int = 1,
) -> dict:
    """One cell: `protocol` is "REST", "gRPC" or a `GRPC_CLIENTS` label.

    `expected`: the model's answer to the gRPC request, checked before h2load
    sends it (None: any `probability` output, as the canned floor answers).
    """
    if protocol == GRPC_CLIENTS["h2load"]:
        return _h2load(server, concurrency, duration, expected, h2load_connections)
    drive = (
        _rest(server.rest_url, concurrency, duration)
        if protocol == "REST"
        else _grpc(server.grpc_address, concurrency, duration)
    )
    return asyncio.run(drive)


def _ms(latencies: list[float], q: float) -> float:
    return float(np.percentile(latencies, q) * 1000) if latencies else float("nan")


def _verdict(value: float, target: float, note: str = "") -> str:
    return f"{value:.2f}x (target >= {target:g}x: {'met' if value >= target else 'MISSED'}{note})"


def print_targets(qps: dict[tuple[str, str], float], protocols: list[str], concurrency: int) -> None:
    """The issue's targets at `concurrency` (served / floor, batching on / off),
    then served / in-process and the CPU budget it implies."""
    ceiling = qps[(CEILING, "-")]
    needed = 0.5 * ceiling
    cpus = os.cpu_count() or 1
    targets, floors = [], []
    for protocol in protocols:
        on, off = qps.get(("server, batching on", protocol)), qps.get(("server, batching off", protocol))
        floor = qps.get((FLOOR, protocol))
        served = []
        if on is not None and off:
            # No server on these libraries answers faster than the canned floor: on / off <= floor / off.
            bound = f"; at most floor / off = {floor / off:.2f}x on this machine" if floor and floor / off < 3 else ""
            served.append(f"batching on / off = {_verdict(on / off, 3, bound)}")
        if on is not None and floor:
            served.insert(0, f"served (batching on) / floor = {_verdict(on / floor, 0.5)}")
        if on is not None:
            served.append(f"served / in-process = {_verdict(on / ceiling, 0.5)}")
        if served:
            targets.append(f"- {protocol}: " + "; ".join(served))
        if (RUNNING, protocol) in qps:
            running = qps[(RUNNING, protocol)]
            ratios = [f"served / in-process = {_verdict(running / ceiling, 0.5)}"]
            if floor:
                ratios.insert(0, f"served / floor = {_verdict(running / floor, 0.5)}")
            targets.append(f"- {protocol}, running server: " + "; ".join(ratios))
        if floor:
            floors.append(
                f"- {protocol} front-end floor: {floor:,.0f} requests/s = {floor / ceiling:.2f}x of the ceiling; "
                f"client and canned-answer server alone take {cpus / floor * 1e6:.0f} us per request"
            )
    print(f"\nTargets at concurrency {concurrency}:", *targets, sep="\n")
    print(
        f"\nBudget: 0.5x of the ceiling is {needed:,.0f} one-row requests/s, {cpus} CPUs / {needed:,.0f} = "
        f"{cpus / needed * 1e6:.0f} us of CPU per request for client, server and model together.",
        *floors,
        sep="\n",
    )


def _protocol_labels(protocols: list[str], grpc_clients: list[str]) -> list[str]:
    """REST, then one gRPC label per client ("gRPC" alone when only the Python client runs)."""
    labels = [p for p in protocols if p == "REST"]
    if "gRPC" in protocols:
        labels += ["gRPC"] if grpc_clients == ["python"] else [GRPC_CLIENTS[client] for client in grpc_clients]
    return labels


def _median_cells(results: list[tuple[str, str, int, dict]]) -> list[tuple[str, str, int, dict]]:
    """One cell per (mode, protocol, concurrency): the median QPS, every run's QPS, pooled latencies."""
    cells: dict[tuple[str, str, int], list[dict]] = {}
    for mode, protocol, c, r in results:
        cells.setdefault((mode, protocol, c), []).append(r)
    return [
        (
            mode,
            protocol,
            c,
            {
                "qps": float(np.median([r["qps"] for r in runs])),
                "runs": [r["qps"] for r in runs],
                "latencies": [s for r in runs for s in r["latencies"]],
                "errors": sum(r["errors"] for r in runs),
            },
        )
        for (mode, protocol, c), runs in cells.items()
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=5.0, help="seconds measured per cell (after 1 s warmup)")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 32])
    parser.add_argument("--protocols", nargs="+", default=["REST", "gRPC"], choices=["REST", "gRPC"])
    parser.add_argument(
        "--grpc-client",
        nargs="+",
        choices=sorted(GRPC_CLIENTS),
        help="gRPC load generator(s): h2load (default where installed) and/or python (grpc.aio)",
    )
    parser.add_argument(
        "--h2load-connections", type=int, default=1, help="HTTP/2 connections h2load spreads the concurrency over"
    )
    parser.add_argument("--repeats", type=int, default=1, help="measure every configuration N times, alternating")
    parser.add_argument("--modes", nargs="+", default=["off", "on"], choices=["off", "on"], help="batching modes")
    parser.add_argument("--no-floor", dest="floor", action="store_false", help="skip the front-end floor rows")
    parser.add_argument("--serve-floor", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--export-model", type=Path, metavar="DIR", help=f"write the model to DIR/{MODEL}/1 and exit")
    parser.add_argument(
        "--intra-op-threads",
        type=int,
        default=1,
        help="TensorFlow intra-op threads in this process and the servers (TF_NUM_INTRAOP_THREADS); 0: TF's default",
    )
    parser.add_argument(
        "--widths",
        type=int,
        nargs="+",
        default=list(WIDTHS),
        help="the MLP's hidden widths; e.g. 2048 2048 1024 for a model whose compute, not the front end, "
        "sets the cost of a request (what batching is for)",
    )
    parser.add_argument("--rest-url", help="load a running server instead of starting the embedded one")
    parser.add_argument("--grpc-address", help="gRPC address of that running server")
    for knob, value in BATCHING.items():
        parser.add_argument(f"--{knob.replace('_', '-')}", type=int, default=value)
    args = parser.parse_args(argv)
    if args.serve_floor:
        serve_floor()
        return 0
    if args.intra_op_threads > 0:  # before TensorFlow is imported here; the servers inherit it
        os.environ["TF_NUM_INTRAOP_THREADS"] = str(args.intra_op_threads)
    if args.export_model:
        export_model(args.export_model / MODEL / "1", tuple(args.widths))
        print(f"Wrote {args.export_model / MODEL / '1'}; serve it as model {MODEL!r}.")
        return 0
    if args.grpc_client is None:
        args.grpc_client = ["h2load"] if H2LOAD else ["python"]
        if H2LOAD is None and "gRPC" in args.protocols:
            print("Note: h2load is not installed (apt-get install nghttp2-client); gRPC load from the Python client.")
    if "h2load" in args.grpc_client and H2LOAD is None:
        parser.error("--grpc-client h2load: h2load is not installed. Install it: apt-get install nghttp2-client")
    running = RunningServer(args.rest_url, args.grpc_address) if args.rest_url or args.grpc_address else None
    if running is not None:
        running.check()
        args.protocols = [
            p for p in args.protocols if (p == "REST" and args.rest_url) or (p == "gRPC" and args.grpc_address)
        ]
    protocols = _protocol_labels(args.protocols, args.grpc_client)
    BATCHING.update({knob: getattr(args, knob) for knob in BATCHING})

    work = Path(tempfile.mkdtemp(prefix="serving-load-"))
    servers: list[tuple[str, object]] = []
    try:
        version_dir = work / "models" / MODEL / "1"
        export_model(version_dir, tuple(args.widths))
        expected = expected_outputs(version_dir)
        results = []
        for c in args.concurrency:
            results.append((CEILING, "-", c, in_process(version_dir, c, args.duration)))
        if args.floor:
            servers.append((FLOOR, FloorServer()))
        if running is not None:
            servers.append((RUNNING, running))
        for batching in (mode == "on" for mode in args.modes if running is None):
            servers.append(
                (
                    f"server, batching {'on' if batching else 'off'}",
                    Server(work / "models", work / f"cfg-{batching}", batching),
                )
            )
        for _ in range(args.repeats):
            for mode, server in servers:
                for protocol in protocols:
                    for c in args.concurrency:
                        answer = None if mode == FLOOR else expected
                        cell = load_cell(
                            server,
                            protocol,
                            c,
                            args.duration,
                            expected=answer,
                            h2load_connections=args.h2load_connections,
                        )
                        results.append((mode, protocol, c, cell))
    finally:
        for _, server in servers:
            if hasattr(server, "stop"):
                server.stop()
        shutil.rmtree(work, ignore_errors=True)

    print(
        f"\nModel: MLP {FEATURES} features -> dense {'-'.join(map(str, args.widths))} -> 1, "
        f"{parameters(tuple(args.widths)) / 1e6:.2f}M parameters, ~{2 * parameters(tuple(args.widths)) / 1e6:.2f} "
        "MFLOP per row; one row per request."
    )
    print(
        f"Machine: {os.cpu_count()} CPUs shared by server and load generator; {args.duration:g} s per cell; "
        f"{args.repeats} run(s) per cell, alternating (QPS: median); "
        f"batching: {'as the running server is configured' if running else BATCHING}; "
        f"TensorFlow intra-op threads: {args.intra_op_threads or 'default'}; "
        f"h2load: {args.h2load_connections} connection(s).\n"
    )
    cells = _median_cells(results)
    print("| mode | protocol | concurrency | QPS | runs | p50 ms | p99 ms | errors |")
    print("|---|---|---:|---:|---|---:|---:|---:|")
    for mode, protocol, c, r in cells:
        runs = ", ".join(f"{q:.0f}" for q in r["runs"])
        print(
            f"| {mode} | {protocol} | {c} | {r['qps']:.0f} | {runs} | {_ms(r['latencies'], 50):.2f} | "
            f"{_ms(r['latencies'], 99):.2f} | {r['errors']} |"
        )
    top = max(args.concurrency)
    print_targets({(mode, protocol): r["qps"] for mode, protocol, c, r in cells if c == top}, protocols, top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
