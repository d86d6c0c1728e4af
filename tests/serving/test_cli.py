"""`python -m serving` end to end, in real subprocesses."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from serving_helpers import MODEL, push
from tfs_contract_helpers import HALF_PLUS_TWO, tfs_testdata

import serving
from serving import real_server

ROOT = Path(serving.__file__).resolve().parents[1]
ENV = {**os.environ, "TF_USE_LEGACY_KERAS": "1", "TF_CPP_MIN_LOG_LEVEL": "2", "PYTHONPATH": str(ROOT)}


def run(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "serving", *args], cwd=cwd, env=ENV, capture_output=True, text=True, timeout=120
    )


def start_up(config_dir: Path, *flags: str) -> tuple[subprocess.Popen, list[str]]:
    """`python -m serving up --embedded ... *flags` on free ports; returns it and its stdout lines
    once it prints `Serving <model>:`."""
    process = subprocess.Popen(
        [sys.executable, "-m", "serving", "up", "--embedded", "--rest-port", "0", "--grpc-port", "0"]
        + ["--config-dir", str(config_dir), *flags],
        cwd=ROOT,
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in process.stdout], daemon=True).start()
    seen, deadline = [], time.monotonic() + 90
    while not any(line.startswith("Serving ") for line in seen):
        assert process.poll() is None and time.monotonic() < deadline, "".join(seen)
        try:
            seen.append(lines.get(timeout=0.5))
        except queue.Empty:
            pass
    return process, seen


def stop_up(process: subprocess.Popen) -> None:
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=60) == 0


@pytest.fixture
def up(tmp_path, model_dir, exports):
    """`python -m serving up --embedded` over versions 1 and 2; yields (config dir, stdout lines)."""
    push(model_dir, 2, exports[2])
    config_dir = tmp_path / "state"
    flags = ["--model-name", MODEL, "--base-path", str(model_dir.parent)]
    process, seen = start_up(config_dir, *flags, "--allow-config-reload")  # `rollback` reloads over gRPC
    yield config_dir, seen
    stop_up(process)


def test_up_status_predict_and_rollback(up):
    config_dir, stdout = up
    assert "Starting the embedded server (--embedded)\n" in stdout
    endpoints = json.loads((config_dir / "endpoints.json").read_text())
    assert endpoints["server"] == "embedded" and endpoints["rest_url"].startswith("http://127.0.0.1:")
    assert "value: 2" in (config_dir / "models.config").read_text()  # pinned: stable -> newest version

    status = run("status", MODEL, "--config-dir", str(config_dir))
    assert status.returncode == 0, status.stderr
    assert [v["version"] for v in json.loads(status.stdout)["model_version_status"]] == ["2"]

    body = json.dumps({"signature_name": "serving_raw", "instances": [[1.0, 2.0, 3.0]]})
    predict = run("predict", MODEL, "--json", body, "--label", "stable", "--config-dir", str(config_dir))
    assert predict.returncode == 0, predict.stderr
    assert json.loads(predict.stdout)["predictions"][0]["logit"] == pytest.approx(2.8, rel=1e-6)

    back = run("rollback", MODEL, "--config-dir", str(config_dir))
    assert back.returncode == 0, back.stderr
    assert "Rolled back lin: stable 2 -> 1; version 2 unloaded" in back.stdout
    states = json.loads(run("status", MODEL, "--config-dir", str(config_dir)).stdout)["model_version_status"]
    assert {s["version"]: s["state"] for s in states} == {"2": "END", "1": "AVAILABLE"}


def test_up_takes_a_folder_of_versions_as_tf_serving_model_base_path(tmp_path):
    # TF Serving's own test model, as `tensorflow_model_server --model_base_path=.../saved_model_half_plus_two_cpu`.
    base = tfs_testdata() / HALF_PLUS_TWO
    process, stdout = start_up(tmp_path / "state", "--model-name", "half", "--base-path", str(base))
    try:
        # `up` names the folder with its links resolved (CI's shared/ may be a link).
        assert f"note: {base.resolve()} holds version folders; serving them as model 'half'\n" in stdout
        predict = run(
            "predict", "half", "--json", '{"instances": [1.0, 2.0, 5.0]}', "--config-dir", str(tmp_path / "state")
        )
        assert predict.returncode == 0, predict.stderr
        assert json.loads(predict.stdout) == {"predictions": [2.5, 3.0, 4.5]}
    finally:
        stop_up(process)


@pytest.mark.parametrize(
    ("args", "code", "text"),
    [
        (["predict", MODEL, "--json", "{not json"], 2, "--json is not valid JSON"),
        (["status", MODEL, "--url", "http://127.0.0.1:9"], 1, "cannot reach http://127.0.0.1:9"),
        (
            ["up", "--model-name", "nope", "--base-path", "/nonexistent", "--embedded"],
            2,
            "Model directory /nonexistent/nope does not exist",
        ),
        (["status", MODEL, "--version", "1", "--label", "stable"], 2, "pass --version or --label, not both"),
    ],
)
def test_cli_errors_explain_the_fix(tmp_path, args, code, text):
    result = run(*args, cwd=tmp_path)
    assert result.returncode == code
    assert text in result.stderr


@pytest.mark.skipif(real_server.find_binary() is not None, reason="tensorflow_model_server is installed here")
def test_up_real_without_the_binary_fails_clearly(tmp_path, model_dir):
    result = run("up", "--model-name", MODEL, "--base-path", str(model_dir.parent), "--real", cwd=tmp_path)
    assert result.returncode == 2
    assert "tensorflow_model_server is not on PATH" in result.stderr


def test_manifests_command_writes_the_deployment_files(tmp_path):
    result = run("manifests", "--model-name", MODEL, "--out", str(tmp_path / "deploy"))
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "deploy" / "kubernetes" / "hpa.yaml").is_file()
    assert str(tmp_path / "deploy" / "docker-compose.yaml") in result.stdout
