"""The generated configs against the real tensorflow_model_server, when installed."""

from __future__ import annotations

import time

import pytest
from ports import free_port
from serving_helpers import MODEL, http, logit

from serving import config as cfg
from serving import real_server

BINARY = real_server.find_binary()
pytestmark = pytest.mark.skipif(
    BINARY is None, reason="tensorflow_model_server is not on PATH (no package or Docker engine on this machine)"
)


def test_real_server_serves_our_config_files(tmp_path, model_dir):
    files = cfg.write_server_files(
        tmp_path / "cfg",
        cfg.server_config(cfg.model_config(MODEL, model_dir, policy=cfg.specific_policy([1]), labels={"stable": 1})),
        batching=cfg.batching_parameters(max_batch_size=8, num_batch_threads=1),
    )
    rest, grpc = free_port(), free_port()
    process = real_server.start(real_server.command(BINARY, files, rest_port=rest, grpc_port=grpc))
    url = f"http://127.0.0.1:{rest}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if http(url, "GET", f"/v1/models/{MODEL}/labels/stable")[0] == 200:
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline and process.poll() is None, "server did not come up"
            time.sleep(0.2)
        status, body = http(
            url,
            "POST",
            f"/v1/models/{MODEL}/labels/stable:predict",
            {"signature_name": "serving_raw", "instances": [[1.0, 2.0, 3.0]]},
        )
        assert status == 200
        assert body["predictions"][0]["logit"] == pytest.approx(logit(1, [1, 2, 3]), rel=1e-6)
        status, _ = http(url, "GET", cfg.PROMETHEUS_PATH)
        assert status == 200
    finally:
        process.terminate()
        process.wait(timeout=30)
