"""docker-compose: tensorflow/serving with our configs, Prometheus and Grafana."""

from __future__ import annotations

from typing import Any

__all__ = ["GRPC_PORT", "REST_PORT", "compose", "prometheus", "server_args"]

GRPC_PORT = 8500
REST_PORT = 8501
CONFIG_DIR = "/config"
MODELS_DIR = "/models"


def server_args(*, batching: bool = True) -> list[str]:
    """tensorflow_model_server flags reading the generated config files."""
    args = [
        f"--port={GRPC_PORT}",
        f"--rest_api_port={REST_PORT}",
        f"--model_config_file={CONFIG_DIR}/models.config",
        "--model_config_file_poll_wait_seconds=60",
        f"--monitoring_config_file={CONFIG_DIR}/monitoring.config",
        "--allow_version_labels_for_unavailable_models=true",
    ]
    if batching:
        args += ["--enable_batching=true", f"--batching_parameters_file={CONFIG_DIR}/batching.config"]
    return args


def compose(image: str) -> dict[str, Any]:
    """The docker-compose.yaml document (ports published on 127.0.0.1 only)."""
    return {
        "services": {
            "tfserving": {
                "image": image,
                "entrypoint": ["tensorflow_model_server"],
                "command": server_args(),
                "ports": [f"127.0.0.1:{GRPC_PORT}:{GRPC_PORT}", f"127.0.0.1:{REST_PORT}:{REST_PORT}"],
                "volumes": [f"./models:{MODELS_DIR}:ro", f"./config:{CONFIG_DIR}:ro"],
                "restart": "unless-stopped",
            },
            "prometheus": {
                "image": "prom/prometheus:v2.53.0",
                "volumes": ["./prometheus/prometheus.yml:/etc/prometheus/prometheus.yml:ro"],
                "ports": ["127.0.0.1:9090:9090"],
                "depends_on": ["tfserving"],
            },
            "grafana": {
                "image": "grafana/grafana:11.1.0",
                "volumes": [
                    "./grafana/provisioning:/etc/grafana/provisioning:ro",
                    "./grafana/dashboards:/var/lib/grafana/dashboards:ro",
                ],
                "ports": ["127.0.0.1:3000:3000"],
                "depends_on": ["prometheus"],
            },
        },
    }


def prometheus(trainer_target: str) -> dict[str, Any]:
    """prometheus.yml scraping the model server and the trainer's exporter."""
    return {
        "global": {"scrape_interval": "15s"},
        "scrape_configs": [
            {
                "job_name": "tfserving",
                "metrics_path": "/monitoring/prometheus/metrics",
                "static_configs": [{"targets": [f"tfserving:{REST_PORT}"]}],
            },
            {"job_name": "trainer", "static_configs": [{"targets": [trainer_target]}]},
        ],
    }
