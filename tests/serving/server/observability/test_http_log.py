"""A malformed HTTP request is one log line on a real embedded server (the traceback at DEBUG)."""

from __future__ import annotations

import logging
import socket

import pytest

from serving.server import app

MALFORMED = {
    "a header without a colon": b"GET /v1/models/lin HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Header\r\n\r\n",
    "a Content-Length that is not a number": (
        b"POST /v1/models/lin:predict HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: abc\r\n\r\n"
    ),
}


def _send(server, raw: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", server.rest_port), timeout=60) as sock:
        sock.sendall(raw)
        answer = b""
        while chunk := sock.recv(4096):
            answer += chunk
    return answer


@pytest.mark.parametrize("raw", MALFORMED.values(), ids=MALFORMED.keys())
def test_a_malformed_request_is_one_line_and_its_traceback_is_debug(server, raw, caplog):
    with caplog.at_level(logging.DEBUG, logger=app.__name__):
        assert _send(server, raw).startswith(b"HTTP/1.0 400 Bad Request")
        assert _send(server, b"GET /v1/models/lin HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").startswith(
            b"HTTP/1.1 200"
        )
    shown = [r for r in caplog.records if r.levelno >= logging.INFO and r.name == app.__name__]
    lines = [r.getMessage() for r in shown if "Embedded model server" not in r.getMessage()]
    assert len(lines) == 1, lines
    assert "malformed HTTP request, answered 400" in lines[0]
    assert "details at DEBUG level" in lines[0]
    assert "\n" not in lines[0]
    assert all(r.exc_info is None for r in shown)
    [debug] = [r for r in caplog.records if r.levelno == logging.DEBUG and r.exc_info]
    assert "BadHttpMessage" in caplog.text
    assert debug.name == app.__name__
