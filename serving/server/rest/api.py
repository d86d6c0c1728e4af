"""The REST API (aiohttp), following TensorFlow Serving's RESTful API.

    GET  /v1/models/{name}[/versions/{v}|/labels/{l}]            model status
    GET  /v1/models/{name}[/versions/{v}|/labels/{l}]/metadata   signature defs
    POST /v1/models/{name}[/versions/{v}|/labels/{l}]:predict    instances|inputs
    POST /v1/models/{name}[/versions/{v}|/labels/{l}]:classify   examples
    POST /v1/models/{name}[/versions/{v}|/labels/{l}]:regress    examples
    GET  /monitoring/prometheus/metrics                          Prometheus

Errors are `{"error": "<message>"}` with the HTTP status of the canonical code
(400 bad input, unknown label or a version beyond int64, 404 unknown
model/version, 413 body over the size limit, 503 batch queue full, 500
internal), and 408 for a body that does not arrive in time. Any other method
or path under `/v1/` (HEAD included) is 400 "Malformed request: <method>
<path>", as TensorFlow Serving's `HttpRestApiHandler::ProcessRequest` answers;
OPTIONS is a CORS preflight, answered as TensorFlow Serving answers it
(`check_preflight`). Only gzip bodies are decoded (`decoded_body`). A body over
the JSON depth limit is refused before it is parsed (400). Content-Type is `application/json`, as TensorFlow
Serving's. Model names and labels in URLs are percent-decoded.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from aiohttp import hdrs, web

from serving.errors import (
    DeadlineExceeded,
    Internal,
    InvalidArgument,
    RequestTimeout,
    RequestTooLarge,
    ServingError,
    message,
)
from serving.server.guards.host_check import allowed_hosts, host_refusal
from serving.server.guards.memory import MemoryReleaser, off_loop_if_large
from serving.server.guards.request_checks import RequestLimits
from serving.server.inference.runtime import ModelRef, Runtime
from serving.server.observability.metrics import REST, ServingMetrics
from serving.server.rest.request_body import (
    CONTENT_ENCODING,
    LARGE_BODY_BYTES,
    UnreadableBody,
    body_too_large,
    bytes_received,
    decoded_body,
    drop_frames,
    expect_continue,
    parse_json,
    parser_reason,
)
from serving.server.rest.routes import (
    PREDICTION_PATH,
    STATUS_PATH,
    check_preflight,
    model_ref,
    requested_signature,
    wrong_method,
)
from serving.server.wire import json_codec, responses
from serving.server.wire.examples import examples_from_json
from serving.server.wire.json_inputs import json_inputs

__all__ = ["RestApi"]

log = logging.getLogger(__name__)

DEFAULT_RUN_TIMEOUT_MS = 30_000  # tensorflow_model_server's --rest_api_timeout_in_ms default


# TensorFlow Serving's one header, exactly (`AddHeaders`; JSON is UTF-8 by definition, RFC 8259),
# built once (aiohttp copies it into each response; 1 us less per response than the arguments).
_JSON_HEADERS = {hdrs.CONTENT_TYPE: "application/json"}
# http_rest_api_util.cc AddCORSHeaders, with --rest_api_enable_cors_support.
_CORS_HEADERS = {
    "Access-Control-Allow-Origin": "*",
    "Access-Control-Allow-Methods": "POST, GET",
    "Access-Control-Allow-Headers": "Content-Type",
}


_REJECTION_REASONS = {RequestTooLarge: "body_size", RequestTimeout: "timeout"}


def _classify_body(results: list[list[tuple[str, float]]]) -> bytes:
    return json_codec.dumps({"results": [[list(pair) for pair in row] for row in results]})


class RestApi:
    """Builds the aiohttp application over a `Runtime`.

    Args:
        runtime: The inference path.
        metrics: Where requests are counted.
        max_request_bytes: Largest body (413 above it).
        prometheus_path: Where the metrics page is served; None for nowhere.
        limits: JSON depth and body timeout (the header timeout is the
            runner's keep-alive timeout, see `EmbeddedServer`).
        memory: Gives memory back after large bodies.
    """

    def __init__(
        self,
        runtime: Runtime,
        metrics: ServingMetrics,
        *,
        max_request_bytes: int,
        prometheus_path: str | None,
        limits: RequestLimits | None = None,
        memory: MemoryReleaser | None = None,
        run_timeout_ms: int = DEFAULT_RUN_TIMEOUT_MS,
        cors: bool = False,
    ) -> None:
        self.runtime = runtime
        # --rest_api_enable_cors_support: TF Serving's headers on every REST API answer (AddCORSHeaders).
        self._headers = {**_JSON_HEADERS, **_CORS_HEADERS} if cors else _JSON_HEADERS
        self._options_headers = _CORS_HEADERS if cors else None
        # TF Serving's --rest_api_timeout_in_ms: the RunOptions timeout of every REST call; <= 0: none.
        self.run_timeout_ms = run_timeout_ms
        self.metrics = metrics
        self.max_request_bytes = max_request_bytes
        self.prometheus_path = prometheus_path
        self.limits = limits or RequestLimits()
        self.memory = memory
        self._verbs = {"predict": self._predict, "classify": self._classify, "regress": self._regress}
        self._loop: asyncio.AbstractEventLoop | None = None  # the server's, set by server()
        self._allowed_hosts: frozenset[str] | None = None  # any Host, until `bound`
        self._bound: tuple[str, int] = ("", 0)

    def bound(self, host: str, port: int) -> None:
        """Called once the port is bound: a loopback `host` answers its own Host names only
        (`host_check`)."""
        self._allowed_hosts = allowed_hosts(host, port)
        self._bound = (host, port)

    def server(self, **handler_options: Any) -> web.Server:
        """aiohttp's low-level server over `handle`.

        Args:
            **handler_options: Connection options of aiohttp's RequestHandler
                (keepalive_timeout, lingering_time, access_log, ...).

        Returns:
            The server, for `web.ServerRunner`.
        """
        self._loop = asyncio.get_running_loop()  # kept: each get_running_loop() costs a getpid() system call
        # Bodies arrive as sent: only gzip is decoded, by `decoded_body`, as TensorFlow Serving decodes it.
        return web.Server(self.handle, request_factory=self._make_request, auto_decompress=False, **handler_options)

    def _make_request(self, message, payload, protocol, writer, task) -> web.BaseRequest:
        return web.BaseRequest(
            message, payload, protocol, writer, task, self._loop, client_max_size=self.max_request_bytes
        )

    async def handle(self, request: web.BaseRequest) -> web.StreamResponse:
        """Routes a request as a `web.Application` with these two routes would.

        `/v1/...` (any method) goes to the API, the Prometheus path (any
        method, as TF Serving's `ProcessPrometheusRequest`) to the metrics
        page; other paths are 404, aiohttp's own response. Routing by hand skips
        the application's router, match info and middleware set-up: 6% of
        the server's GIL time under REST predict load (py-spy).
        """
        if self._allowed_hosts is not None:
            host = request.headers.get(hdrs.HOST)
            if host is not None and host.lower() not in self._allowed_hosts:
                return self._refuse_host(host)
        if request.headers.get(hdrs.EXPECT):
            await expect_continue(request)
        if request.rel_url.raw_path.startswith("/v1/"):
            return await self._dispatch(request)
        path = request.rel_url.path
        # Percent-encoded in the raw path, or another case: TF Serving's `(?i)/v1/.*` takes `/V1/`.
        if path[:4].lower() == "/v1/" or request.rel_url.raw_path[:4].lower() == "/v1/":
            return await self._dispatch(request)
        if (
            self.prometheus_path and path == self.prometheus_path
        ):  # any method, as TF Serving's ProcessPrometheusRequest
            # TF Serving's ProcessPrometheusRequest: plain `text/plain` (Prometheus reads it as its text format).
            return web.Response(body=self.metrics.exposition(), headers={"Content-Type": "text/plain"})
        raise web.HTTPNotFound()

    def _refuse_host(self, host: str) -> web.Response:
        self.metrics.reject(REST, "host")
        body = json_codec.dumps({"error": host_refusal(host, *self._bound)})
        response = web.Response(body=body, status=403, headers=_JSON_HEADERS)
        response.force_close()  # the body, if any, is not read
        return response

    def _complete_body(self, request: web.BaseRequest) -> bytes | None:
        """The body when all of it has arrived and it is within the limit (most
        requests: one read, no coroutine); None otherwise, for `_read`."""
        payload = request.content
        if (
            payload.is_eof()
            and payload.exception() is None
            and payload.total_bytes <= self.max_request_bytes
            and (request.content_length is None or request.content_length <= self.max_request_bytes)
        ):
            return payload.read_nowait()
        return None

    async def _read(self, request: web.BaseRequest) -> bytes:
        limit = self.max_request_bytes

        def too_large() -> RequestTooLarge:
            declared = request.content_length
            received = f"{declared} bytes" if declared is not None and declared > limit else f"more than {limit} bytes"
            return body_too_large(limit, received)

        if request.content_length is not None and request.content_length > limit:
            raise too_large()
        try:
            if request.content.is_eof():  # the whole body is here already (small requests): no timer
                return await request.read()
            return await asyncio.wait_for(request.read(), self.limits.body_timeout_s)
        except web.HTTPRequestEntityTooLarge as err:
            drop_frames(err)
            raise too_large() from None
        except web.RequestPayloadError as err:  # framing the parser could not follow
            drop_frames(err)
            raise UnreadableBody(
                message(
                    f"Request body could not be read: {parser_reason(err)}",
                    expected="a body in the framing its headers declare (Content-Length, or chunked)",
                    received=f"{request.content.total_bytes} bytes before the error",
                    fix="Send the body with a Content-Length header, or as well-formed chunks.",
                )
            ) from None
        except asyncio.TimeoutError as err:
            drop_frames(err)
            raise RequestTimeout(
                message(
                    "Request body timed out",
                    expected=f"the whole body within {self.limits.body_timeout_s:g} s of the request head",
                    received=f"{request.content.total_bytes} of {request.content_length or 'unknown'} bytes",
                    fix="Send the body at once, or start the server with a larger --body-timeout-s.",
                )
            ) from None

    async def _dispatch(self, request: web.BaseRequest) -> web.Response:
        started = time.perf_counter()
        path = request.rel_url.raw_path
        verb, model, size = "", "", 0
        try:
            if request.method == hdrs.METH_OPTIONS:
                check_preflight(request)
                self.metrics.observe_request(
                    model="", api="", entrypoint=REST, status="OK", seconds=time.perf_counter() - started
                )
                return web.Response(headers=self._options_headers)  # no CORS header unless enabled, as TF Serving
            match = PREDICTION_PATH.fullmatch(path) if request.method == "POST" else None
            status_match = STATUS_PATH.fullmatch(path) if request.method == "GET" else None
            if match:
                verb = match.group(4)  # TensorFlow Serving's `API` label: the verb as the URL spells it
                ref = model_ref(*match.groups()[:3])
                model = ref.name
                raw = self._complete_body(request)
                if raw is None:
                    raw = await self._read(request)
                encoding = request.headers.get(CONTENT_ENCODING)
                if encoding:  # if decoding fails, up to the limit may have been allocated: trimmed after
                    size = self.max_request_bytes
                    raw = decoded_body(raw, encoding, self.max_request_bytes)
                size = len(raw)
                body = parse_json(raw, self.limits.max_json_depth)
                verb_call = self._verbs.get(verb)  # as TF Serving compares it: `:PREDICT` is no verb
                if verb_call is None:
                    raise _malformed(request.method, path)
                call = verb_call(ref, body, raw)
                _, payload = await (call if self.run_timeout_ms <= 0 else self._within_run_timeout(call, verb))
            elif status_match:
                ref = model_ref(*status_match.groups()[:3])
                model = ref.name
                api = "metadata" if status_match.group(4) == "metadata" else "status"  # `/METADATA`: status
                if not ref.name:
                    raise InvalidArgument(
                        message(
                            "Missing model name in request",
                            expected="GET /v1/models/<name>",
                            received=path,
                            fix="Add the model name to the URL.",
                        )
                    )
                _, payload = await getattr(self, f"_{api}")(ref)
            elif request.method != "POST" and PREDICTION_PATH.fullmatch(path):
                raise wrong_method(request.method, path, "POST")
            elif request.method != "GET" and STATUS_PATH.fullmatch(path):
                raise wrong_method(request.method, path, "GET")
            else:
                raise _malformed(request.method, path)
        except ServingError as err:
            return self._error_response(err, model, verb, started, size or bytes_received(request))
        except Exception as err:
            log.exception("Unhandled error for %s %s", request.method, path)
            internal = Internal(f"{type(err).__name__}: {err}")
            return self._error_response(internal, model, verb, started, size or bytes_received(request))
        self.metrics.observe_request(
            model=model, api=verb, entrypoint=REST, status="OK", seconds=time.perf_counter() - started
        )
        body = payload if isinstance(payload, bytes) else json_codec.dumps(payload)
        response = web.Response(body=body, headers=self._headers)
        if self.memory is not None:
            self.memory.after(size)
        return response

    def _error_response(self, err: ServingError, model: str, verb: str, started: float, size: int) -> web.Response:
        self.metrics.observe_request(
            model=model, api=verb, entrypoint=REST, status=err.code_name, seconds=time.perf_counter() - started
        )
        reason = getattr(err, "reason", None) or _REJECTION_REASONS.get(type(err))
        if reason:
            self.metrics.reject(REST, reason)
        response = web.Response(
            body=json_codec.dumps({"error": err.text}), status=err.http_status, headers=self._headers
        )
        if isinstance(err, (RequestTimeout, RequestTooLarge, UnreadableBody)):
            response.force_close()  # the rest of the body is not read
        if self.memory is not None:
            self.memory.after(size)  # the body read or decompressed, if any
        return response

    async def _within_run_timeout(self, call, verb: str) -> tuple[int, Any]:
        """`call`, or DEADLINE_EXCEEDED (504) after `run_timeout_ms`, in TensorFlow's words for a
        session run past its RunOptions timeout. A call already running in a thread is not stopped
        (a session run of TF Serving's is); its answer is dropped."""
        try:
            return await asyncio.wait_for(call, self.run_timeout_ms / 1000)
        except asyncio.TimeoutError:
            raise DeadlineExceeded(
                message(
                    "Timed out waiting for notification",
                    expected=f"an answer within rest_api_timeout_in_ms={self.run_timeout_ms}",
                    received=f"a :{verb} request still running after {self.run_timeout_ms} ms",
                    fix="Send fewer rows per request, or raise the server's rest_api_timeout_in_ms "
                    "(serving up --rest-api-timeout-in-ms; 0: no limit).",
                )
            ) from None

    async def _predict(self, ref: ModelRef, body: dict[str, Any], raw: bytes) -> tuple[int, bytes]:
        formats = []
        bools = b"true" in raw or b"false" in raw

        def build(signature):
            inputs, fmt = json_inputs(body, signature, may_contain_bools=bools)
            formats.append(fmt)
            return inputs

        result = await self.runtime.predict(ref, requested_signature(body), build, may_run_on_loop=True)
        return result.version, json_codec.predict_body(result.outputs, formats[0])

    async def _classify(self, ref: ModelRef, body: dict[str, Any], raw: bytes) -> tuple[int, bytes]:
        large = len(raw) >= LARGE_BODY_BYTES
        signature_name = requested_signature(body)  # checked first, as TensorFlow Serving does
        examples = await off_loop_if_large(large, examples_from_json, body)
        result = await self.runtime.classify(ref, signature_name, examples)
        return result.version, await off_loop_if_large(large, _classify_body, result.outputs["results"])

    async def _regress(self, ref: ModelRef, body: dict[str, Any], raw: bytes) -> tuple[int, bytes]:
        signature_name = requested_signature(body)  # checked first, as TensorFlow Serving does
        examples = await off_loop_if_large(len(raw) >= LARGE_BODY_BYTES, examples_from_json, body)
        result = await self.runtime.regress(ref, signature_name, examples)
        return result.version, json_codec.dumps({"results": result.outputs["results"]})

    async def _status(self, ref: ModelRef) -> tuple[int | None, dict]:
        statuses = self.runtime.manager.status(ref.name, ref.version)  # any label ignored, as TF Serving
        return (ref.version, responses.status_json(statuses))

    async def _metadata(self, ref: ModelRef) -> tuple[int, dict]:
        with self.runtime.manager.handle(ref.name, ref.version, ref.label) as servable:
            return servable.version, responses.metadata_json(servable)


def _malformed(method: str, path: str) -> InvalidArgument:
    """TF Serving's answer to a path or verb its handler does not serve (http_rest_api_handler.cc)."""
    return InvalidArgument(
        message(
            f"Malformed request: {method} {path}",
            expected="GET /v1/models/<name>[/versions/<n>|/labels/<l>][/metadata] or "
            "POST /v1/models/<name>[/versions/<n>|/labels/<l>]:(predict|classify|regress)",
            received=f"{method} {path}",
            fix="Check the URL and the HTTP method (the verb and `metadata` are lowercase).",
        )
    )
