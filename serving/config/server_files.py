"""The three files a model server starts with: model config, batching parameters, monitoring config.

`write_server_files` writes them (atomically) into one folder; `batching_parameters` and
`monitoring_config` build the last two with TensorFlow Serving's defaults, checked.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable
from pathlib import Path

from serving.config.models import ModelServerConfig
from serving.config.text_proto import ConfigError, write_text_proto
from serving.errors import message
from serving.protos import (
    monitoring_config_pb2,
    session_bundle_config_pb2,
)

__all__ = [
    "BATCHING_FILE",
    "BatchingParameters",
    "MODEL_CONFIG_FILE",
    "MONITORING_FILE",
    "MonitoringConfig",
    "PROMETHEUS_PATH",
    "ServerFiles",
    "batching_parameters",
    "monitoring_config",
    "write_server_files",
]

PROMETHEUS_PATH = "/monitoring/prometheus/metrics"
MODEL_CONFIG_FILE = "models.config"
BATCHING_FILE = "batching.config"
MONITORING_FILE = "monitoring.config"


BatchingParameters = session_bundle_config_pb2.BatchingParameters
MonitoringConfig = monitoring_config_pb2.MonitoringConfig


def batching_parameters(
    *,
    max_batch_size: int = 32,
    batch_timeout_micros: int = 1000,
    num_batch_threads: int | None = None,
    max_enqueued_batches: int = 100,
    allowed_batch_sizes: Iterable[int] = (),
    max_execution_batch_size: int | None = None,
) -> BatchingParameters:
    """Builds `BatchingParameters` with TensorFlow Serving's knobs, validated.

    Args:
        max_batch_size: Largest batch handed to the model.
        batch_timeout_micros: How long the oldest request may wait for a batch
            to fill before it runs anyway.
        num_batch_threads: Batches run in parallel; the CPU count when None.
        max_enqueued_batches: Queue length in batches; more requests are
            rejected with UNAVAILABLE (HTTP 503).
        allowed_batch_sizes: Batches are padded up to the next of these sizes;
            increasing, the last equal to `max_batch_size`.
        max_execution_batch_size: Turns on large-batch splitting: a request of up
            to `max_batch_size` rows is split into batches of at most this many
            rows. None: a request over `max_batch_size` rows is refused, and
            batches hold up to `max_batch_size` rows.

    Returns:
        The proto to write with `write_text_proto`.
    """
    threads = num_batch_threads if num_batch_threads is not None else (os.cpu_count() or 1)
    for arg, value in [
        ("max_batch_size", max_batch_size),
        ("num_batch_threads", threads),
        ("max_enqueued_batches", max_enqueued_batches),
        ("max_execution_batch_size", 1 if max_execution_batch_size is None else max_execution_batch_size),
    ]:
        if value < 1:
            raise ConfigError(
                message(
                    f"Invalid value received for argument `{arg}`",
                    expected="an integer >= 1",
                    received=f"{arg}={value}",
                    fix=f"Set {arg} to a positive integer.",
                )
            )
    if batch_timeout_micros < 0:
        raise ConfigError(
            message(
                "Invalid value received for argument `batch_timeout_micros`",
                expected="an integer >= 0",
                received=f"batch_timeout_micros={batch_timeout_micros}",
                fix="Use 0 to run batches as soon as a thread is free.",
            )
        )
    allowed = [int(s) for s in allowed_batch_sizes]
    if allowed and (allowed != sorted(set(allowed)) or allowed[-1] != max_batch_size or allowed[0] < 1):
        raise ConfigError(
            message(
                "Invalid value received for argument `allowed_batch_sizes`",
                expected=f"increasing positive sizes ending with max_batch_size={max_batch_size}",
                received=f"allowed_batch_sizes={allowed}",
                fix=f"Use e.g. [8, 16, {max_batch_size}].",
            )
        )
    if max_execution_batch_size is not None and max_execution_batch_size > max_batch_size:
        raise ConfigError(
            message(
                "Invalid value received for argument `max_execution_batch_size`",
                expected=f"at most max_batch_size={max_batch_size} (the most rows one request may have)",
                received=f"max_execution_batch_size={max_execution_batch_size}",
                fix=f"Lower max_execution_batch_size, or raise max_batch_size to at least {max_execution_batch_size}.",
            )
        )
    params = BatchingParameters()
    params.max_batch_size.value = max_batch_size
    if max_execution_batch_size is not None:
        params.enable_large_batch_splitting.value = True
        params.max_execution_batch_size.value = max_execution_batch_size
    params.batch_timeout_micros.value = batch_timeout_micros
    params.num_batch_threads.value = threads
    params.max_enqueued_batches.value = max_enqueued_batches
    params.allowed_batch_sizes.extend(allowed)
    return params


def monitoring_config(path: str = PROMETHEUS_PATH) -> MonitoringConfig:
    """Builds a `MonitoringConfig` exposing Prometheus metrics at `path`."""
    if not path.startswith("/"):
        raise ConfigError(
            message(
                "Invalid value received for argument `path`",
                expected="a URL path starting with '/'",
                received=f"path={path!r}",
                fix=f"Use {PROMETHEUS_PATH!r}.",
            )
        )
    config = MonitoringConfig()
    config.prometheus_config.enable = True
    config.prometheus_config.path = path
    return config


@dataclasses.dataclass(frozen=True)
class ServerFiles:
    """Paths of the config files a model server is started with."""

    model_config: Path
    batching: Path | None
    monitoring: Path


def write_server_files(
    directory: str | os.PathLike,
    config: ModelServerConfig,
    *,
    batching: BatchingParameters | None = None,
    monitoring: MonitoringConfig | None = None,
) -> ServerFiles:
    """Writes the model, batching and monitoring configs into `directory`.

    Args:
        directory: Created if missing.
        config: The model server config.
        batching: Batching parameters; no batching file when None.
        monitoring: Monitoring config; Prometheus at the default path when None.

    Returns:
        The written paths (models.config, batching.config, monitoring.config).
    """
    directory = Path(directory)
    batching_path = None
    if batching is not None:
        batching_path = write_text_proto(directory / BATCHING_FILE, batching)
    return ServerFiles(
        model_config=write_text_proto(directory / MODEL_CONFIG_FILE, config),
        batching=batching_path,
        monitoring=write_text_proto(directory / MONITORING_FILE, monitoring or monitoring_config()),
    )
