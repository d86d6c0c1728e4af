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
(`_check_preflight`). Only gzip bodies are decoded (`_decoded`). A body over
the JSON depth limit is refused before it is parsed (400). Content-Type is `application/json`, as TensorFlow
Serving's. Model names and labels in URLs are percent-decoded.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import re
import time
import zlib
from typing import Any
from urllib.parse import unquote

from aiohttp import hdrs, web
from aiohttp.http import HttpVersion11

from serving.errors import (
    FailedPrecondition,
    Internal,
    InvalidArgument,
    RequestTimeout,
    RequestTooLarge,
    ServingError,
    echoed,
    message,
)
from serving.server import json_codec, responses
from serving.server.examples import examples_from_json
from serving.server.host_check import allowed_hosts, host_refusal
from serving.server.limits import RequestLimits, check_json_depth, json_brackets
from serving.server.manager import MAX_VERSION
from serving.server.memory import MemoryReleaser, gc_paused, off_loop_if_large
from serving.server.metrics import CONTENT_TYPE_LATEST, REST, ServingMetrics
from serving.server.runtime import ModelRef, Runtime
from serving.server.tensors import json_inputs

__all__ = ["RestApi"]

log = logging.getLogger(__name__)

_SPEC = r"/v1/models/([^/:]+)(?:(?:/versions/(\d+))|(?:/labels/([^/:]+)))?"
_PREDICTION = re.compile(_SPEC + r":(classify|regress|predict)", re.IGNORECASE)
_STATUS = re.compile(
    r"/v1/models(?:/([^/:]+))?(?:(?:/versions/(\d+))|(?:/labels/([^/:]+)))?(?:/(metadata))?", re.IGNORECASE
)
# TensorFlow Serving's one header, exactly (`AddHeaders`; JSON is UTF-8 by definition, RFC 8259),
# built once (aiohttp copies it into each response; 1 us less per response than the arguments).
_JSON_HEADERS = {hdrs.CONTENT_TYPE: "application/json"}
# The standard library's JSON errors in rapidjson's words (`GetParseError_En`), which TensorFlow
# Serving's messages carry; "Expecting ',' delimiter" depends on the container (`_comma_reason`).
_RAPIDJSON_REASONS = {
    "Expecting value": "Invalid value.",
    "Expecting property name enclosed in double quotes": "Missing a name for object member.",
    "Expecting ':' delimiter": "Missing a colon after a name of object member.",
    "Unterminated string starting at": "Missing a closing quotation mark in string.",
    "Invalid \\escape": "Invalid escape character in string.",
    "Invalid \\uXXXX escape": "Incorrect hex digit after \\u escape in string.",
}
_REJECTION_REASONS = {RequestTooLarge: "body_size", RequestTimeout: "timeout"}
_CONTENT_ENCODING = hdrs.CONTENT_ENCODING
_GZIP_WBITS = 16 + zlib.MAX_WBITS  # a gzip header and trailer around deflate data
# Bodies this large parse with the garbage collector paused (`gc_paused`), and classify/regress
# ones convert their examples and results on a thread.
_LARGE_BODY_BYTES = 64 * 1024


class UnreadableBody(InvalidArgument):
    """A body aiohttp's parser refused (bad chunked framing): 400, and the connection is closed,
    since where the next request starts is unknown."""


@functools.lru_cache(maxsize=256)
def _ref(name: str | None, version: str | None, label: str | None) -> ModelRef:
    """The model reference of a URL's parts, percent-escapes decoded (cached: the same few on
    every request; ModelRef is frozen).

    Raises:
        InvalidArgument: The version does not fit in an int64 (TensorFlow Serving's `ParseModelInfo`).
    """
    return ModelRef(
        name=unquote(name or ""),
        version=_version(version) if version else None,
        label=unquote(label) if label else None,
    )


def _version(digits: str) -> int:
    version = int(digits)
    if version > MAX_VERSION:
        raise InvalidArgument(
            message(
                f"Failed to convert version: {digits} to numeric",
                expected=f"a version number from 0 to {MAX_VERSION} (an int64)",
                received=digits,
                fix="Use the number of a served version (GET /v1/models/<name> lists them).",
            )
        )
    return version


_COMMA_REASON_MAX_CHARS = 256 * 1024  # 64 passes over it: ~40 ms at worst (16 MB: 2.5 s, measured)


