"""The REST API (aiohttp), following TensorFlow Serving's RESTful API.

    GET  /v1/models/{name}[/versions/{v}|/labels/{l}]            model status
    GET  /v1/models/{name}[/versions/{v}|/labels/{l}]/metadata   signature defs
    POST /v1/models/{name}[/versions/{v}|/labels/{l}]:predict    instances|inputs
    POST /v1/models/{name}[/versions/{v}|/labels/{l}]:classify   examples
    POST /v1/models/{name}[/versions/{v}|/labels/{l}]:regress    examples
    GET  /monitoring/prometheus/metrics                          Prometheus

Errors are `{"error": "<message>"}` with the HTTP status of the canonical code
(400 bad input, 404 unknown model/version/label/signature, 413 body over the
size limit, 503 batch queue full, 500 internal).
"""

from __future__ import annotations

import json
import logging
import re
import time
from typing import Any
from urllib.parse import unquote

from aiohttp import web

from serving.errors import (
    Internal,
    InvalidArgument,
    RequestTooLarge,
    ServingError,
    message,
)
from serving.server import responses
from serving.server.examples import examples_from_json
from serving.server.metrics import CONTENT_TYPE_LATEST, ServingMetrics
from serving.server.runtime import ModelRef, Runtime
from serving.server.tensors import json_inputs, json_outputs

__all__ = ["RestApi"]

log = logging.getLogger(__name__)

_SPEC = r"/v1/models/([^/:]+)(?:(?:/versions/(\d+))|(?:/labels/([^/:]+)))?"
_PREDICTION = re.compile(_SPEC + r":(classify|regress|predict)", re.IGNORECASE)
_STATUS = re.compile(
    r"/v1/models(?:/([^/:]+))?(?:(?:/versions/(\d+))|(?:/labels/([^/:]+)))?(?:/(metadata))?", re.IGNORECASE
)
_JSON = "application/json"


def _ref(name: str | None, version: str | None, label: str | None) -> ModelRef:
    return ModelRef(
        name=unquote(name or ""), version=int(version) if version else None, label=unquote(label) if label else None
    )


def _parse_json(raw: bytes) -> dict[str, Any]:
    if not raw:
        raise InvalidArgument(
            message(
                "JSON Parse error: The document is empty",
                expected="a JSON object body",
                received="an empty body",
                fix='Send e.g. {"instances": [...]}.',
            )
        )
    try:
        body = json.loads(raw)
    except json.JSONDecodeError as err:
        raise InvalidArgument(
            message(
                f"JSON Parse error: {err.msg} at offset: {err.pos}",
                expected="valid JSON (NaN and Infinity allowed)",
                received=f"{len(raw)} bytes starting {raw[:40]!r}",
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


class RestApi:
    """Builds the aiohttp application over a `Runtime`."""

    def __init__(
        self, runtime: Runtime, metrics: ServingMetrics, *, max_request_bytes: int, prometheus_path: str | None
    ) -> None:
        self.runtime = runtime
        self.metrics = metrics
        self.max_request_bytes = max_request_bytes
        self.prometheus_path = prometheus_path

    def app(self) -> web.Application:
        app = web.Application(client_max_size=self.max_request_bytes)
        if self.prometheus_path:
            app.router.add_get(self.prometheus_path, self._prometheus)
        app.router.add_route("*", "/v1/{tail:.*}", self._dispatch)
        return app

    async def _prometheus(self, request: web.Request) -> web.Response:
        return web.Response(body=self.metrics.exposition(), headers={"Content-Type": CONTENT_TYPE_LATEST})

    async def _read(self, request: web.Request) -> bytes:
        limit = self.max_request_bytes
        too_large = RequestTooLarge(
            message(
                "Request body is too large",
                expected=f"at most {limit} bytes",
                received=f"{request.content_length if request.content_length else 'more'} bytes",
                fix="Send fewer instances per request, or raise the server's max request size.",
            )
        )
        if request.content_length is not None and request.content_length > limit:
            raise too_large
        try:
            return await request.read()
        except web.HTTPRequestEntityTooLarge:
            raise too_large from None

    async def _dispatch(self, request: web.Request) -> web.Response:
        started = time.perf_counter()
        path = request.rel_url.raw_path
        api, model, version = "unknown", "", None
        try:
            match = _PREDICTION.fullmatch(path) if request.method == "POST" else None
            status_match = _STATUS.fullmatch(path) if request.method == "GET" else None
            if match:
                api = match.group(4).lower()
                ref = _ref(*match.groups()[:3])
                model = ref.name
                raw = await self._read(request)
                body = _parse_json(raw)
                version, payload = await getattr(self, f"_{api}")(ref, body, b"true" in raw or b"false" in raw)
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
                version, payload = await getattr(self, f"_{api}")(ref)
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
            status, code = 200, "OK"
        except ServingError as err:
            status, code, payload = err.http_status, err.code_name, {"error": err.text}
        except Exception as err:
            log.exception("Unhandled error for %s %s", request.method, path)
            internal = Internal(f"{type(err).__name__}: {err}")
            status, code, payload = internal.http_status, internal.code_name, {"error": internal.text}
        self.metrics.observe_request(
            model=model, version=version, api=api, entrypoint="REST", status=code, seconds=time.perf_counter() - started
        )
        return web.Response(text=json.dumps(payload), status=status, content_type=_JSON)

    async def _predict(self, ref: ModelRef, body: dict[str, Any], bools: bool) -> tuple[int, dict]:
        formats = []

        def build(signature):
            inputs, fmt = json_inputs(body, signature, may_contain_bools=bools)
            formats.append(fmt)
            return inputs

        result = await self.runtime.predict(ref, _signature_name(body), build)
        return result.version, json_outputs(result.outputs, formats[0])

    async def _classify(self, ref: ModelRef, body: dict[str, Any], bools: bool) -> tuple[int, dict]:
        result = await self.runtime.classify(ref, _signature_name(body), examples_from_json(body))
        return result.version, {"results": [[list(pair) for pair in row] for row in result.outputs["results"]]}

    async def _regress(self, ref: ModelRef, body: dict[str, Any], bools: bool) -> tuple[int, dict]:
        result = await self.runtime.regress(ref, _signature_name(body), examples_from_json(body))
        return result.version, {"results": result.outputs["results"]}

    async def _status(self, ref: ModelRef) -> tuple[int | None, dict]:
        statuses = self.runtime.manager.status(ref.name, ref.version, ref.label)
        return (ref.version, responses.status_json(statuses))

    async def _metadata(self, ref: ModelRef) -> tuple[int, dict]:
        with self.runtime.manager.handle(ref.name, ref.version, ref.label) as servable:
            return servable.version, responses.metadata_json(servable)
