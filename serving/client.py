"""Small clients for a running model server (real or embedded).

`RestClient` keeps one HTTP/1.1 connection open (so latency measurements do
not pay a TCP handshake per request); it is not thread-safe, use one per
thread. `reload_config` sends ModelService.HandleReloadConfigRequest.
"""

from __future__ import annotations

import http.client
import json
import urllib.parse
from typing import Any

from serving.errors import ServingError, message

__all__ = ["RestClient", "ServerError", "model_path", "reload_config"]


class ServerError(ServingError):
    """The server answered with an error.

    Attributes:
        status: The HTTP status, or None for gRPC.
        text: The server's error message.
    """

    def __init__(self, text: str, status: int | None = None, code=None) -> None:
        super().__init__(text)
        self.status = status
        if code is not None:
            self.code = code

    @property
    def http_status(self) -> int:
        return self.status if self.status is not None else super().http_status


def model_path(name: str, version: int | None = None, label: str | None = None) -> str:
    """`/v1/models/<name>[/versions/<v>|/labels/<l>]`, URL-quoted."""
    path = f"/v1/models/{urllib.parse.quote(name, safe='')}"
    if version is not None:
        path += f"/versions/{int(version)}"
    elif label is not None:
        path += f"/labels/{urllib.parse.quote(label, safe='')}"
    return path


class RestClient:
    """A keep-alive REST client for TensorFlow Serving's API.

    Args:
        base_url: e.g. "http://127.0.0.1:8501".
        timeout: Seconds per request.
    """

    def __init__(self, base_url: str, timeout: float = 30.0) -> None:
        parsed = urllib.parse.urlsplit(base_url)
        if parsed.scheme != "http" or not parsed.hostname:
            raise ValueError(
                message(
                    "Invalid value received for argument `base_url`",
                    expected="an http URL such as http://127.0.0.1:8501",
                    received=f"base_url={base_url!r}",
                    fix="Pass the REST address of the model server.",
                )
            )
        self.base_url = base_url.rstrip("/")
        self._host, self._port = parsed.hostname, parsed.port or 80
        self._timeout = timeout
        self._conn: http.client.HTTPConnection | None = None

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def call(self, method: str, path: str, body: Any = None) -> dict[str, Any]:
        """Sends one request; returns the JSON body.

        Raises:
            ServerError: A non-200 answer (its `status` and error text).
            OSError: The server cannot be reached.
        """
        payload = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
        headers = {"Content-Type": "application/json"} if payload is not None else {}
        for attempt in (0, 1):
            if self._conn is None:
                self._conn = http.client.HTTPConnection(self._host, self._port, timeout=self._timeout)
            try:
                self._conn.request(method, path, body=payload, headers=headers)
                response = self._conn.getresponse()
                raw = response.read()
                break
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                self.close()  # a kept-alive connection the server closed: retry once on a new one
                if attempt:
                    raise
        try:
            data = json.loads(raw) if raw else {}
        except json.JSONDecodeError:
            data = {"error": raw.decode("utf-8", "replace")}
        if response.status != 200:
            text = data.get("error", raw.decode("utf-8", "replace")) if isinstance(data, dict) else str(data)
            raise ServerError(text, status=response.status)
        return data

    def status(self, name: str, version: int | None = None, label: str | None = None) -> dict[str, Any]:
        return self.call("GET", model_path(name, version, label))

    def metadata(self, name: str, version: int | None = None, label: str | None = None) -> dict[str, Any]:
        return self.call("GET", model_path(name, version, label) + "/metadata")

    def predict(
        self, name: str, body: Any, version: int | None = None, label: str | None = None, verb: str = "predict"
    ) -> dict[str, Any]:
        """POSTs `body` to `:predict` (or `:classify`, `:regress` with `verb`)."""
        return self.call("POST", f"{model_path(name, version, label)}:{verb}", body)


def reload_config(grpc_address: str, config, timeout: float = 60.0) -> None:
    """Sends HandleReloadConfigRequest with `config` (a ModelServerConfig).

    Raises:
        ServerError: The server rejected the config (its gRPC code and message).
    """
    # Here, not at the top: the model-service protos load TensorFlow (seconds); only a config reload needs them.
    import grpc
    from tensorflow_serving.apis import model_management_pb2, model_service_pb2_grpc

    request = model_management_pb2.ReloadConfigRequest()
    request.config.CopyFrom(config)
    with grpc.insecure_channel(grpc_address) as channel:
        stub = model_service_pb2_grpc.ModelServiceStub(channel)
        try:
            response = stub.HandleReloadConfigRequest(request, timeout=timeout)
        except grpc.RpcError as err:
            raise ServerError(err.details() or str(err), code=err.code()) from None
    if response.status.error_code:
        raise ServerError(response.status.error_message)