def _comma_reason(text: str) -> str:
    """rapidjson's reason for a missing comma, after an object member or an array element: the
    innermost bracket still open in `text` (the document up to the error). Strings, then matched
    pairs, are deleted by C-speed passes (at most the depth limit of them), never a Python loop;
    past 256 KiB both reasons are given, so a hostile body cannot hold the event loop."""
    if len(text) > _COMMA_REASON_MAX_CHARS:
        return "Missing a comma or ']' after an array element, or '}' after an object member."
    brackets = json_brackets(text.encode("utf-8", "surrogatepass"))
    while b"[]" in brackets or b"{}" in brackets:
        brackets = brackets.replace(b"[]", b"").replace(b"{}", b"")
    if brackets.endswith(b"["):
        return "Missing a comma or ']' after an array element."
    return "Missing a comma or '}' after an object member."


def _parse_error_reason(err: json.JSONDecodeError) -> str:
    """The parse error as TensorFlow Serving words it (rapidjson); the standard library's otherwise."""
    if err.msg == "Expecting ',' delimiter" and isinstance(err.doc, str):
        return _comma_reason(err.doc[: err.pos])
    return _RAPIDJSON_REASONS.get(err.msg, err.msg)


def _empty_document(raw: bytes) -> InvalidArgument:
    return InvalidArgument(
        message(
            "JSON Parse error: The document is empty",
            expected="a JSON object body",
            received="an empty body" if not raw else f"{len(raw)} bytes of whitespace",
            fix='Send e.g. {"instances": [...]}.',
        )
    )


def _parse_json(raw: bytes, max_depth: int) -> dict[str, Any]:
    if not raw:
        raise _empty_document(raw)
    try:
        with gc_paused() if len(raw) >= _LARGE_BODY_BYTES else contextlib.nullcontext():
            body = check_json_depth(raw, max_depth, json_codec.loads)
    except json.JSONDecodeError as err:
        if not raw.strip():
            raise _empty_document(raw) from None
        raise InvalidArgument(
            message(
                f"JSON Parse error: {_parse_error_reason(err)} at offset: {err.pos}",
                expected="valid JSON (NaN and Infinity allowed)",
                received=f"{len(raw)} bytes starting {raw[:40]!r} ({err.msg})",
                fix="Fix the JSON at that offset.",
            )
        ) from None
    except UnicodeDecodeError:
        raise InvalidArgument(
            message(
                "JSON Parse error: Invalid encoding in string",
                expected="UTF-8 JSON",
                received="bytes that are not UTF-8",
                fix='Encode binary values as {"b64": "..."}.',
            )
        ) from None
    if not isinstance(body, dict):
        raise InvalidArgument(
            message(
                f"JSON Value: {raw[:40].decode('utf-8', 'replace')} Is not object",
                expected="a JSON object at the top level",
                received=f"a JSON {type(body).__name__}",
                fix='Wrap the request in an object, e.g. {"instances": [...]}.',
            )
        )
    return body


def _signature_name(body: dict[str, Any]) -> str:
    name = body.get("signature_name", "")
    if not isinstance(name, str):
        raise InvalidArgument(
            message(
                "'signature_name' key must be a string value",
                expected="a string",
                received=f"{json.dumps(name)}",
                fix='Send e.g. "signature_name": "serving_default".',
            )
        )
    return name


async def _expect(request: web.BaseRequest) -> None:
    """An `Expect` header, answered as aiohttp's router does (`100 Continue`, or 417)."""
    expect = request.headers.get(hdrs.EXPECT, "")
    if request.version == HttpVersion11:
        if expect.lower() == "100-continue":
            await request.writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
            request.writer.output_size = 0  # the final response's size starts after it
            await request.writer.drain()
        else:
            raise web.HTTPExpectationFailed(text=f"Unknown Expect: {expect}")


def _drop_frames(err: BaseException) -> None:
    """Drops a read error's traceback. It holds `request.read()`'s frame, with the
    body read so far (up to the size limit, more for a compressed body), in a
    cycle (`wait_for`'s task -> error -> traceback -> wait_for's frame -> task)
    that only a full garbage collection would free: 130 MB stayed after one
    gzip bomb until then."""
    err.__traceback__ = None


def _parser_reason(err: web.RequestPayloadError) -> str:
    """The parser's own words ("Can not decode content-encoding: gzip"), without aiohttp's "400, message:"."""
    cause = err.__cause__
    return getattr(cause, "message", None) or str(cause or err)


def _check_preflight(request: web.BaseRequest) -> None:
    """A CORS preflight (OPTIONS) anywhere under /v1/, as TF Serving's `RestApiRequestDispatcher`
    (model_servers/http_server.cc) answers it: 200 and no body when `Origin` holds http:// or https://.

    No Access-Control-Allow-* header is sent (TF Serving adds them only with
    `--rest_api_enable_cors_support`, which this server does not have), so a
    browser still refuses other origins' requests; the Host check runs first.

    Raises:
        FailedPrecondition: No http(s) Origin ("Origin header is missing in CORS preflight").
    """
    origin = request.headers.get(hdrs.ORIGIN, "")
    if "http://" not in origin and "https://" not in origin:  # RE2::PartialMatch(origin, "https?://")
        raise FailedPrecondition(
            message(
                "Origin header is missing in CORS preflight",
                expected="an Origin header naming an http:// or https:// page",
                received=f"Origin: {echoed(origin)}" if origin else "no Origin header",
                fix="Send OPTIONS only as a browser's CORS preflight; call the API with GET or POST.",
            )
        )


