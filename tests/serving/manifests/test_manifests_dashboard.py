"""The Grafana dashboard against real exporters: every panel names only metrics
that exist and selects samples they really export.

Serving panels are checked against the scrape of a real embedded server on
127.0.0.1 (batching on) after OK, failed, REST and gRPC requests; pipeline and
training panels against the real `PrometheusHook` (pushed to a real Pushgateway)
and trainer `MetricsExporter` served over HTTP on 127.0.0.1. Each PromQL expression is parsed with
promql-parser; `job`/`instance` come from the rendered prometheus.yml (and the
Pushgateway's honor_labels for pushed metrics), as Prometheus would add them.
"""

from __future__ import annotations

import json
import re
import urllib.request
from collections.abc import Iterator
from difflib import get_close_matches

import grpc
import promql_parser
import pytest
import tensorflow as tf
import yaml
from ports import free_port
from prometheus_client.parser import text_string_to_metric_families
from pushgateway_process import running_pushgateway
from serving_helpers import MODEL, b64, example, http, push
from tensorflow_serving.apis import predict_pb2, prediction_service_pb2_grpc

import serving.manifests as manifests
from components.trainer.monitoring.prometheus import MetricsExporter
from pipelines.hooks.prometheus_hook import PrometheusHook
from serving import config as cfg
from serving.manifests import grafana
from serving.server import EmbeddedServer

Samples = list[tuple[str, dict[str, str]]]  # (sample name, labels)


def _scrape(url: str) -> tuple[set[str], Samples]:
    """(metric names, samples) of a Prometheus text page, named as Prometheus ingests them.

    prometheus_client's parser appends `_total` to the samples of a counter whose
    `# TYPE` line lacks it (TensorFlow Serving's `:tensorflow:serving:request_count`);
    Prometheus keeps the name as written, so that suffix is taken off again.
    Names: every sample name and every `# TYPE` name (metrics without samples yet).
    """
    with urllib.request.urlopen(url, timeout=30) as response:
        text = response.read().decode()
    typed = {line.split()[2] for line in text.splitlines() if line.startswith("# TYPE ")}
    names, samples = set(typed), []
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            name = sample.name
            if family.type == "counter" and family.name in typed and name == f"{family.name}_total":
                name = family.name
            names.add(name)
            samples.append((name, dict(sample.labels)))
    return names, samples


@pytest.fixture(scope="module")
def files() -> dict[str, str]:
    return manifests.render_manifests(MODEL)


@pytest.fixture(scope="module")
def panels(files) -> dict[str, list[dict]]:
    """{row title: panels of that row} of the rendered dashboard."""
    rows: dict[str, list[dict]] = {}
    row = None
    for panel in json.loads(files["grafana/dashboards/serving.json"])["panels"]:
        if panel["type"] == "row":
            row = panel["title"]
            rows[row] = []
        else:
            rows[row].append(panel)
    return rows


@pytest.fixture(scope="module")
def serving_scrape(files, exports, tmp_path_factory) -> tuple[set[str], Samples]:
    """The embedded server's metrics after OK and failed requests over REST and gRPC."""
    root = tmp_path_factory.mktemp("dashboard")
    model_dir = root / "models" / MODEL
    model_dir.mkdir(parents=True)
    push(model_dir, 1, exports[1])
    batching = cfg.batching_parameters(max_batch_size=4, batch_timeout_micros=1000, num_batch_threads=1)
    config = cfg.server_config(cfg.model_config(MODEL, model_dir))
    server_files = cfg.write_server_files(root / "cfg", config, batching=batching)
    server = EmbeddedServer.from_files(server_files, rest_port=0, grpc_port=0).start()
    try:
        predict = f"/v1/models/{MODEL}:predict"
        for _ in range(3):
            status, body = http(server.rest_url, "POST", predict, {"instances": [b64(example([1.0, 2.0, 3.0]))]})
            assert status == 200, body
        assert http(server.rest_url, "POST", predict, {"signature_name": "nope", "instances": [[1.0]]})[0] == 400
        with grpc.insecure_channel(server.grpc_address) as channel:
            request = predict_pb2.PredictRequest()
            request.model_spec.name = MODEL
            request.model_spec.signature_name = "serving_raw"
            request.inputs["x"].CopyFrom(tf.make_tensor_proto([[1.0, 2.0, 3.0]], dtype=tf.float32))
            prediction_service_pb2_grpc.PredictionServiceStub(channel).Predict(request, timeout=30)
        names, samples = _scrape(server.rest_url + cfg.PROMETHEUS_PATH)
    finally:
        server.stop()
    (job,) = [
        j for j in yaml.safe_load(files["prometheus/prometheus.yml"])["scrape_configs"] if j["job_name"] == "tfserving"
    ]
    target = {"job": job["job_name"], "instance": job["static_configs"][0]["targets"][0]}
    return names, [(name, {**labels, **target}) for name, labels in samples]


