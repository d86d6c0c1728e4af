"""Load test of the embedded model server: REST and gRPC, batching on and off.

    TF_USE_LEGACY_KERAS=1 TF_CPP_MIN_LOG_LEVEL=2 .venv/bin/python benchmarks/serving_load.py

The model is an MLP over 48 float features (dense 512-512-256, ReLU, sigmoid
output; ~0.42M parameters, ~0.84 MFLOP per row) served through its
`serving_default` signature, input `x` [batch, 48]. Each request carries one
row, as an online client sends it.

For each server mode (batching off, batching on) the server runs in its own
process (`python -m serving up --embedded`), the clients in this process
(asyncio: aiohttp for REST, grpc.aio for gRPC) keep `concurrency` requests in
flight for a fixed duration against 127.0.0.1. The ceiling is in-process
batched inference: the loaded signature called directly with batches of
`concurrency` rows, no server at all. Prints a markdown table.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

FEATURES = 48
WIDTHS = (512, 512, 256)
MODEL = "mlp"
BATCHING = {"max_batch_size": 32, "batch_timeout_micros": 0, "num_batch_threads": 1}


def export_model(path: Path) -> None:
    import tensorflow as tf

    class Mlp(tf.Module):
        def __init__(self) -> None:
            super().__init__()
            rng = np.random.default_rng(0)
            dims = [FEATURES, *WIDTHS, 1]
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


def parameters() -> int:
    dims = [FEATURES, *WIDTHS, 1]
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


class Server:
    """`python -m serving up --embedded` in a subprocess."""

    def __init__(self, base: Path, config_dir: Path, batching: bool) -> None:
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
        env = {**os.environ, "TF_USE_LEGACY_KERAS": "1", "TF_CPP_MIN_LOG_LEVEL": "2", "PYTHONPATH": str(ROOT)}
        self.process = subprocess.Popen(
            argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
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


async def _rest(url: str, concurrency: int, duration: float) -> dict:
    import aiohttp

    body = json.dumps({"instances": rows(1).tolist()}).encode()
    target = f"{url}/v1/models/{MODEL}:predict"
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def call() -> None:
            async with session.post(target, data=body, headers={"Content-Type": "application/json"}) as response:
                await response.read()
                if response.status != 200:
                    raise RuntimeError(response.status)

        return await _drive(call, concurrency, duration)


async def _grpc(address: str, concurrency: int, duration: float) -> dict:
    import grpc
    import tensorflow as tf
    from tensorflow_serving.apis import predict_pb2, prediction_service_pb2_grpc

    request = predict_pb2.PredictRequest()
    request.model_spec.name = MODEL
    request.inputs["x"].CopyFrom(tf.make_tensor_proto(rows(1)))
    async with grpc.aio.insecure_channel(address) as channel:
        stub = prediction_service_pb2_grpc.PredictionServiceStub(channel)

        async def call() -> None:
            await stub.Predict(request, timeout=30)

        return await _drive(call, concurrency, duration)


def _ms(latencies: list[float], q: float) -> float:
    return float(np.percentile(latencies, q) * 1000) if latencies else float("nan")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=5.0, help="seconds measured per cell (after 1 s warmup)")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 32])
    parser.add_argument("--protocols", nargs="+", default=["REST", "gRPC"], choices=["REST", "gRPC"])
    parser.add_argument("--modes", nargs="+", default=["off", "on"], choices=["off", "on"], help="batching modes")
    for knob, value in BATCHING.items():
        parser.add_argument(f"--{knob.replace('_', '-')}", type=int, default=value)
    args = parser.parse_args(argv)
    BATCHING.update({knob: getattr(args, knob) for knob in BATCHING})

    work = Path(tempfile.mkdtemp(prefix="serving-load-"))
    try:
        export_model(work / "models" / MODEL / "1")
        results = []
        for c in args.concurrency:
            results.append(
                ("in-process batched (ceiling)", "-", c, in_process(work / "models" / MODEL / "1", c, args.duration))
            )
        for batching in (mode == "on" for mode in args.modes):
            server = Server(work / "models", work / f"cfg-{batching}", batching)
            try:
                for protocol in args.protocols:
                    for c in args.concurrency:
                        drive = (
                            _rest(server.rest_url, c, args.duration)
                            if protocol == "REST"
                            else _grpc(server.grpc_address, c, args.duration)
                        )
                        results.append(
                            (f"server, batching {'on' if batching else 'off'}", protocol, c, asyncio.run(drive))
                        )
            finally:
                server.stop()
    finally:
        shutil.rmtree(work, ignore_errors=True)

    print(
        f"\nModel: MLP {FEATURES} features -> dense {'-'.join(map(str, WIDTHS))} -> 1, "
        f"{parameters() / 1e6:.2f}M parameters, ~{2 * parameters() / 1e6:.2f} MFLOP per row; one row per request."
    )
    print(
        f"Machine: {os.cpu_count()} CPUs shared by server and load generator; {args.duration:.0f} s per cell; "
        f"batching: {BATCHING}.\n"
    )
    print("| mode | protocol | concurrency | QPS | p50 ms | p99 ms | errors |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for mode, protocol, c, r in results:
        print(
            f"| {mode} | {protocol} | {c} | {r['qps']:.0f} | {_ms(r['latencies'], 50):.2f} | "
            f"{_ms(r['latencies'], 99):.2f} | {r['errors']} |"
        )
    top = max(args.concurrency)
    qps = {(mode, protocol): r["qps"] for mode, protocol, c, r in results if c == top}
    ceiling = qps[("in-process batched (ceiling)", "-")]
    print(f"\nTargets at concurrency {top}:")
    for protocol in args.protocols:
        if ("server, batching on", protocol) not in qps or ("server, batching off", protocol) not in qps:
            continue
        on, off = qps[("server, batching on", protocol)], qps[("server, batching off", protocol)]
        print(
            f"- {protocol}: batching on / off = {on / off:.2f}x (target >= 3x: {'met' if on >= 3 * off else 'MISSED'}); "
            f"served / in-process = {on / ceiling:.2f}x (target >= 0.5x: {'met' if on >= 0.5 * ceiling else 'MISSED'})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
