"""Prometheus metrics: served on 127.0.0.1 while training, and pushed to a (real, local) Pushgateway."""

from __future__ import annotations

import http.server
import re
import threading
import urllib.request

import pytest
from trainer_fixtures import free_port

from components.trainer.prometheus import MetricsExporter


def _gauge(body: str, name: str) -> float:
    match = re.search(rf"^{name} (\S+)$", body, re.MULTILINE)
    assert match, f"{name} missing from:\n{body}"
    return float(match.group(1))


def test_training_serves_its_metrics_over_http_while_it_runs(observed_run):
    trained = [body for body in observed_run.scrapes if _gauge(body, "trainer_step") > 0]
    assert trained, f"{len(observed_run.scrapes)} scrapes, none after a training step"
    last = trained[-1]
    assert 0 < _gauge(last, "trainer_step") <= 30
    assert _gauge(last, "trainer_examples_per_second") > 0
    assert 0 < _gauge(last, "trainer_loss") < 2


def test_the_metrics_server_stops_with_training(observed_run):
    with pytest.raises(OSError):
        urllib.request.urlopen(f"http://127.0.0.1:{observed_run.port}/metrics", timeout=1)


def test_a_taken_port_is_reported_with_the_fix():
    port = free_port()
    first = MetricsExporter(port=port)
    try:
        with pytest.raises(OSError, match=r"could not listen on 127\.0\.0\.1:\d+.*Fix `training.metrics_port`"):
            MetricsExporter(port=port)
    finally:
        first.close()


class _Pushgateway(http.server.BaseHTTPRequestHandler):
    pushes: list[tuple[str, str]] = []

    def do_PUT(self):  # noqa: N802 - http.server's naming
        body = self.rfile.read(int(self.headers["Content-Length"])).decode()
        self.pushes.append((self.path, body))
        self.send_response(202)
        self.end_headers()

    def log_message(self, *args):
        pass


def test_metrics_are_pushed_to_a_pushgateway():
    server = http.server.HTTPServer(("127.0.0.1", 0), _Pushgateway)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_port}"
        exporter = MetricsExporter(pushgateway_url=url, grouping={"run": "r1"}, push_interval_seconds=3600)
        exporter.update(step=7, loss=0.5, examples_per_second=1234.0)  # first update pushes at once
        exporter.update(step=8, loss=0.4, examples_per_second=1300.0)  # within the interval: no push
        exporter.close()  # the final values
    finally:
        server.shutdown()
        server.server_close()
    assert [path for path, _ in _Pushgateway.pushes] == ["/metrics/job/trainer/run/r1"] * 2
    assert "trainer_step 7.0" in _Pushgateway.pushes[0][1]
    assert "trainer_step 8.0" in _Pushgateway.pushes[1][1]