@pytest.fixture(scope="module")
def pipeline_scrape() -> tuple[set[str], Samples]:
    """The pipeline hook's metrics after two runs (one failed), scraped from a real Pushgateway.

    Prometheus scrapes the Pushgateway with honor_labels, so each series keeps the pushed
    `job`, `pipeline`, `run_id` (and `instance`) labels, as on the Pushgateway's page.
    """
    with running_pushgateway() as url:
        for run_id, status in (("r1", "succeeded"), ("r2", "failed")):
            hook = PrometheusHook(pushgateway_url=url)
            hook.before_run(pipeline_name="taxi", run_id=run_id)
            hook.after_component(component_id="CsvExampleGen", status="executed", seconds=3.0)
            if status == "failed":
                hook.on_failure(component_id="Trainer", seconds=10.0)
            hook.after_run(pipeline_name="taxi", run_id=run_id, status=status, seconds=13.0)
        names, samples = _scrape(f"{url}/metrics")
    assert {labels.get("run_id") for name, labels in samples if name.startswith("pipeline_")} == {"r1", "r2"}
    return names, samples


@pytest.fixture(scope="module")
def training_scrape() -> tuple[set[str], Samples]:
    """The trainer exporter's metrics after one update, as Prometheus scrapes job `trainer`."""
    port = free_port()
    exporter = MetricsExporter(port=port)
    try:
        exporter.update(step=100, loss=0.4, examples_per_second=5000.0)
        names, samples = _scrape(f"http://127.0.0.1:{port}/metrics")
    finally:
        exporter.close()
    return names, [(name, {**labels, "job": "trainer", "instance": f"127.0.0.1:{port}"}) for name, labels in samples]


def _selectors(expr: str) -> Iterator[promql_parser.VectorSelector]:
    found = []
    promql_parser.walk(
        promql_parser.parse(expr.replace("$model", MODEL)),
        lambda node: found.append(node) if isinstance(node, promql_parser.VectorSelector) else None,
    )
    return iter(found)


def _matches(selector: promql_parser.VectorSelector, name: str, labels: dict[str, str]) -> bool:
    labels = {**labels, "__name__": name}
    for matcher in selector.matchers.matchers:
        value = labels.get(matcher.name, "")
        op = matcher.op
        if op == promql_parser.MatchOp.Equal and value != matcher.value:
            return False
        if op == promql_parser.MatchOp.NotEqual and value == matcher.value:
            return False
        if op == promql_parser.MatchOp.Re and not re.fullmatch(matcher.value, value):
            return False
        if op == promql_parser.MatchOp.NotRe and re.fullmatch(matcher.value, value):
            return False
    return selector.name is None or selector.name == name


def _metric_name(selector: promql_parser.VectorSelector) -> str:
    return selector.name or next(m.value for m in selector.matchers.matchers if m.name == "__name__")


def dashboard_problems(panels: list[dict], names: set[str], samples: Samples) -> list[str]:
    """Panels whose queries name a metric the exporter lacks, or select none of its samples."""
    problems = []
    for panel in panels:
        for target in panel["targets"]:
            for selector in _selectors(target["expr"]):
                metric = _metric_name(selector)
                if metric not in names:
                    close = get_close_matches(metric, sorted(names), n=3, cutoff=0.5)
                    problems.append(f"panel {panel['title']!r}: no metric {metric!r} (close: {close})")
                elif not any(_matches(selector, name, labels) for name, labels in samples):
                    problems.append(f"panel {panel['title']!r}: {selector} selects no sample")
    return problems


def _nodes_selected(node) -> list[promql_parser.VectorSelector]:
    """The selectors whose labels the result of `node` carries (`a and b`, `a unless b`: those of `a`)."""
    if isinstance(node, promql_parser.BinaryExpr) and str(node.op) in ("and", "unless"):
        return _nodes_selected(node.lhs)
    found: list[promql_parser.VectorSelector] = []
    promql_parser.walk(node, lambda n: found.append(n) if isinstance(n, promql_parser.VectorSelector) else None)
    return found


def _label_uses(node) -> list[tuple[str, list[promql_parser.VectorSelector]]]:
    """(label, selectors that must carry it) for each `by (...)` and `on (...)` in the expression."""
    uses: list[tuple[str, list[promql_parser.VectorSelector]]] = []

    def visit(n) -> None:
        if isinstance(n, promql_parser.AggregateExpr) and n.modifier is not None:
            uses.extend((label, _nodes_selected(n.expr)) for label in n.modifier.labels)
        if isinstance(n, promql_parser.BinaryExpr) and n.modifier is not None and n.modifier.matching:
            sides = _nodes_selected(n.lhs) + _nodes_selected(n.rhs)
            uses.extend((label, sides) for label in n.modifier.matching.labels)

    promql_parser.walk(node, visit)
    return uses


