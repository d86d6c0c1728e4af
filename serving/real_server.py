"""Run the real `tensorflow_model_server` with our generated config files."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence

from serving.config import ServerFiles

__all__ = ["BINARY", "command", "find_binary", "start"]

BINARY = "tensorflow_model_server"


def find_binary() -> str | None:
    """The path of tensorflow_model_server on PATH, or None."""
    return shutil.which(BINARY)


def command(
    binary: str,
    files: ServerFiles,
    *,
    rest_port: int = 8501,
    grpc_port: int = 8500,
    file_system_poll_wait_seconds: int = 1,
    model_config_file_poll_wait_seconds: int = 0,
    rest_api_timeout_in_ms: int = 30_000,
    extra: Sequence[str] = (),
) -> list[str]:
    """The tensorflow_model_server command line for `files`.

    Labels are allowed on versions that are still loading only at start-up
    (`--allow_version_labels_for_unavailable_models`), so a config written
    by `serving.rollout` with a `stable` label can be served after a restart.
    """
    argv = [
        binary,
        f"--port={grpc_port}",
        f"--rest_api_port={rest_port}",
        f"--model_config_file={files.model_config}",
        f"--model_config_file_poll_wait_seconds={model_config_file_poll_wait_seconds}",
        f"--file_system_poll_wait_seconds={file_system_poll_wait_seconds}",
        f"--monitoring_config_file={files.monitoring}",
        "--allow_version_labels_for_unavailable_models=true",
        f"--rest_api_timeout_in_ms={rest_api_timeout_in_ms}",
        *extra,
    ]
    if files.batching is not None:
        argv += ["--enable_batching=true", f"--batching_parameters_file={files.batching}"]
    return argv


def start(argv: list[str]) -> subprocess.Popen:
    """Starts the server; its output goes to this process's stdout/stderr."""
    return subprocess.Popen(argv)
