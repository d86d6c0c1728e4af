"""A real `python -m serving up --embedded` server in its own process, for tests
that must watch its memory (RSS, with psutil) or see it die."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import psutil
from ports import free_port
from serving_helpers import MODEL, WEIGHTS, export_linear, http, push

REPO = Path(__file__).resolve().parents[2]
MIB = 1024 * 1024


class ServerProcess:
    """`python -m serving up --embedded` serving `<base>/lin`, stopped by `close()`.

    Args:
        base: Directory holding `lin/<version>/`.
        config_dir: Where `up` writes its configs and endpoints.json.
        *flags: Extra `up` flags.
    """

    def __init__(self, base: Path, config_dir: Path, *flags: str, timeout: float = 120.0) -> None:
        self.rest_port, self.grpc_port = free_port(), free_port()
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", TF_USE_LEGACY_KERAS="1", PYTHONPATH=str(REPO))
        self.log = config_dir / "server.log"
        config_dir.mkdir(parents=True, exist_ok=True)
        argv = [sys.executable, "-m", "serving", "up", "--embedded", "--model-name", MODEL, "--base-path", str(base)]
        argv += ["--rest-port", str(self.rest_port), "--grpc-port", str(self.grpc_port)]
        argv += ["--config-dir", str(config_dir), "--fresh", *flags]
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen(argv, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)
        self.rest_url = f"http://127.0.0.1:{self.rest_port}"
        self.grpc_address = f"127.0.0.1:{self.grpc_port}"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"server exited {self.process.returncode}: {self.log.read_text()[-2000:]}")
            try:
                status, body = http(self.rest_url, "GET", f"/v1/models/{MODEL}", timeout=2)
                if status == 200 and body["model_version_status"][0]["state"] == "AVAILABLE":
                    break
            except OSError:
                pass
            time.sleep(0.2)
        else:
            self.close()
            raise TimeoutError(f"server not ready in {timeout}s: {self.log.read_text()[-2000:]}")
        self.ps = psutil.Process(self.process.pid)

    def rss(self) -> int:
        return self.ps.memory_info().rss

    def alive(self) -> bool:
        return self.process.poll() is None

    def metrics(self) -> str:
        status, body = http(self.rest_url, "GET", "/monitoring/prometheus/metrics")
        assert status == 200
        return body["raw"]

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)


def predict_raw(url: str, rows: list, timeout: float = 60.0) -> tuple[int, dict]:
    body = json.dumps({"signature_name": "serving_raw", "instances": rows}).encode()
    return http(url, "POST", f"/v1/models/{MODEL}:predict", body, timeout=timeout)


def start_linear_server(root: Path, warm_requests: int = 1) -> ServerProcess:
    """Serves the tests' linear model (version 1, `<root>/models/lin`) in its own process.

    It answers `warm_requests` good requests first; its RSS after them is `baseline`.
    """
    base = root / "models"
    (base / MODEL).mkdir(parents=True)
    push(base / MODEL, 1, export_linear(root / "export", *WEIGHTS[1]))
    server = ServerProcess(base, root / "cfg")
    for _ in range(warm_requests):
        assert predict_raw(server.rest_url, [[1.0, 2.0, 3.0]])[0] == 200
    server.baseline = server.rss()
    return server
