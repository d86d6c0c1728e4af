"""docker-compose: tensorflow/serving with our configs, a Pushgateway, Prometheus and Grafana.

Everything listens on 127.0.0.1 of the host. tensorflow/serving and the
Pushgateway publish their ports there; Prometheus and Grafana run in the host's
network namespace (`network_mode: host`, Linux) because the trainer serves its
metrics on 127.0.0.1:`TRAINER_METRICS_PORT` of the host only
(`training.metrics_port`), which no container on a bridge network can reach.
The pipeline hook and the trainer can also push to the Pushgateway at
`http://127.0.0.1:9091`, which Prometheus scrapes with `honor_labels`.
"""

from __future__ import annotations

from typing import Any

from serving.config import PROMETHEUS_PATH

__all__ = [
    "GRAFANA_PORT",
    "GRPC_PORT",
    "PROMETHEUS_PORT",
    "PUSHGATEWAY_PORT",
    "REST_PORT",
    "SERVING_JOB",
    "TRAINER_METRICS_PORT",
    "compose",
    "prometheus",
    "server_args",
]

GRPC_PORT = 8500
REST_PORT = 8501
PUSHGATEWAY_PORT = 9091
PROMETHEUS_PORT = 9090
GRAFANA_PORT = 3000
TRAINER_METRICS_PORT = 9464
CONFIG_DIR = "/config"
MODELS_DIR = "/models"
LOOPBACK = "127.0.0.1"
SERVING_JOB = "tfserving"  # the Prometheus job of the model server


def server_args(*, batching: bool = True) -> list[str]:
    """tensorflow_model_server flags reading the generated config files.

    Args:
        batching: Add `--enable_batching` with the generated `batching.config`.

    Returns:
        The flags, one per item.
    """
    args = [
        f"--port={GRPC_PORT}",
        f"--rest_api_port={REST_PORT}",
        f"--model_config_file={CONFIG_DIR}/models.config",
        "--model_config_file_poll_wait_seconds=60",
        f"--monitoring_config_file={CONFIG_DIR}/monitoring.config",
        "--allow_version_labels_for_unavailable_models=true",
        "--enable_grpc_healthcheck_service=true",  # the Deployment's gRPC liveness probe asks it
    ]
    if batching:
        args += ["--enable_batching=true", f"--batching_parameters_file={CONFIG_DIR}/batching.config"]
    return args


def _published(port: int) -> str:
    return f"{LOOPBACK}:{port}:{port}"


def compose(image: str) -> dict[str, Any]:
    """The docker-compose.yaml document.

    Args:
        image: The tensorflow/serving image.

    Returns:
        The document as a dict.
    """
    return {
        "services": {
            "tfserving": {
                "image": image,
                "entrypoint": ["tensorflow_model_server"],
                "command": server_args(),
                "ports": [_published(GRPC_PORT), _published(REST_PORT)],
                "volumes": [f"./models:{MODELS_DIR}:ro", f"./config:{CONFIG_DIR}:ro"],
                "restart": "unless-stopped",
            },
            "pushgateway": {
                "image": "prom/pushgateway:v1.9.0",
                "ports": [_published(PUSHGATEWAY_PORT)],
                "restart": "unless-stopped",
            },
            "prometheus": {
                "image": "prom/prometheus:v2.53.0",
                "network_mode": "host",
                "command": [
                    "--config.file=/etc/prometheus/prometheus.yml",
                    "--storage.tsdb.path=/prometheus",
                    f"--web.listen-address={LOOPBACK}:{PROMETHEUS_PORT}",
                ],
                "volumes": ["./prometheus/prometheus.yml:/etc/prometheus/prometheus.yml:ro"],
                "depends_on": ["tfserving", "pushgateway"],
            },
            "grafana": {
                "image": "grafana/grafana:11.1.0",
                "network_mode": "host",
                "environment": {"GF_SERVER_HTTP_ADDR": LOOPBACK, "GF_SERVER_HTTP_PORT": str(GRAFANA_PORT)},
                "volumes": [
                    "./grafana/provisioning:/etc/grafana/provisioning:ro",
                    "./grafana/dashboards:/var/lib/grafana/dashboards:ro",
                ],
                "depends_on": ["prometheus"],
            },
        },
    }


def prometheus(trainer_target: str = f"{LOOPBACK}:{TRAINER_METRICS_PORT}") -> dict[str, Any]:
    """prometheus.yml: the model server, the Pushgateway (honor_labels) and the trainer's exporter.

    Args:
        trainer_target: `host:port` of the trainer's `/metrics` (`training.metrics_port`).

    Returns:
        The document as a dict.
    """
    return {
        "global": {"scrape_interval": "15s"},
        "scrape_configs": [
            {
                "job_name": SERVING_JOB,
                "metrics_path": PROMETHEUS_PATH,
                "static_configs": [{"targets": [f"{LOOPBACK}:{REST_PORT}"]}],
            },
            {
                "job_name": "pushgateway",
                "honor_labels": True,
                "static_configs": [{"targets": [f"{LOOPBACK}:{PUSHGATEWAY_PORT}"]}],
            },
            {"job_name": "trainer", "static_configs": [{"targets": [trainer_target]}]},
        ],
    }
