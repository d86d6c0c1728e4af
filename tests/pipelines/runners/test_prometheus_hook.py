"""The Prometheus hook against real HTTP endpoints on 127.0.0.1: a Pushgateway stand-in, and its own /metrics."""

from __future__ import annotations

import http.server
import threading
import urllib.request

import pytest

from pipelines.runners.hooks import HookList
from pipelines.runners.prometheus_hook import PrometheusHook


class _Gateway(http.server.BaseHTTPRequestHandler):
    """Records each push (method, path, body) like a Pushgateway's API would receive it."""

    def _record(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0))).decode()
        self.server.pushes.append((self.command, self.path, body))
        self.send_response(200)
        self.end_headers()

    do_PUT = do_POST = _record  # noqa: N815 - http.server's names

    def log_message(self, *args):
        pass


@pytest.fixture
def gateway():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Gateway)
    server.pushes = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def _run_events(hooks: HookList, fail: bool = False) -> None:
    hooks.call("before_run", pipeline_name="taxi", run_id="r1")
    hooks.call("before_component", component_id="ExampleGen", index=1, total=2)
    hooks.call(
        "after_component", component_id="ExampleGen", index=1, total=2, status="executed", seconds=1.5, execution_id=1
    )
    if fail:
        hooks.call("on_failure", component_id="Trainer", index=2, total=2, seconds=0.25, error=RuntimeError("x"))
    hooks.call("after_run", pipeline_name="taxi", run_id="r1", status="failed" if fail else "succeeded", seconds=2.0)


def test_pushes_component_and_run_metrics_to_a_pushgateway(gateway):
    hook = PrometheusHook(pushgateway_url=f"http://127.0.0.1:{gateway.server_port}", job="ci")
    _run_events(HookList([hook]), fail=True)
    method, path, body = gateway.pushes[-1]
    assert method == "PUT" and path == "/metrics/job/ci/pipeline/taxi"
    assert len(gateway.pushes) == 3  # after each component, on failure, at the end
    assert 'pipeline_component_seconds{component="ExampleGen",pipeline="taxi",status="executed"} 1.5' in body
    assert 'pipeline_component_runs_total{component="Trainer",pipeline="taxi",status="failed"} 1.0' in body
    assert 'pipeline_run_success{pipeline="taxi"} 0.0' in body
    assert 'pipeline_run_seconds{pipeline="taxi"} 2.0' in body


def test_serves_metrics_on_a_local_port():
    hook = PrometheusHook(port=0)
    try:
        _run_events(HookList([hook]))
        with urllib.request.urlopen(f"http://127.0.0.1:{hook.port}/metrics", timeout=5) as response:
            text = response.read().decode()
    finally:
        hook.close()
    assert 'pipeline_run_success{pipeline="taxi"} 1.0' in text
    assert 'pipeline_component_runs_total{component="ExampleGen",pipeline="taxi",status="executed"} 1.0' in text


def test_needs_somewhere_to_publish():
    with pytest.raises(ValueError, match="Expected `pushgateway_url` or `port`. Received neither."):
        PrometheusHook()