def _too_large(limit: int, received: str) -> RequestTooLarge:
    return RequestTooLarge(
        message(
            "Request body is too large",
            expected=f"at most {limit} bytes",
            received=received,
            fix="Send fewer instances per request, or raise the server's max request size.",
        )
    )


def _decoded(raw: bytes, encoding: str | None, limit: int) -> bytes:
    """The body as TensorFlow Serving reads it: gunzipped when its Content-Encoding names gzip
    (`EvHTTPRequest::NeedUncompressGzipContent`: "gzip" anywhere in the header, case as sent);
    any other coding (deflate, br) is passed on as sent, and fails as JSON.

    Raises:
        RequestTooLarge: It decodes to more than `limit` bytes (a gzip bomb), checked while decoding.
        InvalidArgument: It is not gzip: TensorFlow Serving's zlib call fails and its body is
            empty ("JSON Parse error: The document is empty").
    """
    if not encoding or "gzip" not in encoding:
        return raw
    decoder = zlib.decompressobj(_GZIP_WBITS)
    try:
        body = decoder.decompress(raw, limit + 1)
    except zlib.error as err:
        reason = str(err)
    else:
        if len(body) > limit:
            raise _too_large(limit, f"more than {limit} bytes once decoded ({_CONTENT_ENCODING}: {encoding})")
        if decoder.eof:
            return body
        reason = "the gzip stream ends early"
    raise InvalidArgument(
        message(
            "JSON Parse error: The document is empty",
            expected=f"a gzip body, as its header says ({_CONTENT_ENCODING}: {encoding})",
            received=f"{len(raw)} bytes that do not decode: {reason}",
            fix="Send the body uncompressed, or gzip it (the server decodes gzip only).",
        )
    )


def _classify_body(results: list[list[tuple[str, float]]]) -> bytes:
    return json_codec.dumps({"results": [[list(pair) for pair in row] for row in results]})


def _bytes_received(request: web.BaseRequest) -> int:
    """Body bytes the parser produced, for a request that failed before its body was kept."""
    return getattr(request.content, "total_bytes", 0)


