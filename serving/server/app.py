"""The embedded model server: REST + gRPC + Prometheus over the model manager.

It speaks TensorFlow Serving's protocols and reads its config files, for
machines where `tensorflow_model_server` cannot be installed. It binds to
127.0.0.1 unless told otherwise.

Example:
    >>> files = write_server_files("/tmp/cfg", server_config(model_config("m", "/models/m")))
    >>> with EmbeddedServer.from_files(files, rest_port=0, grpc_port=0) as server:
    ...     print(server.rest_url)
    http://127.0.0.1:40123
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import threading
import time
from pathlib import Path

import grpc
import uvloop
from aiohttp import web

from serving.config import (
    PROMETHEUS_PATH,
    ServerFiles,
    read_text_proto,
)
from serving.errors import ServingError, message
from serving.protos import (
    model_server_config_pb2,
    monitoring_config_pb2,
    session_bundle_config_pb2,
)
from serving.server.grpc_service.accepts import ConcurrentAccepts
from serving.server.grpc_service.api import health_service, parse_channel_arguments, start_grpc_server
from serving.server.guards import request_checks as limit_defaults
from serving.server.guards.memory import MemoryReleaser
from serving.server.guards.request_checks import RequestLimits
from serving.server.inference.batching_options import BatchingOptions
from serving.server.inference.runtime import Runtime
from serving.server.inference.warmup_replay import replay_warmup
from serving.server.lifecycle.manager import ModelManager
from serving.server.lifecycle.reload_policy import ReloadPolicy
from serving.server.model.servable import Servable
from serving.server.observability.http_log import ConnectionErrorLog
from serving.server.observability.metrics import ServingMetrics
from serving.server.rest.api import DEFAULT_RUN_TIMEOUT_MS, RestApi

__all__ = ["DEFAULT_MAX_REQUEST_BYTES", "EmbeddedServer", "PortInUse", "ServerOptions"]

log = logging.getLogger(__name__)
DEFAULT_MAX_REQUEST_BYTES = 16 * 1024 * 1024


@dataclasses.dataclass(frozen=True)
class ServerOptions:
    """How the embedded server runs; names follow tensorflow_model_server's flags.

    Attributes:
        host: Interface to bind, 127.0.0.1 by default.
        rest_port: REST port (`--rest_api_port`); 0 picks a free port.
        grpc_port: gRPC port (`--port`); 0 picks a free port, None disables gRPC.
        batching: Batching parameters (`--enable_batching` with
            `--batching_parameters_file`); None serves without batching.
        monitoring: Monitoring config; Prometheus at /monitoring/prometheus/metrics
            when None.
        file_system_poll_wait_seconds: Version poll interval.
        model_config_file_poll_wait_seconds: Re-read the model config file this
            often when the server was started from a file; 0 never.
        max_request_bytes: Largest accepted request body (REST) or message (gRPC).
        enable_model_warmup: Replay assets.extra/tf_serving_warmup_requests on load.
        allow_version_labels_for_unavailable_models: As the flag of that name: new
            labels may point at versions not loaded yet (moved labels may not).
        force_allow_any_version_labels_for_unavailable_models: As the flag of that
            name: moved labels too.
        max_num_load_retries: Load retries of a failing version.
        inference_threads: Threads running unbatched requests.
        request_memory_budget_bytes: Largest decoded size of one request's
            input tensors, checked against declared shapes before decoding.
        max_json_depth: Deepest nesting of a REST body.
        header_timeout_s: Close a connection that has not sent a complete
            request head this long after it opened or was last answered
            (also the idle keep-alive timeout).
        body_timeout_s: Answer 408 when a body is not complete this long
            after its head.
        allow_config_reload: Serve HandleReloadConfigRequest (off: FAILED_PRECONDITION).
        allowed_model_roots: Where reloaded base paths may point; empty: the
            initial config's base paths.
        rest_api_timeout_in_ms: A REST predict/classify/regress not answered in
            this time is DEADLINE_EXCEEDED (504), as tensorflow_model_server's flag
            of that name (default 30 s); 0: no limit.
        rest_api_enable_cors_support: Add TF Serving's CORS headers to every
            REST API answer (`Access-Control-Allow-Origin: *`, ...).
        grpc_socket_path: Also serve gRPC on this UNIX socket (with `grpc_port`
            None: only there), as `--grpc_socket_path`.
        grpc_channel_arguments: gRPC server arguments, `key=value,...`, as
            `--grpc_channel_arguments` (integers passed as integers).
        enable_grpc_healthcheck_service: Serve the standard gRPC health service
            (`grpc.health.v1.Health`), as `--enable_grpc_healthcheck_service`.
    """

    host: str = "127.0.0.1"
    rest_port: int = 8501
    grpc_port: int | None = 8500
    batching: session_bundle_config_pb2.BatchingParameters | None = None
    monitoring: monitoring_config_pb2.MonitoringConfig | None = None
    file_system_poll_wait_seconds: float = 1.0
    model_config_file_poll_wait_seconds: float = 0.0
    max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES
    enable_model_warmup: bool = True
    allow_version_labels_for_unavailable_models: bool = False
    force_allow_any_version_labels_for_unavailable_models: bool = False
    max_num_load_retries: int = 5
    inference_threads: int = dataclasses.field(default_factory=lambda: max(4, 2 * (os.cpu_count() or 1)))
    request_memory_budget_bytes: int = limit_defaults.DEFAULT_MEMORY_BUDGET_BYTES
    max_json_depth: int = limit_defaults.DEFAULT_MAX_JSON_DEPTH
    header_timeout_s: float = limit_defaults.DEFAULT_HEADER_TIMEOUT_S
    body_timeout_s: float = limit_defaults.DEFAULT_BODY_TIMEOUT_S
    allow_config_reload: bool = False
    allowed_model_roots: tuple[str, ...] = ()
    rest_api_timeout_in_ms: int = DEFAULT_RUN_TIMEOUT_MS
    rest_api_enable_cors_support: bool = False
    grpc_socket_path: str | None = None
    grpc_channel_arguments: str = ""
    enable_grpc_healthcheck_service: bool = False

    def limits(self) -> RequestLimits:
        return RequestLimits(
            memory_budget_bytes=self.request_memory_budget_bytes,
            max_json_depth=self.max_json_depth,
            header_timeout_s=self.header_timeout_s,
            body_timeout_s=self.body_timeout_s,
        )


class PortInUse(OSError):
    """A port the server was told to bind is taken; the message names it and the flag."""


def _port_in_use(what: str, host: str, port: int, flag: str, err: BaseException) -> PortInUse:
    return PortInUse(
        message(
            f"Cannot bind the {what} port {host}:{port}",
            expected="a free port",
            received=str(err).splitlines()[0] if str(err) else type(err).__name__,
            fix=f"Stop the process holding it (e.g. `ss -ltnp 'sport = :{port}'`) or pass another {flag} "
            "(0 picks a free one).",
        )
    )


class EmbeddedServer:
    """A running (after `start()`) TensorFlow-Serving-compatible model server.

    Args:
        config: The model server config to serve.
        options: How to run; defaults as tensorflow_model_server on 127.0.0.1.
        config_path: The file `config` came from, if any (for config polling
            and for tools that rewrite it).
    """

    def __init__(
        self,
        config: model_server_config_pb2.ModelServerConfig,
        options: ServerOptions | None = None,
        *,
        config_path: str | os.PathLike | None = None,
    ) -> None:
        self.options = options or ServerOptions()
        self.config_path = Path(config_path) if config_path else None
        self.metrics = ServingMetrics()
        self.limits = self.options.limits()
        self.memory = MemoryReleaser()
        self.reload_policy = ReloadPolicy.from_options(
            self.options.allow_config_reload, tuple(self.options.allowed_model_roots), config
        )
        self.manager = ModelManager(
            config,
            poll_seconds=self.options.file_system_poll_wait_seconds,
            prepare=self._prepare,
            on_change=self.metrics.set_available,
            max_load_retries=self.options.max_num_load_retries,
            allow_labels_for_unavailable=self.options.allow_version_labels_for_unavailable_models,
            force_allow_any_labels_for_unavailable=self.options.force_allow_any_version_labels_for_unavailable_models,
            config_path=self.config_path,
            config_poll_seconds=self.options.model_config_file_poll_wait_seconds,
        )
        self.metrics.model_known = self.manager.knows
        batching = BatchingOptions.from_proto(self.options.batching) if self.options.batching else None
        self.runtime = Runtime(
            self.manager, self.metrics, batching=batching, inference_threads=self.options.inference_threads
        )
        monitoring = self.options.monitoring
        prometheus = (monitoring.prometheus_config.path or PROMETHEUS_PATH) if monitoring else PROMETHEUS_PATH
        if monitoring is not None and not monitoring.prometheus_config.enable:
            prometheus = None
        self.rest = RestApi(
            self.runtime,
            self.metrics,
            max_request_bytes=self.options.max_request_bytes,
            prometheus_path=prometheus,
            limits=self.limits,
            memory=self.memory,
            run_timeout_ms=self.options.rest_api_timeout_in_ms,
            cors=self.options.rest_api_enable_cors_support,
        )
        self._channel_arguments = parse_channel_arguments(self.options.grpc_channel_arguments)
        self._health = None  # the gRPC health service, with enable_grpc_healthcheck_service
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.ServerRunner | None = None
        self._grpc: grpc.aio.Server | None = None
        self.grpc_accepts: ConcurrentAccepts | None = None  # Predict's accept loops, once gRPC runs
        self.rest_port: int | None = None
        self.grpc_port: int | None = None
        self._stopped = threading.Event()

    def _prepare(self, servable: Servable) -> None:
        """Counts the load, then replays the warmup file, under TensorFlow Serving's metric names."""
        path = str(servable.path)
        self.metrics.observe_load(path)
        if not self.options.enable_model_warmup:
            return
        started = time.perf_counter()
        try:
            records = replay_warmup(servable)
        except ServingError as err:
            status = f"{err.code_name}: {err.text.splitlines()[0]}"  # absl::Status::ToString()
            self.metrics.observe_warmup(path, status, 0, time.perf_counter() - started)
            raise
        if records:  # as TensorFlow Serving: no metric without a warmup file
            self.metrics.observe_warmup(path, "OK", records, time.perf_counter() - started)

    @classmethod
    def from_files(cls, files: ServerFiles, **options) -> EmbeddedServer:
        """Builds a server from config files written by `write_server_files`.

        Args:
            files: The model config, and optional batching and monitoring files.
            **options: Other `ServerOptions` fields (host, rest_port, ...).
        """
        config = read_text_proto(files.model_config, model_server_config_pb2.ModelServerConfig)
        if files.batching is not None:
            options["batching"] = read_text_proto(files.batching, session_bundle_config_pb2.BatchingParameters)
        if files.monitoring is not None:
            options["monitoring"] = read_text_proto(files.monitoring, monitoring_config_pb2.MonitoringConfig)
        return cls(config, ServerOptions(**options), config_path=files.model_config)

    # -- addresses -----------------------------------------------------------
    @property
    def rest_url(self) -> str:
        return f"http://{self.options.host}:{self.rest_port}"

    @property
    def grpc_address(self) -> str | None:
        return None if self.grpc_port is None else f"{self.options.host}:{self.grpc_port}"

    # -- lifecycle -----------------------------------------------------------
    def start(self, timeout: float = 120.0) -> EmbeddedServer:
        """Loads the initial model versions, then opens the ports.

        As tensorflow_model_server does, ports open only once the initial
        versions are loaded (or have failed to load).
        """
        self.manager.start()
        # libuv's loop, as uvicorn runs one: aiohttp and grpc.aio both run on it, and each
        # request costs the loop less (benchmarks/serving_load.py; figures in NOTES.md).
        self._loop = uvloop.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="serving-loop", daemon=True)
        self._thread.start()
        try:
            asyncio.run_coroutine_threadsafe(self._start_async(), self._loop).result(timeout)
        except BaseException:
            self.stop()
            raise
        socket = f" and unix:{self.options.grpc_socket_path}" if self.options.grpc_socket_path else ""
        log.info("Embedded model server: REST %s, gRPC %s%s", self.rest_url, self.grpc_address, socket)
        return self

    async def _start_async(self) -> None:
        self.runtime.start()
        # aiohttp closes a connection that sends no complete request head within
        # its keep-alive timeout (counted from the connection's start and from
        # each answer): that is the header timeout. After an early answer (408,
        # 413) it reads the unsent rest of the body at most `lingering_time`.
        self._runner = web.ServerRunner(
            self.rest.server(
                access_log=None,
                logger=ConnectionErrorLog(log),
                keepalive_timeout=self.limits.header_timeout_s,
                lingering_time=2.0,
            )
        )
        await self._runner.setup()
        host = self.options.host
        site = web.TCPSite(self._runner, host, self.options.rest_port, reuse_address=True)
        try:
            await site.start()
        except OSError as err:
            raise _port_in_use("REST", host, self.options.rest_port, "--rest-port", err) from None
        self.rest_port = self._runner.addresses[0][1]
        self.rest.bound(host, self.rest_port)
        if self.options.grpc_port is not None or self.options.grpc_socket_path:
            grpc_port = self.options.grpc_port
            if self.options.enable_grpc_healthcheck_service:
                self._health = await health_service()
            try:
                self._grpc, port, self.grpc_accepts = await start_grpc_server(
                    self.runtime,
                    self.metrics,
                    address=None if grpc_port is None else f"{host}:{grpc_port}",
                    max_message_bytes=self.options.max_request_bytes,
                    limits=self.limits,
                    memory=self.memory,
                    reload_policy=self.reload_policy,
                    socket_path=self.options.grpc_socket_path,
                    channel_arguments=self._channel_arguments,
                    health=self._health,
                )
            except OSError as err:
                if grpc_port is None:
                    raise OSError(f"{err}. Check --grpc-socket-path: its folder must exist and be writable.") from None
                raise _port_in_use("gRPC", host, grpc_port, "--grpc-port", err) from None
            self.grpc_port = port if grpc_port is not None else None

    async def _stop_async(self) -> None:
        if self._health is not None:
            await self._health.enter_graceful_shutdown()  # NOT_SERVING while calls drain
        if self._grpc is not None:
            await self._grpc.stop(grace=1.0)
        if self._runner is not None:
            await self._runner.cleanup()
        await self.runtime.stop()

    def stop(self) -> None:
        """Closes the ports, finishes in-flight work and stops polling."""
        if self._stopped.is_set():
            return
        if self._loop is not None and self._loop.is_running():
            try:
                asyncio.run_coroutine_threadsafe(self._stop_async(), self._loop).result(30)
            finally:
                self._loop.call_soon_threadsafe(self._loop.stop)
                self._thread.join(timeout=30)
                self._loop.close()
        self.manager.stop()
        self.memory.close()
        self._stopped.set()

    def wait(self) -> None:
        """Blocks until `stop()` is called (from a signal handler, say)."""
        self._stopped.wait()

    def reload_config(self, config: model_server_config_pb2.ModelServerConfig) -> None:
        """In-process HandleReloadConfigRequest (trusted: the reload policy applies to the RPC only)."""
        self.manager.reload(config)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
