"""The REST port's Host check against DNS rebinding, on real embedded servers."""

from __future__ import annotations

import json
import socket

import pytest
from serving_helpers import MODEL

from serving.client import RestClient
from serving.server.guards.host_check import allowed_hosts, is_loopback


def _get(port: int, host: str | None, version: str = "1.1") -> tuple[int, bytes]:
    """GET /v1/models/lin with exactly this Host header (None: none), over a raw socket."""
    head = f"GET /v1/models/{MODEL} HTTP/{version}\r\n"
    if host is not None:
        head += f"Host: {host}\r\n"
    head += "Connection: close\r\n\r\n"
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        sock.sendall(head.encode())
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    status_line, _, rest = answer.partition(b"\r\n")
    return int(status_line.split()[1]), rest.partition(b"\r\n\r\n")[2]


@pytest.mark.parametrize("host", ["rebind.example", "rebind.example:{port}", "10.0.0.1:{port}", "localhost.evil"])
def test_a_loopback_server_refuses_other_hosts_with_403(server, host):
    host = host.format(port=server.rest_port)
    status, body = _get(server.rest_port, host)
    assert status == 403
    error = json.loads(body)["error"]
    assert error.startswith("Host not allowed: this server is bound to a loopback address")
    assert f"Received: Host: {host}." in error
    assert f"Send the request to http://127.0.0.1:{server.rest_port}" in error
    assert _get(server.rest_port, "127.0.0.1")[0] == 200  # and it keeps answering
    assert 'tfserving_requests_rejected_total{entrypoint="REST",reason="host"} 1.0' in (_get_metrics(server.rest_port))


def _get_metrics(port: int) -> str:
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        sock.sendall(b"GET /monitoring/prometheus/metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return answer.decode()


@pytest.mark.parametrize(
    "host",
    ["localhost", "localhost:{port}", "LOCALHOST:{port}", "127.0.0.1", "127.0.0.1:{port}", "[::1]", "[::1]:{port}"],
)
def test_a_loopback_server_answers_its_own_names(server, host):
    assert _get(server.rest_port, host.format(port=server.rest_port))[0] == 200


def test_a_request_without_host_is_answered(server):
    # HTTP/1.0 has no Host; a browser (the rebinding page's) always sends one.
    assert _get(server.rest_port, None, version="1.0")[0] == 200


def test_the_projects_client_sends_an_accepted_host(server):
    for url in (server.rest_url, f"http://localhost:{server.rest_port}"):
        with RestClient(url) as client:
            body = {"signature_name": "serving_raw", "instances": [[1.0, 2.0, 3.0]]}
            assert len(client.predict(MODEL, body)["predictions"]) == 1


def test_a_server_bound_to_all_interfaces_answers_any_host(make_server, model_dir):
    server = make_server(model_dir, host="0.0.0.0")
    assert _get(server.rest_port, "rebind.example")[0] == 200
    assert _get(server.rest_port, "my-server.internal:8501")[0] == 200


@pytest.mark.parametrize(
    ("bind", "loopback"),
    [("127.0.0.1", True), ("127.0.0.2", True), ("::1", True), ("localhost", True), ("0.0.0.0", False), ("", False)],
)
def test_is_loopback(bind, loopback):
    assert is_loopback(bind) is loopback


def test_allowed_hosts_add_the_bound_address():
    assert {"127.0.0.2", "127.0.0.2:9000", "localhost:9000"} <= allowed_hosts("127.0.0.2", 9000)
    assert "[::1]:9000" in allowed_hosts("::1", 9000)
    assert allowed_hosts("0.0.0.0", 9000) is None
