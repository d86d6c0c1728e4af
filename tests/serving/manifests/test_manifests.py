"""docker-compose, Kubernetes and Grafana files: generated, parseable, consistent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from google.protobuf import text_format

import serving.manifests as manifests
from serving import config as cfg

RENDERED = Path(manifests.__file__).parent / "rendered"


@pytest.fixture(scope="module")
def files() -> dict[str, str]:
    return manifests.render_manifests("penguins", image="tensorflow/serving:2.16.1", replicas=3)


def test_compose_runs_tensorflow_serving_with_the_generated_configs(files):
    compose = yaml.safe_load(files["docker-compose.yaml"])
    tfserving = compose["services"]["tfserving"]
    assert tfserving["image"] == "tensorflow/serving:2.16.1"
    assert "--model_config_file=/config/models.config" in tfserving["command"]
    assert "--monitoring_config_file=/config/monitoring.config" in tfserving["command"]
    assert "./config:/config:ro" in tfserving["volumes"]
    assert tfserving["ports"] == ["127.0.0.1:8500:8500", "127.0.0.1:8501:8501"]
    prometheus = yaml.safe_load(files["prometheus/prometheus.yml"])
    assert prometheus["scrape_configs"][0]["metrics_path"] == cfg.PROMETHEUS_PATH
    assert prometheus["scrape_configs"][0]["static_configs"][0]["targets"] == ["127.0.0.1:8501"]


def test_config_files_parse_as_tensorflow_serving_protos(files):
    config = text_format.Parse(files["config/models.config"], cfg.ModelServerConfig())
    assert cfg.find_model(config, "penguins").base_path == "/models/penguins"
    assert text_format.Parse(files["config/batching.config"], cfg.BatchingParameters()).max_batch_size.value == 32
    configmap = yaml.safe_load(files["kubernetes/configmap.yaml"])
    assert configmap["data"]["models.config"] == files["config/models.config"]


def test_kubernetes_deployment_service_and_autoscaler(files):
    deployment = yaml.safe_load(files["kubernetes/deployment.yaml"])
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert (deployment["kind"], deployment["spec"]["replicas"]) == ("Deployment", 3)
    assert container["image"] == "tensorflow/serving:2.16.1"
    assert deployment["metadata"]["name"] == "penguins-serving"
    assert container["readinessProbe"]["httpGet"] == {"path": "/v1/models/penguins", "port": 8501}
    assert {m["mountPath"] for m in container["volumeMounts"]} == {"/config", "/models"}
    service = yaml.safe_load(files["kubernetes/service.yaml"])
    assert service["spec"]["selector"] == deployment["spec"]["selector"]["matchLabels"]
    assert sorted(p["port"] for p in service["spec"]["ports"]) == [8500, 8501]
    hpa = yaml.safe_load(files["kubernetes/hpa.yaml"])
    assert hpa["apiVersion"] == "autoscaling/v2"
    assert hpa["spec"]["scaleTargetRef"]["name"] == deployment["metadata"]["name"]
    assert hpa["spec"]["minReplicas"] == 3


def test_grafana_dashboard_covers_serving_pipeline_and_training(files):
    dashboard = json.loads(files["grafana/dashboards/serving.json"])
    exprs = " ".join(t["expr"] for p in dashboard["panels"] for t in p.get("targets", []))
    titles = [p["title"] for p in dashboard["panels"]]
    for metric in (
        ":tensorflow:serving:request_count",
        ":tensorflow:serving:request_latency_bucket",
        ":tensorflow:serving:runtime_latency_bucket",
        "tfserving_batch_size_sum",
        "pipeline_run_success",
        "pipeline_component_seconds",
        "trainer_examples_per_second",
        "trainer_step",
        "trainer_loss",
    ):
        assert metric in exprs
    assert "tfserving_requests_total" not in exprs  # the embedded server's old names are gone
    assert {"Serving", "Pipeline runs", "Training", "Request rate by status", "Error ratio"} <= set(titles)
    assert dashboard["templating"]["list"][0]["query"] == "penguins"


def test_rendered_copy_in_the_repo_is_up_to_date():
    expected = manifests.render_manifests("model")
    on_disk = {str(p.relative_to(RENDERED)): p.read_text() for p in RENDERED.rglob("*") if p.is_file()}
    assert on_disk == expected, (
        "regenerate: python -m serving manifests --model-name model --out serving/manifests/rendered"
    )
