"""Deployment files for tensorflow/serving: docker-compose, Kubernetes, Grafana.

Everything is generated (`python -m serving manifests --model-name N --out DIR`);
the model server configs inside are built from the TensorFlow Serving protobufs
like every other config here. `serving/manifests/rendered/` holds the output
for a model named `model`, kept in sync by a test.

Kubernetes object names are DNS-1035 labels derived from the model name
(`names.instance_name`: `chicago_taxi` -> `chicago-taxi-bdcd47c7-serving`);
the server keeps serving under the model name itself.

Layout of DIR:
    docker-compose.yaml (tensorflow/serving, Pushgateway, Prometheus, Grafana)
    config/{models,batching,monitoring}.config
    prometheus/prometheus.yml
    grafana/provisioning/{datasources,dashboards}/*.yaml, grafana/dashboards/serving.json
    kubernetes/{configmap,deployment,service,hpa,pvc}.yaml
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import yaml
from google.protobuf import text_format

from serving import config as cfg
from serving.atomic import atomic_write_text
from serving.manifests import compose, grafana, kubernetes

__all__ = ["DEFAULT_IMAGE", "render_manifests", "write_manifests"]

DEFAULT_IMAGE = "tensorflow/serving:2.16.1"


class _Dumper(yaml.SafeDumper):
    """Writes multi-line strings (the text protos in the ConfigMap) as `|` blocks."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def _yaml(document: dict) -> str:
    return yaml.dump(document, Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=120)


def _server_configs(model_name: str) -> dict[str, str]:
    model = cfg.model_config(model_name, f"{compose.MODELS_DIR}/{model_name}", policy=cfg.latest_policy(1))
    return {
        cfg.MODEL_CONFIG_FILE: text_format.MessageToString(cfg.server_config(model)),
        cfg.BATCHING_FILE: text_format.MessageToString(
            cfg.batching_parameters(
                max_batch_size=32, batch_timeout_micros=1000, num_batch_threads=2, max_enqueued_batches=100
            )
        ),
        cfg.MONITORING_FILE: text_format.MessageToString(cfg.monitoring_config()),
    }


def render_manifests(
    model_name: str,
    *,
    image: str = DEFAULT_IMAGE,
    replicas: int = 2,
    trainer_metrics_target: str = f"{compose.LOOPBACK}:{compose.TRAINER_METRICS_PORT}",
) -> dict[str, str]:
    """Renders every deployment file.

    Args:
        model_name: The TensorFlow Serving model name.
        image: The tensorflow/serving image.
        replicas: Kubernetes replicas (and the autoscaler's minimum).
        trainer_metrics_target: `host:port` Prometheus scrapes for the trainer's metrics.

    Returns:
        {path relative to the output directory: file content}.

    Raises:
        serving.config.ConfigError: `model_name` is not a valid model name.
    """
    cfg.model_config(model_name, "/")  # validates the name
    configs = _server_configs(model_name)
    files = {f"config/{name}": text for name, text in configs.items()}
    files["docker-compose.yaml"] = _yaml(compose.compose(image))
    files["prometheus/prometheus.yml"] = _yaml(compose.prometheus(trainer_metrics_target))
    files["grafana/provisioning/datasources/prometheus.yaml"] = _yaml(
        {
            "apiVersion": 1,
            "datasources": [
                {
                    "name": "Prometheus",
                    "uid": grafana.DATASOURCE_UID,
                    "type": "prometheus",
                    "access": "proxy",
                    "url": f"http://{compose.LOOPBACK}:{compose.PROMETHEUS_PORT}",
                    "isDefault": True,
                }
            ],
        }
    )
    files["grafana/provisioning/dashboards/serving.yaml"] = _yaml(
        {
            "apiVersion": 1,
            "providers": [{"name": "serving", "type": "file", "options": {"path": "/var/lib/grafana/dashboards"}}],
        }
    )
    files["grafana/dashboards/serving.json"] = json.dumps(grafana.dashboard(model_name), indent=2) + "\n"
    files["kubernetes/configmap.yaml"] = _yaml(kubernetes.config_map(model_name, configs))
    files["kubernetes/deployment.yaml"] = _yaml(kubernetes.deployment(model_name, image, replicas))
    files["kubernetes/service.yaml"] = _yaml(kubernetes.service(model_name))
    files["kubernetes/hpa.yaml"] = _yaml(kubernetes.hpa(model_name, min_replicas=replicas))
    files["kubernetes/pvc.yaml"] = _yaml(kubernetes.pvc(model_name))
    return files


def write_manifests(out_dir: str | os.PathLike, model_name: str, **options) -> list[Path]:
    """Writes `render_manifests(model_name, **options)` under `out_dir`.

    Args:
        out_dir: The output directory (created as needed).
        model_name: The TensorFlow Serving model name.
        **options: `image`, `replicas`, `trainer_metrics_target` of `render_manifests`.

    Returns:
        The written paths, sorted.
    """
    out = Path(out_dir)
    return [
        atomic_write_text(out / relative, text)
        for relative, text in sorted(render_manifests(model_name, **options).items())
    ]
