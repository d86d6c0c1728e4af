"""The REST server's routing outside the API's own paths, and its request metrics.

The server routes on aiohttp's low-level server (`RestApi.handle`) instead of
a `web.Application`; these tests hold it to what the application's router
answered: aiohttp's 404 for other paths, the metrics page for any method (as
TF Serving), CORS preflights as TF Serving answers them, `Expect: 100-continue`, percent-encoded paths. The request
metrics are kept outside prometheus_client's classes
(`metrics._PerRequest`); their page must read as those classes write it.
"""

from __future__ import annotations

import json
import socket
from http import client as http_client

import pytest
from prometheus_client import CollectorRegistry, Counter, generate_latest
from prometheus_client.core import HistogramMetricFamily
from prometheus_client.utils import floatToGoString
from serving_helpers import MODEL, http

from serving import config as cfg
from serving.server.observability import metrics

X = [1.0, 2.0, 3.0]
PREDICT = f"/v1/models/{MODEL}:predict"


def _raw(server, method: str, path: str, body: bytes | None = None) -> http_client.HTTPResponse:
    conn = http_client.HTTPConnection("127.0.0.1", server.rest_port, timeout=10)
    conn.request(method, path, body=body)
    response = conn.getresponse()
    response.body = response.read()
    conn.close()
    return response


@pytest.mark.parametrize("path", ["/", "/v1", "/v2/models/lin", "/monitoring/prometheus", "/favicon.ico"])
def test_other_paths_are_aiohttps_404(server, path):
    response = _raw(server, "GET", path)
    assert response.status == 404
    assert response.body == b"404: Not Found"


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE"])
def test_any_method_on_the_metrics_page_gets_the_page(server, method):
    """TF Serving registers the page with `RegisterRequestHandler` and `ProcessPrometheusRequest`
    (model_servers/http_server.cc) never looks at the method: every method gets the page."""
    response = _raw(server, method, cfg.PROMETHEUS_PATH, body=b"" if method != "DELETE" else None)
    assert response.status == 200
    assert response.headers["Content-Type"].startswith("text/plain")
    assert b"# TYPE :tensorflow:serving:request_count counter" in response.body


def _options(server, path: str, origin: str | None) -> http_client.HTTPResponse:
    conn = http_client.HTTPConnection("127.0.0.1", server.rest_port, timeout=10)
    headers = {"Access-Control-Request-Method": "POST"}
    if origin is not None:
        headers["Origin"] = origin
    conn.request("OPTIONS", path, headers=headers)
    response = conn.getresponse()
    response.body = response.read()
    conn.close()
    return response


@pytest.mark.parametrize("path", [PREDICT, f"/v1/models/{MODEL}", "/v1/anything"])
@pytest.mark.parametrize("origin", ["http://127.0.0.1:3000", "https://example.com"])
def test_a_cors_preflight_is_200_without_cors_headers(server, path, origin):
    """TF Serving's `RestApiRequestDispatcher::ProcessRequest` (model_servers/http_server.cc) answers OPTIONS
    on any /v1/ path OK when Origin matches "https?://", with no body; Access-Control-Allow-* headers come only
    with --rest_api_enable_cors_support (`AddCORSHeaders`), off by default, so a browser still refuses
    another origin's request."""
    response = _options(server, path, origin)
    assert response.status == 200
    assert response.body == b""
    assert not [name for name in response.headers if name.lower().startswith("access-control-")]


@pytest.mark.parametrize("origin", [None, "null", "file:///tmp/page.html"])
def test_a_preflight_without_an_http_origin_is_failed_precondition(server, origin):
    """The same code: FAILED_PRECONDITION "Origin header is missing in CORS preflight" (HTTP 400)."""
    response = _options(server, PREDICT, origin)
    assert response.status == 400
    assert json.loads(response.body)["error"].startswith("Origin header is missing in CORS preflight. ")


def test_a_preflight_from_a_foreign_host_name_is_refused_first(server):
    """The Host check (DNS rebinding, README "Security and limits") runs before the preflight is answered."""
    conn = http_client.HTTPConnection("127.0.0.1", server.rest_port, timeout=10)
    conn.request("OPTIONS", PREDICT, headers={"Host": "attacker.example:8501", "Origin": "http://attacker.example"})
    response = conn.getresponse()
    body = response.read()
    conn.close()
    assert response.status == 403
    assert json.loads(body)["error"].startswith("Host not allowed")


def test_head_on_the_metrics_page(server):
    response = _raw(server, "HEAD", cfg.PROMETHEUS_PATH)
    assert response.status == 200
    assert response.headers["Content-Type"].startswith("text/plain")
    assert response.body == b""


def test_a_percent_encoded_api_path_reaches_the_api(server):
    response = _raw(server, "GET", f"/v%31/models/{MODEL}")
    # The router matched the decoded path; the API reads the raw one (and says so).
    assert response.status == 400
    assert json.loads(response.body)["error"].startswith("Malformed request: GET /v%31/models/lin")
    status, body = http(server.rest_url, "GET", f"/v1/models/{MODEL}")
    assert status == 200 and body["model_version_status"][0]["state"] == "AVAILABLE"


