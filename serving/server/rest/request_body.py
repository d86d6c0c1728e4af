"""Reading a REST request's body: `Expect: 100-continue`, gzip decoding with a size limit, JSON
parsing with TensorFlow Serving's (rapidjson's) error wording, and aiohttp's read errors.
"""

from __future__ import annotations

import contextlib
import json
import zlib
from typing import Any

from aiohttp import hdrs, web
from aiohttp.http import HttpVersion11

from serving.errors import (
    InvalidArgument,
    RequestTooLarge,
    message,
)
from serving.server.guards.memory import gc_paused
from serving.server.guards.request_checks import check_json_depth, json_brackets
from serving.server.wire import json_codec

__all__ = [
    "CONTENT_ENCODING",
    "LARGE_BODY_BYTES",
    "UnreadableBody",
    "bytes_received",
    "decoded_body",
    "drop_frames",
    "expect_continue",
    "parse_json",
    "parser_reason",
    "body_too_large",
]

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


CONTENT_ENCODING = hdrs.CONTENT_ENCODING
_GZIP_WBITS = 16 + zlib.MAX_WBITS  # a gzip header and trailer around deflate data
# Bodies this large parse with the garbage collector paused (`gc_paused`), and classify/regress
# ones convert their examples and results on a thread.
LARGE_BODY_BYTES = 64 * 1024


class UnreadableBody(InvalidArgument):
    """A body aiohttp's parser refused (bad chunked framing): 400, and the connection is closed,
    since where the next request starts is unknown."""


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


def parse_json(raw: bytes, max_depth: int) -> dict[str, Any]:
    if not raw:
        raise _empty_document(raw)
    try:
        with gc_paused() if len(raw) >= LARGE_BODY_BYTES else contextlib.nullcontext():
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


async def expect_continue(request: web.BaseRequest) -> None:
    """An `Expect` header, answered as aiohttp's router does (`100 Continue`, or 417)."""
    expect = request.headers.get(hdrs.EXPECT, "")
    if request.version == HttpVersion11:
        if expect.lower() == "100-continue":
            await request.writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
            request.writer.output_size = 0  # the final response's size starts after it
            await request.writer.drain()
        else:
            raise web.HTTPExpectationFailed(text=f"Unknown Expect: {expect}")


def drop_frames(err: BaseException) -> None:
    """Drops a read error's traceback. It holds `request.read()`'s frame, with the
    body read so far (up to the size limit, more for a compressed body), in a
    cycle (`wait_for`'s task -> error -> traceback -> wait_for's frame -> task)
    that only a full garbage collection would free: a gzip bomb's buffers
    would stay until then."""
    err.__traceback__ = None


def parser_reason(err: web.RequestPayloadError) -> str:
    """The parser's own words ("Can not decode content-encoding: gzip"), without aiohttp's "400, message:"."""
    cause = err.__cause__
    return getattr(cause, "message", None) or str(cause or err)


def body_too_large(limit: int, received: str) -> RequestTooLarge:
    return RequestTooLarge(
        message(
            "Request body is too large",
            expected=f"at most {limit} bytes",
            received=received,
            fix="Send fewer instances per request, or raise the server's max request size.",
        )
    )


def decoded_body(raw: bytes, encoding: str | None, limit: int) -> bytes:
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
            raise body_too_large(limit, f"more than {limit} bytes once decoded ({CONTENT_ENCODING}: {encoding})")
        if decoder.eof:
            return body
        reason = "the gzip stream ends early"
    raise InvalidArgument(
        message(
            "JSON Parse error: The document is empty",
            expected=f"a gzip body, as its header says ({CONTENT_ENCODING}: {encoding})",
            received=f"{len(raw)} bytes that do not decode: {reason}",
            fix="Send the body uncompressed, or gzip it (the server decodes gzip only).",
        )
    )


def bytes_received(request: web.BaseRequest) -> int:
    """Body bytes the parser produced, for a request that failed before its body was kept."""
    return getattr(request.content, "total_bytes", 0)