def _wrong_method(method: str, path: str, allow: str) -> InvalidArgument:
    """A known path with another method: TF Serving's 400 "Malformed request" (its
    `HttpRestApiHandler::ProcessRequest` dispatches POST and GET only; HEAD too is malformed)."""
    return InvalidArgument(
        message(
            f"Malformed request: {method} {path}",
            expected=f"{allow} for this path",
            received=method,
            fix=f"Send the request with {allow}.",
        )
    )


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
    ) -> None:
        self.runtime = runtime
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
        # Bodies arrive as sent: only gzip is decoded, by `_decoded`, as TensorFlow Serving decodes it.
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
            await _expect(request)
        if request.rel_url.raw_path.startswith("/v1/"):
            return await self._dispatch(request)
        path = request.rel_url.path
        if path.startswith("/v1/"):  # percent-encoded in the raw path; the router matches the decoded one
            return await self._dispatch(request)
        if (
            self.prometheus_path and path == self.prometheus_path
        ):  # any method, as TF Serving's ProcessPrometheusRequest
            return web.Response(body=self.metrics.exposition(), headers={"Content-Type": CONTENT_TYPE_LATEST})
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
            return _too_large(limit, received)

        if request.content_length is not None and request.content_length > limit:
            raise too_large()
        try:
            if request.content.is_eof():  # the whole body is here already (small requests): no timer
                return await request.read()
            return await asyncio.wait_for(request.read(), self.limits.body_timeout_s)
        except web.HTTPRequestEntityTooLarge as err:
            _drop_frames(err)
            raise too_large() from None
        except web.RequestPayloadError as err:  # framing the parser could not follow
            _drop_frames(err)
            raise UnreadableBody(
                message(
                    f"Request body could not be read: {_parser_reason(err)}",
                    expected="a body in the framing its headers declare (Content-Length, or chunked)",
                    received=f"{request.content.total_bytes} bytes before the error",
                    fix="Send the body with a Content-Length header, or as well-formed chunks.",
                )
            ) from None
        except asyncio.TimeoutError as err:
            _drop_frames(err)
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
                _check_preflight(request)
                self.metrics.observe_request(
                    model="", api="", entrypoint=REST, status="OK", seconds=time.perf_counter() - started
                )
                return web.Response()  # no body, no CORS header: TF Serving's default
            match = _PREDICTION.fullmatch(path) if request.method == "POST" else None
            status_match = _STATUS.fullmatch(path) if request.method == "GET" else None
            if match:
                verb = match.group(4)  # TensorFlow Serving's `API` label: the verb as the URL spells it
                ref = _ref(*match.groups()[:3])
                model = ref.name
                raw = self._complete_body(request)
                if raw is None:
                    raw = await self._read(request)
                encoding = request.headers.get(_CONTENT_ENCODING)
                if encoding:  # if decoding fails, up to the limit may have been allocated: trimmed after
                    size = self.max_request_bytes
                    raw = _decoded(raw, encoding, self.max_request_bytes)
                size = len(raw)
                body = _parse_json(raw, self.limits.max_json_depth)
                _, payload = await self._verbs[verb.lower()](ref, body, raw)
            elif status_match:
                ref = _ref(*status_match.groups()[:3])
                model = ref.name
                api = "metadata" if status_match.group(4) else "status"
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
            elif request.method != "POST" and _PREDICTION.fullmatch(path):
                raise _wrong_method(request.method, path, "POST")
            elif request.method != "GET" and _STATUS.fullmatch(path):
                raise _wrong_method(request.method, path, "GET")
            else:
                raise InvalidArgument(
                    message(
                        f"Malformed request: {request.method} {path}",
                        expected="GET /v1/models/<name>[/versions/<n>|/labels/<l>][/metadata] or "
                        "POST /v1/models/<name>[/versions/<n>|/labels/<l>]:(predict|classify|regress)",
                        received=f"{request.method} {path}",
                        fix="Check the URL and the HTTP method.",
                    )
                )
        except ServingError as err:
            return self._error_response(err, model, verb, started, size or _bytes_received(request))
        except Exception as err:
            log.exception("Unhandled error for %s %s", request.method, path)
            internal = Internal(f"{type(err).__name__}: {err}")
            return self._error_response(internal, model, verb, started, size or _bytes_received(request))
        self.metrics.observe_request(
            model=model, api=verb, entrypoint=REST, status="OK", seconds=time.perf_counter() - started
        )
        body = payload if isinstance(payload, bytes) else json_codec.dumps(payload)
        response = web.Response(body=body, headers=_JSON_HEADERS)
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
            body=json_codec.dumps({"error": err.text}), status=err.http_status, headers=_JSON_HEADERS
        )
        if isinstance(err, (RequestTimeout, RequestTooLarge, UnreadableBody)):
            response.force_close()  # the rest of the body is not read
        if self.memory is not None:
            self.memory.after(size)  # the body read or decompressed, if any
        return response

    async def _predict(self, ref: ModelRef, body: dict[str, Any], raw: bytes) -> tuple[int, bytes]:
        formats = []
        bools = b"true" in raw or b"false" in raw

        def build(signature):
            inputs, fmt = json_inputs(body, signature, may_contain_bools=bools)
            formats.append(fmt)
            return inputs

        result = await self.runtime.predict(ref, _signature_name(body), build, may_run_on_loop=True)
        return result.version, json_codec.predict_body(result.outputs, formats[0])

    async def _classify(self, ref: ModelRef, body: dict[str, Any], raw: bytes) -> tuple[int, bytes]:
        large = len(raw) >= _LARGE_BODY_BYTES
        signature_name = _signature_name(body)  # checked first, as TensorFlow Serving does
        examples = await off_loop_if_large(large, examples_from_json, body)
        result = await self.runtime.classify(ref, signature_name, examples)
        return result.version, await off_loop_if_large(large, _classify_body, result.outputs["results"])

    async def _regress(self, ref: ModelRef, body: dict[str, Any], raw: bytes) -> tuple[int, bytes]:
        signature_name = _signature_name(body)  # checked first, as TensorFlow Serving does
        examples = await off_loop_if_large(len(raw) >= _LARGE_BODY_BYTES, examples_from_json, body)
        result = await self.runtime.regress(ref, signature_name, examples)
        return result.version, json_codec.dumps({"results": result.outputs["results"]})

    async def _status(self, ref: ModelRef) -> tuple[int | None, dict]:
        statuses = self.runtime.manager.status(ref.name, ref.version)  # any label ignored, as TF Serving
        return (ref.version, responses.status_json(statuses))

    async def _metadata(self, ref: ModelRef) -> tuple[int, dict]:
        with self.runtime.manager.handle(ref.name, ref.version, ref.label) as servable:
            return servable.version, responses.metadata_json(servable)