def _expecting(server, expect: str) -> tuple[bytes, socket.socket]:
    body = json.dumps({"signature_name": "serving_raw", "instances": [{"x": X}]}).encode()
    sock = socket.create_connection(("127.0.0.1", server.rest_port), timeout=10)
    head = (
        f"POST {PREDICT} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nExpect: {expect}\r\n\r\n"
    ).encode()
    sock.sendall(head)
    return body, sock


def _read_response(sock: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, _, rest = data.partition(b"\r\n\r\n")
    length = int(
        next(line for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")).split(b":")[1]
    )
    while len(rest) < length:
        rest += sock.recv(65536)
    return head + b"\r\n\r\n" + rest


def test_expect_100_continue_is_answered_before_the_body(server):
    body, sock = _expecting(server, "100-continue")
    try:
        interim = sock.recv(65536)
        assert interim == b"HTTP/1.1 100 Continue\r\n\r\n"
        sock.sendall(body)
        response = _read_response(sock)
    finally:
        sock.close()
    assert response.startswith(b"HTTP/1.1 200 OK\r\n")
    predictions = json.loads(response.partition(b"\r\n\r\n")[2])["predictions"]
    assert len(predictions) == 1 and set(predictions[0]) == {"logit", "probability"}


def test_an_unknown_expectation_is_417(server):
    _, sock = _expecting(server, "something-else")
    try:
        response = _read_response(sock)
    finally:
        sock.close()
    assert response.startswith(b"HTTP/1.1 417 Expectation Failed\r\n")
    assert response.endswith(b"Unknown Expect: something-else")


class _TensorFlowHistograms:
    """Histograms as TensorFlow records them and TF Serving exports them: a value equal to a bucket
    limit counts in the next bucket (`std::upper_bound`), unlike prometheus_client's `le`."""

    def __init__(self, name: str, documentation: str, labelnames: list[str]) -> None:
        self.name, self.documentation, self.labelnames = name, documentation, labelnames
        self.values: dict[tuple[str, ...], list[float]] = {}

    def collect(self):
        family = HistogramMetricFamily(self.name, self.documentation, labels=self.labelnames)
        for labels, values in self.values.items():
            buckets = [(floatToGoString(b), sum(1 for v in values if v < b)) for b in metrics._LATENCY_BUCKETS_US]
            family.add_metric(list(labels), [*buckets, ("+Inf", len(values))], sum(values))
        return [family]


def _reference_page(observations) -> list[str]:
    """The request metrics as prometheus_client's Counter and TensorFlow's histograms write them,
    through `_Exported`."""
    source = CollectorRegistry(auto_describe=True)
    registry = CollectorRegistry()
    registry.register(metrics._Exported(source))
    count = Counter(metrics.REQUEST_COUNT, "The total number of requests.", ["model_name", "status"], registry=source)
    request = _TensorFlowHistograms(
        metrics.REQUEST_LATENCY,
        "Distribution of wall time (in microseconds) for Tensorflow Serving request.",
        ["model_name", "API", "entrypoint"],
    )
    runtime = _TensorFlowHistograms(
        metrics.RUNTIME_LATENCY,
        "Distribution of wall time (in microseconds) for Tensorflow runtime.",
        ["model_name", "API", "runtime"],
    )
    source.register(request)
    source.register(runtime)
    for kind, labels, seconds in observations:
        if kind == "request":
            model, api, entrypoint, status = labels
            count.labels(model, status).inc()
            if status == "OK":
                request.values.setdefault((model, api, entrypoint), []).append(seconds * 1e6)
        else:
            runtime.values.setdefault((*labels, metrics.RUNTIME), []).append(seconds * 1e6)
    page = generate_latest(registry)
    for kind in (b"HELP", b"TYPE"):  # as ServingMetrics.exposition names TensorFlow Serving's bare counters
        name = metrics.REQUEST_COUNT.encode()
        page = page.replace(b"# %s %s_total " % (kind, name), b"# %s %s " % (kind, name))
    return _request_lines(page)


def _request_lines(page: bytes) -> list[str]:
    names = (metrics.REQUEST_COUNT, metrics.REQUEST_LATENCY, metrics.RUNTIME_LATENCY)
    lines = page.decode().splitlines()
    return [line for line in lines if any(f" {n} " in line or line.startswith(n) for n in names)]


def test_request_metrics_read_as_prometheus_clients_own():
    observations = []
    for seconds in (0.0, 1e-5, 1e-5 * 1.8**5, 2.5e-3, 0.7, 4000.0, -1.0):  # bucket bounds, beyond the last, negative
        observations.append(("request", ("lin", "predict", "REST", "OK"), seconds))
        observations.append(("request", ("lin", "Predict", "GRPC", "OK"), seconds / 3))
        observations.append(("request", ("nope", "predict", "REST", "NOT_FOUND"), seconds))
        observations.append(("runtime", ("lin", "Predict"), seconds))
    served = metrics.ServingMetrics()
    assert _request_lines(served.exposition()) == _reference_page([])
    for kind, labels, seconds in observations:
        if kind == "request":
            model, api, entrypoint, status = labels
            served.observe_request(model=model, api=api, entrypoint=entrypoint, status=status, seconds=seconds)
        else:
            served.observe_runtime(*labels, seconds)
    page = _request_lines(served.exposition())
    assert page == _reference_page(observations)
    assert any(line.startswith(f"{metrics.REQUEST_COUNT}{{") for line in page)  # bare counter samples
    assert f"# TYPE {metrics.REQUEST_COUNT} counter" in page
