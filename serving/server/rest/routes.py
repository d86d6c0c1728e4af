"""The REST API's paths and request fields, and its answers to other methods and to CORS preflights.

    GET  /v1/models/{name}[/versions/{v}|/labels/{l}]            model status
    GET  /v1/models/{name}[/versions/{v}|/labels/{l}]/metadata   signature defs
    POST /v1/models/{name}[/versions/{v}|/labels/{l}]:predict    instances|inputs
    POST /v1/models/{name}[/versions/{v}|/labels/{l}]:classify   examples
    POST /v1/models/{name}[/versions/{v}|/labels/{l}]:regress    examples

Model names and labels in URLs are percent-decoded; a version beyond int64 is INVALID_ARGUMENT.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import unquote

from aiohttp import hdrs, web

from serving.errors import (
    FailedPrecondition,
    InvalidArgument,
    echoed,
    message,
)
from serving.server.inference.runtime import ModelRef
from serving.server.lifecycle.versions import MAX_VERSION
from serving.server.wire.tensor_checks import json_value_text

__all__ = [
    "PREDICTION_PATH",
    "STATUS_PATH",
    "check_preflight",
    "model_ref",
    "requested_signature",
    "url_version",
    "wrong_method",
]

_SPEC = r"/v1/models/([^/:]+)(?:(?:/versions/(\d+))|(?:/labels/([^/:]+)))?"
PREDICTION_PATH = re.compile(_SPEC + r":(classify|regress|predict)", re.IGNORECASE)
STATUS_PATH = re.compile(
    r"/v1/models(?:/([^/:]+))?(?:(?:/versions/(\d+))|(?:/labels/([^/:]+)))?(?:/(metadata))?", re.IGNORECASE
)


def model_ref(name: str | None, version: str | None, label: str | None) -> ModelRef:
    """The model reference of a URL's parts, percent-escapes decoded (cached: the same few on
    every request; ModelRef is frozen).

    Raises:
        InvalidArgument: The version does not fit in an int64 (TensorFlow Serving's `ParseModelInfo`).
    """
    return ModelRef(
        name=unquote(name or ""),
        version=url_version(version) if version else None,
        label=unquote(label) if label else None,
    )


def url_version(digits: str) -> int:
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


def requested_signature(body: dict[str, Any]) -> str:
    name = body.get("signature_name", "")
    if not isinstance(name, str):
        raise InvalidArgument(
            message(
                json_value_text(body) + "not formatted correctly. 'signature_name' key must be a string value",
                expected="a string",
                received=f"{json.dumps(name)}",
                fix='Send e.g. "signature_name": "serving_default".',
            )
        )
    return name


def check_preflight(request: web.BaseRequest) -> None:
    """A CORS preflight (OPTIONS) anywhere under /v1/, as TF Serving's `RestApiRequestDispatcher`
    (model_servers/http_server.cc) answers it: 200 and no body when `Origin` holds http:// or https://.

    Access-Control-Allow-* headers are added only with `rest_api_enable_cors_support`
    (TF Serving's `--rest_api_enable_cors_support`; `RestApi` adds them), so by default a
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


def wrong_method(method: str, path: str, allow: str) -> InvalidArgument:
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