def label_problems(panels: list[dict], samples: Samples) -> list[str]:
    """Panels that group or join on a label that the samples of a metric they read lack."""
    problems = []
    for panel in panels:
        for target in panel["targets"]:
            for label, selectors in _label_uses(promql_parser.parse(target["expr"].replace("$model", MODEL))):
                for metric in dict.fromkeys(_metric_name(selector) for selector in selectors):
                    if not any(name == metric and label in labels for name, labels in samples):
                        problems.append(f"panel {panel['title']!r}: {metric} has no label {label!r}")
    return problems


def test_every_expression_parses_and_the_layout_fits(files):
    dashboard = json.loads(files["grafana/dashboards/serving.json"])
    ids = [p["id"] for p in dashboard["panels"]]
    assert len(ids) == len(set(ids))
    cells = set()
    for panel in dashboard["panels"]:
        pos = panel["gridPos"]
        assert pos["x"] + pos["w"] <= 24, panel["title"]
        area = {(pos["x"] + dx, pos["y"] + dy) for dx in range(pos["w"]) for dy in range(pos["h"])}
        assert not cells & area, f"panel {panel['title']!r} overlaps another"
        cells |= area
        for target in panel.get("targets", []):
            assert list(_selectors(target["expr"])), target["expr"]
    assert re.fullmatch(r"[A-Za-z0-9_-]{1,40}", dashboard["uid"])


def test_the_dashboard_has_serving_pipeline_and_training_rows(panels):
    assert list(panels) == [grafana.SERVING_ROW, grafana.PIPELINE_ROW, grafana.TRAINING_ROW]
    assert all(panels.values())


def test_serving_panels_show_data_from_the_embedded_server(panels, serving_scrape):
    problems = dashboard_problems(panels[grafana.SERVING_ROW], *serving_scrape)
    assert not problems, "\n".join(problems)


def test_pipeline_panels_show_data_from_the_shipped_hook(panels, pipeline_scrape):
    problems = dashboard_problems(panels[grafana.PIPELINE_ROW], *pipeline_scrape)
    assert not problems, "\n".join(problems)


def test_pipeline_panels_group_and_join_on_labels_the_pushed_series_have(panels, pipeline_scrape):
    problems = label_problems(panels[grafana.PIPELINE_ROW], pipeline_scrape[1])
    assert not problems, "\n".join(problems)
    latest = [p for p in panels[grafana.PIPELINE_ROW] if "topk by (pipeline)" in p["targets"][0]["expr"]]
    assert len(latest) == 3, [p["title"] for p in panels[grafana.PIPELINE_ROW]]


def test_the_label_check_rejects_a_join_on_a_label_the_series_lack(pipeline_scrape):
    panel = {
        "title": "broken",
        "targets": [{"expr": "pipeline_run_success and on (pipeline, attempt) pipeline_run_seconds"}],
    }
    assert label_problems([panel], pipeline_scrape[1]) == [
        "panel 'broken': pipeline_run_success has no label 'attempt'",
        "panel 'broken': pipeline_run_seconds has no label 'attempt'",
    ]


def test_training_panels_name_the_exporters_metrics_and_show_its_gauges(panels, training_scrape):
    names, samples = training_scrape
    gpu = [p for p in panels[grafana.TRAINING_ROW] if p["title"].startswith("GPU")]
    others = [p for p in panels[grafana.TRAINING_ROW] if p not in gpu]
    problems = dashboard_problems(others, names, samples)
    assert not problems, "\n".join(problems)
    # GPU gauges get samples only where NVML reads a GPU; their names must still be registered
    assert all(_metric_name(s) in names for p in gpu for t in p["targets"] for s in _selectors(t["expr"])), sorted(
        names
    )


@pytest.mark.parametrize(
    ("expr", "message"),
    [
        ("sum(rate(tfserving_requests_total[1m]))", "no metric 'tfserving_requests_total'"),
        (
            "histogram_quantile(0.5, rate(tfserving_request_latency_seconds_bucket[5m]))",
            "no metric 'tfserving_request_latency_seconds_bucket'",
        ),
        ('sum(rate(:tensorflow:serving:request_count{model_name="other"}[1m]))', "selects no sample"),
        ('{__name__=":tensorflow:serving:request_count", status="NO_SUCH_STATUS"}', "selects no sample"),
    ],
)
def test_the_check_rejects_panels_without_data(serving_scrape, expr, message):
    panel = {"title": "broken", "targets": [{"expr": expr}]}
    found = dashboard_problems([panel], *serving_scrape)
    assert any(message in problem for problem in found), found
